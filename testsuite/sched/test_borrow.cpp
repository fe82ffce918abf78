// Fair borrowing: borrowed GPUs per quota and the site factor of pending idle-time jobs.
#include "sched_fixture.hpp"

using idletime::sched::Borrowing;
using idletime::sched::JobView;

namespace {

const int64_t NOW = 1700000000;

struct Running {
    const char *partition, *account;
    uint32_t gpus;
};

struct FactorCase {
    const char *name;
    std::vector<Running> running;
    const char *partitions, *account;
    int64_t age;
    bool applies;
    uint32_t want;
};

// sched16.json: team-b and team-c own 8 GPUs each of p16 (16 GPUs); team-a 12 GPUs of p12.
const std::vector<FactorCase> &factor_cases() {
    static const std::vector<FactorCase> cases = {
        {"nobody borrows", {}, "idle-p16", "team-b", 30, true, 1000u * 1000000 + 30},
        {"borrowing 2 of 8 = 25%", {{"idle-p16", "team-b", 2}}, "idle-p16", "team-b", 0, true, 975u * 1000000},
        {"guaranteed GPUs are not borrowing", {{"quota-team-b", "team-b", 8}}, "idle-p16", "team-b", 0, true,
         1000u * 1000000},
        {"other quota's borrowing does not count", {{"idle-p16", "team-c", 6}}, "idle-p16", "team-b", 0, true,
         1000u * 1000000},
        {"several jobs add up", {{"idle-p16", "team-c", 2}, {"idle-p16", "team-c", 4}}, "idle-p16", "team-c", 5, true,
         925u * 1000000 + 5},
        {"level capped at 1000%", {{"idle-p16", "team-c", 800}}, "idle-p16", "team-c", 0, true, 0},
        {"age capped", {}, "idle-p16", "team-c", 5000000, true, 1000u * 1000000 + 999999},
        {"guaranteed job untouched", {}, "quota-team-b", "team-b", 0, false, 0},
        {"acceptable (quota + idle) untouched", {}, "quota-team-b,idle-p16", "team-b", 0, false, 0},
        {"unknown account untouched", {}, "idle-p16", "nobody", 0, false, 0},
    };
    return cases;
}

START_TEST(factor) {
    const FactorCase &c = factor_cases()[_i];
    const auto pol = fx::cluster16();
    Borrowing b;
    b.reset(NOW);
    uint32_t id = 1;
    for (const Running &r : c.running) b.add_running(pol, fx::job(id++, r.partition, r.gpus, NOW - 100, "", r.account));
    JobView p = fx::job(100, c.partitions, 2, 0, "", c.account);
    p.partition = std::string_view(c.partitions).substr(0, std::string_view(c.partitions).find(','));
    p.partitions = c.partitions;
    p.submit_time = NOW - c.age;
    uint32_t got = 4242;
    ck_assert_msg(idletime::sched::site_factor(pol, b, p, NOW, got) == c.applies, "%s", c.name);
    if (c.applies)
        ck_assert_msg(got == c.want, "%s: factor %u, want %u", c.name, got, c.want);
    else
        ck_assert_msg(got == 4242, "%s: factor written for an untouched job", c.name);
}
END_TEST

START_TEST(less_borrowing_beats_older) {
    // team-b borrows 2 GPUs, team-c 6; team-c's pending job is older by an hour: team-b's goes first.
    const auto pol = fx::cluster16();
    Borrowing b;
    b.reset(NOW);
    b.add_running(pol, fx::job(1, "idle-p16", 2, NOW - 50, "", "team-b"));
    b.add_running(pol, fx::job(2, "idle-p16", 6, NOW - 50, "", "team-c"));
    JobView older = fx::job(10, "idle-p16", 2, 0, "", "team-c"), newer = fx::job(11, "idle-p16", 2, 0, "", "team-b");
    older.submit_time = NOW - 3600;
    newer.submit_time = NOW - 1;
    uint32_t fo = 0, fn = 0;
    ck_assert(idletime::sched::site_factor(pol, b, older, NOW, fo));
    ck_assert(idletime::sched::site_factor(pol, b, newer, NOW, fn));
    ck_assert_uint_gt(fn, fo);
    // same borrowing: age decides
    b.reset(NOW);
    ck_assert(idletime::sched::site_factor(pol, b, older, NOW, fo));
    ck_assert(idletime::sched::site_factor(pol, b, newer, NOW, fn));
    ck_assert_uint_gt(fo, fn);
}
END_TEST

}  // namespace

Suite *borrow_suite() {
    Suite *s = suite_create("sched-borrow");
    TCase *t = tcase_create("factor");
    tcase_add_loop_test(t, factor, 0, int(factor_cases().size()));
    tcase_add_test(t, less_borrowing_beats_older);
    suite_add_tcase(s, t);
    return s;
}
