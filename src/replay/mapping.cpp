// Trace -> job stream. See mapping.hpp for the rules.
#include "replay/mapping.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

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
                                    std::to_string(total));
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
    int gpus;
    JobClass cls;
    size_t pool, team;
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
    c.gpus = std::min(r.num_gpu, o.max_gpus_per_job);
    st.gpus_capped += r.num_gpu > o.max_gpus_per_job;
    c.cls = r.qos == TraceQos::BestEffort ? JobClass::Idle : JobClass::Guaranteed;
    c.pool = pick_pool(r, pools, o);
    c.team = stable_hash(o.seed, "team:" + r.name) % static_cast<uint64_t>(o.teams);
    return true;
}

std::string quota_name(const MapOptions &o, size_t pool, size_t team)
{
    return o.pools[pool].name + "-t" + std::to_string(team);
}

// Per pool: p95 concurrent guaranteed GPUs per team (as the trace ran them), then shares.
std::vector<Quota> derive_quotas(const std::vector<Candidate> &cs, const MapOptions &o)
{
    double w0 = double(o.window_start_s), w1 = w0 + double(o.window_len_s);
    std::vector<Quota> out;
    for (size_t p = 0; p < o.pools.size(); p++) {
        std::vector<double> weights(size_t(o.teams));
        std::vector<int> mins(size_t(o.teams), 1);
        for (size_t t = 0; t < size_t(o.teams); t++) {
            std::vector<std::pair<double, int>> ch;
            for (const auto &c : cs) {
                if (c.pool != p || c.team != t)
                    continue;
                mins[t] = std::max(mins[t], c.gpus);  // so config A can run every job in quota
                if (c.cls != JobClass::Guaranteed)
                    continue;
                double end = c.rec->deletion_s < 0 ? kInf : double(c.rec->deletion_s);
                ch.emplace_back(c.run_from_t, c.gpus);
                ch.emplace_back(std::min(end, w1), -c.gpus);
            }
            weights[t] = weighted_quantile(ch, w0, w1, 0.95);
        }
        auto shares = apportion(o.pools[p].gpus, weights, mins);
        for (size_t t = 0; t < size_t(o.teams); t++)
            out.push_back({quota_name(o, p, t), o.pools[p].name, shares[t], weights[t]});
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
    for (const auto &r : records) {
        Candidate c{};
        if (candidate(r, opt, js.stats, c))
            cs.push_back(c);
    }
    js.quotas = derive_quotas(cs, opt);
    double w0 = double(opt.window_start_s);
    for (const auto &c : cs) {
        const Quota &q = js.quotas[c.pool * size_t(opt.teams) + c.team];
        ReplayJob j;
        j.id = c.rec->name;
        j.submit_s = (c.submit_t - w0) / opt.compress;
        j.duration_s = std::max(opt.min_duration_s, (c.end_t - c.submit_t) / opt.compress);
        j.gpus = c.gpus;
        if (c.cls == JobClass::Idle && j.gpus > q.gpus) {
            j.gpus = q.gpus;  // so config A (no borrowing) can still run it inside the quota
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
