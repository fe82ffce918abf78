// Check suite: naming a preempted run's preemptor from the shared snapshot (security.md R2):
// the pick, the snapshot's encoding (damaged text refused whole), and one job-table load per
// interval for all concurrent hooks.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "hook/preemptor.hpp"

#include "testsuite/unit/check_main.hpp"  // last: check.h defines a fail() macro

using namespace idletime;
using slurmjob::StartedJob;

namespace {

std::string fresh_dir() { return unit_scratch_dir("preemptor"); }

const std::vector<StartedJob> kJobs = {
    {10, 1000, "team-a", {"a100-1"}},            // before the notice
    {11, 1099, "team-b", {"a100-3"}},            // other node
    {12, 1102, "team-b", {"a100-1", "a100-2"}},  // later
    {13, 1100, "team-a", {"a100-2"}},            // first after the notice on a shared node
    {7, 1100, "team-c", {"a100-2"}},             // the victim itself
};

START_TEST(picks_first_start_after_notice_on_shared_node) {
    StartedJob who;
    ck_assert(hook::pick_preemptor(kJobs, 7, {"a100-1", "a100-2"}, 1100, 0, who));
    ck_assert_uint_eq(who.job_id, 13);
    ck_assert_str_eq(who.quota.c_str(), "team-a");
    ck_assert(hook::pick_preemptor(kJobs, 7, {"a100-1"}, 1101, 0, who));  // 1 s resolution
    ck_assert_uint_eq(who.job_id, 12);
    ck_assert(!hook::pick_preemptor(kJobs, 7, {"a100-4"}, 900, 0, who));
    ck_assert(!hook::pick_preemptor(kJobs, 7, {"a100-1", "a100-2"}, 1200, 0, who));
}
END_TEST

// Two owners started on one node after the notice (two one-GPU owners of different quotas on an
// 8-GPU node): the guess takes the earlier; slurmctld's note names the one it picked the victim for.
START_TEST(note_names_the_owner_of_two_on_one_node) {
    StartedJob who;
    ck_assert(hook::pick_preemptor(kJobs, 7, {"a100-1", "a100-2"}, 1100, 12, who));
    ck_assert_uint_eq(who.job_id, 12);
    ck_assert_str_eq(who.quota.c_str(), "team-b");
    // The noted owner has not started yet: no guess meanwhile, the hook looks again.
    ck_assert(!hook::pick_preemptor(kJobs, 7, {"a100-1", "a100-2"}, 1100, 99, who));
    // A note naming the victim itself names nobody.
    ck_assert(!hook::pick_preemptor(kJobs, 7, {"a100-1", "a100-2"}, 1100, 7, who));
}
END_TEST

// What the hook takes from a loaded job (the noted owner, or each job of the table): its own
// (first) partition must be a quota's, and it must have started at or after since.
START_TEST(started_quota_job_from_a_loaded_job) {
    slurmjob::Job j;
    j.snap.job_id = 40;
    j.snap.start_time = 1100;
    j.snap.nodes = {"a100-1"};
    j.partition = "quota-team-a";
    StartedJob out;
    ck_assert(hook::as_started_quota_job(j, 1100, out));
    ck_assert_uint_eq(out.job_id, 40);
    ck_assert_int_eq(out.start_time, 1100);
    ck_assert_str_eq(out.quota.c_str(), "team-a");
    ck_assert_uint_eq(out.nodes.size(), 1);
    ck_assert(!hook::as_started_quota_job(j, 1101, out));  // started before since
    slurmjob::Job other = j;
    other.partition = "idle-a100";
    ck_assert(!hook::as_started_quota_job(other, 0, out));
    other.partition = "xquota-team-a";
    ck_assert(!hook::as_started_quota_job(other, 0, out));
    other.partition = "quota-";  // no quota name
    ck_assert(!hook::as_started_quota_job(other, 0, out));
    other.partition = "quota-team-b,idle-a100";  // a list: the job's own partition comes first
    ck_assert(hook::as_started_quota_job(other, 0, out));
    ck_assert_str_eq(out.quota.c_str(), "team-b");
    other.partition = "idle-a100,quota-team-b";
    ck_assert(!hook::as_started_quota_job(other, 0, out));
    other = j;
    other.pending = true;  // a pending job's start_time is only Slurm's expected start
    ck_assert(!hook::as_started_quota_job(other, 0, out));
    other = j;
    other.snap.start_time = 0;
    ck_assert(!hook::as_started_quota_job(other, 0, out));
}
END_TEST

START_TEST(encoding_round_trip_and_damage) {
    std::vector<StartedJob> back;
    const std::string text = hook::started_jobs_encode(kJobs);
    ck_assert(hook::started_jobs_decode(text, back));
    ck_assert_uint_eq(back.size(), kJobs.size());
    ck_assert_uint_eq(back[2].nodes.size(), 2);
    ck_assert_str_eq(back[2].nodes[1].c_str(), "a100-2");
    ck_assert(hook::started_jobs_decode("", back) && back.empty());
    for (const char *bad : {"12 1102 team-b\n", "12 1102 team-b a100-1 extra\n", "x 1102 team-b a100-1\n",
                            "12 -5 team-b a100-1\n", "12 1102 team-b a100-1,,a100-2\n",
                            "4294967296 1 q n\n", "12 1102 team-b a100-1\nbroken\n"})
        ck_assert_msg(!hook::started_jobs_decode(bad, back), "accepted: %s", bad);
    // Names that would break the format are left out, not written.
    const std::string skipped = hook::started_jobs_encode({{1, 5, "bad quota", {"n1"}}, {2, 5, "q", {"n,2"}}});
    ck_assert_str_eq(skipped.c_str(), "");
}
END_TEST

START_TEST(snapshot_reused_while_fresh) {
    const std::string path = fresh_dir() + "/started";
    int loads = 0;
    const hook::ProduceFn produce = [&](std::string &t, std::string &) {
        t = "1 5 q n1\n" + std::to_string(++loads) + " 5 q n2\n";
        return true;
    };
    std::string text, err;
    ck_assert(hook::snapshot_shared(path, 60000, produce, text, err));
    ck_assert(hook::snapshot_shared(path, 60000, produce, text, err));
    ck_assert_int_eq(loads, 1);
    ck_assert_str_eq(text.c_str(), "1 5 q n1\n1 5 q n2\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ck_assert(hook::snapshot_shared(path, 10, produce, text, err));  // stale: loaded again
    ck_assert_int_eq(loads, 2);
    ck_assert_str_eq(err.c_str(), "");
    std::ofstream(path) << "garbage\n";  // damaged stamp: loaded again
    ck_assert(hook::snapshot_shared(path, 60000, produce, text, err));
    ck_assert_int_eq(loads, 3);
}
END_TEST

START_TEST(symlinked_snapshot_not_followed) {
    const std::string dir = fresh_dir();
    std::ofstream(dir + "/target") << "keep\n";
    ck_assert_int_eq(symlink((dir + "/target").c_str(), (dir + "/started").c_str()), 0);
    std::string text, err;
    ck_assert(hook::snapshot_shared(dir + "/started", 60000, [](std::string &t, std::string &) {
        t = "9 9 q n\n";
        return true;
    }, text, err));
    ck_assert_str_eq(text.c_str(), "9 9 q n\n");
    ck_assert_msg(!err.empty(), "no error for a symlinked snapshot");
    std::string got;
    std::ifstream(dir + "/target") >> got;
    ck_assert_str_eq(got.c_str(), "keep");
}
END_TEST

// A hard-linked snapshot (another file of SlurmUser) is neither read nor written, and one whose
// lock a stopped hook holds is waited for at most kStateLockMs: either way this hook loads the
// job table itself (before: the link was written through, the flock waited without end).
START_TEST(hard_link_or_stuck_lock_loads_itself) {
    const hook::ProduceFn produce = [](std::string &t, std::string &) {
        t = "9 9 q n\n";
        return true;
    };
    const std::string dir = fresh_dir();
    std::ofstream(dir + "/other") << "keep\n";
    ck_assert_int_eq(link((dir + "/other").c_str(), (dir + "/started").c_str()), 0);
    std::string text, err;
    ck_assert(hook::snapshot_shared(dir + "/started", 60000, produce, text, err));
    ck_assert_str_eq(text.c_str(), "9 9 q n\n");
    ck_assert_msg(err.find("more than one link") != std::string::npos, "%s", err.c_str());
    std::string got;
    std::ifstream(dir + "/other") >> got;
    ck_assert_str_eq(got.c_str(), "keep");

    const std::string path = fresh_dir() + "/started";
    const int holder = open(path.c_str(), O_RDWR | O_CREAT, 0600);
    ck_assert_int_ge(holder, 0);
    ck_assert_int_eq(flock(holder, LOCK_EX), 0);
    text.clear();
    err.clear();
    ck_assert(hook::snapshot_shared(path, 60000, produce, text, err));
    ck_assert_str_eq(text.c_str(), "9 9 q n\n");
    ck_assert_msg(err.find("still locked") != std::string::npos, "%s", err.c_str());
    close(holder);
}
END_TEST

// Eight victims' hooks look at once: the job table is loaded once.
START_TEST(concurrent_hooks_load_once) {
    const std::string dir = fresh_dir();
    const std::string count = dir + "/loads";
    pid_t kids[8];
    for (auto &k : kids) {
        k = fork();
        ck_assert_int_ge(k, 0);
        if (k == 0) {
            std::string text, err;
            const bool ok = hook::snapshot_shared(dir + "/started", 60000, [&](std::string &t, std::string &) {
                int fd = open(count.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0600);
                (void)!write(fd, "x", 1);
                close(fd);
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
                t = "1 5 q n1\n";
                return true;
            }, text, err);
            _exit(ok && text == "1 5 q n1\n" ? 0 : 1);
        }
    }
    for (auto k : kids) {
        int st = 0;
        ck_assert_int_eq(waitpid(k, &st, 0), k);
        ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    std::string loads;
    std::ifstream(count) >> loads;
    ck_assert_str_eq(loads.c_str(), "x");
}
END_TEST

}  // namespace

Suite *make_suite() {
    Suite *s = suite_create("preemptor");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, picks_first_start_after_notice_on_shared_node);
    tcase_add_test(tc, note_names_the_owner_of_two_on_one_node);
    tcase_add_test(tc, started_quota_job_from_a_loaded_job);
    tcase_add_test(tc, encoding_round_trip_and_damage);
    tcase_add_test(tc, snapshot_reused_while_fresh);
    tcase_add_test(tc, symlinked_snapshot_not_followed);
    tcase_add_test(tc, hard_link_or_stuck_lock_loads_itself);
    tcase_add_test(tc, concurrent_hooks_load_once);
    suite_add_tcase(s, tc);
    return s;
}

IDLETIME_CHECK_MAIN
