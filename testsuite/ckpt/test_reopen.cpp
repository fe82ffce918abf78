// Check suite "ckpt-reopen": opening a checkpoint directory never deletes a live writer's
// in-progress save (another process, another handle of the same process, a writer on another
// host judged by its lock); temporaries of writers that are gone are removed.
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include <check.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.hpp"

using namespace ckpt_test;

namespace {

constexpr size_t kBig = 96u << 20;  // a save that takes a while (fsync of 96 MiB)
std::string base, dir;

void setup()
{
    base = make_temp_dir("reopen");
    dir = base + "/ck";
}
void teardown() { remove_all(base); }

bool has_temp(const std::string &d)
{
    for (const auto &n : list_dir(d))
        if (n.rfind(".tmp-step-", 0) == 0)
            return true;
    return false;
}

// A writer's temporary itself (not its ".lock").
bool has_temp_dir(const std::string &d)
{
    for (const auto &n : list_dir(d))
        if (n.rfind(".tmp-step-", 0) == 0 && n.size() > 5 && n.compare(n.size() - 5, 5, ".lock"))
            return true;
    return false;
}

// One reopen as a monitoring script would do it: open, latest must be complete, close.
// Returns the latest step (UINT64_MAX: none); fails the test on a partial one.
uint64_t reopen_once(LogSink *log)
{
    idletime_ckpt_t *h = open_ok(dir, opts("", 0, log));
    uint64_t l = latest_step(h);
    if (l != UINT64_MAX) {
        size_t c = 0;
        ck_assert_msg(idletime_ckpt_file_count(h, l, &c) == 0 && c == 2, "step %llu: %s",
                      (unsigned long long)l, idletime_ckpt_last_error(h));
    }
    idletime_ckpt_close(h);
    return l;
}

// Every step-* directory verifies.
void all_steps_verify()
{
    idletime_ckpt_t *h = open_ok(dir, opts("", 0, nullptr));
    for (const auto &n : list_dir(dir)) {
        ck_assert_msg(n.rfind("step-", 0) == 0, "leftover %s", n.c_str());
        size_t c;
        ck_assert_msg(idletime_ckpt_file_count(h, strtoull(n.c_str() + 5, nullptr, 10), &c) == 0,
                      "%s: %s", n.c_str(), idletime_ckpt_last_error(h));
    }
    idletime_ckpt_close(h);
}

START_TEST(other_process_reopens_during_async_saves)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = fork();
    if (pid == 0) {  // the writer: 4 big async saves, each waited for
        close(p[0]);
        idletime_ckpt_options_t o = opts("", 0, nullptr, 2);
        idletime_ckpt_t *h = nullptr;
        if (idletime_ckpt_open(dir.c_str(), &o, &h))
            _exit(2);
        for (uint64_t s = 1; s <= 4; s++) {
            if (save_step(h, s, kBig, true) || idletime_ckpt_wait(h)) {
                fprintf(stderr, "save %llu: %s\n", (unsigned long long)s,
                        idletime_ckpt_last_error(h));
                _exit(3);
            }
        }
        idletime_ckpt_close(h);
        _exit(0);
    }
    close(p[1]);
    mkdir(dir.c_str(), 0700);
    int reopens = 0, during = 0;
    uint64_t prev = 0;
    LogSink log;
    for (;;) {
        int st = 0;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer failed: %d", st);
            break;
        }
        bool tmp = has_temp(dir);
        uint64_t l = reopen_once(&log);
        if (l != UINT64_MAX) {
            ck_assert_msg(l >= prev, "latest went back from %llu to %llu",
                          (unsigned long long)prev, (unsigned long long)l);
            prev = l;
        }
        reopens++;
        during += tmp && has_temp(dir);
    }
    close(p[0]);
    ck_assert_msg(during > 0, "no reopen overlapped a save (%d reopens)", reopens);
    ck_assert_msg(!log.contains("removed stale partial"), "%s", log.joined().c_str());
    ck_assert_uint_eq(reopen_once(nullptr), 4);
    all_steps_verify();
    fprintf(stderr, "idletime/ckpt test: %d reopens, %d during a save\n", reopens, during);
}
END_TEST

START_TEST(same_process_second_handle_keeps_save)
{
    idletime_ckpt_t *w = open_ok(dir, opts("", 0, nullptr));
    ck_assert_int_eq(save_step(w, 1, kBig, true), 0);
    int during = 0;
    LogSink log;
    while (idletime_ckpt_saving(w)) {
        bool tmp = has_temp(dir);
        reopen_once(&log);
        during += tmp && has_temp(dir);
    }
    ck_assert_int_eq(idletime_ckpt_wait(w), 0);
    ck_assert_msg(during > 0, "no reopen overlapped the save");
    ck_assert_msg(!log.contains("removed stale partial"), "%s", log.joined().c_str());
    ck_assert_uint_eq(latest_step(w), 1);
    idletime_ckpt_close(w);
    all_steps_verify();
}
END_TEST

START_TEST(killed_writer_temp_removed)
{
    pid_t pid = fork();
    if (pid == 0) {
        idletime_ckpt_options_t o = opts("", 0, nullptr);
        idletime_ckpt_t *h = nullptr;
        if (idletime_ckpt_open(dir.c_str(), &o, &h))
            _exit(2);
        save_step(h, 1, 256u << 20, true);  // still writing when killed (or done: retried)
        idletime_ckpt_wait(h);
        _exit(3);
    }
    // The temporary itself, not only its ".lock" (created first): else the kill can come
    // before the temporary exists, and the reopen finds a lone lock.
    for (int i = 0; i < 60000 && !(exists(dir) && has_temp_dir(dir)); i++)
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    ck_assert_msg(has_temp_dir(dir), "writer never created its temporary");
    kill(pid, SIGKILL);
    int st = 0;
    waitpid(pid, &st, 0);
    LogSink log;
    ck_assert_uint_eq(reopen_once(&log), UINT64_MAX);
    ck_assert_msg(log.contains("removed stale partial checkpoint"), "%s", log.joined().c_str());
    ck_assert_msg(list_dir(dir).empty(), "left: %s", list_dir(dir).empty() ? "" :
                                                         list_dir(dir)[0].c_str());
}
END_TEST

// Takes an OFD lock on path the way a writer does (this fd stands for a live writer anywhere).
int hold_lock(const std::string &path)
{
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    ck_assert_int_ge(fd, 0);
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    ck_assert_int_eq(fcntl(fd, F_OFD_SETLK, &fl), 0);
    return fd;
}

START_TEST(lock_decides_for_any_host)
{
    mkdir(dir.c_str(), 0700);
    // A writer on another node: its name says nothing we can check here; its lock is held.
    const std::string live = ".tmp-step-000000000007@node-far@4242@99@0";
    const std::string gone = ".tmp-step-000000000006@node-far@4243@99@0";
    mkdir((dir + "/" + live).c_str(), 0700);
    write_file(dir + "/" + live + "/a", "partial");
    int fd = hold_lock(dir + "/" + live + ".lock");
    mkdir((dir + "/" + gone).c_str(), 0700);
    write_file(dir + "/" + gone + "/a", "partial");
    close(hold_lock(dir + "/" + gone + ".lock"));  // created and released: its writer ended
    // Earlier versions' temporaries and pruned copies have no lock at all.
    mkdir((dir + "/.tmp-step-000000000005-12345").c_str(), 0700);
    mkdir((dir + "/.tmp-del-step-000000000001-12345").c_str(), 0700);
    // Orphan lock file of a writer that ended between removing its temporary and the lock.
    close(hold_lock(dir + "/.tmp-step-000000000004@node-far@1@1@0.lock"));
    LogSink log;
    reopen_once(&log);
    auto names = list_dir(dir);
    std::string all;
    for (const auto &n : names)
        all += n + " ";
    ck_assert_msg(names.size() == 2 && exists(dir + "/" + live + "/a") &&
                      exists(dir + "/" + live + ".lock"),
                  "entries: %s log: %s", all.c_str(), log.joined().c_str());
    close(fd);  // the far writer dies: now it is stale
    reopen_once(&log);
    ck_assert_msg(list_dir(dir).empty(), "live temp not removed after its writer ended");
}
END_TEST

// This process's start time in clock ticks (field 22 of /proc/self/stat), as writer tags hold it.
std::string self_start_ticks()
{
    std::string stat = read_file("/proc/self/stat");
    std::string rest = stat.substr(stat.rfind(')') + 2);
    std::string start;
    for (int f = 3; f <= 22; f++) {
        size_t sp = rest.find(' ');
        start = rest.substr(0, sp);
        rest = rest.substr(sp + 1);
    }
    return start;
}

START_TEST(pre_lock_of_dead_local_writer_removed)
{
    mkdir(dir.c_str(), 0700);
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    // A pid that is not running (a reaped child) on this host, and ourselves (running).
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, nullptr, 0);
    std::string dead = ".lk.tmp-step-000000000003@" + std::string(host) + "@" +
                       std::to_string(pid) + "@1@0";
    const std::string start = self_start_ticks();
    std::string live = ".lk.tmp-step-000000000004@" + std::string(host) + "@" +
                       std::to_string(getpid()) + "@" + start + "@0";
    write_file(dir + "/" + dead, "");
    write_file(dir + "/" + live, "");
    reopen_once(nullptr);
    ck_assert(!exists(dir + "/" + dead));
    ck_assert(exists(dir + "/" + live));  // between create and lock: keep
}
END_TEST

// A writer killed after creating its ".lock" but before its temporary: the reopen removes the
// lone lock and says so (before: "removed stale partial checkpoint" for a temporary never there).
START_TEST(lone_writer_lock_logged_and_removed)
{
    mkdir(dir.c_str(), 0700);
    const std::string lk = ".tmp-step-000000000005@node-far@4244@99@0.lock";
    write_file(dir + "/" + lk, "");
    LogSink log;
    ck_assert_uint_eq(reopen_once(&log), UINT64_MAX);
    ck_assert_msg(log.contains("removed lone writer lock"), "%s", log.joined().c_str());
    ck_assert_msg(!log.contains("removed stale partial"), "%s", log.joined().c_str());
    ck_assert(!exists(dir + "/" + lk));
}
END_TEST

// Regression: a reopen that took a writer's fresh pre-lock for a moment (to see whether it was
// held) made that writer's save fail with "writer lock ... is held by another process". A child
// reopens in a loop while this process creates and locks pre-locks the way WriterLock does.
START_TEST(reopen_never_takes_a_writers_pre_lock)
{
    mkdir(dir.c_str(), 0700);
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    const std::string start = self_start_ticks();
    pid_t pid = fork();
    if (pid == 0) {
        for (;;)
            reopen_once(nullptr);
    }
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    int tries = 0, refused = 0;
    while (std::chrono::steady_clock::now() < end) {
        const std::string pre = dir + "/.lk.tmp-step-000000000009@" + host + "@" +
                                std::to_string(getpid()) + "@" + start + "@" +
                                std::to_string(tries++);
        int fd = open(pre.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        struct flock fl {};
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        refused += fcntl(fd, F_OFD_SETLK, &fl) != 0;
        unlink(pre.c_str());
        close(fd);
    }
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    ck_assert_msg(refused == 0, "%d of %d pre-locks were held by the reopening process", refused,
                  tries);
    fprintf(stderr, "idletime/ckpt test: %d pre-locks while reopening, none refused\n", tries);
}
END_TEST

}  // namespace

int main()
{
    Suite *s = suite_create("ckpt-reopen");
    TCase *t = tcase_create("reopen");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, other_process_reopens_during_async_saves);
    tcase_add_test(t, same_process_second_handle_keeps_save);
    tcase_add_test(t, killed_writer_temp_removed);
    tcase_add_test(t, lock_decides_for_any_host);
    tcase_add_test(t, pre_lock_of_dead_local_writer_removed);
    tcase_add_test(t, reopen_never_takes_a_writers_pre_lock);
    tcase_add_test(t, lone_writer_lock_logged_and_removed);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
