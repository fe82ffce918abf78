// Mapping rules on the hand-written fixture (see data/openb_small.csv).
#include "replay/mapping.hpp"

#include <fstream>
#include <stdexcept>
// check.h defines fail(): include it after the standard headers.
#include "suites.hpp"

using namespace idletime::replay;

namespace {

std::vector<TraceRecord> fixture()
{
    std::ifstream in(std::string(REPLAY_TEST_DATA) + "/openb_small.csv");
    return make_trace_reader("openb")->read(in, "openb_small.csv");
}

MapOptions base()
{
    MapOptions o;
    o.window_start_s = 0;
    o.window_len_s = 1000;
    o.compress = 10;
    o.seed = 7;
    o.teams = 2;
    o.pools = {{"a100", "a100", 8}, {"h100", "h100", 8}};
    o.model_to_spec = {{"V100M16", "a100"}, {"V100M32", "a100"}, {"G2", "h100"}};
    return o;
}

const ReplayJob *find(const JobStream &js, const char *id)
{
    for (const auto &j : js.jobs)
        if (j.id == id)
            return &j;
    return nullptr;
}

struct JobCase {
    const char *id;
    double submit, duration;
    int gpus;
    JobClass cls;
    const char *pool;  // nullptr: either pool (unconstrained pod)
};

const JobCase kJobs[] = {
    {"p-ls-a", 0, 100, 1, JobClass::Guaranteed, nullptr},
    {"p-be-b", 10, 30, 2, JobClass::Idle, "a100"},       // V100 only -> a100
    {"p-share", 30, 59, 1, JobClass::Guaranteed, "h100"},  // Burstable, 460 milli -> 1 GPU
    {"p-big", 50, 18, 4, JobClass::Guaranteed, "h100"},    // 8 GPUs capped at node size
};

}  // namespace

START_TEST(test_jobs)
{
    JobStream js = map_trace(fixture(), base());
    const JobCase &c = kJobs[_i];
    const ReplayJob *j = find(js, c.id);
    ck_assert_msg(j != nullptr, "job %s missing", c.id);
    ck_assert_double_eq_tol(j->submit_s, c.submit, 1e-9);
    ck_assert_double_eq_tol(j->duration_s, c.duration, 1e-9);
    ck_assert_int_eq(j->gpus, c.gpus);
    ck_assert_int_eq(int(j->cls), int(c.cls));
    if (c.pool)
        ck_assert_str_eq(j->pool.c_str(), c.pool);
    ck_assert(j->quota.starts_with(j->pool + "-t"));
}
END_TEST

START_TEST(test_stats)
{
    JobStream js = map_trace(fixture(), base());
    const MapStats &s = js.stats;
    ck_assert_int_eq(s.pods, 8);
    ck_assert_int_eq(s.kept, 4);
    ck_assert_int_eq(s.no_gpu, 1);           // p-cpu
    ck_assert_int_eq(s.never_scheduled, 1);  // p-pend
    ck_assert_int_eq(s.outside_window, 1);   // p-late
    ck_assert_int_eq(s.unmapped_spec, 1);    // p-t4
    ck_assert_int_eq(s.fractional_rounded, 1);
    ck_assert_int_eq(s.gpus_capped, 1);
    ck_assert_int_eq(s.guaranteed, 3);
    ck_assert_int_eq(s.idle, 1);
    ck_assert_int_eq(s.sampled_out, 0);
    ck_assert_int_eq(s.kept + s.no_gpu + s.never_scheduled + s.outside_window + s.sampled_out +
                         s.unmapped_spec + s.fractional_skipped,
                     s.pods);
    ck_assert_double_eq_tol(js.span_s, 100, 1e-9);
}
END_TEST

struct WindowCase {
    int64_t start, len;
    bool carry, skip_fractional;
    const char *id;
    double duration;  // -1: job must be absent
    int kept;
};

const WindowCase kWindows[] = {
    {200, 800, true, false, "p-ls-a", 80, 4},    // carried over: 1000-200 trace s remain
    {200, 800, false, false, "p-ls-a", -1, 2},  // no carry over: dropped
    {0, 600, true, false, "p-ls-a", 60, 4},     // clipped at the window end
    {0, 1000, true, true, "p-share", -1, 3},    // shared GPU skipped
};

START_TEST(test_window)
{
    const WindowCase &c = kWindows[_i];
    MapOptions o = base();
    o.window_start_s = c.start;
    o.window_len_s = c.len;
    o.carry_over = c.carry;
    o.fractional = c.skip_fractional ? Fractional::Skip : Fractional::RoundUp;
    JobStream js = map_trace(fixture(), o);
    const ReplayJob *j = find(js, c.id);
    if (c.duration < 0)
        ck_assert_ptr_null(j);
    else {
        ck_assert_ptr_nonnull(j);
        ck_assert_double_eq_tol(j->duration_s, c.duration, 1e-9);
    }
    ck_assert_int_eq(js.stats.kept, c.kept);
}
END_TEST

START_TEST(test_quotas)
{
    JobStream js = map_trace(fixture(), base());
    ck_assert_uint_eq(js.quotas.size(), 4);
    std::map<std::string, int> sum;
    for (const auto &q : js.quotas)
        sum[q.pool] += q.gpus;
    ck_assert_int_eq(sum["a100"], 8);
    ck_assert_int_eq(sum["h100"], 8);
    for (const auto &j : js.jobs)
        for (const auto &q : js.quotas)
            if (q.name == j.quota)
                ck_assert_int_ge(q.gpus, j.gpus);
}
END_TEST

START_TEST(test_deterministic)
{
    std::vector<TraceRecord> recs;
    for (int i = 0; i < 200; i++)
        recs.push_back({"pod-" + std::to_string(i), 1, 1000, {}, TraceQos::LatencySensitive, i, i, i + 50, 1,
                        "", "", "", "LS"});
    MapOptions o = base();
    JobStream a = map_trace(recs, o), b = map_trace(recs, o);
    o.seed = 8;
    JobStream c = map_trace(recs, o);
    int same_ab = 0, same_ac = 0, h100 = 0;
    for (size_t i = 0; i < a.jobs.size(); i++) {
        same_ab += a.jobs[i].quota == b.jobs[i].quota;
        same_ac += a.jobs[i].quota == c.jobs[i].quota;
        h100 += a.jobs[i].pool == "h100";
    }
    ck_assert_int_eq(same_ab, 200);
    ck_assert_int_lt(same_ac, 200);
    ck_assert_int_gt(h100, 60);  // equal capacities: about half each
    ck_assert_int_lt(h100, 140);
    o.sample = 0.25;
    JobStream d = map_trace(recs, o);
    ck_assert_int_gt(d.stats.kept, 25);  // about 50 of 200
    ck_assert_int_lt(d.stats.kept, 75);
    ck_assert_int_eq(d.stats.kept + d.stats.sampled_out, 200);
}
END_TEST

struct QuantileCase {
    std::vector<std::pair<double, int>> changes;
    double t0, t1, p, expect;
};

const QuantileCase kQuantiles[] = {
    {{{0, 1}, {10, -1}}, 0, 10, 0.95, 1},
    {{{0, 1}, {5, -1}}, 0, 100, 0.95, 0},            // busy 5 % of the time
    {{{0, 2}, {0, 1}, {90, -3}}, 0, 100, 0.95, 3},   // 3 for 90 %
    {{{-50, 4}, {50, -4}}, 0, 100, 0.6, 4},          // starts before the window
    {{}, 0, 10, 0.95, 0},
};

START_TEST(test_quantile)
{
    const QuantileCase &c = kQuantiles[_i];
    ck_assert_double_eq_tol(weighted_quantile(c.changes, c.t0, c.t1, c.p), c.expect, 1e-9);
}
END_TEST

struct ApportionCase {
    int total;
    std::vector<double> weights;
    std::vector<int> mins, expect;
};

const ApportionCase kApportion[] = {
    {16, {3, 1}, {1, 1}, {12, 4}},
    {16, {0, 0}, {1, 1}, {8, 8}},
    {16, {10, 0.1}, {1, 4}, {12, 4}},   // minimum taken from the largest
    {10, {1, 1, 1}, {1, 1, 1}, {4, 3, 3}},
};

START_TEST(test_apportion)
{
    const ApportionCase &c = kApportion[_i];
    auto got = apportion(c.total, c.weights, c.mins);
    ck_assert_uint_eq(got.size(), c.expect.size());
    for (size_t i = 0; i < got.size(); i++)
        ck_assert_int_eq(got[i], c.expect[i]);
}
END_TEST

struct BadOpt {
    void (*edit)(MapOptions &);
    const char *expect;
};

const BadOpt kBadOpts[] = {
    {[](MapOptions &o) { o.window_len_s = 0; }, "window length must be > 0"},
    {[](MapOptions &o) { o.compress = 0.5; }, "compression factor must be >= 1"},
    {[](MapOptions &o) { o.teams = 0; }, "teams per pool must be >= 1"},
    {[](MapOptions &o) { o.pools.clear(); }, "at least one local pool"},
    {[](MapOptions &o) { o.pools[1].gpus = 4; }, "quotas need at least 5 GPUs"},
    {[](MapOptions &o) { o.pools[1].gpus = 6; }, "pool 'h100' has 6 GPUs, not a whole number of 4-GPU nodes"},
    {[](MapOptions &o) { o.max_gpus_per_job = 9; }, "GPUs per node must be at most 8"},
    {[](MapOptions &o) { o.pools[0].gpus = o.pools[1].gpus = 2147483644; }, "the local cluster holds at most 64"},
    {[](MapOptions &o) { o.sample = 0; }, "sample share must be in (0, 1]"},
};

START_TEST(test_bad_options)
{
    MapOptions o = base();
    kBadOpts[_i].edit(o);
    std::string msg;
    try {
        map_trace(fixture(), o);
    } catch (const std::invalid_argument &e) {
        msg = e.what();
    }
    ck_assert_msg(msg.find(kBadOpts[_i].expect) != std::string::npos, "got '%s'", msg.c_str());
}
END_TEST

Suite *mapping_suite()
{
    Suite *s = suite_create("mapping");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, test_jobs, 0, sizeof kJobs / sizeof kJobs[0]);
    tcase_add_test(tc, test_stats);
    tcase_add_loop_test(tc, test_window, 0, sizeof kWindows / sizeof kWindows[0]);
    tcase_add_test(tc, test_quotas);
    tcase_add_test(tc, test_deterministic);
    tcase_add_loop_test(tc, test_quantile, 0, sizeof kQuantiles / sizeof kQuantiles[0]);
    tcase_add_loop_test(tc, test_apportion, 0, sizeof kApportion / sizeof kApportion[0]);
    tcase_add_loop_test(tc, test_bad_options, 0, sizeof kBadOpts / sizeof kBadOpts[0]);
    suite_add_tcase(s, tc);
    return s;
}
