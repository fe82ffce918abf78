// Quotas from the history (accounts, site config), idle-time rules and gangs of whole nodes.
#include "replay/mapping.hpp"

#include <fstream>
#include <stdexcept>
// check.h defines fail(): include it after the standard headers.
#include "suites.hpp"
#include "../check_string.hpp"

using namespace idletime::replay;

namespace {

TraceRecord job(const std::string &name, const std::string &account, int gpus, int64_t start, int64_t end,
                int nodes = 1)
{
    TraceRecord r;
    r.name = name;
    r.account = account;
    r.num_gpu = gpus;
    r.nodes = nodes;
    r.creation_s = r.scheduled_s = start;
    r.deletion_s = end;
    r.qos_name = "normal";
    return r;
}

MapOptions opts()
{
    MapOptions o;
    o.window_start_s = 0;
    o.window_len_s = 1000;
    o.compress = 10;
    o.seed = 3;
    o.pools = {{"a100", "a100", 16}};
    o.quota_source = QuotaSource::Accounts;
    o.split_gangs = true;
    o.idle = {IdleRuleKind::Qos, "scavenger", 0};
    return o;
}

const Quota *quota(const JobStream &js, const std::string &name)
{
    for (const auto &q : js.quotas)
        if (q.name == name)
            return &q;
    return nullptr;
}

const ReplayJob *find(const JobStream &js, const std::string &id)
{
    for (const auto &j : js.jobs)
        if (j.id == id)
            return &j;
    return nullptr;
}

}  // namespace

// Account "Phys" runs 2 GPUs all the time and 6 more for 10 % of it: p95 = 8, p50 = 2.
START_TEST(test_percentile)
{
    std::vector<TraceRecord> rs{job("a", "Phys", 2, 0, 1000), job("b", "Phys", 6, 0, 100),
                                job("c", "bio", 1, 0, 1000)};
    MapOptions o = opts();
    JobStream p95 = map_trace(rs, o);
    ck_assert_double_eq_tol(quota(p95, "a100-phys")->demand_gpus, 8, 1e-9);
    o.quota_percentile = 0.5;
    JobStream p50 = map_trace(rs, o);
    const Quota *q = quota(p50, "a100-phys");
    ck_assert_ptr_nonnull(q);
    ck_assert_double_eq_tol(q->demand_gpus, 2, 1e-9);
    // 16 GPUs shared 2:1 (10.67 : 5.33, largest remainder), phys at least its largest job (6).
    ck_assert_int_eq(q->gpus, 11);
    ck_assert_int_eq(quota(p50, "a100-bio")->gpus, 5);
    ck_assert_cxx_str_eq(find(p50, "a")->quota, "a100-phys");
}
END_TEST

// Beyond max_quotas the accounts of least demand share "<pool>-other".
// Account names Slurm cannot take are renamed to [a-z0-9_.-] and counted; "a b" and "a_b" then
// share a quota; "Phys" and "phys" are one Slurm account and are not counted.
START_TEST(test_renamed_accounts)
{
    std::vector<TraceRecord> rs{job("j1", "a b", 1, 0, 1000), job("j2", "A B", 1, 0, 1000),
                                job("j3", "a_b", 1, 0, 1000), job("j4", "Phys", 1, 0, 1000),
                                job("j5", "phys", 1, 0, 1000)};
    JobStream js = map_trace(rs, opts());
    ck_assert_int_eq(js.stats.accounts_renamed, 1);
    ck_assert_uint_eq(js.quotas.size(), 2);
    ck_assert_ptr_nonnull(quota(js, "a100-a_b"));
    ck_assert_ptr_nonnull(quota(js, "a100-phys"));
}
END_TEST

START_TEST(test_fold_accounts)
{
    std::vector<TraceRecord> rs;
    for (int k = 0; k < 6; k++)
        rs.push_back(job("j" + std::to_string(k), "acct" + std::to_string(k), 1 + k % 3, 0, 1000));
    MapOptions o = opts();
    o.max_quotas = 3;
    JobStream js = map_trace(rs, o);
    ck_assert_uint_eq(js.quotas.size(), 3);
    ck_assert_int_eq(js.stats.accounts_merged, 4);
    ck_assert_ptr_nonnull(quota(js, "a100-other"));
    ck_assert_ptr_nonnull(quota(js, "a100-acct2"));  // 3 GPUs: the largest two stay
    ck_assert_ptr_nonnull(quota(js, "a100-acct5"));
    int sum = 0;
    for (const auto &q : js.quotas)
        sum += q.gpus;
    ck_assert_int_eq(sum, 16);
}
END_TEST

// Share rule: exactly round(share x n) of each account's jobs are idle-time.
START_TEST(test_idle_share)
{
    std::vector<TraceRecord> rs;
    for (int k = 0; k < 10; k++)
        rs.push_back(job("a" + std::to_string(k), "A", 1, k * 10, k * 10 + 50));
    for (int k = 0; k < 4; k++)
        rs.push_back(job("b" + std::to_string(k), "B", 1, k * 10, k * 10 + 50));
    MapOptions o = opts();
    o.idle = {IdleRuleKind::Share, "", 0.25};
    for (uint64_t seed : {1, 2, 3}) {
        o.seed = seed;
        JobStream js = map_trace(rs, o);
        int idle_a = 0, idle_b = 0;
        for (const auto &j : js.jobs)
            if (j.cls == JobClass::Idle)
                (j.id[0] == 'a' ? idle_a : idle_b)++;
        ck_assert_int_eq(idle_a, 3);  // round(2.5) = 3
        ck_assert_int_eq(idle_b, 1);
    }
}
END_TEST

// Partition rule.
START_TEST(test_idle_partition)
{
    std::vector<TraceRecord> rs{job("a", "A", 1, 0, 100), job("b", "A", 1, 0, 100)};
    rs[1].partition = "preempt";
    MapOptions o = opts();
    o.idle = {IdleRuleKind::Partition, "preempt", 0};
    JobStream js = map_trace(rs, o);
    ck_assert_int_eq(int(find(js, "a")->cls), int(JobClass::Guaranteed));
    ck_assert_int_eq(int(find(js, "b")->cls), int(JobClass::Idle));
}
END_TEST

// Gangs: 2 trace nodes x 4 GPUs stay 2 nodes; 12 GPUs on one trace node split into 3 nodes;
// a gang larger than its pool is cut to the pool's nodes.
START_TEST(test_gangs)
{
    std::vector<TraceRecord> rs{job("two", "A", 8, 0, 100, 2), job("split", "A", 12, 0, 100, 1),
                                job("huge", "B", 64, 0, 100, 8), job("one", "B", 1, 0, 100),
                                job("odd", "B", 5, 0, 100)};
    MapOptions o = opts();
    o.max_quotas = 1;  // one quota "a100-other" of all 16 GPUs, so the cut gang fits it
    JobStream js = map_trace(rs, o);
    ck_assert_int_eq(find(js, "two")->nodes, 2);
    ck_assert_int_eq(find(js, "two")->gpus, 8);
    ck_assert_int_eq(find(js, "split")->nodes, 3);
    ck_assert_int_eq(find(js, "split")->gpus, 12);
    ck_assert_int_eq(js.stats.gangs, 4);
    ck_assert_int_eq(js.stats.gang_capped, 1);
    ck_assert_int_eq(find(js, "odd")->gpus, 6);  // 5 GPUs: 2 nodes x 3, counted
    ck_assert_int_eq(js.stats.gang_rounded_up, 1);
    ck_assert_int_eq(find(js, "huge")->nodes, 4);
    o.split_gangs = false;  // openb: pods stay on one node, capped at its size
    rs.erase(rs.begin() + 2);
    JobStream capped = map_trace(rs, o);
    ck_assert_int_eq(find(capped, "split")->nodes, 1);
    ck_assert_int_eq(find(capped, "split")->gpus, 4);
    ck_assert_int_eq(capped.stats.gpus_capped, 2);  // split (12) and odd (5)
}
END_TEST

// Site quotas: accounts of the site's idletime.json; weights are its GPUs; others are dropped.
START_TEST(test_site_quotas)
{
    std::vector<TraceRecord> rs{job("a", "lab-a", 1, 0, 100), job("b", "lab-b", 2, 0, 100),
                                job("c", "lab-c", 1, 0, 100), job("a2", "lab-a2", 1, 0, 100)};
    MapOptions o = opts();
    o.quota_source = QuotaSource::Site;
    o.site_quotas = {{"team-a", "a100", 300, {"lab-a", "lab-a2"}}, {"team-b", "a100", 100, {"lab-b"}}};
    JobStream js = map_trace(rs, o);
    ck_assert_int_eq(js.stats.no_quota, 1);
    ck_assert_int_eq(js.stats.kept, 3);
    ck_assert_int_eq(quota(js, "team-a")->gpus, 12);
    ck_assert_int_eq(quota(js, "team-b")->gpus, 4);
    ck_assert_cxx_str_eq(find(js, "a2")->quota, "team-a");
    o.site_quotas[1].pool = "v100";
    std::string msg;
    try {
        map_trace(rs, o);
    } catch (const std::invalid_argument &e) {
        msg = e.what();
    }
    ck_assert_cxx_str_eq(msg, "site quota 'team-b': pool 'v100' is not a local pool");
}
END_TEST

// The sacct fixture end to end: Chem's 2-node scavenger job is an idle-time gang.
START_TEST(test_sacct_stream)
{
    std::ifstream in(std::string(REPLAY_TEST_DATA) + "/sacct_small.txt");
    ReadStats st;
    auto recs = make_trace_reader("sacct")->read(in, "s", st);
    MapOptions o = opts();
    o.window_len_s = 4000;
    o.pools = {{"a100", "a100", 8}, {"h100", "h100", 16}};
    o.model_to_spec = {{"a100", "a100"}, {"h100", "h100"}};
    JobStream js = map_trace(recs, o);
    const ReplayJob *g = find(js, "101");
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(int(g->cls), int(JobClass::Idle));
    ck_assert_int_eq(g->nodes, 2);
    ck_assert_int_eq(g->gpus, 8);
    ck_assert_cxx_str_eq(g->quota, "h100-chem");
    ck_assert_cxx_str_eq(find(js, "100")->quota, "a100-physics");
    ck_assert_int_eq(js.stats.never_scheduled, 1);
    ck_assert_int_eq(js.stats.no_gpu, 1);
    ck_assert_int_eq(js.stats.kept, 5);
}
END_TEST

Suite *quotas_suite()
{
    Suite *s = suite_create("quotas");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_percentile);
    tcase_add_test(tc, test_fold_accounts);
    tcase_add_test(tc, test_renamed_accounts);
    tcase_add_test(tc, test_idle_share);
    tcase_add_test(tc, test_idle_partition);
    tcase_add_test(tc, test_gangs);
    tcase_add_test(tc, test_site_quotas);
    tcase_add_test(tc, test_sacct_stream);
    suite_add_tcase(s, tc);
    return s;
}
