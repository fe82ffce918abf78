#include "views/accounting.hpp"

#include <algorithm>
#include <numeric>

namespace idletime::views {
namespace {

Amount of(const JobView &v) { return Amount{v.job->gpus, v.job->cpus}; }

Amount quota_amount(const Quota &q) { return Amount{q.gpus, q.cpus}; }

template <class T>
T *named(std::vector<T> &v, const std::string &name, std::string (*key)(const T &)) {
    for (T &x : v)
        if (key(x) == name) return &x;
    return nullptr;
}
std::string quota_key(const QuotaUse &u) { return u.quota->name; }
std::string pool_key(const PoolUse &u) { return u.pool->name; }
std::string tenant_key(const TenantUse &u) { return u.tenant; }

uint64_t sub0(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

// Charges one resource of a pool's idle usage: unassigned capacity first, then free shares.
void charge(uint64_t idle, uint64_t capacity, uint64_t guaranteed, const std::vector<QuotaUse *> &qs,
            uint64_t Amount::*field, uint64_t &unassigned) {
    uint64_t spare = sub0(capacity, guaranteed);
    std::vector<uint64_t> free;
    uint64_t rest = idle;
    for (QuotaUse *q : qs) {
        uint64_t f = sub0(q->guaranteed.*field, q->used.*field);
        q->own.*field = std::min(f, q->own.*field);  // tally put its idle usage on its own pool here
        rest -= std::min(rest, q->own.*field);
        free.push_back(f - q->own.*field);
    }
    unassigned = std::min(rest, spare);
    std::vector<uint64_t> parts = apportion(rest - unassigned, free);
    for (size_t i = 0; i < qs.size(); i++) qs[i]->lent.*field = parts[i];
}

void tally_jobs(const std::vector<JobView> &jobs, Accounting &a) {
    for (const JobView &v : jobs) {
        QuotaUse *q = named(a.quotas, v.quota, quota_key);
        if (v.status == Status::Running && v.resources == Resources::InQuota) {
            if (q) q->used += of(v), q->running_jobs++;
        } else if (v.status == Status::Running && v.resources == Resources::NotInQuota) {
            if (q) q->borrowed += of(v), q->idle_jobs++;
            if (q && v.pool == q->pool) q->own += of(v);  // capped to free(q) in charge()
            if (PoolUse *p = named(a.pools, v.pool, pool_key)) p->idle_used += of(v);
        } else if (v.job->state == SlurmState::Pending && q) {
            q->pending += of(v);
            q->pending_jobs++;
        }
    }
}

void pool_totals(const Config &cfg, Accounting &a) {
    for (PoolUse &p : a.pools) {
        std::vector<QuotaUse *> qs;
        for (QuotaUse &q : a.quotas)
            if (q.pool == p.pool->name) qs.push_back(&q);
        for (QuotaUse *q : qs) {
            p.guaranteed += q->guaranteed;
            p.used += q->used;
            p.borrowed += q->borrowed;
            p.pending += q->pending;
        }
        charge(p.idle_used.gpus, p.capacity.gpus, p.guaranteed.gpus, qs, &Amount::gpus, p.unassigned.gpus);
        charge(p.idle_used.cpus, p.capacity.cpus, p.guaranteed.cpus, qs, &Amount::cpus, p.unassigned.cpus);
        for (QuotaUse *q : qs) p.lent += q->lent, p.own += q->own;
        TenantUse *t = named(a.tenants, p.pool->tenant, tenant_key);
        if (!t) continue;
        t->capacity += p.capacity;
        t->guaranteed += p.guaranteed;
        t->used += p.used;
        t->idle_used += p.idle_used;
        t->lent += p.lent;
        t->borrowed += p.borrowed;
        t->pending += p.pending;
    }
    (void)cfg;
}

}  // namespace

std::vector<uint64_t> apportion(uint64_t total, const std::vector<uint64_t> &weights) {
    std::vector<uint64_t> out(weights.size(), 0);
    uint64_t sum = std::accumulate(weights.begin(), weights.end(), uint64_t(0));
    if (sum == 0 || total == 0) return out;
    if (total >= sum) return weights;  // more idle usage than free shares: each lends all it has
    std::vector<std::pair<uint64_t, size_t>> rem;  // (remainder, index)
    uint64_t given = 0;
    for (size_t i = 0; i < weights.size(); i++) {
        unsigned __int128 x = (unsigned __int128)total * weights[i];
        out[i] = uint64_t(x / sum);
        given += out[i];
        rem.emplace_back(uint64_t(x % sum), i);
    }
    std::stable_sort(rem.begin(), rem.end(), [](auto &l, auto &r) { return l.first > r.first; });
    for (size_t k = 0; given < total && k < rem.size(); k++, given++) out[rem[k].second]++;
    return out;
}

Accounting account(const Config &cfg, const std::vector<JobView> &jobs) {
    Accounting a;
    for (const Tenant &t : cfg.tenants) a.tenants.push_back(TenantUse{t.name, {}, {}, {}, {}, {}, {}, {}});
    for (const Pool &p : cfg.pools) {
        PoolUse u;
        u.pool = &p;
        u.capacity = Amount{p.total_gpus(), p.total_cpus()};
        a.pools.push_back(u);
    }
    for (const Quota &q : cfg.quotas) {
        QuotaUse u;
        u.quota = &q;
        u.pool = q.pool;
        if (const Pool *p = cfg.pool_of(q)) u.tenant = p->tenant;
        u.guaranteed = quota_amount(q);
        a.quotas.push_back(u);
    }
    tally_jobs(jobs, a);
    pool_totals(cfg, a);
    return a;
}

}  // namespace idletime::views
