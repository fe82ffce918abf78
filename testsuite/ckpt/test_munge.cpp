// Check suite "ckpt-munge": credentials bind manifests to uid + job + step + digest, checked with
// private munged daemons; crash safety under SIGKILL at random moments (>= 200 trials).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <random>
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

// Our cluster, a foreign cluster (other key), one with max TTL 1 s, and a node of our cluster
// (same key) whose clock is an hour ahead.
Munged mA, mB, mShort, mAhead;
std::string base;

void start_daemons()
{
    mA.start("a");
    mB.start("b");
    mShort.start("short", "--max-ttl=1");
    mAhead.start("ahead", nullptr, &mA, 3600);
}
void stop_daemons()
{
    mA.stop();
    mB.stop();
    mShort.stop();
    mAhead.stop();
}
void setup()
{
    base = make_temp_dir("munge");
    setenv("IDLETIME_MUNGE_SOCKET", mA.socket.c_str(), 1);
}
void teardown()
{
    remove_all(base);
    unsetenv("IDLETIME_MUNGE_SOCKET");
}

START_TEST(signed_checkpoint_accepted_and_replay_ok)
{
    idletime_ckpt_t *h = open_ok(base + "/ck", opts("4242", 1, nullptr));
    ck_assert_int_eq(save_step(h, 1), 0);
    std::string man = read_file(base + "/ck/step-000000000001/MANIFEST.json");
    ck_assert(man.find("\"munge\":\"MUNGE:") != std::string::npos);
    ck_assert(man.find("\"job_id\":\"4242\"") != std::string::npos);
    idletime_ckpt_close(h);
    LogSink log;
    h = open_ok(base + "/ck", opts("4242", -1, &log));  // default: required with a job id
    ck_assert_uint_eq(latest_step(h), 1);
    ck_assert_uint_eq(latest_step(h), 1);  // second decode is a replay: still authentic
    ck_assert_msg(log.lines.empty(), "%s", log.joined().c_str());
    idletime_ckpt_close(h);
}
END_TEST

START_TEST(expired_credential_accepted)
{
    setenv("IDLETIME_MUNGE_SOCKET", mShort.socket.c_str(), 1);
    idletime_ckpt_t *h = open_ok(base + "/ck", opts("4242", 1, nullptr));
    ck_assert_int_eq(save_step(h, 1), 0);
    idletime_ckpt_close(h);
    std::this_thread::sleep_for(std::chrono::milliseconds(2300));
    LogSink log;
    h = open_ok(base + "/ck", opts("4242", 1, &log));
    ck_assert_msg(latest_step(h) == 1, "%s", log.joined().c_str());
    idletime_ckpt_close(h);
}
END_TEST

// Saves step 5 for job into dir (munge required); returns the step directory.
std::string saved_by(const std::string &dir, const char *job)
{
    idletime_ckpt_t *h = open_ok(dir, opts(job, 1, nullptr));
    ck_assert_int_eq(save_step(h, 5), 0);
    idletime_ckpt_close(h);
    return dir + "/step-000000000005";
}

// Opens our job 2222's directory and expects nothing loadable, with reason in the log and in
// latest()'s -ENOENT message (a planted copy is refused, never an error of munge itself).
void expect_rejected(const std::string &reason)
{
    LogSink log;
    idletime_ckpt_t *h = open_ok(base + "/ours", opts("2222", 1, &log));
    uint64_t s = 0;
    ck_assert_int_eq(idletime_ckpt_latest(h, &s, nullptr, 0), -ENOENT);
    ck_assert_msg(strstr(idletime_ckpt_last_error(h), reason.c_str()) &&
                      strstr(idletime_ckpt_last_error(h), "rejected: step-000000000005"),
                  "latest(): %s", idletime_ckpt_last_error(h));
    ck_assert_msg(log.contains(reason), "log lacks \"%s\": %s", reason.c_str(),
                  log.joined().c_str());
    idletime_ckpt_close(h);
}

START_TEST(manifest_from_other_job_refused)
{
    std::string src = saved_by(base + "/other", "1111");
    ck_assert_int_eq(run("mkdir -m 700 '" + base + "/ours' && cp -a '" + src + "' '" + base +
                         "/ours/'"), 0);
    expect_rejected("written by job \"1111\", we are job \"2222\"");
    // Rewriting the job id does not help: the credential binds the original one.
    ck_assert_int_eq(run("sed -i 's/\"1111\"/\"2222\"/' '" + base +
                         "/ours/step-000000000005/MANIFEST.json'"), 0);
    expect_rejected("does not match this manifest");
}
END_TEST

START_TEST(manifest_of_other_uid_refused)
{
    chmod(base.c_str(), 0755);
    ck_assert_int_eq(run("mkdir -m 700 '" + base + "/n' && chown nobody:nogroup '" + base + "/n'"),
                     0);
    pid_t pid = fork();
    if (pid == 0) {
        if (setgid(65534) || setuid(65534))
            _exit(3);
        idletime_ckpt_t *h = nullptr;
        idletime_ckpt_options_t o = opts("2222", 1, nullptr);
        if (idletime_ckpt_open((base + "/n/ck").c_str(), &o, &h))
            _exit(4);
        int rc = save_step(h, 5);
        idletime_ckpt_close(h);
        _exit(rc ? 5 : 0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    // Same job id, a valid credential, but of uid 65534; copied and chowned to us.
    ck_assert_int_eq(run("mkdir -m 700 '" + base + "/ours' && cp -r '" + base +
                         "/n/ck/step-000000000005' '" + base + "/ours/' && chown -R root '" +
                         base + "/ours'"), 0);
    expect_rejected("belongs to uid 65534");
}
END_TEST

START_TEST(foreign_cluster_and_missing_credential_refused)
{
    setenv("IDLETIME_MUNGE_SOCKET", mB.socket.c_str(), 1);
    saved_by(base + "/ours", "2222");
    setenv("IDLETIME_MUNGE_SOCKET", mA.socket.c_str(), 1);
    expect_rejected("munge credential rejected");
    run("rm -rf '" + base + "/ours'");
    idletime_ckpt_t *h = open_ok(base + "/ours", opts("2222", 0, nullptr));  // unsigned save
    ck_assert_int_eq(save_step(h, 5), 0);
    idletime_ckpt_close(h);
    expect_rejected("carries no munge credential");
}
END_TEST

START_TEST(munged_down_save_fails_cleanly)
{
    setenv("IDLETIME_MUNGE_SOCKET", (base + "/none").c_str(), 1);
    idletime_ckpt_t *h = open_ok(base + "/ck", opts("2222", 1, nullptr));
    ck_assert_int_eq(save_step(h, 1, 1000, true), 0);
    ck_assert_int_eq(idletime_ckpt_wait(h), -EPROTO);
    ck_assert(strstr(idletime_ckpt_last_error(h), "munge: cannot sign") != nullptr);
    ck_assert_uint_eq(list_dir(base + "/ck").size(), 0);
    idletime_ckpt_close(h);
}
END_TEST

// Names, sizes and manifests of every entry: what "untouched" means for a checkpoint dir.
std::string snapshot(const std::string &dir)
{
    std::string out;
    for (const auto &n : list_dir(dir)) {
        out += n + "\n";
        for (const auto &f : list_dir(dir + "/" + n))
            out += " " + f + " " + read_file(dir + "/" + n + "/" + f).substr(0, 4096) + "\n";
    }
    return out;
}

// Two signed steps in base/ck, then latest() with the given socket: a distinct error that
// names munge and the fix, nothing skipped or removed; with munged back the newest loads.
void expect_unavailable(const std::string &sock)
{
    idletime_ckpt_t *h = open_ok(base + "/ck", opts("2222", 1, nullptr));
    ck_assert_int_eq(save_step(h, 1), 0);
    ck_assert_int_eq(save_step(h, 2), 0);
    idletime_ckpt_close(h);
    const std::string before = snapshot(base + "/ck");
    setenv("IDLETIME_MUNGE_SOCKET", sock.c_str(), 1);
    LogSink log;
    h = open_ok(base + "/ck", opts("2222", 1, &log));
    uint64_t s = 0;
    ck_assert_int_eq(idletime_ckpt_latest(h, &s, nullptr, 0), IDLETIME_CKPT_EMUNGE);
    const char *err = idletime_ckpt_last_error(h);
    ck_assert_msg(strstr(err, "munge unavailable") && strstr(err, sock.c_str()) &&
                      strstr(err, "IDLETIME_MUNGE_SOCKET") && !strchr(err, '\n'),
                  "message: %s", err);
    size_t c = 0;
    ck_assert_int_eq(idletime_ckpt_file_count(h, 2, &c), IDLETIME_CKPT_EMUNGE);
    ck_assert_msg(log.lines.empty(), "logged: %s", log.joined().c_str());
    ck_assert(snapshot(base + "/ck") == before);
    setenv("IDLETIME_MUNGE_SOCKET", mA.socket.c_str(), 1);
    ck_assert_uint_eq(latest_step(h), 2);
    idletime_ckpt_close(h);
}

START_TEST(munged_down_is_not_forged)
{
    expect_unavailable(base + "/none");
}
END_TEST

START_TEST(wrong_socket_is_not_forged)
{
    write_file(base + "/not-a-socket", "x");
    expect_unavailable(base + "/not-a-socket");
}
END_TEST

START_TEST(munge_not_required_needs_no_munged)
{
    setenv("IDLETIME_MUNGE_SOCKET", (base + "/none").c_str(), 1);
    idletime_ckpt_t *h = open_ok(base + "/ck", opts("", -1, nullptr));  // no job id: off
    ck_assert_int_eq(save_step(h, 3), 0);
    ck_assert_uint_eq(latest_step(h), 3);
    idletime_ckpt_close(h);
}
END_TEST

START_TEST(clock_skew_is_not_forged)
{
    setenv("IDLETIME_MUNGE_SOCKET", mAhead.socket.c_str(), 1);  // saved on the fast node
    idletime_ckpt_t *h = open_ok(base + "/ck", opts("2222", 1, nullptr));
    ck_assert_int_eq(save_step(h, 4), 0);
    idletime_ckpt_close(h);
    const std::string before = snapshot(base + "/ck");
    setenv("IDLETIME_MUNGE_SOCKET", mA.socket.c_str(), 1);
    LogSink log;
    h = open_ok(base + "/ck", opts("2222", 1, &log));
    uint64_t s = 0;
    ck_assert_int_eq(idletime_ckpt_latest(h, &s, nullptr, 0), IDLETIME_CKPT_ESKEW);
    const char *err = idletime_ckpt_last_error(h);
    ck_assert_msg(strstr(err, "clock skew") && strstr(err, "sync the clocks"), "message: %s", err);
    ck_assert_msg(log.lines.empty(), "logged: %s", log.joined().c_str());
    ck_assert(snapshot(base + "/ck") == before);
    idletime_ckpt_close(h);
}
END_TEST

size_t size_of(uint64_t step) { return 65536 + (step * 7919u) % (2u << 20); }

// Child: open, report ready (0), then save steps with sync commits, acking each step.
[[noreturn]] void crash_child(const std::string &dir, int fd)
{
    idletime_ckpt_options_t o = opts("9001", 1, nullptr, 2);
    o.log = [](void *, const char *) {};
    idletime_ckpt_t *h = nullptr;
    if (idletime_ckpt_open(dir.c_str(), &o, &h))
        _exit(2);
    uint64_t step = latest_step(h);
    step = step == UINT64_MAX ? 1 : step + 1;
    uint64_t zero = 0;
    if (write(fd, &zero, sizeof zero) != sizeof zero)
        _exit(3);
    for (;; step++) {
        if (save_step(h, step, size_of(step)))
            _exit(4);
        if (write(fd, &step, sizeof step) != sizeof step)
            _exit(5);
    }
}

// Every step-* directory verifies; the latest one holds exactly what its step wrote.
uint64_t check_dir_after_kill(const std::string &dir)
{
    LogSink log;
    idletime_ckpt_t *h = open_ok(dir, opts("9001", 1, &log, 2));
    uint64_t l = latest_step(h);
    for (const auto &n : list_dir(dir)) {
        ck_assert_msg(n.rfind("step-", 0) == 0, "leftover %s after reopen", n.c_str());
        size_t c;
        ck_assert_msg(idletime_ckpt_file_count(h, strtoull(n.c_str() + 5, nullptr, 10), &c) == 0,
                      "partial %s: %s", n.c_str(), idletime_ckpt_last_error(h));
    }
    if (l != UINT64_MAX) {
        std::string a(size_of(l), '\0'), b(64, '\0');
        size_t len;
        ck_assert_int_eq(idletime_ckpt_read(h, l, "a", a.data(), a.size(), &len), 0);
        ck_assert(a == pattern(l, size_of(l)));
        ck_assert_int_eq(idletime_ckpt_read(h, l, "b.txt", b.data(), b.size(), &len), 0);
        ck_assert(b.substr(0, len) == "step " + std::to_string(l));
    }
    ck_assert_msg(!log.contains("skipping"), "rejections after kill: %s", log.joined().c_str());
    idletime_ckpt_close(h);
    return l;
}

START_TEST(sigkill_at_random_moments)
{
    std::string dir = base + "/crash";
    std::mt19937 rng(20240601);
    uint64_t prev = UINT64_MAX;
    int mid_save = 0;
    // Kills land at random within window_us of the child being ready. A trial that saw no new
    // step widens the window (up to 300 ms): on a loaded machine or in the ASan build a save takes
    // longer than 25 ms, and the test must still make progress while killing mid-save.
    uint32_t window_us = 25000;
    for (int trial = 0; trial < 200; trial++) {
        int p[2];
        ck_assert_int_eq(pipe(p), 0);
        pid_t pid = fork();
        if (pid == 0) {
            close(p[0]);
            crash_child(dir, p[1]);
        }
        close(p[1]);
        uint64_t v = 1, last_ack = prev;
        ck_assert_int_eq(read(p[0], &v, sizeof v), (ssize_t)sizeof v);  // ready
        ck_assert_uint_eq(v, 0);
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % window_us));
        kill(pid, SIGKILL);
        int st = 0;
        waitpid(pid, &st, 0);
        ck_assert_msg(WIFSIGNALED(st), "child exited by itself: %d", WEXITSTATUS(st));
        while (read(p[0], &v, sizeof v) == (ssize_t)sizeof v)
            last_ack = v;
        close(p[0]);
        uint64_t l = check_dir_after_kill(dir);
        // Durable once acknowledged; at most the one in flight may also have landed.
        if (last_ack != UINT64_MAX)
            ck_assert_msg(l != UINT64_MAX && l >= last_ack && l <= last_ack + 1,
                          "trial %d: latest %llu, last acked %llu", trial,
                          (unsigned long long)l, (unsigned long long)last_ack);
        mid_save += (l != last_ack);
        if (l == prev) window_us = std::min<uint32_t>(window_us * 3 / 2, 300000);
        prev = l;
    }
    ck_assert_msg(prev != UINT64_MAX && prev > 20, "too few saves happened: %llu",
                  (unsigned long long)prev);
    fprintf(stderr, "idletime/ckpt test: 200 SIGKILL trials, last step %llu, %d kills landed "
            "between rename and ack\n", (unsigned long long)prev, mid_save);
}
END_TEST

}  // namespace

int main()
{
    Suite *s = suite_create("ckpt-munge");
    TCase *t = tcase_create("munge");
    tcase_add_unchecked_fixture(t, start_daemons, stop_daemons);
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, signed_checkpoint_accepted_and_replay_ok);
    tcase_add_test(t, expired_credential_accepted);
    tcase_add_test(t, manifest_from_other_job_refused);
    tcase_add_test(t, manifest_of_other_uid_refused);
    tcase_add_test(t, foreign_cluster_and_missing_credential_refused);
    tcase_add_test(t, munged_down_save_fails_cleanly);
    tcase_add_test(t, munged_down_is_not_forged);
    tcase_add_test(t, wrong_socket_is_not_forged);
    tcase_add_test(t, munge_not_required_needs_no_munged);
    tcase_add_test(t, clock_skew_is_not_forged);
    tcase_add_test(t, sigkill_at_random_moments);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
