// Check suite "ckpt-format": manifest formats. Saves write format 2 (per-file XXH3-128, checked
// against xxhsum); format-1 checkpoints (per-file SHA-256) made by shell tools (sha256sum, the
// munge CLI) as earlier versions wrote them still load, signed or not, and are still verified.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <check.h>
#include <unistd.h>

#include "harness.hpp"

using namespace ckpt_test;

namespace {

Munged mA;
std::string base;

void start_daemon() { mA.start("fmt"); }
void stop_daemon() { mA.stop(); }
void setup() { base = make_temp_dir("format"); }
void teardown() { remove_all(base); }

// stdout of a shell command, without the trailing newline; fails the test on exit status != 0.
std::string sh(const std::string &cmd)
{
    FILE *p = popen(cmd.c_str(), "r");
    ck_assert_msg(p != nullptr, "popen %s", cmd.c_str());
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        out.append(buf, n);
    ck_assert_msg(pclose(p) == 0, "command failed: %s", cmd.c_str());
    while (!out.empty() && out.back() == '\n')
        out.pop_back();
    return out;
}

// Writes <dir>/step-000000000003 as format 1: file "a" holding data, its SHA-256, the canonical
// text's SHA-256 in the credential payload (munge CLI on socket; "" = unsigned).
void write_v1(const std::string &dir, const std::string &job, const std::string &data,
              const std::string &socket)
{
    const std::string d = dir + "/step-000000000003";
    ck_assert_int_eq(run("mkdir -p -m 700 '" + dir + "' '" + d + "'"), 0);
    write_file(d + "/a", data);
    std::string sum = sh("sha256sum '" + d + "/a' | cut -d' ' -f1");
    std::string uid = std::to_string(geteuid());
    std::string canon = "idletime-ckpt-1\nstep 3\njob " + job + "\nuid " + uid +
                        "\nsaved 1700000000.5\nfile a " + std::to_string(data.size()) + " " +
                        sum + "\n";
    write_file(base + "/canon", canon);
    std::string digest = sh("sha256sum '" + base + "/canon' | cut -d' ' -f1");
    std::string cred;
    if (!socket.empty())
        cred = ", \"munge\": \"" +
               sh("munge -S '" + socket + "' -s 'idletime-ckpt-1 job=" + job +
                  " step=3 digest=" + digest + "'") + "\"";
    write_file(d + "/MANIFEST.json",
               "{\"format\": \"idletime-ckpt-1\", \"step\": 3, \"job_id\": \"" + job +
                   "\", \"uid\": " + uid + ", \"saved_at\": 1700000000, \"saved_at_ns\": 5, "
                   "\"files\": [{\"name\": \"a\", \"size\": " + std::to_string(data.size()) +
                   ", \"sha256\": \"" + sum + "\"}]" + cred + "}\n");
}

// latest() is step 3 and file "a" reads back as want.
void expect_loads(const std::string &dir, const char *job, int munge, const std::string &want)
{
    LogSink log;
    idletime_ckpt_t *h = open_ok(dir, opts(job, munge, &log));
    ck_assert_msg(latest_step(h) == 3, "format-1 checkpoint not loaded: %s",
                  log.joined().c_str());
    std::string back(want.size(), '\0');
    size_t len = 0;
    ck_assert_int_eq(idletime_ckpt_read(h, 3, "a", back.data(), back.size(), &len), 0);
    ck_assert_uint_eq(len, want.size());
    ck_assert(back == want);
    idletime_ckpt_close(h);
}

void expect_rejected(const std::string &dir, const char *job, int munge, const char *reason)
{
    LogSink log;
    idletime_ckpt_t *h = open_ok(dir, opts(job, munge, &log));
    ck_assert_msg(latest_step(h) == UINT64_MAX, "a damaged format-1 checkpoint was loaded");
    ck_assert_msg(log.contains(reason), "log lacks \"%s\": %s", reason, log.joined().c_str());
    idletime_ckpt_close(h);
}

START_TEST(format2_checksum_is_xxh3_128)
{
    std::string dir = base + "/ck";
    idletime_ckpt_t *h = open_ok(dir, opts("", 0, nullptr));
    ck_assert_int_eq(save_step(h, 1, 3u << 20), 0);
    idletime_ckpt_close(h);
    std::string s = dir + "/step-000000000001";
    std::string man = read_file(s + "/MANIFEST.json");
    ck_assert_msg(man.find("\"format\":\"idletime-ckpt-2\"") != std::string::npos, "%s",
                  man.c_str());
    for (const char *f : {"a", "b.txt"}) {
        std::string want = sh("xxhsum -H2 '" + s + "/" + f + "' | cut -d' ' -f1");
        ck_assert_uint_eq(want.size(), 32);
        ck_assert_msg(man.find("\"xxh3_128\":\"" + want + "\"") != std::string::npos,
                      "%s: xxhsum %s not in %s", f, want.c_str(), man.c_str());
    }
    ck_assert(man.find("sha256") == std::string::npos);
}
END_TEST

START_TEST(format1_unsigned_loads_and_is_verified)
{
    std::string dir = base + "/ck";
    write_v1(dir, "", "weights of an earlier version", "");
    expect_loads(dir, "", 0, "weights of an earlier version");
    // A new save next to it is format 2; both verify.
    idletime_ckpt_t *h = open_ok(dir, opts("", 0, nullptr));
    ck_assert_int_eq(save_step(h, 4), 0);
    size_t n = 0;
    ck_assert_int_eq(idletime_ckpt_file_count(h, 3, &n), 0);
    ck_assert_uint_eq(n, 1);
    idletime_ckpt_close(h);
    ck_assert_int_eq(run("rm -rf '" + dir + "/step-000000000004'"), 0);
    ck_assert_int_eq(run("printf 'W' | dd of='" + dir +
                         "/step-000000000003/a' bs=1 conv=notrunc 2>/dev/null"), 0);
    expect_rejected(dir, "", 0, "does not match its SHA-256");
}
END_TEST

START_TEST(format1_signed_loads_and_binding_holds)
{
    setenv("IDLETIME_MUNGE_SOCKET", mA.socket.c_str(), 1);
    std::string dir = base + "/ck";
    write_v1(dir, "4242", "signed by an earlier version", mA.socket);
    expect_loads(dir, "4242", 1, "signed by an earlier version");
    // The credential binds every field; relabelling the format does not parse (format 2
    // files carry "xxh3_128" of 32 hex digits).
    const std::string m = dir + "/step-000000000003/MANIFEST.json";
    ck_assert_int_eq(run("sed -i 's/\"saved_at_ns\": 5/\"saved_at_ns\": 6/' '" + m + "'"), 0);
    expect_rejected(dir, "4242", 1, "does not match this manifest");
    ck_assert_int_eq(run("sed -i 's/idletime-ckpt-1/idletime-ckpt-2/' '" + m + "'"), 0);
    expect_rejected(dir, "4242", 1, "missing \"xxh3_128\"");
    unsetenv("IDLETIME_MUNGE_SOCKET");
}
END_TEST

}  // namespace

int main()
{
    Suite *s = suite_create("ckpt-format");
    TCase *t = tcase_create("format");
    tcase_add_unchecked_fixture(t, start_daemon, stop_daemon);
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 60);
    tcase_add_test(t, format2_checksum_is_xxh3_128);
    tcase_add_test(t, format1_unsigned_loads_and_is_verified);
    tcase_add_test(t, format1_signed_loads_and_binding_holds);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
