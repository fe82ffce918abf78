// Check suite: the cluster-wide pass gate of idletime-ft-hook (security.md R1): one pass per
// interval, every job end still covered by a pass started after it, concurrent hooks agree,
// a symlinked or future stamp never suppresses a pass.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>

#include "hook/pass_gate.hpp"

#include "testsuite/unit/check_main.hpp"  // last: check.h defines a fail() macro

using namespace idletime::hook;

namespace {

std::string fresh_dir() { return unit_scratch_dir("passgate"); }

// A fake clock that a fake sleep advances.
struct Clock {
    int64_t t = 1'000'000;
    int64_t slept = 0;
    PassGate gate(const std::string &path) {
        PassGate g;
        g.stamp_path = path;
        g.now_ms = [this] { return t; };
        g.sleep_ms = [this](int64_t ms) { slept += ms, t += ms; };
        return g;
    }
};

START_TEST(coalesces_and_rate_limits) {
    Clock c;
    const PassGate g = c.gate(fresh_dir() + "/pass");
    std::string err;
    ck_assert(pass_gate_enter(g, c.t, err));  // no stamp yet: queue
    ck_assert_str_eq(err.c_str(), "");
    ck_assert_int_eq(c.slept, 0);
    const int64_t first = c.t;
    c.t += 200;
    ck_assert(!pass_gate_enter(g, first - 50, err));  // ended before that pass started: covered
    ck_assert(pass_gate_enter(g, first + 100, err));  // ended after it: a pass, 1 s after the last
    ck_assert_int_eq(c.slept, 800);
    ck_assert_int_eq(c.t, first + 1000);
    c.t += 5000;  // long quiet: no wait
    ck_assert(pass_gate_enter(g, c.t - 10, err));
    ck_assert_int_eq(c.slept, 800);
}
END_TEST

// A hook that reserved the next slot sleeps without the lock: a job that ended before that slot
// is covered at once (before: the reserving hook slept holding the lock, and during a mass end
// the others waited for it, up to kStateLockMs, then queued passes of their own).
START_TEST(reserved_slot_covers_without_waiting) {
    Clock c;
    const std::string path = fresh_dir() + "/pass";
    const PassGate g = c.gate(path);
    std::string err;
    std::ofstream(path) << (c.t - 200) << "\n";  // the last pass, 0.2 s ago
    const int64_t done = c.t - 50;
    ck_assert(pass_gate_enter(g, done, err));     // reserves c.t + 800 and sleeps until then
    ck_assert_int_eq(c.slept, 800);
    c.t -= 800;                                   // as seen by a second hook during that sleep
    int64_t stamp = 0;
    std::ifstream(path) >> stamp;
    ck_assert_int_eq(stamp, c.t + 800);
    const int holder = open(path.c_str(), O_RDWR);
    ck_assert_int_ge(holder, 0);
    ck_assert_int_eq(flock(holder, LOCK_EX | LOCK_NB), 0);  // the sleeper holds no lock
    close(holder);
    ck_assert(!pass_gate_enter(g, done + 10, err));  // ended before the slot: covered, no wait
    ck_assert_int_eq(c.slept, 800);
}
END_TEST

START_TEST(future_or_garbage_stamp_never_suppresses) {
    Clock c;
    const std::string path = fresh_dir() + "/pass";
    const PassGate g = c.gate(path);
    std::string err;
    std::ofstream(path) << (c.t + 3600 * 1000) << "\n";
    ck_assert(pass_gate_enter(g, c.t, err));
    ck_assert_int_eq(c.slept, 0);
    std::ofstream(path) << "garbage\n";
    c.t += 2000;
    ck_assert(pass_gate_enter(g, c.t, err));
    ck_assert_int_eq(c.slept, 0);
}
END_TEST

// The stamp dir/pass is made a link (by make_link) to another file holding "keep": the pass is
// queued anyway, with an error containing want, and the other file is left as it was.
void link_refused(int (*make_link)(const char *, const char *), const char *want) {
    Clock c;
    const std::string dir = fresh_dir();
    std::ofstream(dir + "/other") << "keep\n";
    ck_assert_int_eq(make_link((dir + "/other").c_str(), (dir + "/pass").c_str()), 0);
    std::string err;
    ck_assert(pass_gate_enter(c.gate(dir + "/pass"), c.t, err));
    ck_assert_msg(err.find(want) != std::string::npos, "%s", err.c_str());
    std::string got;
    std::ifstream(dir + "/other") >> got;
    ck_assert_str_eq(got.c_str(), "keep");
}

START_TEST(symlink_refused) { link_refused(symlink, "/pass"); }
END_TEST

// A hard link to another file of SlurmUser is refused (its content is kept), and a stamp whose
// lock another hook holds forever (stopped) is waited for at most kStateLockMs: the pass is
// queued anyway (before: the hard link was written through, the flock waited without end).
START_TEST(hard_link_or_stuck_lock_never_blocks) {
    link_refused(link, "more than one link");
    Clock c;
    std::string err;
    const std::string path = fresh_dir() + "/pass";
    const int holder = open(path.c_str(), O_RDWR | O_CREAT, 0600);  // a hook stopped under its lock
    ck_assert_int_ge(holder, 0);
    ck_assert_int_eq(flock(holder, LOCK_EX), 0);
    err.clear();
    ck_assert(pass_gate_enter(c.gate(path), c.t, err));
    ck_assert_msg(err.find("still locked") != std::string::npos, "%s", err.c_str());
    close(holder);
}
END_TEST

// Eight hooks whose jobs all ended before any of them looks: exactly one queues the pass.
START_TEST(concurrent_hooks_one_pass) {
    PassGate g;
    g.stamp_path = fresh_dir() + "/pass";
    using namespace std::chrono;
    const int64_t done = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
    pid_t kids[8];
    for (auto &k : kids) {
        k = fork();
        ck_assert_int_ge(k, 0);
        if (k == 0) {
            std::string err;
            _exit(pass_gate_enter(g, done, err) ? 1 : 0);
        }
    }
    int queued = 0;
    for (auto k : kids) {
        int st = 0;
        ck_assert_int_eq(waitpid(k, &st, 0), k);
        ck_assert(WIFEXITED(st));
        queued += WEXITSTATUS(st);
    }
    ck_assert_int_eq(queued, 1);
}
END_TEST

}  // namespace

Suite *make_suite() {
    Suite *s = suite_create("pass_gate");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, coalesces_and_rate_limits);
    tcase_add_test(tc, reserved_slot_covers_without_waiting);
    tcase_add_test(tc, future_or_garbage_stamp_never_suppresses);
    tcase_add_test(tc, symlink_refused);
    tcase_add_test(tc, hard_link_or_stuck_lock_never_blocks);
    tcase_add_test(tc, concurrent_hooks_one_pass);
    suite_add_tcase(s, tc);
    return s;
}

IDLETIME_CHECK_MAIN
