// Check suite "ckpt-store": commit protocol, verification of damaged checkpoints, directory
// trust, keep-last-K, stale temp cleanup, API misuse. No munge (require_munge = 0).
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include <check.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.hpp"
#include "../check_string.hpp"

using namespace ckpt_test;

namespace {

std::string base;  // per-test temp dir

void setup() { base = make_temp_dir("store"); }
void teardown() { remove_all(base); }

START_TEST(commit_creates_dir_and_roundtrips)
{
    std::string dir = base + "/ck";
    LogSink log;
    idletime_ckpt_t *h = open_ok(dir, opts("", 0, &log));
    struct stat st;
    ck_assert_int_eq(lstat(dir.c_str(), &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0700);
    ck_assert_int_eq(st.st_uid, geteuid());
    ck_assert_uint_eq(latest_step(h), UINT64_MAX);
    ck_assert_int_eq(idletime_ckpt_latest(h, nullptr, nullptr, 0), -ENOENT);
    ck_assert_int_eq(save_step(h, 7, 100000), 0);
    char path[512];
    uint64_t step = 0;
    ck_assert_int_eq(idletime_ckpt_latest(h, &step, path, sizeof path), 0);
    ck_assert_uint_eq(step, 7);
    std::string want = dir + "/step-000000000007";
    ck_assert_str_eq(path, want.c_str());
    ck_assert(exists(dir + "/step-000000000007/MANIFEST.json"));
    ck_assert_int_eq(st.st_uid, geteuid());
    size_t n = 0;
    ck_assert_int_eq(idletime_ckpt_file_count(h, 7, &n), 0);
    ck_assert_uint_eq(n, 2);
    const char *name = nullptr;
    uint64_t size = 0;
    ck_assert_int_eq(idletime_ckpt_file_info(h, 7, 0, &name, &size), 0);
    ck_assert_str_eq(name, "a");
    ck_assert_uint_eq(size, 100000);
    std::string buf(100000, '\0');
    size_t len = 0;
    ck_assert_int_eq(idletime_ckpt_read(h, 7, "a", buf.data(), buf.size(), &len), 0);
    ck_assert_uint_eq(len, 100000);
    ck_assert(buf == pattern(7, 100000));
    ck_assert_int_eq(idletime_ckpt_read(h, 7, "a", buf.data(), 10, &len), -ERANGE);
    ck_assert_uint_eq(len, 100000);
    ck_assert_int_eq(idletime_ckpt_read(h, 7, "nope", buf.data(), buf.size(), &len), -ENOENT);
    ck_assert_int_eq(idletime_ckpt_file_path(h, 7, "b.txt", path, sizeof path), 0);
    ck_assert_cxx_str_eq(read_file(path), "step 7");
    ck_assert_int_eq(idletime_ckpt_file_count(h, 8, &n), -ENOENT);
    ck_assert_int_eq(idletime_ckpt_close(h), 0);
    // Nothing but the step directory remains: no temp directories.
    ck_assert_uint_eq(list_dir(dir).size(), 1);
}
END_TEST

// A damaged newest checkpoint is skipped (and reported); the previous complete one is used.
struct Damage {
    const char *what;
    const char *cmd;      // run in the step-2 directory
    const char *message;  // expected in the log
};

const Damage damages[] = {
    {"corrupted manifest", "printf '{\"format\": \"idletime-ckpt-2\", \"st' > MANIFEST.json",
     "not valid JSON"},
    {"missing manifest", "rm MANIFEST.json", "no MANIFEST.json"},
    {"truncated file", "truncate -s 100 a", "has 100 bytes, the manifest says 4096"},
    {"wrong checksum", "printf 'X' | dd of=a bs=1 seek=10 conv=notrunc 2>/dev/null",
     "does not match its XXH3-128 checksum"},
    {"unknown format", "sed -i 's/idletime-ckpt-2/idletime-ckpt-9/' MANIFEST.json",
     "format \"idletime-ckpt-9\" is not"},
    {"SHA-256 key in a format-2 manifest", "sed -i 's/xxh3_128/sha256/' MANIFEST.json",
     "missing \"xxh3_128\""},
    {"checksum of the wrong length", "sed -i -E 's/(\"xxh3_128\": ?\")/\\1ab/' MANIFEST.json",
     "is not 32 lower-case hex digits"},
    {"missing data file", "rm a", "No such file"},
    {"manifest for another step", "sed -i -E 's/\"step\": ?2,/\"step\":1,/' MANIFEST.json",
     "manifest is for step 1"},
    {"empty manifest", ": > MANIFEST.json", "not valid JSON"},
    {"manifest without files", "sed -i -E 's/\"files\"/\"filez\"/' MANIFEST.json",
     "missing \"files\""},
    {"data file replaced by symlink", "rm a && ln -s b.txt a", "listed in the manifest"},
    {"world-writable step dir", "chmod 777 .", "group/world writable"},
};

START_TEST(damaged_checkpoint_skipped)
{
    const Damage &d = damages[_i];
    std::string dir = base + "/ck";
    idletime_ckpt_t *h = open_ok(dir, opts("", 0, nullptr));
    ck_assert_int_eq(save_step(h, 1), 0);
    ck_assert_int_eq(save_step(h, 2), 0);
    idletime_ckpt_close(h);
    ck_assert_int_eq(run("cd '" + dir + "/step-000000000002' && " + d.cmd), 0);
    LogSink log;
    h = open_ok(dir, opts("", 0, &log));
    ck_assert_msg(latest_step(h) == 1, "%s: latest is not step 1", d.what);
    ck_assert_msg(log.contains("step-000000000002") && log.contains(d.message),
                  "%s: log lacks \"%s\": %s", d.what, d.message, log.joined().c_str());
    size_t n;
    ck_assert_int_eq(idletime_ckpt_file_count(h, 2, &n), -ENOENT);
    // Saving step 2 again replaces the damaged copy atomically.
    ck_assert_int_eq(save_step(h, 2), 0);
    ck_assert_uint_eq(latest_step(h), 2);
    idletime_ckpt_close(h);
}
END_TEST

struct Untrusted {
    const char *what;
    const char *cmd;  // prepares $D
    int rc;
    const char *message;
};

const Untrusted untrusted[] = {
    {"foreign owner", "mkdir -m 700 $D && chown nobody $D", -EPERM, "owned by uid 65534"},
    {"world writable", "mkdir -m 777 $D", -EPERM, "group/world writable"},
    {"group writable", "mkdir -m 770 $D && chmod 770 $D", -EPERM, "group/world writable"},
    {"sticky world writable", "mkdir -m 1777 $D", -EPERM, "mode 1777"},
    {"symlink", "mkdir -m 700 $D.real && ln -s $D.real $D", -EPERM, "is a symlink"},
    {"plain file", "touch $D", -EPERM, "not a directory"},
    {"missing parent", "true", -ENOENT, "cannot create checkpoint directory"},
};

START_TEST(untrusted_directory_refused)
{
    const Untrusted &u = untrusted[_i];
    std::string dir = base + (_i == 6 ? "/missing/ck" : "/ck");
    ck_assert_int_eq(run("D='" + dir + "'; " + u.cmd), 0);
    if (_i == 0) {  // a planted, otherwise valid checkpoint inside the foreign directory
        run("mkdir -m 700 '" + dir + "/step-000000000009' && chown -R nobody '" + dir + "'");
    }
    idletime_ckpt_t *h = nullptr;
    idletime_ckpt_options_t o = opts("", 0, nullptr);
    int rc = idletime_ckpt_open(dir.c_str(), &o, &h);
    ck_assert_msg(rc == u.rc, "%s: rc %d", u.what, rc);
    std::string msg = idletime_ckpt_last_error(h);
    ck_assert_msg(msg.find(u.message) != std::string::npos, "%s: message \"%s\"", u.what,
                  msg.c_str());
    ck_assert_int_eq(idletime_ckpt_latest(h, nullptr, nullptr, 0), -EBADF);
    ck_assert_int_eq(save_step(h, 1), -EBADF);
    idletime_ckpt_close(h);
}
END_TEST

START_TEST(dir_from_environment)
{
    std::string dir = base + "/envdir";
    setenv("IDLETIME_CKPT_DIR", dir.c_str(), 1);
    idletime_ckpt_t *h = nullptr;
    ck_assert_int_eq(idletime_ckpt_open(nullptr, nullptr, &h), 0);
    ck_assert_str_eq(idletime_ckpt_dir(h), dir.c_str());
    idletime_ckpt_close(h);
    unsetenv("IDLETIME_CKPT_DIR");
    ck_assert_int_eq(idletime_ckpt_open(nullptr, nullptr, &h), -EINVAL);
    ck_assert(strstr(idletime_ckpt_last_error(h), "IDLETIME_CKPT_DIR") != nullptr);
    idletime_ckpt_close(h);
}
END_TEST

START_TEST(keep_last_k)
{
    std::string dir = base + "/ck";
    idletime_ckpt_t *h = open_ok(dir, opts("", 0, nullptr, 2));
    for (uint64_t s = 1; s <= 5; s++)
        ck_assert_int_eq(save_step(h, s * 10), 0);
    auto names = list_dir(dir);
    ck_assert_uint_eq(names.size(), 2);
    ck_assert(exists(dir + "/step-000000000040") && exists(dir + "/step-000000000050"));
    idletime_ckpt_close(h);
    // K=1 keeps only the newest; a damaged newer leftover is never counted as the newest.
    ck_assert_int_eq(run("mkdir -m 700 '" + dir + "/step-000000000999'"), 0);
    h = open_ok(dir, opts("", 0, nullptr, 1));
    ck_assert_uint_eq(latest_step(h), 50);
    ck_assert_int_eq(save_step(h, 60), 0);
    ck_assert(exists(dir + "/step-000000000060"));
    ck_assert(!exists(dir + "/step-000000000050") && !exists(dir + "/step-000000000040"));
    ck_assert_uint_eq(latest_step(h), 60);
    idletime_ckpt_close(h);
}
END_TEST

START_TEST(stale_temp_dirs_cleaned)
{
    std::string dir = base + "/ck";
    ck_assert_int_eq(run("mkdir -m 700 '" + dir + "' && mkdir '" + dir +
                         "/.tmp-step-000000000003-99999' && echo x > '" + dir +
                         "/.tmp-step-000000000003-99999/a' && mkdir '" + dir +
                         "/.tmp-del-step-000000000001-5'"), 0);
    LogSink log;
    idletime_ckpt_t *h = open_ok(dir, opts("", 0, &log));
    ck_assert_uint_eq(list_dir(dir).size(), 0);
    ck_assert(log.contains("removed stale partial checkpoint"));
    ck_assert_uint_eq(latest_step(h), UINT64_MAX);
    idletime_ckpt_close(h);
}
END_TEST

START_TEST(job_id_mismatch_refused)
{
    std::string dir = base + "/ck";
    idletime_ckpt_t *h = open_ok(dir, opts("100", 0, nullptr));
    ck_assert_int_eq(save_step(h, 1), 0);
    idletime_ckpt_close(h);
    LogSink log;
    h = open_ok(dir, opts("200", 0, &log));
    ck_assert_uint_eq(latest_step(h), UINT64_MAX);
    ck_assert(log.contains("written by job \"100\", we are job \"200\""));
    idletime_ckpt_close(h);
}
END_TEST

START_TEST(api_misuse)
{
    idletime_ckpt_t *h = open_ok(base + "/ck", opts("", 0, nullptr));
    char c = 0;
    ck_assert_int_eq(idletime_ckpt_add(h, "a", &c, 1), -EINVAL);
    ck_assert_int_eq(idletime_ckpt_commit(h), -EINVAL);
    ck_assert(strstr(idletime_ckpt_last_error(h), "without begin") != nullptr);
    ck_assert_int_eq(idletime_ckpt_begin(h, 5), 0);
    ck_assert_int_eq(idletime_ckpt_begin(h, 6), -EINVAL);
    const char *bad[] = {"", ".hidden", "MANIFEST.json", "a/b", "sp ace", "x\n"};
    for (const char *n : bad)
        ck_assert_msg(idletime_ckpt_add(h, n, &c, 1) == -EINVAL, "name \"%s\" accepted", n);
    ck_assert(strstr(idletime_ckpt_last_error(h), "allowed:") != nullptr);
    ck_assert_int_eq(idletime_ckpt_add(h, "ok", &c, 1), 0);
    ck_assert_int_eq(idletime_ckpt_add(h, "ok", &c, 1), -EEXIST);
    ck_assert_int_eq(idletime_ckpt_add(h, "null", nullptr, 4), -EINVAL);
    ck_assert_int_eq(idletime_ckpt_add(h, "empty", nullptr, 0), 0);
    ck_assert_int_eq(idletime_ckpt_commit(h), 0);
    ck_assert_int_eq(save_step(h, 5), -EINVAL);  // steps must increase
    ck_assert_int_eq(save_step(h, 4), -EINVAL);
    ck_assert_int_eq(save_step(h, 6), 0);
    ck_assert_int_eq(idletime_ckpt_add(nullptr, "a", &c, 1), -EINVAL);
    ck_assert_int_eq(idletime_ckpt_close(h), 0);
    ck_assert_int_eq(idletime_ckpt_close(nullptr), 0);
    idletime_ckpt_options_t o = opts("", 7, nullptr);
    ck_assert_int_eq(idletime_ckpt_open((base + "/ck").c_str(), &o, &h), -EINVAL);
    idletime_ckpt_close(h);
}
END_TEST

}  // namespace

int main()
{
    Suite *s = suite_create("ckpt-store");
    TCase *t = tcase_create("store");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 60);
    tcase_add_test(t, commit_creates_dir_and_roundtrips);
    tcase_add_loop_test(t, damaged_checkpoint_skipped, 0, sizeof damages / sizeof damages[0]);
    tcase_add_loop_test(t, untrusted_directory_refused, 0, sizeof untrusted / sizeof untrusted[0]);
    tcase_add_test(t, dir_from_environment);
    tcase_add_test(t, keep_last_k);
    tcase_add_test(t, stale_temp_dirs_cleaned);
    tcase_add_test(t, job_id_mismatch_refused);
    tcase_add_test(t, api_misuse);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
