// victim_note: preempt/idletime's SystemComment note naming the job a victim was preempted for,
// and the hook's reading of it (stale, malformed and look-alike notes name nobody).
#include <string>

#include "src/core/victim_note.hpp"
#include "testsuite/check_string.hpp"
#include "testsuite/unit/check_main.hpp"

using idletime::victim_note_owner;
using idletime::victim_note_replace;

START_TEST(test_note_written_and_read) {
    std::string out;
    ck_assert(victim_note_replace("", 4242, 1700000000, out));
    ck_assert_cxx_str_eq(out, "idletime: preempted at 1700000000 for job 4242");
    ck_assert_uint_eq(victim_note_owner(out, 1700000000, 30), 4242);
    ck_assert_uint_eq(victim_note_owner(out, 1700000002, 30), 4242);  // preempt_time a second later
    ck_assert(!victim_note_replace("", 0, 1700000000, out));      // no owner, no note
}
END_TEST

START_TEST(test_other_text_kept_old_notes_replaced) {
    std::string once, twice;
    // Slurm's own lines (burst buffer, credential failures) stay; an earlier note is replaced.
    ck_assert(victim_note_replace("bb: stage_in: ok", 11, 1000, once));
    ck_assert(victim_note_replace(once, 12, 2000, twice));
    ck_assert_cxx_str_eq(twice, "bb: stage_in: ok\nidletime: preempted at 2000 for job 12");
    ck_assert_uint_eq(victim_note_owner(twice, 2000, 30), 12);
    // A SystemComment already near Slurm's size gets no note.
    ck_assert(!victim_note_replace(std::string(idletime::kVictimNoteMaxOld + 1, 'x'), 12, 2000, twice));
}
END_TEST

// The victim ignored its notice: when GraceTime (30 s) ran out Slurm set preempt_time again, later
// than the note; the note still names the owner.
START_TEST(test_grace_time_run_out) {
    ck_assert_uint_eq(victim_note_owner("idletime: preempted at 1000 for job 12", 1030, 30), 12);
}
END_TEST

START_TEST(test_stale_or_malformed_names_nobody) {
    const std::string note = "idletime: preempted at 1000 for job 12";
    ck_assert_uint_eq(victim_note_owner(note, 1100, 30), 0);   // an earlier preemption's note
    ck_assert_uint_eq(victim_note_owner(note, 0, 30), 0);      // the run was never a victim
    ck_assert_uint_eq(victim_note_owner(note, 997, 30), 0);    // written after the preemption
    ck_assert_uint_eq(victim_note_owner("", 1000, 30), 0);
    ck_assert_uint_eq(victim_note_owner("idletime: preempted at 1000 for job 12x", 1000, 30), 0);
    ck_assert_uint_eq(victim_note_owner("idletime: preempted at 1000 for job -12", 1000, 30), 0);
    ck_assert_uint_eq(victim_note_owner("idletime: preempted at 1000 for job 99999999999", 1000, 30), 0);
    ck_assert_uint_eq(victim_note_owner("idletime: preempted at  1000 for job 12", 1000, 30), 0);
    // Not at the start of a line: someone else's text that merely contains the words.
    ck_assert_uint_eq(victim_note_owner("x idletime: preempted at 1000 for job 12", 1000, 30), 0);
    // Two notes: the plugin keeps one, so a second line that looks like one is not slurmctld's.
    ck_assert_uint_eq(victim_note_owner(note + "\n" + "idletime: preempted at 1000 for job 13", 1000, 30), 0);
}
END_TEST

Suite *make_suite() {
    Suite *s = suite_create("victim_note");
    TCase *tc = tcase_create("note");
    tcase_add_test(tc, test_note_written_and_read);
    tcase_add_test(tc, test_other_text_kept_old_notes_replaced);
    tcase_add_test(tc, test_grace_time_run_out);
    tcase_add_test(tc, test_stale_or_malformed_names_nobody);
    suite_add_tcase(s, tc);
    return s;
}

IDLETIME_CHECK_MAIN
