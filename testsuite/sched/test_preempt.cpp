// Who may preempt whom: a table over partition pairs, the minimum run time, no-config fallback.
#include "sched_fixture.hpp"

using idletime::sched::Kind;
using idletime::sched::Policy;

namespace {

struct PairCase {
    const char *name, *preemptor, *preemptee;
    bool allowed;
};

// With etc/idletime.json: team-a and team-b own a100-east, team-c a100-west, team-x h100-beta.
const PairCase pair_cases[] = {
    {"quota preempts idle on own pool", "quota-team-a", "idle-a100-east", true},
    {"other quota of same pool too", "quota-team-b", "idle-a100-east", true},
    {"not another pool of same spec", "quota-team-a", "idle-a100-west", false},
    {"not another tenant", "quota-team-a", "idle-h100-beta", false},
    {"own pool of team-c", "quota-team-c", "idle-a100-west", true},
    {"general pool", "quota-team-cpu", "idle-cpu-gen", true},
    {"nothing preempts guaranteed (quota)", "quota-team-b", "quota-team-a", false},
    {"nothing preempts guaranteed (idle)", "idle-a100-east", "quota-team-a", false},
    {"nothing preempts guaranteed (unmanaged)", "debug-high", "quota-team-a", false},
    {"idle never preempts idle", "idle-a100-east", "idle-a100-east", false},
    {"idle never preempts idle of other pool", "idle-a100-west", "idle-a100-east", false},
    {"unmanaged higher tier preempts idle (partition_prio)", "debug-high", "idle-a100-east", true},
    {"unmanaged lower tier does not", "debug-low", "idle-a100-east", false},
};

uint32_t tier(const char *p) {
    std::string_view s(p);
    if (s.rfind("quota-", 0) == 0) return 10;
    if (s.rfind("idle-", 0) == 0) return 1;
    return s == "debug-high" ? 20 : 0;
}

START_TEST(pairs) {
    const Policy pol = fx::example();
    const PairCase &c = pair_cases[_i];
    std::string_view b(c.preemptee);
    bool off = b.rfind("quota-", 0) == 0;
    ck_assert_msg(pol.partitions_may_preempt(c.preemptor, tier(c.preemptor), c.preemptee, tier(c.preemptee), off) ==
                      c.allowed,
                  "%s", c.name);
}
END_TEST

START_TEST(guaranteed_exempt_even_if_admin_enables_mode) {
    const Policy pol = fx::example();
    // quota partition with PreemptMode left on and a lower tier: still never a victim
    ck_assert(!pol.partitions_may_preempt("debug-high", 20, "quota-team-a", 1, false));
}
END_TEST

START_TEST(idle_partition_with_mode_off_exempt) {
    const Policy pol = fx::example();
    ck_assert(!pol.partitions_may_preempt("quota-team-a", 10, "idle-a100-east", 1, true));
}
END_TEST

START_TEST(min_run_time) {
    const Policy pol = fx::example(600);
    const auto owner = fx::job(1, "quota-team-a", 4, 0);
    const int64_t now = 100000;
    ck_assert(!pol.may_preempt(owner, fx::job(2, "idle-a100-east", 1, now - 599), now));
    ck_assert(pol.may_preempt(owner, fx::job(3, "idle-a100-east", 1, now - 600), now));
    // the minimum covers idle-time victims only: an unmanaged low-tier job goes at once
    auto other = fx::job(4, "debug-low", 1, now - 1);
    other.priority_tier = 0;
    auto high = fx::job(5, "debug-high", 1, 0);
    high.priority_tier = 20;
    ck_assert(pol.may_preempt(high, other, now));
}
END_TEST

// N owners at once: an owner that has picked no victim yet never gets one already notified for
// another owner (it would wait on it and start only after that owner); the owner that picked
// it keeps it (issue 14).
START_TEST(notified_victim_kept_for_its_preemptor) {
    const Policy pol = fx::example();
    const int64_t now = 100000;
    auto victim = fx::job(2, "idle-a100-east", 1, now - 100);
    victim.preempt_time = now - 1;
    auto fresh = fx::job(3, "quota-team-b", 1, 0);
    ck_assert(!pol.may_preempt(fresh, victim, now));
    ck_assert(pol.may_preempt(fresh, fx::job(4, "idle-a100-east", 1, now - 100), now));
    auto picked = fx::job(1, "quota-team-a", 1, 0);
    picked.preempt_start = now - 1;
    ck_assert(pol.may_preempt(picked, victim, now));
}
END_TEST

START_TEST(no_config_is_partition_prio) {
    const Policy pol(nullptr, {});
    ck_assert(pol.part("quota-team-a").kind == Kind::Unmanaged);
    ck_assert(pol.partitions_may_preempt("quota-team-a", 10, "idle-a100-east", 1, false));
    ck_assert(!pol.partitions_may_preempt("quota-team-a", 10, "quota-team-b", 10, true));
    ck_assert(!pol.partitions_may_preempt("idle-a100-east", 1, "idle-a100-west", 1, false));
}
END_TEST

struct QuotaCase {
    const char *name, *partition, *account, *hint, *want;
};

const QuotaCase quota_cases[] = {
    {"account with one quota", "idle-a100-west", "team-b", "", "team-b"},
    {"hint wins", "idle-a100-east", "team-a", "team-h", "team-h"},
    {"account in two quotas: the one borrowing this pool", "idle-h100-main", "team-a", "", "team-h"},
    {"account in two quotas: a100 pool", "idle-a100-west", "team-a", "", "team-a"},
    {"unknown account", "idle-a100-east", "nobody", "", nullptr},
    {"unknown hint falls back to account", "idle-a100-east", "team-c", "nosuch", "team-c"},
};

START_TEST(quota_of) {
    const Policy pol = fx::example();
    const QuotaCase &c = quota_cases[_i];
    auto v = fx::job(1, c.partition, 1, 1, "", c.account);
    v.quota_hint = c.hint;
    const idletime::Quota *q = pol.quota_of(v);
    if (!c.want) {
        ck_assert_msg(q == nullptr, "%s", c.name);
    } else {
        ck_assert_msg(q && q->name == c.want, "%s: got %s", c.name, q ? q->name.c_str() : "none");
    }
}
END_TEST

START_TEST(idle_only) {
    const Policy pol = fx::example();
    auto v = fx::job(1, "idle-a100-east", 1, 0);
    v.partitions = "idle-a100-east,idle-a100-west";
    ck_assert(pol.idle_only(v));
    v.partitions = "quota-team-a,idle-a100-east";
    ck_assert(!pol.idle_only(v));
    v.partitions = "debug";
    ck_assert(!pol.idle_only(v));
}
END_TEST

}  // namespace

Suite *preempt_suite() {
    Suite *s = suite_create("sched-preempt");
    TCase *t = tcase_create("rules");
    tcase_add_loop_test(t, pairs, 0, sizeof(pair_cases) / sizeof(pair_cases[0]));
    tcase_add_test(t, guaranteed_exempt_even_if_admin_enables_mode);
    tcase_add_test(t, idle_partition_with_mode_off_exempt);
    tcase_add_test(t, min_run_time);
    tcase_add_test(t, notified_victim_kept_for_its_preemptor);
    tcase_add_test(t, no_config_is_partition_prio);
    tcase_add_loop_test(t, quota_of, 0, sizeof(quota_cases) / sizeof(quota_cases[0]));
    tcase_add_test(t, idle_only);
    suite_add_tcase(s, t);
    return s;
}
