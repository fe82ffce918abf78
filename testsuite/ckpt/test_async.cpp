// Check suite "ckpt-async": async saves, background errors on a full or read-only disk (a
// small tmpfs mounted by the test; needs root), heartbeat, preemption notice and its descriptor,
// release.
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>

#include <check.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.hpp"

using namespace ckpt_test;

namespace {

std::string base;
bool mounted = false;

void setup() { base = make_temp_dir("async"); }
void teardown()
{
    if (mounted)
        umount2((base + "/mnt").c_str(), MNT_DETACH);
    mounted = false;
    remove_all(base);
}

// A 1 MiB tmpfs (mode 0700, ours) at base/mnt.
std::string small_tmpfs()
{
    std::string mnt = base + "/mnt";
    ck_assert_int_eq(run("mkdir -p '" + mnt + "'"), 0);
    ck_assert_msg(mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=1M,mode=0700") == 0,
                  "mount tmpfs (needs root): %s", strerror(errno));
    mounted = true;
    return mnt;
}

START_TEST(async_copies_before_return)
{
    idletime_ckpt_t *h = open_ok(base + "/ck", opts("", 0, nullptr));
    std::string data = pattern(3, 1 << 20);
    const std::string orig = data;
    ck_assert_int_eq(idletime_ckpt_begin(h, 3), 0);
    ck_assert_int_eq(idletime_ckpt_add(h, "w", data.data(), data.size()), 0);
    ck_assert_int_eq(idletime_ckpt_commit_async(h), 0);
    data.assign(data.size(), 'Z');  // the caller reuses its buffer at once
    ck_assert_int_eq(idletime_ckpt_wait(h), 0);
    ck_assert_int_eq(idletime_ckpt_saving(h), 0);
    std::string back(orig.size(), '\0');
    size_t len = 0;
    ck_assert_uint_eq(latest_step(h), 3);
    ck_assert_int_eq(idletime_ckpt_read(h, 3, "w", back.data(), back.size(), &len), 0);
    ck_assert(back == orig);
    // Back-to-back async saves: the second waits for the first; both complete.
    ck_assert_int_eq(save_step(h, 4, 1 << 20, true), 0);
    ck_assert_int_eq(save_step(h, 5, 1 << 20, true), 0);
    ck_assert_int_eq(idletime_ckpt_wait(h), 0);
    ck_assert_uint_eq(latest_step(h), 5);
    ck_assert_int_eq(idletime_ckpt_file_count(h, 4, &len), 0);
    ck_assert_int_eq(idletime_ckpt_close(h), 0);
}
END_TEST

// An async save prunes beyond keep_last: once wait() returns the pruned step is no longer a
// checkpoint; its files are deleted in the background, at the latest when close() returns.
START_TEST(async_prune_deferred_deletion)
{
    std::string dir = base + "/ck";
    idletime_ckpt_t *h = open_ok(dir, opts("", 0, nullptr, 1));
    ck_assert_int_eq(save_step(h, 1, 32u << 20), 0);
    for (uint64_t s = 2; s <= 4; s++) {
        ck_assert_int_eq(save_step(h, s, 32u << 20, true), 0);  // waits for the previous one
        ck_assert_int_eq(idletime_ckpt_wait(h), 0);
        size_t n = 0;
        ck_assert_int_eq(idletime_ckpt_file_count(h, s - 1, &n), -ENOENT);
        ck_assert_uint_eq(latest_step(h), s);
        ck_assert(!exists(dir + "/step-" + std::string(11, '0') + std::to_string(s - 1)));
    }
    ck_assert_int_eq(idletime_ckpt_close(h), 0);
    auto names = list_dir(dir);
    ck_assert_msg(names.size() == 1 && names[0] == "step-000000000004", "left: %zu entries",
                  names.size());
}
END_TEST

START_TEST(full_disk_error_surfaces)
{
    std::string dir = small_tmpfs();
    LogSink log;
    idletime_ckpt_t *h = open_ok(dir, opts("", 0, &log));
    ck_assert_int_eq(save_step(h, 1, 1000), 0);
    ck_assert_int_eq(save_step(h, 2, 4 << 20, true), 0);  // 4 MiB into 1 MiB: fails later
    ck_assert_int_eq(idletime_ckpt_wait(h), -ENOSPC);
    std::string msg = idletime_ckpt_last_error(h);
    ck_assert_msg(msg.find("background save of step 2 failed") != std::string::npos &&
                      msg.find("No space left") != std::string::npos, "message: %s", msg.c_str());
    ck_assert_int_eq(idletime_ckpt_wait(h), 0);  // reported once
    ck_assert_uint_eq(latest_step(h), 1);       // the failed save never became latest
    ck_assert_uint_eq(list_dir(dir).size(), 1);  // and left no temp directory
    // The next call after the failure reports it (here begin), and does nothing else.
    ck_assert_int_eq(save_step(h, 2, 4 << 20, true), 0);
    while (idletime_ckpt_saving(h))
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ck_assert_int_eq(idletime_ckpt_begin(h, 5), -ENOSPC);
    ck_assert_int_eq(idletime_ckpt_commit(h), -EINVAL);  // begin did not happen
    ck_assert_uint_eq(latest_step(h), 1);
    // Synchronous save on the full disk: direct error, then a small save still works.
    ck_assert_int_eq(save_step(h, 3, 4 << 20), -ENOSPC);
    ck_assert_uint_eq(latest_step(h), 1);
    ck_assert_int_eq(save_step(h, 3, 1000), 0);
    ck_assert_uint_eq(latest_step(h), 3);
    ck_assert_int_eq(idletime_ckpt_close(h), 0);
}
END_TEST

START_TEST(readonly_disk_error_surfaces)
{
    std::string dir = small_tmpfs();
    idletime_ckpt_t *h = open_ok(dir, opts("", 0, nullptr));
    ck_assert_int_eq(save_step(h, 1, 1000), 0);
    ck_assert_int_eq(mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr), 0);
    ck_assert_int_eq(save_step(h, 2, 1000, true), 0);
    ck_assert_int_eq(idletime_ckpt_wait(h), -EROFS);
    ck_assert(strstr(idletime_ckpt_last_error(h), "Read-only") != nullptr);
    ck_assert_int_eq(save_step(h, 2, 1000, true), 0);
    ck_assert_int_eq(idletime_ckpt_release(h), -EINVAL);  // no job id: checked first
    ck_assert_int_eq(idletime_ckpt_close(h), -EROFS);    // close reports the last failure
    h = open_ok(dir, opts("", 0, nullptr));
    ck_assert_uint_eq(latest_step(h), 1);
    idletime_ckpt_close(h);
}
END_TEST

// Parses "<step> <time> <saving>" from the heartbeat file.
bool read_heartbeat(const std::string &path, unsigned long long *step, long long *t, int *saving)
{
    std::string s = read_file(path);
    return sscanf(s.c_str(), "%llu %lld %d", step, t, saving) == 3 && s.back() == '\n';
}

START_TEST(heartbeat_file)
{
    std::string hb = base + "/hb";
    unsetenv("IDLETIME_HEARTBEAT_FILE");
    idletime_ckpt_t *h = open_ok(base + "/ck", opts("", 0, nullptr));
    ck_assert_int_eq(idletime_ckpt_progress(h, 1), 0);  // unset: no-op
    ck_assert(!exists(hb));
    idletime_ckpt_close(h);
    setenv("IDLETIME_HEARTBEAT_FILE", hb.c_str(), 1);
    h = open_ok(base + "/ck", opts("", 0, nullptr));
    ck_assert_int_eq(idletime_ckpt_progress(h, 42), 0);
    unsigned long long step = 0;
    long long t = 0;
    int saving = -1;
    ck_assert(read_heartbeat(hb, &step, &t, &saving));
    ck_assert_uint_eq(step, 42);
    ck_assert_int_eq(saving, 0);
    ck_assert(llabs(t - time(nullptr)) <= 2);
    // While a large save is persisted the file says saving=1.
    ck_assert_int_eq(save_step(h, 1, 256u << 20, true), 0);
    bool seen = false;
    while (idletime_ckpt_saving(h) && !seen) {
        seen = read_heartbeat(hb, &step, &t, &saving) && saving == 1 && step == 42;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ck_assert_int_eq(idletime_ckpt_wait(h), 0);
    ck_assert_msg(seen, "heartbeat never showed saving=1 during the save");
    ck_assert(read_heartbeat(hb, &step, &t, &saving));
    ck_assert_int_eq(saving, 0);
    ck_assert_uint_eq(list_dir(base).size(), 2);  // ck and hb: no temp file left
    idletime_ckpt_close(h);
    unsetenv("IDLETIME_HEARTBEAT_FILE");
}
END_TEST

// Runs body in a child (signal handlers are process-wide); the child's exit status is the result.
template <class F>
void in_child(F body)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        _exit(body());
    int st = 0;
    waitpid(pid, &st, 0);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed at check %d",
                  WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

START_TEST(notice_from_env_signal)
{
    in_child([] {
        setenv("IDLETIME_CKPT_SIGNAL", "usr2", 1);
        setenv("IDLETIME_GRACE_TIME", "30", 1);
        idletime_ckpt_t *h = nullptr;
        idletime_ckpt_options_t o = opts("", 0, nullptr);
        if (idletime_ckpt_open((base + "/ck").c_str(), &o, &h))
            return 1;
        if (idletime_ckpt_install_notice(h, 0) || idletime_ckpt_notice_signal(h) != SIGUSR2)
            return 2;
        if (idletime_ckpt_preempt_requested(h) || idletime_ckpt_deadline(h) != 0)
            return 3;
        raise(SIGUSR2);
        int64_t now = time(nullptr);
        if (!idletime_ckpt_preempt_requested(h))
            return 4;
        if (llabs(idletime_ckpt_deadline(h) - (now + 30)) > 1)
            return 5;
        return idletime_ckpt_close(h) ? 6 : 0;
    });
}
END_TEST

START_TEST(notice_sigterm_and_numbers)
{
    in_child([] {
        unsetenv("IDLETIME_CKPT_SIGNAL");
        unsetenv("IDLETIME_GRACE_TIME");
        idletime_ckpt_t *h = nullptr;
        idletime_ckpt_options_t o = opts("", 0, nullptr);
        if (idletime_ckpt_open((base + "/ck").c_str(), &o, &h))
            return 1;
        if (idletime_ckpt_install_notice(h, 0) || idletime_ckpt_notice_signal(h) != SIGUSR1)
            return 2;
        if (idletime_ckpt_install_notice(h, SIGKILL) != -EINVAL)
            return 3;
        setenv("IDLETIME_CKPT_SIGNAL", "NOSUCH", 1);
        if (idletime_ckpt_install_notice(h, 0) != -EINVAL ||
            !strstr(idletime_ckpt_last_error(h), "IDLETIME_CKPT_SIGNAL=\"NOSUCH\""))
            return 4;
        setenv("IDLETIME_CKPT_SIGNAL", "12", 1);
        setenv("IDLETIME_GRACE_TIME", "soon", 1);
        if (idletime_ckpt_install_notice(h, 0) != -EINVAL)
            return 5;
        unsetenv("IDLETIME_GRACE_TIME");
        if (idletime_ckpt_install_notice(h, 0) || idletime_ckpt_notice_signal(h) != 12)
            return 6;
        kill(getpid(), SIGTERM);  // must not kill us, only set the flag
        if (!idletime_ckpt_preempt_requested(h) || llabs(idletime_ckpt_deadline(h) - time(nullptr)) > 1)
            return 7;
        return idletime_ckpt_close(h) ? 8 : 0;
    });
}
END_TEST

// Readable within ms milliseconds?
bool readable(int fd, int ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    return ::poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

// notice_fd: -ENOENT before install; a non-blocking close-on-exec descriptor that a forked
// child's notice leaves alone (the child gets none until it installs again, then its own, and a
// closed one does not kill it), readable once our own notice came, and readable again later.
START_TEST(notice_fd_for_event_loops)
{
    in_child([] {
        unsetenv("IDLETIME_CKPT_SIGNAL");
        unsetenv("IDLETIME_GRACE_TIME");
        idletime_ckpt_t *h = nullptr;
        idletime_ckpt_options_t o = opts("", 0, nullptr);
        if (idletime_ckpt_open((base + "/ck").c_str(), &o, &h))
            return 1;
        if (idletime_ckpt_notice_fd(h) != -ENOENT)
            return 2;
        if (idletime_ckpt_install_notice(h, SIGUSR2))
            return 3;
        const int fd = idletime_ckpt_notice_fd(h);
        if (fd < 0 || !(fcntl(fd, F_GETFL) & O_NONBLOCK) || !(fcntl(fd, F_GETFD) & FD_CLOEXEC))
            return 4;
        if (idletime_ckpt_install_notice(h, SIGUSR2) || idletime_ckpt_notice_fd(h) != fd)
            return 5;  // a second install keeps the descriptor
        pid_t c = fork();
        if (c == 0) {
            if (idletime_ckpt_notice_fd(h) != -ENOENT)
                _exit(1);  // the parent's descriptor is not the child's
            raise(SIGTERM);  // the inherited handler: the child's flag only
            _exit(idletime_ckpt_preempt_requested(h) ? 0 : 2);
        }
        int st = 0;
        if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return 6;
        c = fork();
        if (c == 0) {  // installs again: its own pair; then closes its read end and is notified
            if (idletime_ckpt_install_notice(h, SIGUSR2))
                _exit(1);
            const int own = idletime_ckpt_notice_fd(h);
            if (own < 0)  // (the parent's pair was closed here: own may reuse its number)
                _exit(2);
            close(own);
            raise(SIGUSR2);  // no SIGPIPE from the handler's send
            _exit(idletime_ckpt_preempt_requested(h) ? 0 : 3);
        }
        if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return 11;
        if (readable(fd, 100) || idletime_ckpt_preempt_requested(h))
            return 7;  // neither child's notice reached us
        raise(SIGUSR2);
        if (!readable(fd, 2000) || !idletime_ckpt_preempt_requested(h))
            return 8;
        if (!readable(fd, 0) || idletime_ckpt_close(h))
            return 9;  // stays readable, also after close()
        return readable(fd, 0) ? 0 : 10;
    });
}
END_TEST

START_TEST(release_without_job_refused)
{
    unsetenv("SLURM_JOB_ID");
    const char *jobs[] = {"", "abc", "12x"};
    for (const char *job : jobs) {
        idletime_ckpt_t *h = open_ok(base + "/ck", opts(job, 0, nullptr));
        ck_assert_int_eq(save_step(h, 1 + (job[0] ? 1 : 0) + (job[0] == '1'), 10), 0);
        ck_assert_int_eq(idletime_ckpt_release(h), -EINVAL);
        ck_assert_msg(strstr(idletime_ckpt_last_error(h), "no numeric Slurm job id") != nullptr,
                      "%s", idletime_ckpt_last_error(h));
        idletime_ckpt_close(h);
    }
    // The default job id comes from SLURM_JOB_ID, and with it munge becomes required.
    setenv("SLURM_JOB_ID", "77", 1);
    setenv("IDLETIME_MUNGE_SOCKET", (base + "/no-munged").c_str(), 1);
    idletime_ckpt_t *h = open_ok(base + "/ck2", opts(nullptr, -1, nullptr));
    ck_assert_int_eq(save_step(h, 1, 10), -EPROTO);
    ck_assert(strstr(idletime_ckpt_last_error(h), "munge: cannot sign") != nullptr);
    ck_assert_uint_eq(list_dir(base + "/ck2").size(), 0);
    idletime_ckpt_close(h);
    unsetenv("SLURM_JOB_ID");
    unsetenv("IDLETIME_MUNGE_SOCKET");
}
END_TEST

}  // namespace

int main()
{
    Suite *s = suite_create("ckpt-async");
    TCase *t = tcase_create("async");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 60);
    tcase_add_test(t, async_copies_before_return);
    tcase_add_test(t, async_prune_deferred_deletion);
    tcase_add_test(t, full_disk_error_surfaces);
    tcase_add_test(t, readonly_disk_error_surfaces);
    tcase_add_test(t, heartbeat_file);
    tcase_add_test(t, notice_from_env_signal);
    tcase_add_test(t, notice_sigterm_and_numbers);
    tcase_add_test(t, notice_fd_for_event_loops);
    tcase_add_test(t, release_without_job_refused);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
