// Node holds for guaranteed jobs waiting on their victims (Holds, and the C API the plugin uses).
#include <cstring>

#include "idletime/sched.h"
#include "sched_fixture.hpp"

using idletime::sched::Holds;

namespace {

const int64_t NOW = 1700000000;

START_TEST(hold_lifecycle) {
    Holds h;
    ck_assert_int_eq(h.begin(7, 0, NOW + 70, 101), 1);
    ck_assert(h.held(7));
    ck_assert_int_eq(h.begin(7, 0, NOW + 40, 102), 0);  // an earlier deadline does not shorten it
    ck_assert_int_eq(h.begin(7, 0, NOW + 90, 103), 0);  // a later pick moves it
    ck_assert_uint_eq(h.victims(7).size(), 3);
    ck_assert_uint_eq(h.victims(7)[2], 103);
    ck_assert(h.keep(7, true, 0, true, NOW + 89));
    // Deadline reached, no victim leaving any more: kept Holds::kSettle s (the freed GPUs wait for
    // the owner's next pass), then forgotten.
    ck_assert(h.keep(7, true, 0, false, NOW + 90));
    ck_assert(h.keep(7, true, 0, false, NOW + 90 + Holds::kSettle - 1));
    ck_assert(!h.keep(7, true, 0, false, NOW + 90 + Holds::kSettle));
    ck_assert(!h.held(7));
    ck_assert(h.victims(7).empty());
    ck_assert(!h.keep(7, true, 0, true, NOW));  // nothing to keep any more
    ck_assert_uint_eq(h.size(), 0);
}
END_TEST

START_TEST(hold_outlives_deadline_while_victims_leave) {
    // On a loaded controller victims may take longer than GraceTime + KillWait to leave: ending
    // the hold then would let Slurm pick more victims for the same owner elsewhere.
    Holds h;
    ck_assert_int_eq(h.begin(7, 0, NOW + 70, 101), 1);
    ck_assert(h.keep(7, true, 0, true, NOW + 70));
    ck_assert(h.keep(7, true, 0, true, NOW + 70 + Holds::kLeavingMax - 1));
    ck_assert(!h.keep(7, true, 0, true, NOW + 70 + Holds::kLeavingMax));  // bounded all the same
    ck_assert_int_eq(h.begin(8, 0, NOW + 70, 102), 1);
    ck_assert(!h.keep(8, false, 0, true, NOW));  // started: ends whatever its victims do
}
END_TEST

START_TEST(hold_settles_after_its_victims_are_gone) {
    // Seen at 64 x 8 GPUs (victims outlasting GraceTime): the hold ended at the sweep that found the
    // victim gone, the moment its GPU freed, and backfill started a requeued idle-time job there
    // 0.4 s later; the owner preempted it 1.5 s after that. The settle time counts from the first
    // sweep that saw the victims gone, also when that was before the deadline.
    Holds h;
    ck_assert_int_eq(h.begin(7, 0, NOW + 70, 101), 1);
    ck_assert(h.keep(7, true, 0, false, NOW + 10));  // released early: gone from NOW + 10
    ck_assert(!h.keep(7, true, 0, false, NOW + 70));  // at its deadline, long after: ends at once
    ck_assert_int_eq(h.begin(8, 0, NOW + 70, 102), 1);
    ck_assert(h.keep(8, true, 0, true, NOW + 100));   // leaving past the deadline
    ck_assert(h.keep(8, true, 0, false, NOW + 101));  // gone now: settles
    ck_assert(h.keep(8, true, 0, true, NOW + 102));   // a victim seen leaving again (a new pick)
    ck_assert(h.keep(8, true, 0, false, NOW + 110));  // gone again: the settle time starts again
    ck_assert(h.keep(8, true, 0, false, NOW + 110 + Holds::kSettle - 1));
    ck_assert(!h.keep(8, true, 0, false, NOW + 110 + Holds::kSettle));
    ck_assert_int_eq(h.begin(9, 0, NOW + 70, 103), 1);
    ck_assert(h.keep(9, true, 0, false, NOW + 79));
    ck_assert(!h.keep(9, false, 0, false, NOW + 80));  // started: ends at once, no settle
}
END_TEST

START_TEST(hold_ends_when_job_moves_on) {
    Holds h;
    ck_assert_int_eq(h.begin(1, 0, NOW + 60, 11), 1);
    ck_assert_int_eq(h.begin(2, 3, NOW + 60, 12), 1);
    ck_assert_int_eq(h.begin(3, 0, NOW + 60, 13), 1);
    ck_assert(!h.keep(1, false, 0, false, NOW));  // started (or left): no longer pending
    ck_assert(!h.keep(2, true, 4, true, NOW));    // requeued since the hold began
    ck_assert(h.keep(3, true, 0, false, NOW));
    const auto ids = h.ids();
    ck_assert_uint_eq(ids.size(), 1);
    ck_assert_uint_eq(ids[0], 3);
}
END_TEST

START_TEST(hold_table_is_bounded) {
    Holds h;
    for (uint32_t id = 1; id <= Holds::kMax; ++id) ck_assert_int_eq(h.begin(id, 0, NOW + 60, id + 100000), 1);
    ck_assert_int_eq(h.begin(Holds::kMax + 1, 0, NOW + 60, 1), -1);  // Slurm alone decides for this one
    ck_assert_int_eq(h.begin(5, 0, NOW + 99, 2), 0);                  // held ones still move their deadline
    ck_assert(h.keep(1, false, 0, false, NOW) == false);
    ck_assert_int_eq(h.begin(Holds::kMax + 1, 0, NOW + 60, 3), 1);
    for (uint32_t v = 0; v < Holds::kMaxVictims + 10; ++v) h.begin(9, 0, NOW + 60, v);
    ck_assert_uint_eq(h.victims(9).size(), Holds::kMaxVictims);  // then only the deadline counts
}
END_TEST

idletime_sched_job_t cjob(uint32_t id, const char *part, uint32_t gpus, int64_t start) {
    idletime_sched_job_t j;
    std::memset(&j, 0, sizeof(j));
    j.job_id = id;
    j.partition = part;
    j.priority_tier = std::strncmp(part, "quota-", 6) == 0 ? 10 : std::strncmp(part, "idle-", 5) == 0 ? 1 : 5;
    j.preempt_off = std::strncmp(part, "quota-", 6) == 0;
    j.gpus = gpus;
    j.start_time = start;
    j.submit_time = start ? start - 1 : NOW - 10;
    j.account = "team-b";
    return j;
}

START_TEST(victim_picked_names_guaranteed_preemptor) {
    idletime_sched_t *s = fx::capi_cluster16();
    const auto owner = cjob(50, "quota-team-a", 4, 0);
    const auto v1 = cjob(1, "idle-p12", 4, NOW - 600), v2 = cjob(2, "idle-p12", 4, NOW - 500);
    ck_assert_int_eq(idletime_sched_victim_picked(s, 1), 0);  // nothing noted yet
    ck_assert_int_eq(idletime_sched_preemptable(s, &owner, &v1, NOW), 1);
    ck_assert_int_eq(idletime_sched_preemptable(s, &owner, &v2, NOW), 1);
    ck_assert_uint_eq(idletime_sched_victim_rank(s, 1), 1);  // ranks handed out, as Slurm does
    ck_assert_uint_eq(idletime_sched_victim_picked(s, 1), 50);
    ck_assert_uint_eq(idletime_sched_victim_picked(s, 2), 50);
    ck_assert_uint_eq(idletime_sched_victim_picked(s, 3), 0);  // not one of its candidates
    ck_assert_int_eq(idletime_sched_hold_begin(s, 50, 0, NOW + 70, 1), 1);
    ck_assert_int_eq(idletime_sched_hold_begin(s, 50, 0, NOW + 80, 2), 0);
    uint32_t ids[4] = {0};
    ck_assert_uint_eq(idletime_sched_hold_ids(s, ids, 4), 1);
    ck_assert_uint_eq(ids[0], 50);
    ck_assert_uint_eq(idletime_sched_hold_victims(s, 50, ids, 1), 1);  // at most max
    ck_assert_uint_eq(ids[0], 1);
    ck_assert_uint_eq(idletime_sched_hold_victims(s, 50, ids, 4), 2);
    ck_assert_uint_eq(ids[1], 2);
    ck_assert_int_eq(idletime_sched_hold_keep(s, 50, 1, 0, 0, NOW + 79), 1);
    ck_assert_int_eq(idletime_sched_hold_keep(s, 50, 1, 0, 1, NOW + 81), 1);  // a victim still leaving
    ck_assert_int_eq(idletime_sched_hold_keep(s, 50, 0, 0, 1, NOW + 81), 0);
    ck_assert_uint_eq(idletime_sched_hold_ids(s, ids, 4), 0);
    idletime_sched_free(s);
}
END_TEST

START_TEST(victim_picked_not_for_unmanaged_preemptor) {
    // No config: answers like partition_prio and holds nothing (a site that only loads the plugin).
    idletime_sched_t *s = idletime_sched_new();
    const auto hi = cjob(60, "urgent", 4, 0), lo = cjob(1, "idle-p12", 4, NOW - 600);
    ck_assert_int_eq(idletime_sched_preemptable(s, &hi, &lo, NOW), 1);
    ck_assert_uint_eq(idletime_sched_victim_picked(s, 1), 0);
    ck_assert_int_eq(idletime_sched_hold_begin(s, 0, 0, NOW, 1), -1);
    ck_assert_int_eq(idletime_sched_hold_begin(nullptr, 1, 0, NOW, 1), -1);
    ck_assert_uint_eq(idletime_sched_hold_victims(nullptr, 1, nullptr, 1), 0);
    ck_assert_uint_eq(idletime_sched_victim_picked(nullptr, 1), 0);
    ck_assert_uint_eq(idletime_sched_hold_ids(nullptr, nullptr, 1), 0);
    ck_assert_int_eq(idletime_sched_hold_keep(nullptr, 1, 1, 0, 1, NOW), 0);
    idletime_sched_free(s);
}
END_TEST

}  // namespace

Suite *holds_suite() {
    Suite *s = suite_create("sched-holds");
    TCase *t = tcase_create("holds");
    tcase_add_test(t, hold_lifecycle);
    tcase_add_test(t, hold_outlives_deadline_while_victims_leave);
    tcase_add_test(t, hold_settles_after_its_victims_are_gone);
    tcase_add_test(t, hold_ends_when_job_moves_on);
    tcase_add_test(t, hold_table_is_bounded);
    tcase_add_test(t, victim_picked_names_guaranteed_preemptor);
    tcase_add_test(t, victim_picked_not_for_unmanaged_preemptor);
    suite_add_tcase(s, t);
    return s;
}
