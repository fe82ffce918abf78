// Unit tests of the SPANK plugin's Slurm-free parts: option validation, precedence, plugstack
// arguments, control environment, checkpoint directory creation and refusal.
#include <filesystem>  // before check.h, whose macros break libstdc++ headers

#include <check.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "plugins/spank/ckpt_dir.hpp"
#include "plugins/spank/job_key.hpp"
#include "plugins/spank/options.hpp"

using namespace idletime::spank;

namespace {

// ck_assert_str_eq keeps only the char pointer: a temporary std::string would dangle.
#define ck_assert_string(expr, expected)                                                        \
    do {                                                                                        \
        const std::string got_ = (expr);                                                        \
        const std::string want_ = (expected);                                                   \
        ck_assert_msg(got_ == want_, "%s: got \"%s\", want \"%s\"", #expr, got_.c_str(), want_.c_str()); \
    } while (0)

struct ValidateCase {
    int index;
    const char *value;
    bool ok;
    const char *needle;  // substring of the error
};

const ValidateCase kValidate[] = {
    {kIdleResources, "none", true, ""},
    {kIdleResources, "acceptable", true, ""},
    {kIdleResources, "only", true, ""},
    {kIdleResources, "", false, "allowed: none, acceptable, only"},
    {kIdleResources, "Only", false, "allowed: none, acceptable, only"},
    {kIdleResources, "onlyx", false, "--idle-resources=onlyx is invalid"},
    {kQuota, "team-a", true, ""},
    {kQuota, "", false, "1-64 letters"},
    {kQuota, "a/b", false, "1-64 letters"},
    {kMaxRestarts, "0", true, ""},
    {kMaxRestarts, "4294967295", true, ""},
    {kMaxRestarts, "4294967296", false, "non-negative integer"},
    {kMaxRestarts, "-1", false, "non-negative integer"},
    {kMaxRestarts, "3x", false, "non-negative integer"},
    {kFtPolicy, "exit-code-and-error-msg", true, ""},
    {kFtPolicy, "exit", false, "allowed: none, exit-code, exit-code-and-error-msg"},
    {kHangTimeout, "600", true, ""},
    {kRunType, "async", true, ""},
    {kRunType, "both", false, "allowed: sync, async"},
    {kRequeueAtTimeLimit, "yes", true, ""},
    {kRequeueAtTimeLimit, "no", true, ""},
    {kRequeueAtTimeLimit, "maybe", false, "allowed: yes, no"},
};

// --requeue-at-time-limit without a value means yes.
START_TEST(test_bare_flag) {
    OptionState st;
    const std::string err = st.set_cli(kRequeueAtTimeLimit, nullptr);  // copies: Check keeps pointers
    ck_assert_str_eq(err.c_str(), "");
    const std::string value = st.effective(kRequeueAtTimeLimit).value_or("");
    ck_assert_str_eq(value.c_str(), "yes");
    ck_assert_msg(!st.set_cli(kMaxRestarts, nullptr).empty(), "--max-restarts without a value accepted");
}
END_TEST

START_TEST(test_validate) {
    const ValidateCase &c = kValidate[_i];
    OptionState st;
    std::string err = st.set_cli(c.index, c.value);
    ck_assert_msg(err.empty() == c.ok, "--%s=%s: got \"%s\"", kOptions[c.index].name, c.value, err.c_str());
    ck_assert_msg(err.find(c.needle) != std::string::npos, "error \"%s\" lacks \"%s\"", err.c_str(), c.needle);
    ck_assert(err.find('\n') == std::string::npos);
    std::optional<std::string> got = st.effective(c.index);
    if (c.ok) ck_assert_str_eq(got->c_str(), c.value);
}
END_TEST

struct PrecedenceCase {
    const char *cli, *env, *def, *expect;  // nullptr = not given / not set
};

const PrecedenceCase kPrecedence[] = {
    {"only", "acceptable", "none", "only"},
    {nullptr, "acceptable", "none", "acceptable"},
    {nullptr, nullptr, "none", "none"},
    {nullptr, nullptr, nullptr, nullptr},
    {"acceptable", nullptr, "only", "acceptable"},
};

START_TEST(test_precedence) {
    const PrecedenceCase &c = kPrecedence[_i];
    OptionState st;
    std::string arg = std::string("default_idle_resources=") + (c.def ? c.def : "");
    char *argv[] = {arg.data()};
    ck_assert_string(st.parse_plugstack(c.def ? 1 : 0, argv), "");
    if (c.cli) {
        ck_assert_string(st.set_cli(kIdleResources, c.cli), "");
        ck_assert_string(st.set_cli(kIdleResources, c.cli), "");  // Slurm calls twice
    }
    std::map<std::string, std::string> env;
    if (c.env) env["IDLETIME_IDLE_RESOURCES"] = c.env;
    ck_assert_string(st.load_env([&](const char *n) -> std::optional<std::string> {
        auto it = env.find(n);
        if (it == env.end()) return std::nullopt;
        return it->second;
    }), "");
    std::optional<std::string> got = st.effective(kIdleResources);
    ck_assert_int_eq(got.has_value(), c.expect != nullptr);
    if (c.expect) ck_assert_str_eq(got->c_str(), c.expect);
}
END_TEST

START_TEST(test_plugstack) {
    OptionState st;
    char a1[] = "config=/tmp/x.json", a2[] = "default_run_type=async", bad[] = "defualt_quota=x",
         badval[] = "default_max_restarts=-2", noval[] = "config";
    char *ok[] = {a1, a2};
    ck_assert_string(st.parse_plugstack(2, ok), "");
    ck_assert_str_eq(st.config_path().c_str(), "/tmp/x.json");
    std::optional<std::string> run_type = st.effective(kRunType);
    ck_assert_str_eq(run_type->c_str(), "async");
    char *u[] = {bad};
    std::string err = st.parse_plugstack(1, u);
    ck_assert_msg(err.find("unknown plugstack argument \"defualt_quota=x\"") == 0, "%s", err.c_str());
    ck_assert_msg(err.find("default_idle_resources") != std::string::npos, "%s", err.c_str());
    char *v[] = {badval};
    err = st.parse_plugstack(1, v);
    ck_assert_msg(err.find("default_max_restarts=-2 is invalid") != std::string::npos, "%s", err.c_str());
    char *n[] = {noval};
    ck_assert_msg(!st.parse_plugstack(1, n).empty(), "config without a value must fail");
    char sock[] = "munge_socket=/var/run/m.sock", relsock[] = "munge_socket=m.sock";
    char *s1[] = {sock}, *s2[] = {relsock};
    ck_assert_string(st.parse_plugstack(1, s1), "");
    ck_assert_str_eq(st.munge_socket().c_str(), "/var/run/m.sock");
    ck_assert_msg(st.parse_plugstack(1, s2).find("munge_socket needs an absolute path") != std::string::npos,
                  "relative munge_socket must fail");
    ck_assert(st.account_hint());  // default: sbatch sends the DefaultAccount hint
    char hno[] = "account_hint=no", hbad[] = "account_hint=off";
    char *h1[] = {hno}, *h2[] = {hbad};
    ck_assert_string(st.parse_plugstack(1, h1), "");
    ck_assert(!st.account_hint());
    ck_assert_string(st.parse_plugstack(1, h2), "plugstack argument account_hint must be yes or no, not \"off\"");
}
END_TEST

std::map<std::string, std::string> control(const OptionState &st) {
    std::map<std::string, std::string> m;
    for (const auto &[k, v] : st.control_env()) m[k] = v;
    return m;
}

START_TEST(test_control_env) {
    char d1[] = "default_idle_resources=acceptable", d2[] = "default_max_restarts=5";
    char *argv[] = {d1, d2};
    OptionState plain;
    ck_assert_string(plain.parse_plugstack(2, argv), "");
    auto m = control(plain);  // no user option: routing untouched, FT default passes through
    ck_assert(m.count("IDLETIME_MODE") == 0);
    ck_assert_str_eq(m["IDLETIME_MAX_RESTARTS"].c_str(), "5");

    OptionState quota_only;
    quota_only.set_cli(kQuota, "team-a");
    m = control(quota_only);
    ck_assert_str_eq(m["IDLETIME_MODE"].c_str(), "none");
    ck_assert_str_eq(m["IDLETIME_QUOTA"].c_str(), "team-a");

    OptionState with_def;
    with_def.parse_plugstack(2, argv);
    with_def.set_cli(kQuota, "team-b");
    m = control(with_def);
    ck_assert_str_eq(m["IDLETIME_MODE"].c_str(), "acceptable");
    for (const auto &[k, v] : with_def.control_env()) ck_assert_msg(!v.empty(), "%s is empty", k.c_str());
}
END_TEST

// A fresh directory below /var/lib/idletime-tests (or $IDLETIME_TEST_SCRATCH): root-owned, 0755 all
// the way up, wherever the build tree is (a tree below /tmp would be refused as a checkpoint root).
std::string tmpdir() {
    const char *base = getenv("IDLETIME_TEST_SCRATCH");
    std::string dir = base && *base ? base : "/var/lib/idletime-tests";
    mkdir(dir.c_str(), 0755);
    std::string tmpl = dir + "/check_spank.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl.data()));
    ck_assert_int_eq(chmod(tmpl.c_str(), 0755), 0);
    return tmpl;
}

std::string ensure(const std::string &root, const std::string &user, const std::string &name, uid_t uid, gid_t gid) {
    return ckpt_dir_ensure(root, user, name, uid, gid).message;
}

START_TEST(test_ckpt_dir_name) {
    ck_assert_string(ckpt_dir_name(42, "0123456789abcdef"), "42-0123456789abcdef");
    ck_assert_string(ckpt_dir_name(42, "0123"), "");               // too short
    ck_assert_string(ckpt_dir_name(42, "0123456789ABCDEF"), "");   // upper case
    ck_assert_string(ckpt_dir_name(42, "../../../etc/x"), "");
    unsigned long id = 0;
    ck_assert(ckpt_dir_name_parse("42-0123456789abcdef", &id));
    ck_assert_uint_eq(id, 42);
    ck_assert(!ckpt_dir_name_parse("42", &id));
    ck_assert(!ckpt_dir_name_parse("-0123456789abcdef", &id));
    ck_assert(!ckpt_dir_name_parse("x2-0123456789abcdef", &id));
    ck_assert(!ckpt_dir_name_parse("99999999999-0123456789abcdef", &id));
    ck_assert_string(ckpt_dir_path("/r", "alice", "42-0123456789abcdef"), "/r/alice/42-0123456789abcdef");
    const std::string k1 = new_job_key(), k2 = new_job_key();
    ck_assert_msg(ckpt_dir_name(7, k1) == "7-" + k1 && k1 != k2, "keys %s %s", k1.c_str(), k2.c_str());
}
END_TEST

START_TEST(test_ckpt_root_refused_anyone) {
    CkptResult r;
    ck_assert_int_lt(ckpt_root_open("relative/x", true, r), 0);
    ck_assert(r.error == CkptError::Root);
    // /tmp is sticky and world-writable: refused as a component, whatever is below it.
    ck_assert_int_lt(ckpt_root_open("/tmp/idletime-check-never-created/ckpt", true, r), 0);
    ck_assert_msg(r.message.find("/tmp is writable by group or others (mode 1777)") != std::string::npos, "%s",
                  r.message.c_str());
    struct stat st;
    ck_assert_int_ne(stat("/tmp/idletime-check-never-created", &st), 0);
    ck_assert_msg(!ensure("/x", "..", "1-0123456789abcdef", getuid(), getgid()).empty(), "'..' accepted");
}
END_TEST

// The rest needs root (components must be root-owned).
START_TEST(test_ckpt_dir_create) {
    std::string root = tmpdir() + "/spool/idletime/ckpt";  // parents are created too
    std::string err = ensure(root, "alice", "42-0123456789abcdef", 1000, 1000);
    ck_assert_msg(err.empty(), "%s", err.c_str());
    struct stat st;
    ck_assert_int_eq(stat((root + "/alice/42-0123456789abcdef").c_str(), &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0700);
    ck_assert_int_eq(st.st_uid, 1000);
    ck_assert_int_eq(stat((root + "/alice").c_str(), &st), 0);  // root's: nobody can swap the job dir
    ck_assert_int_eq(st.st_mode & 07777, 0755);
    ck_assert_int_eq(st.st_uid, 0);
    ck_assert_int_eq(stat(root.c_str(), &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0755);
    ck_assert_int_eq(st.st_uid, 0);
    // Same directory again (a requeue): still fine.
    ck_assert_string(ensure(root, "alice", "42-0123456789abcdef", 1000, 1000), "");
}
END_TEST

START_TEST(test_ckpt_root_components) {
    std::string base = tmpdir();
    ck_assert_int_eq(mkdir((base + "/real").c_str(), 0755), 0);
    ck_assert_int_eq(symlink((base + "/real").c_str(), (base + "/link").c_str()), 0);
    CkptResult r = ckpt_dir_ensure(base + "/link/ckpt", "bob", "7-0123456789abcdef", 1000, 1000);
    ck_assert_msg(r.error == CkptError::Root && r.message.find(base + "/link is a symlink") != std::string::npos,
                  "%s", r.message.c_str());
    struct stat st;
    ck_assert_int_ne(stat((base + "/real/ckpt").c_str(), &st), 0);  // nothing created through the link
    ck_assert_int_eq(chown((base + "/real").c_str(), 1000, 1000), 0);
    r = ckpt_dir_ensure(base + "/real/ckpt", "bob", "7-0123456789abcdef", 1000, 1000);
    ck_assert_msg(r.message.find("is owned by uid 1000, not root") != std::string::npos, "%s", r.message.c_str());
    ck_assert_int_eq(chown((base + "/real").c_str(), 0, 0), 0);
    ck_assert_int_eq(chmod((base + "/real").c_str(), 01777), 0);
    r = ckpt_dir_ensure(base + "/real/ckpt", "bob", "7-0123456789abcdef", 1000, 1000);
    ck_assert_msg(r.message.find("writable by group or others (mode 1777)") != std::string::npos, "%s",
                  r.message.c_str());
    ck_assert_int_eq(chmod((base + "/real").c_str(), 0775), 0);
    r = ckpt_dir_ensure(base + "/real/ckpt", "bob", "7-0123456789abcdef", 1000, 1000);
    ck_assert_msg(r.message.find("(mode 0775)") != std::string::npos, "%s", r.message.c_str());
    ck_assert_int_ne(stat((base + "/real/ckpt").c_str(), &st), 0);
}
END_TEST

// A directory owned by another uid, or a symlink, is refused, never adopted.
START_TEST(test_ckpt_dir_foreign_owner) {
    std::string root = tmpdir() + "/ckpt";
    ck_assert_string(ensure(root, "dave", "1-0123456789abcdef", 1000, 1000), "");
    ck_assert_int_eq(mkdir((root + "/dave/9-0123456789abcdef").c_str(), 0700), 0);  // planted (uid 0)
    std::string err = ensure(root, "dave", "9-0123456789abcdef", 1000, 1000);
    ck_assert_msg(err.find("owned by uid 0, not the job's uid 1000") != std::string::npos, "%s", err.c_str());
    ck_assert_int_eq(symlink("/etc", (root + "/dave/8-0123456789abcdef").c_str()), 0);
    err = ensure(root, "dave", "8-0123456789abcdef", 1000, 1000);
    ck_assert_msg(err.find("is a symlink or not a directory") != std::string::npos, "%s", err.c_str());
    // A user directory of another uid is refused with the fix; the user's own (older layout) is used.
    ck_assert_int_eq(chown((root + "/dave").c_str(), 2000, 2000), 0);
    err = ensure(root, "dave", "1-0123456789abcdef", 1000, 1000);
    ck_assert_msg(err.find("owned by uid 2000, not root; fix: chown root:root") != std::string::npos, "%s",
                  err.c_str());
    ck_assert_int_eq(chown((root + "/dave").c_str(), 1000, 1000), 0);
    ck_assert_int_eq(chmod((root + "/dave").c_str(), 0700), 0);
    ck_assert_string(ensure(root, "dave", "2-0123456789abcdef", 1000, 1000), "");
    ck_assert_int_eq(chmod((root + "/dave").c_str(), 0777), 0);
    err = ensure(root, "dave", "3-0123456789abcdef", 1000, 1000);
    ck_assert_msg(err.find("writable by group or others") != std::string::npos, "%s", err.c_str());
    ck_assert_msg(!ensure(root, "root", "1-0123456789abcdef", 0, 0).empty(), "uid 0 accepted");
}
END_TEST

// Tasks of one step on several nodes (or several tasks on one node) create the same job directory
// at the same moment: every one of them must get it, none may see it half-made (root's, before the
// chown) and refuse it.
START_TEST(test_ckpt_dir_concurrent_creators) {
    std::string root = tmpdir() + "/ckpt";
    ck_assert_string(ensure(root, "erin", "1-0123456789abcdef", 1000, 1000), "");
    constexpr int kTasks = 4, kRounds = 25;
    int refused = 0;
    for (int round = 0; round < kRounds; ++round) {
        const std::string name = std::to_string(100 + round) + "-0123456789abcdef";
        int go[2];
        ck_assert_int_eq(pipe(go), 0);
        pid_t pids[kTasks];
        for (int t = 0; t < kTasks; ++t) {
            pids[t] = fork();
            ck_assert_int_ge(pids[t], 0);
            if (pids[t] == 0) {
                close(go[1]);
                char c;
                (void)!read(go[0], &c, 1);  // all start together when the pipe closes
                const std::string err = ensure(root, "erin", name, 1000, 1000);
                if (!err.empty()) std::fprintf(stderr, "task %d: %s\n", t, err.c_str());
                _exit(err.empty() ? 0 : 1);
            }
        }
        close(go[0]);
        close(go[1]);
        for (pid_t p : pids) {
            int status = 0;
            ck_assert_int_eq(waitpid(p, &status, 0), p);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++refused;
        }
        struct stat st;
        ck_assert_int_eq(stat((root + "/erin/" + name).c_str(), &st), 0);
        ck_assert_int_eq(st.st_uid, 1000);
        ck_assert_int_eq(st.st_mode & 07777, 0700);
    }
    ck_assert_msg(refused == 0, "%d of %d concurrent creators were refused the job directory", refused,
                  kTasks * kRounds);
    // Nothing but the job directories is left next to them (no temporaries).
    for (const auto &e : std::filesystem::directory_iterator(root + "/erin"))
        ck_assert_msg(ckpt_dir_name_parse(e.path().filename().string(), nullptr), "left behind: %s",
                      e.path().c_str());
}
END_TEST

Suite *spank_suite() {
    Suite *s = suite_create("spank");
    TCase *tc = tcase_create("options");
    tcase_add_loop_test(tc, test_validate, 0, sizeof(kValidate) / sizeof(kValidate[0]));
    tcase_add_loop_test(tc, test_precedence, 0, sizeof(kPrecedence) / sizeof(kPrecedence[0]));
    tcase_add_test(tc, test_plugstack);
    tcase_add_test(tc, test_bare_flag);
    tcase_add_test(tc, test_control_env);
    suite_add_tcase(s, tc);
    TCase *dir = tcase_create("ckpt_dir");
    tcase_add_test(dir, test_ckpt_dir_name);
    tcase_add_test(dir, test_ckpt_root_refused_anyone);
    suite_add_tcase(s, dir);
    if (geteuid() == 0) {
        TCase *root = tcase_create("ckpt_dir_root");
        tcase_add_test(root, test_ckpt_dir_create);
        tcase_add_test(root, test_ckpt_root_components);
        tcase_add_test(root, test_ckpt_dir_foreign_owner);
        suite_add_tcase(s, root);
        TCase *race = tcase_create("ckpt_dir_race");
        tcase_set_timeout(race, 120);  // 100 forks on a loaded 2-core machine
        tcase_add_test(race, test_ckpt_dir_concurrent_creators);
        suite_add_tcase(s, race);
    }
    return s;
}

}  // namespace

int main() {
    SRunner *sr = srunner_create(spank_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    std::error_code ec;  // the tests' directories (tmpdir(); made in forked children)
    const char *base = getenv("IDLETIME_TEST_SCRATCH");
    for (const auto &e : std::filesystem::directory_iterator(base && *base ? base : "/var/lib/idletime-tests", ec))
        if (e.path().filename().string().rfind("check_spank.", 0) == 0 && e.is_directory(ec))
            std::filesystem::remove_all(e.path(), ec);
    if (failed) return 1;
    if (geteuid() != 0) {
        std::fprintf(stderr, "check_spank: the checkpoint directory cases need root; reporting SKIP\n");
        return 77;
    }
    return 0;
}
