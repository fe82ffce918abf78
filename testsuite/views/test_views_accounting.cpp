// Quota accounting: used, lent, borrowed, own, unassigned, pending; apportion rounding.

#include "views/accounting.hpp"
#include "views_fixture.hpp"

using namespace idletime;
using namespace idletime::views;

namespace {

struct Run {
    const char *account;
    std::vector<std::string> parts;
    SlurmState state;
    uint32_t gpus, cpus;
};

// Jobs list -> accounting over the example config.
Accounting run(const std::vector<Run> &runs, std::vector<JobInfo> &store) {
    const Config &cfg = example_config();
    static Catalog *cat = new Catalog(cfg);
    store.clear();
    for (const Run &r : runs) {
        JobInfo j;
        j.account = r.account;
        j.partitions = r.parts;
        j.state = r.state;
        j.gpus = r.gpus;
        j.cpus = r.cpus;
        if (r.state == SlurmState::Running) j.nodes = "x";
        store.push_back(j);
    }
    std::vector<JobView> views;
    for (const JobInfo &j : store) views.push_back(derive(*cat, j, 0, true));
    return account(cfg, views);
}

const QuotaUse &q(const Accounting &a, const char *name) {
    for (const QuotaUse &u : a.quotas)
        if (u.quota->name == name) return u;
    ck_abort_msg("no quota %s", name);
    return a.quotas[0];
}
const PoolUse &p(const Accounting &a, const char *name) {
    for (const PoolUse &u : a.pools)
        if (u.pool->name == name) return u;
    ck_abort_msg("no pool %s", name);
    return a.pools[0];
}

const std::vector<std::string> kEastOnly{"idle-a100-east", "idle-a100-west"};

}  // namespace

// a100-east: team-a 4 + team-b 4 = 8 GPUs (no unassigned capacity).
START_TEST(test_lend_borrow) {
    std::vector<JobInfo> store;
    Accounting a = run({{"team-a", {"quota-team-a"}, SlurmState::Running, 2, 2},
                        {"team-c", {"idle-a100-east", "idle-a100-west"}, SlurmState::Running, 4, 4},
                        {"team-b", {"idle-a100-east", "idle-a100-west"}, SlurmState::Running, 2, 2},
                        {"team-b", {"quota-team-b"}, SlurmState::Pending, 4, 4}},
                       store);
    ck_assert_uint_eq(q(a, "team-a").used.gpus, 2);
    ck_assert_uint_eq(q(a, "team-a").lent.gpus, 2);     // its 2 free GPUs hold team-c's job
    ck_assert_uint_eq(q(a, "team-b").own.gpus, 2);      // its own idle job inside its free share
    ck_assert_uint_eq(q(a, "team-b").lent.gpus, 2);     // the other 2 of team-c's job
    ck_assert_uint_eq(q(a, "team-b").borrowed.gpus, 2);
    ck_assert_uint_eq(q(a, "team-b").pending.gpus, 4);
    ck_assert_uint_eq(q(a, "team-b").pending_jobs, 1);
    ck_assert_uint_eq(q(a, "team-c").borrowed.gpus, 4);
    ck_assert_uint_eq(q(a, "team-c").lent.gpus, 0);
    const PoolUse &east = p(a, "a100-east");
    ck_assert_uint_eq(east.idle_used.gpus, 6);
    ck_assert_uint_eq(east.unassigned.gpus, 0);
    ck_assert_uint_eq(east.lent.gpus + east.own.gpus + east.unassigned.gpus, east.idle_used.gpus);
    // tenant acme: borrowed = all idle-time GPUs of its quotas
    ck_assert_str_eq(a.tenants[0].tenant.c_str(), "acme");
    ck_assert_uint_eq(a.tenants[0].borrowed.gpus, 6);
    ck_assert_uint_eq(a.tenants[0].lent.gpus, 4);
    ck_assert_uint_eq(a.tenants[1].borrowed.gpus, 0);
}
END_TEST

// Proportional split of others' idle usage over unequal free shares.
START_TEST(test_proportional) {
    std::vector<JobInfo> store;
    Accounting a = run({{"team-a", {"quota-team-a"}, SlurmState::Running, 3, 3},  // team-a free 1, team-b free 4
                        {"team-c", {"idle-a100-east", "idle-a100-west"}, SlurmState::Running, 3, 3}},
                       store);
    ck_assert_uint_eq(q(a, "team-a").lent.gpus + q(a, "team-b").lent.gpus, 3);
    ck_assert_uint_eq(q(a, "team-b").lent.gpus, 2);  // 3*4/5 = 2.4 -> 2 (+ remainder 0.4)
    ck_assert_uint_eq(q(a, "team-a").lent.gpus, 1);  // 3*1/5 = 0.6 -> 0 + largest remainder
}
END_TEST

// a100-west has 8 GPUs, all team-c's: h100-main team-h 8 of 8; cpu-gen: CPUs only.
START_TEST(test_cpu_pool_and_nothing_running) {
    std::vector<JobInfo> store;
    Accounting a = run({{"team-cpu", {"quota-team-cpu"}, SlurmState::Running, 0, 6}}, store);
    ck_assert_uint_eq(q(a, "team-cpu").used.cpus, 6);
    ck_assert_uint_eq(q(a, "team-cpu").guaranteed.cpus, 8);
    ck_assert_uint_eq(p(a, "cpu-gen").capacity.cpus, 16);
    ck_assert_uint_eq(p(a, "cpu-gen").unassigned.cpus, 0);
    for (const QuotaUse &u : a.quotas) ck_assert_uint_eq(u.lent.gpus, 0);
}
END_TEST

// Finished jobs count nowhere; pending idle jobs count as pending of their quota.
START_TEST(test_finished_and_pending) {
    std::vector<JobInfo> store;
    Accounting a = run({{"team-a", {"quota-team-a"}, SlurmState::Complete, 4, 4},
                        {"team-a", kEastOnly, SlurmState::Pending, 2, 2}},
                       store);
    ck_assert_uint_eq(q(a, "team-a").used.gpus, 0);
    ck_assert_uint_eq(q(a, "team-a").pending.gpus, 2);
}
END_TEST

START_TEST(test_apportion) {
    struct {
        uint64_t total;
        std::vector<uint64_t> w, want;
    } t[] = {
        {0, {1, 2}, {0, 0}},   {3, {0, 0}, {0, 0}},   {5, {2, 2}, {2, 2}},  // over capacity: all of it
        {3, {1, 4}, {1, 2}},   {2, {1, 1, 1}, {1, 1, 0}},  {7, {10}, {7}},  {4, {2, 2}, {2, 2}},
    };
    for (auto &c : t) {
        std::vector<uint64_t> got = apportion(c.total, c.w);
        ck_assert_msg(got == c.want, "apportion(%lu) wrong", (unsigned long)c.total);
    }
}
END_TEST

Suite *make_suite() {
    Suite *s = suite_create("views_accounting");
    TCase *t = tcase_create("accounting");
    tcase_add_test(t, test_lend_borrow);
    tcase_add_test(t, test_proportional);
    tcase_add_test(t, test_cpu_pool_and_nothing_running);
    tcase_add_test(t, test_finished_and_pending);
    tcase_add_test(t, test_apportion);
    suite_add_tcase(s, t);
    return s;
}

VIEWS_CHECK_MAIN
