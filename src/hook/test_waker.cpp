// Check suite: the shared backoff waker (issue 11 item 7): one server for many entries, entries
// woken once at their time, a second server refused while one runs, garbage removed.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "hook/waker.hpp"

#include "testsuite/unit/check_main.hpp"  // last: check.h defines a fail() macro

using namespace idletime::hook;

namespace {

std::string fresh_dir() { return unit_scratch_dir("waker") + "/spool"; }

START_TEST(many_entries_one_server) {
    const std::string dir = fresh_dir();
    std::string err;
    const time_t now = time(nullptr);
    // 1000 requeued array tasks: due now, in 1 s, in 2 s.
    for (uint32_t id = 1; id <= 1000; id++) ck_assert_msg(wake_enqueue(dir, id, now + id % 3, err), "%s", err.c_str());
    ck_assert_uint_eq(wake_pending(dir), 1000);
    std::vector<int> woken(1001, 0);
    int late = 0;
    const bool served = wake_serve(dir, [&](uint32_t job, time_t begin) {
        woken[job]++;
        if (time(nullptr) < begin) late--;  // woken early: never
    });
    ck_assert(served);
    for (uint32_t id = 1; id <= 1000; id++) ck_assert_int_eq(woken[id], 1);
    ck_assert_int_eq(late, 0);
    ck_assert_uint_eq(wake_pending(dir), 0);
}
END_TEST

START_TEST(second_server_refused) {
    const std::string dir = fresh_dir();
    std::string err;
    ck_assert(wake_enqueue(dir, 42, time(nullptr), err));
    int lock = open((dir + "/.lock").c_str(), O_RDWR | O_CREAT, 0600);
    ck_assert_int_ge(lock, 0);
    ck_assert_int_eq(flock(lock, LOCK_EX | LOCK_NB), 0);
    pid_t pid = fork();
    if (pid == 0) {  // another process: must not serve while the lock is held
        bool served = wake_serve(dir, [](uint32_t, time_t) { _exit(3); });
        _exit(served ? 2 : 0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_uint_eq(wake_pending(dir), 1);
    close(lock);
    int n = 0;
    ck_assert(wake_serve(dir, [&](uint32_t job, time_t) { n += job == 42; }));
    ck_assert_int_eq(n, 1);
}
END_TEST

START_TEST(replaced_and_garbage) {
    const std::string dir = fresh_dir();
    std::string err;
    const time_t now = time(nullptr);
    ck_assert(wake_enqueue(dir, 7, now + 100000, err));
    ck_assert(wake_enqueue(dir, 7, now, err));  // a newer requeue of the same job replaces it
    std::ofstream(dir + "/8") << "soon\n";
    std::ofstream(dir + "/notajob") << "1\n";
    ck_assert_uint_eq(wake_pending(dir), 1);  // "8" was garbage and is gone
    std::vector<time_t> seen;
    ck_assert(wake_serve(dir, [&](uint32_t job, time_t begin) { if (job == 7) seen.push_back(begin); }));
    ck_assert_uint_eq(seen.size(), 1);
    ck_assert_int_eq(seen[0], now);
}
END_TEST

START_TEST(unwritable_dir) {
    std::string err;
    ck_assert(!wake_enqueue("/proc/idletime-no-such/spool", 1, 0, err));
    ck_assert_msg(err.find("cannot create") != std::string::npos, "%s", err.c_str());
}
END_TEST

}  // namespace

int main() {
    Suite *s = suite_create("hook-waker");
    TCase *t = tcase_create("waker");
    tcase_set_timeout(t, 30);
    tcase_add_test(t, many_entries_one_server);
    tcase_add_test(t, second_server_refused);
    tcase_add_test(t, replaced_and_garbage);
    tcase_add_test(t, unwritable_dir);
    suite_add_tcase(s, t);
    return unit_run_suite(s);
}
