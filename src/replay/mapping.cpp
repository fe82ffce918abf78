// Trace -> job stream. See mapping.hpp for the rules.
#include "replay/mapping.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <tuple>

namespace idletime::replay {

const char *job_class_name(JobClass c) { return c == JobClass::Idle ? "idle" : "guaranteed"; }

uint64_t stable_hash(uint64_t seed, const std::string &text)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < 8; i++) {  // mix the seed's bytes first so seeds differ everywhere
        h ^= (seed >> (8 * i)) & 0xff;
        h *= 1099511628211ULL;
    }
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    return h;
}

double weighted_quantile(std::vector<std::pair<double, int>> changes, double t0, double t1, double p)
{
    if (!(t1 > t0))
        return 0;
    std::sort(changes.begin(), changes.end());
    std::vector<std::pair<int, double>> spans;  // (level, seconds)
    int level = 0;
    double t = t0;
    for (auto [at, delta] : changes) {
        double c = std::clamp(at, t0, t1);
        if (c > t)
            spans.emplace_back(level, c - t);
        t = std::max(t, c);
        level += delta;
    }
    if (t1 > t)
        spans.emplace_back(level, t1 - t);
    std::sort(spans.begin(), spans.end());
    double need = p * (t1 - t0), acc = 0;
    for (auto [lv, secs] : spans) {
        acc += secs;
        if (acc >= need - 1e-9)
            return lv;
    }
    return spans.empty() ? 0 : spans.back().first;
}

std::vector<int> apportion(int total, const std::vector<double> &weights, const std::vector<int> &mins)
{
    int min_sum = 0;
    for (int m : mins)
        min_sum += m;
    if (min_sum > total)
        throw std::invalid_argument("quotas need at least " + std::to_string(min_sum) +
                                    " GPUs (largest job per team) but the pool has " +
                                    std::to_string(total) + " (more GPUs in --pools NAME=GPUS, or fewer quotas: --teams, --max-quotas)");
    double wsum = 0;
    for (double w : weights)
        wsum += w;
    size_t n = weights.size();
    std::vector<double> ideal(n);
    for (size_t i = 0; i < n; i++)
        ideal[i] = wsum > 0 ? total * weights[i] / wsum : double(total) / n;
    std::vector<int> out(n);
    int used = 0;
    for (size_t i = 0; i < n; i++) {
        out[i] = std::max(mins[i], static_cast<int>(std::floor(ideal[i])));
        used += out[i];
    }
    // Give leftovers by largest remainder; take surplus (from minimums) from the largest.
    while (used != total) {
        size_t best = n;
        for (size_t i = 0; i < n; i++) {
            bool ok = used < total || out[i] > mins[i];
            if (!ok)
                continue;
            double r = ideal[i] - out[i];
            if (best == n || (used < total ? r > ideal[best] - out[best] : r < ideal[best] - out[best]))
                best = i;
        }
        out[best] += used < total ? 1 : -1;
        used += used < total ? 1 : -1;
    }
    return out;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Candidate {
    const TraceRecord *rec;
    double submit_t, run_from_t, end_t;  // trace seconds; end already clipped
    int gpus, nodes;
    JobClass cls;
    size_t pool;
    std::string group;                   // team / account / site quota within the pool
};

void check_options(const MapOptions &o)
{
    if (o.window_len_s <= 0)
        throw std::invalid_argument("window length must be > 0 trace seconds");
    if (!(o.compress >= 1.0))
        throw std::invalid_argument("compression factor must be >= 1");
    if (o.teams < 1)
        throw std::invalid_argument("teams per pool must be >= 1");
    if (o.pools.empty())
        throw std::invalid_argument("at least one local pool is needed");
    for (const auto &p : o.pools)
        if (p.gpus < 1 || p.name.empty() || p.spec.empty())
            throw std::invalid_argument("pool '" + p.name + "' needs a name, a spec and >= 1 GPU");
    if (!(o.sample > 0 && o.sample <= 1))
        throw std::invalid_argument("sample share must be in (0, 1]");
    if (o.max_gpus_per_job < 1 || o.min_duration_s < 0)
        throw std::invalid_argument("max GPUs per job must be >= 1 and min duration >= 0");
    if (o.max_gpus_per_job > kMaxNodeGpus)
        throw std::invalid_argument("GPUs per node must be at most " + std::to_string(kMaxNodeGpus));
    long nodes = 0;  // pools of up to INT_MAX GPUs each: no int overflow in the sum
    for (const auto &p : o.pools) {
        if (p.gpus % o.max_gpus_per_job != 0)
            throw std::invalid_argument("pool '" + p.name + "' has " + std::to_string(p.gpus) +
                                        " GPUs, not a whole number of " + std::to_string(o.max_gpus_per_job) +
                                        "-GPU nodes (--pools, --max-gpus)");
        nodes += p.gpus / o.max_gpus_per_job;
    }
    if (nodes > kMaxLocalNodes)
        throw std::invalid_argument("the pools need " + std::to_string(nodes) + " nodes; the local cluster holds at most " +
                                    std::to_string(kMaxLocalNodes) + " (fewer GPUs in --pools or more per node in --max-gpus)");
    if (!(o.quota_percentile > 0 && o.quota_percentile <= 1))
        throw std::invalid_argument("quota percentile must be in (0, 100]");
    if (o.max_quotas < 1)
        throw std::invalid_argument("quotas per pool must be >= 1");
    if (o.idle.kind == IdleRuleKind::Share && !(o.idle.share >= 0 && o.idle.share <= 1))
        throw std::invalid_argument("idle-time share must be in [0, 1]");
    if (o.quota_source == QuotaSource::Site) {
        if (o.site_quotas.empty())
            throw std::invalid_argument("the site config has no quota");
        for (const auto &q : o.site_quotas) {
            bool known = false;
            for (const auto &p : o.pools)
                known = known || p.name == q.pool;
            if (!known)
                throw std::invalid_argument("site quota '" + q.name + "': pool '" + q.pool + "' is not a local pool");
        }
    }
}

// Pools a record may use; empty when its constraint maps to no local spec.
std::vector<size_t> eligible_pools(const TraceRecord &r, const MapOptions &o)
{
    std::set<std::string> specs;
    for (const auto &m : r.models) {
        auto it = o.model_to_spec.find(m);
        if (it != o.model_to_spec.end())
            specs.insert(it->second);
    }
    std::vector<size_t> out;
    for (size_t i = 0; i < o.pools.size(); i++)
        if (r.models.empty() || specs.count(o.pools[i].spec))
            out.push_back(i);
    return out;
}

size_t pick_pool(const TraceRecord &r, const std::vector<size_t> &pools, const MapOptions &o)
{
    long total = 0;
    for (size_t p : pools)
        total += o.pools[p].gpus;
    long x = static_cast<long>(stable_hash(o.seed, "pool:" + r.name) % static_cast<uint64_t>(total));
    for (size_t p : pools) {
        if (x < o.pools[p].gpus)
            return p;
        x -= o.pools[p].gpus;
    }
    return pools.back();
}

// Slurm folds account names to lower case; keep names to [a-z0-9_.-].
std::string account_key(const std::string &account)
{
    std::string out;
    for (char ch : account.substr(0, 40)) {
        unsigned char c = static_cast<unsigned char>(std::tolower(static_cast<unsigned char>(ch)));
        out += std::isalnum(c) || c == '-' || c == '_' || c == '.' ? char(c) : '_';
    }
    return out.empty() ? "none" : out;
}

const SiteQuota *site_quota_of(const TraceRecord &r, const MapOptions &o)
{
    for (const auto &q : o.site_quotas)
        for (const auto &a : q.accounts)
            if (account_key(a) == account_key(r.account))  // Slurm accounts are case-insensitive
                return &q;
    return nullptr;
}

// Team and pool of a kept record; false (counted) when a site config has no quota for it.
bool assign(const TraceRecord &r, const std::vector<size_t> &pools, const MapOptions &o, MapStats &st,
            Candidate &c)
{
    if (o.quota_source == QuotaSource::Site) {
        const SiteQuota *q = site_quota_of(r, o);
        if (!q)
            return st.no_quota++, false;
        for (size_t i = 0; i < o.pools.size(); i++)
            if (o.pools[i].name == q->pool)
                c.pool = i;
        c.group = q->name;
        return true;
    }
    c.pool = pick_pool(r, pools, o);
    if (o.quota_source == QuotaSource::Accounts)
        c.group = account_key(r.account);
    else
        c.group = "t" + std::to_string(stable_hash(o.seed, "team:" + r.name) % static_cast<uint64_t>(o.teams));
    return true;
}

// GPUs and nodes (gang of whole nodes), with the caps counted.
void shape(const TraceRecord &r, const MapOptions &o, MapStats &st, Candidate &c)
{
    int node = o.max_gpus_per_job;
    int nodes = std::max(1, r.nodes);
    if (o.split_gangs)
        nodes = std::max(nodes, (r.num_gpu + node - 1) / node);
    int per = (r.num_gpu + nodes - 1) / nodes;
    bool changed = per > node;
    if (per > node) {
        per = node;
        st.gpus_capped++;
    }
    int pool_nodes = std::max(1, o.pools[c.pool].gpus / node);
    if (nodes > pool_nodes) {
        nodes = pool_nodes;
        st.gang_capped++;
        changed = true;
    }
    st.gangs += nodes > 1;
    st.gang_rounded_up += !changed && per * nodes > r.num_gpu;  // 5 GPUs on 2 nodes: 3 + 3
    c.nodes = nodes;
    c.gpus = per * nodes;
}

// Filters one record; returns false (and counts why) when it is not replayed.
bool candidate(const TraceRecord &r, const MapOptions &o, MapStats &st, Candidate &c)
{
    double w0 = double(o.window_start_s), w1 = w0 + double(o.window_len_s);
    double end = r.deletion_s < 0 ? kInf : double(r.deletion_s);
    bool in_window = r.creation_s >= w0 && r.creation_s < w1;
    bool carried = o.carry_over && r.creation_s < w0 && end > w0 && r.scheduled_s >= 0;
    auto pools = eligible_pools(r, o);
    if (r.num_gpu <= 0)
        return st.no_gpu++, false;
    if (r.scheduled_s < 0)
        return st.never_scheduled++, false;
    if (!in_window && !carried)
        return st.outside_window++, false;
    if (double(stable_hash(o.seed, "sample:" + r.name) % 1000000) >= o.sample * 1e6)
        return st.sampled_out++, false;
    if (pools.empty())
        return st.unmapped_spec++, false;
    bool shared = r.num_gpu == 1 && r.gpu_milli < 1000;
    if (shared && o.fractional == Fractional::Skip)
        return st.fractional_skipped++, false;
    if (!assign(r, pools, o, st, c))
        return false;
    st.fractional_rounded += shared;
    st.carried_over += carried;
    c.rec = &r;
    c.submit_t = std::max(double(r.creation_s), w0);
    c.run_from_t = std::max(double(r.scheduled_s), w0);
    double run = std::max(0.0, end - c.run_from_t);
    if (c.submit_t + run > w1) {
        run = w1 - c.submit_t;
        st.clipped_at_end++;
    }
    c.end_t = c.submit_t + run;
    shape(r, o, st, c);
    return true;
}

// Idle-time or guaranteed, by the rule (Share: exactly round(share x n) of each account's jobs).
void classify(std::vector<Candidate> &cs, const MapOptions &o)
{
    const IdleRule &rule = o.idle;
    if (rule.kind != IdleRuleKind::Share) {
        for (auto &c : cs) {
            std::string v = rule.kind == IdleRuleKind::Partition ? c.rec->partition : c.rec->qos_name;
            if (rule.kind == IdleRuleKind::Qos && v.empty())
                v = trace_qos_name(c.rec->qos);
            c.cls = v == rule.name ? JobClass::Idle : JobClass::Guaranteed;
        }
        return;
    }
    std::map<std::string, std::vector<std::pair<uint64_t, Candidate *>>> by_account;
    for (auto &c : cs)
        by_account[c.rec->account].push_back({stable_hash(o.seed, "idle:" + c.rec->name), &c});
    for (auto &[account, list] : by_account) {
        std::sort(list.begin(), list.end(), [](const auto &a, const auto &b) {
            return a.first != b.first ? a.first < b.first : a.second->rec->name < b.second->rec->name;
        });
        size_t idle = size_t(std::llround(rule.share * double(list.size())));
        for (size_t i = 0; i < list.size(); i++)
            list[i].second->cls = i < idle ? JobClass::Idle : JobClass::Guaranteed;
    }
}

std::string quota_name(const MapOptions &o, size_t pool, const std::string &group)
{
    return o.quota_source == QuotaSource::Site ? group : o.pools[pool].name + "-" + group;
}

// Time-weighted percentile of the concurrent guaranteed GPUs of the candidates.
double demand(const std::vector<const Candidate *> &cs, const MapOptions &o)
{
    double w0 = double(o.window_start_s), w1 = w0 + double(o.window_len_s);
    std::vector<std::pair<double, int>> ch;
    for (const Candidate *c : cs) {
        if (c->cls != JobClass::Guaranteed)
            continue;
        double end = c->rec->deletion_s < 0 ? kInf : double(c->rec->deletion_s);
        ch.emplace_back(c->run_from_t, c->gpus);
        ch.emplace_back(std::min(end, w1), -c->gpus);
    }
    return weighted_quantile(ch, w0, w1, o.quota_percentile);
}

using Groups = std::map<std::string, std::vector<const Candidate *>>;

// Accounts beyond max_quotas in a pool: those of least demand share "other".
void fold_accounts(std::vector<Candidate> &cs, size_t pool, const MapOptions &o, MapStats &st)
{
    Groups g;
    for (const auto &c : cs)
        if (c.pool == pool)
            g[c.group].push_back(&c);
    if (g.size() <= size_t(o.max_quotas))
        return;
    std::vector<std::tuple<double, double, std::string>> rank;  // demand, GPU-seconds, name
    for (const auto &[name, list] : g) {
        double gs = 0;
        for (const Candidate *c : list)
            gs += (c->end_t - c->run_from_t) * c->gpus;
        rank.emplace_back(-demand(list, o), -gs, name);
    }
    std::sort(rank.begin(), rank.end());
    std::set<std::string> folded;
    for (size_t i = size_t(o.max_quotas) - 1; i < rank.size(); i++)
        folded.insert(std::get<2>(rank[i]));
    st.accounts_merged += int(folded.size());
    for (auto &c : cs)
        if (c.pool == pool && folded.count(c.group))
            c.group = "other";
}

// Groups of a pool in quota order: Teams t0..tK-1, Site its quotas in file order, Accounts by name.
std::vector<std::string> pool_groups(const std::vector<Candidate> &cs, size_t p, const MapOptions &o)
{
    std::vector<std::string> out;
    if (o.quota_source == QuotaSource::Teams) {
        for (int t = 0; t < o.teams; t++)
            out.push_back("t" + std::to_string(t));
    } else if (o.quota_source == QuotaSource::Site) {
        for (const auto &q : o.site_quotas)
            if (q.pool == o.pools[p].name)
                out.push_back(q.name);
    } else {
        std::set<std::string> names;
        for (const auto &c : cs)
            if (c.pool == p)
                names.insert(c.group);
        out.assign(names.begin(), names.end());
    }
    return out;
}

// Per pool: demand per group (or the site's GPUs), then shares of the pool's capacity.
std::vector<Quota> derive_quotas(std::vector<Candidate> &cs, const MapOptions &o, MapStats &st)
{
    std::vector<Quota> out;
    for (size_t p = 0; p < o.pools.size(); p++) {
        if (o.quota_source == QuotaSource::Accounts)
            fold_accounts(cs, p, o, st);
        auto names = pool_groups(cs, p, o);
        if (names.empty())
            continue;
        std::vector<double> weights(names.size());
        std::vector<int> mins(names.size(), 1);
        for (size_t g = 0; g < names.size(); g++) {
            std::vector<const Candidate *> list;
            for (const auto &c : cs)
                if (c.pool == p && c.group == names[g]) {
                    list.push_back(&c);
                    mins[g] = std::max(mins[g], c.gpus);  // so config A can run every job in quota
                }
            weights[g] = demand(list, o);
            if (o.quota_source == QuotaSource::Site)
                for (const auto &q : o.site_quotas)
                    if (q.name == names[g])
                        weights[g] = q.gpus;
        }
        auto shares = apportion(o.pools[p].gpus, weights, mins);
        for (size_t g = 0; g < names.size(); g++)
            out.push_back({quota_name(o, p, names[g]), o.pools[p].name, shares[g], weights[g]});
    }
    return out;
}

}  // namespace

JobStream map_trace(const std::vector<TraceRecord> &records, const MapOptions &opt)
{
    check_options(opt);
    JobStream js;
    js.stats.pods = static_cast<int>(records.size());
    std::vector<Candidate> cs;
    std::set<std::string> renamed;  // accounts (case folded) whose names Slurm cannot take as they are
    for (const auto &r : records) {
        Candidate c{};
        if (!candidate(r, opt, js.stats, c))
            continue;
        cs.push_back(c);
        std::string lower = r.account;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
        if (opt.quota_source == QuotaSource::Accounts && !lower.empty() && c.group != lower)
            renamed.insert(lower);
    }
    js.stats.accounts_renamed = static_cast<int>(renamed.size());
    classify(cs, opt);
    js.quotas = derive_quotas(cs, opt, js.stats);
    std::map<std::string, const Quota *> quota_by_name;
    for (const auto &q : js.quotas)
        quota_by_name[q.name] = &q;
    double w0 = double(opt.window_start_s);
    for (const auto &c : cs) {
        const Quota &q = *quota_by_name.at(quota_name(opt, c.pool, c.group));
        ReplayJob j;
        j.id = c.rec->name;
        j.submit_s = (c.submit_t - w0) / opt.compress;
        double run_s = (c.end_t - c.submit_t) / opt.compress;
        j.duration_s = std::max(opt.min_duration_s, run_s);
        js.stats.floored += run_s < opt.min_duration_s;
        j.gpus = c.gpus;
        j.nodes = c.nodes;
        if (c.cls == JobClass::Idle && j.gpus > q.gpus) {
            int per = j.gpus / j.nodes;  // so config A (no borrowing) can still run it inside the quota
            j.nodes = std::max(1, std::min(j.nodes, q.gpus / std::max(1, per)));
            j.gpus = std::min(per, q.gpus) * j.nodes;
            js.stats.be_capped_to_quota++;
        }
        j.cls = c.cls;
        j.quota = q.name;
        j.pool = opt.pools[c.pool].name;
        j.spec = opt.pools[c.pool].spec;
        (c.cls == JobClass::Idle ? js.stats.idle : js.stats.guaranteed)++;
        js.jobs.push_back(std::move(j));
    }
    std::sort(js.jobs.begin(), js.jobs.end(), [](const ReplayJob &a, const ReplayJob &b) {
        return a.submit_s != b.submit_s ? a.submit_s < b.submit_s : a.id < b.id;
    });
    js.stats.kept = static_cast<int>(js.jobs.size());
    js.span_s = double(opt.window_len_s) / opt.compress;
    return js;
}

}  // namespace idletime::replay
