// Check suite: the poll rate idletime-ft-hook processes share (poll_share.hpp, security.md R1):
// the count follows registrations, entries of killed hooks are dropped, a symlinked, hard-linked
// or foreign file is refused (the hook then polls at its own rate), many hooks together poll at
// most kPollShare times per base interval, and one hook still polls every kMaxSharedPauseMs.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "hook/poll_share.hpp"

#include "testsuite/unit/check_main.hpp"  // last: check.h defines a fail() macro

using namespace idletime::hook;

namespace {

std::string fresh_dir() { return unit_scratch_dir("pollshare"); }

void write_file(const std::string &path, const std::string &text) {
    std::ofstream(path) << text;
}

START_TEST(interval_grows_past_the_share) {
    ck_assert_int_eq(shared_poll_ms(250, 0), 250);
    ck_assert_int_eq(shared_poll_ms(250, 1), 250);
    ck_assert_int_eq(shared_poll_ms(250, kPollShare), 250);
    ck_assert_int_eq(shared_poll_ms(250, kPollShare + 1), 500);
    ck_assert_int_eq(shared_poll_ms(1000, 1000), 1000 * 125);
    // n hooks at base_ms * ceil(n / share) each: at most kPollShare polls per base interval.
    for (int n : {1, 7, 8, 9, 64, 999, 2048}) {
        const double per_base = double(n) * 250 / double(shared_poll_ms(250, n));
        ck_assert(per_base <= kPollShare + 1e-9);
    }
    ck_assert_int_eq(shared_poll_ms(1, INT_MAX), (INT_MAX - 1) / kPollShare + 1);  // no overflow
}
END_TEST

START_TEST(pause_is_capped_and_ends_at_the_deadline) {
    // Alone: 250 ms for the first 5 s of the wait, then 1 s, counted from the last poll.
    ck_assert_int_eq(wait_before_poll_ms(0, 0, 60000, 1), 250);
    ck_assert_int_eq(wait_before_poll_ms(100, 100, 60000, 1), 150);
    ck_assert_int_eq(wait_before_poll_ms(6000, 0, 60000, 1), 1000);
    ck_assert_int_eq(wait_before_poll_ms(6000, 1200, 60000, 1), 0);  // due: poll now
    // 2,048 hooks: the shared pause would be 256 s; one hook still polls every 5 s.
    ck_assert_int_eq(shared_poll_ms(1000, 2048), 256000);
    ck_assert_int_eq(wait_before_poll_ms(6000, 0, 60000, 2048), kMaxSharedPauseMs);
    // Hooks left: the next count shortens the pause of a hook already waiting.
    ck_assert_int_eq(wait_before_poll_ms(6000, 2000, 60000, 8), 0);
    // Never past the deadline, and a last poll at it.
    ck_assert_int_eq(wait_before_poll_ms(58000, 0, 2000, 2048), 2000);
    ck_assert_int_eq(wait_before_poll_ms(60000, 2000, 0, 2048), 0);
}
END_TEST

// A busy slurmctld slows each hook down: at least 4x its last answer time, capped, never below
// the shared pause, never past the deadline; quick answers change nothing.
START_TEST(pause_follows_the_answer_time) {
    ck_assert_int_eq(paced_pause_ms(250, 0), 250);
    ck_assert_int_eq(paced_pause_ms(250, 50), 250);     // 200 ms < 250: unchanged
    ck_assert_int_eq(paced_pause_ms(250, 115), 460);    // sdiag's mean in the N=64 round
    ck_assert_int_eq(paced_pause_ms(1000, 600), 2400);
    ck_assert_int_eq(paced_pause_ms(250, 3000), kMaxSharedPauseMs);
    ck_assert_int_eq(paced_pause_ms(250, INT64_MAX / 2), kMaxSharedPauseMs);  // no overflow
    ck_assert_int_eq(paced_pause_ms(250, -5), 250);
    ck_assert_int_eq(wait_before_poll_ms(0, 0, 60000, 1, 115), 460);
    ck_assert_int_eq(wait_before_poll_ms(0, 0, 60000, 1, 10), 250);
    ck_assert_int_eq(wait_before_poll_ms(0, 460, 60000, 1, 115), 0);   // due
    ck_assert_int_eq(wait_before_poll_ms(0, 0, 300, 1, 1000), 300);    // the deadline first
    ck_assert_int_eq(wait_before_poll_ms(6000, 0, 60000, 64, 200), kMaxSharedPauseMs);  // shared cap wins
}
END_TEST

START_TEST(count_follows_registrations) {
    const std::string path = fresh_dir() + "/pollers";
    std::string err;
    auto a = std::make_unique<PollerSlot>(path, err);
    ck_assert_str_eq(err.c_str(), "");
    ck_assert_int_eq(a->pollers(), 1);
    {
        std::vector<std::unique_ptr<PollerSlot>> more;
        for (int i = 0; i < 20; i++) more.push_back(std::make_unique<PollerSlot>(path, err));
        ck_assert_int_eq(a->pollers(), 21);
    }
    ck_assert_int_eq(a->pollers(), 1);
    a.reset();
    PollerSlot b(path, err);
    ck_assert_int_eq(b.pollers(), 1);  // never below zero after the last one left
}
END_TEST

START_TEST(concurrent_processes_agree) {
    const std::string path = fresh_dir() + "/pollers";
    std::string err;
    PollerSlot mine(path, err);
    std::vector<pid_t> kids;
    int go[2];
    ck_assert_int_eq(pipe(go), 0);
    for (int i = 0; i < 16; i++) {
        pid_t p = fork();
        ck_assert_int_ge(p, 0);
        if (p == 0) {
            std::string e;
            {
                PollerSlot s(path, e);
                char c;
                close(go[1]);
                (void)!read(go[0], &c, 1);  // hold the slot until the parent has counted
            }
            _exit(e.empty() ? 0 : 1);
        }
        kids.push_back(p);
    }
    for (int tries = 0; tries < 500 && mine.pollers() < 17; tries++) usleep(10000);
    ck_assert_int_eq(mine.pollers(), 17);
    close(go[1]);
    close(go[0]);
    for (pid_t p : kids) {
        int st = 0;
        ck_assert_int_eq(waitpid(p, &st, 0), p);
        ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    ck_assert_int_eq(mine.pollers(), 1);
}
END_TEST

START_TEST(dead_or_garbage_entries_dropped) {
    const std::string dir = fresh_dir();
    std::string err;
    // A hook killed before it unregistered: its PID is gone, and the next registration drops it.
    pid_t dead = fork();
    ck_assert_int_ge(dead, 0);
    if (dead == 0) _exit(0);
    ck_assert_int_eq(waitpid(dead, nullptr, 0), dead);
    write_file(dir + "/killed", std::to_string(dead) + "\n" + std::to_string(dead) + "\n");
    PollerSlot a(dir + "/killed", err);
    ck_assert_str_eq(err.c_str(), "");
    ck_assert_int_eq(a.pollers(), 1);
    // Only live PIDs count; lines that are no PID are skipped and dropped.
    write_file(dir + "/mixed", "4242\n5555\nx y\n-3\n0\n99999999999\n4242\n\n");
    const PollerSlot::AliveFn alive = [](long pid) { return pid == 4242; };
    PollerSlot b(dir + "/mixed", err, alive);
    ck_assert_int_eq(b.pollers(), 3);  // 4242 twice (two slots of one process) and this one
    std::ifstream in(dir + "/mixed");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string want = "4242\n4242\n" + std::to_string(getpid()) + "\n";
    ck_assert_str_eq(text.c_str(), want.c_str());
}
END_TEST

START_TEST(symlink_or_foreign_file_refused) {
    const std::string dir = fresh_dir();
    write_file(dir + "/target", "1\n");
    ck_assert_int_eq(symlink((dir + "/target").c_str(), (dir + "/link").c_str()), 0);
    std::string err;
    PollerSlot a(dir + "/link", err);
    ck_assert(!err.empty());
    ck_assert_int_eq(a.pollers(), 1);
    std::ifstream in(dir + "/target");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ck_assert_str_eq(text.c_str(), "1\n");  // the link's target was not written
    ck_assert_int_eq(mkdir((dir + "/adir").c_str(), 0700), 0);
    err.clear();
    PollerSlot b(dir + "/adir", err);
    ck_assert(!err.empty());
    ck_assert_int_eq(b.pollers(), 1);
    // A hard link to a file of this user (protected_hardlinks off, a writable spool): refused.
    write_file(dir + "/other", "1\n");
    ck_assert_int_eq(link((dir + "/other").c_str(), (dir + "/hard").c_str()), 0);
    err.clear();
    PollerSlot h(dir + "/hard", err);
    ck_assert(!err.empty());
    ck_assert_int_eq(h.pollers(), 1);
    std::ifstream other(dir + "/other");
    std::string kept((std::istreambuf_iterator<char>(other)), std::istreambuf_iterator<char>());
    ck_assert_str_eq(kept.c_str(), "1\n");
    if (geteuid() == 0) {  // a file another user owns (root runs the unit tests in CI)
        write_file(dir + "/foreign", "");
        ck_assert_int_eq(chown((dir + "/foreign").c_str(), 65534, 65534), 0);
        err.clear();
        PollerSlot c(dir + "/foreign", err);
        ck_assert(!err.empty());
        ck_assert_int_eq(c.pollers(), 1);
    }
}
END_TEST

}  // namespace

Suite *make_suite() {
    Suite *s = suite_create("poll_share");
    TCase *t = tcase_create("core");
    tcase_add_test(t, interval_grows_past_the_share);
    tcase_add_test(t, pause_is_capped_and_ends_at_the_deadline);
    tcase_add_test(t, pause_follows_the_answer_time);
    tcase_add_test(t, count_follows_registrations);
    tcase_add_test(t, concurrent_processes_agree);
    tcase_add_test(t, dead_or_garbage_entries_dropped);
    tcase_add_test(t, symlink_or_foreign_file_refused);
    suite_add_tcase(s, t);
    return s;
}

IDLETIME_CHECK_MAIN
