// Unit tests of the SPANK plugin's Slurm-free parts: option validation, precedence, plugstack
// arguments, control environment, checkpoint directory creation and refusal.
#include <check.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "plugins/spank/ckpt_dir.hpp"
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
};

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

std::string tmpdir() {
    char tmpl[] = "/tmp/check_spank.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    return tmpl;
}

START_TEST(test_ckpt_dir_create) {
    std::string root = tmpdir() + "/spool/idletime/ckpt";  // parents are created too
    std::string err = ckpt_dir_ensure(root, "alice", "42", getuid(), getgid());
    ck_assert_msg(err.empty(), "%s", err.c_str());
    struct stat st;
    ck_assert_int_eq(stat((root + "/alice/42").c_str(), &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0700);
    ck_assert_int_eq(st.st_uid, getuid());
    ck_assert_int_eq(stat((root + "/alice").c_str(), &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0700);
    // Same job id again (a requeue): same directory, still fine.
    ck_assert_string(ckpt_dir_ensure(root, "alice", "42", getuid(), getgid()), "");
    ck_assert_string(ckpt_dir_path(root, "alice", "42"), root + "/alice/42");
}
END_TEST

START_TEST(test_ckpt_dir_refuse) {
    std::string base = tmpdir();
    std::string root = base + "/ckpt";
    ck_assert_int_eq(mkdir(root.c_str(), 0755), 0);
    ck_assert_int_eq(symlink(base.c_str(), (root + "/bob").c_str()), 0);
    std::string err = ckpt_dir_ensure(root, "bob", "7", getuid(), getgid());
    ck_assert_msg(err.find("refusing") == 0, "symlink accepted: %s", err.c_str());
    ck_assert_msg(!ckpt_dir_ensure(root, "..", "7", getuid(), getgid()).empty(), "'..' accepted");
    ck_assert_msg(!ckpt_dir_ensure("relative", "a", "7", getuid(), getgid()).empty(), "relative root accepted");
    ck_assert_int_eq(chmod(root.c_str(), 0777), 0);
    err = ckpt_dir_ensure(root, "carol", "7", getuid(), getgid());
    ck_assert_msg(err.find("world-writable") != std::string::npos, "%s", err.c_str());
}
END_TEST

// Needs root: a directory owned by another uid must be refused, never adopted.
START_TEST(test_ckpt_dir_foreign_owner) {
    std::string root = tmpdir() + "/ckpt";
    ck_assert_string(ckpt_dir_ensure(root, "dave", "1", 1000, 1000), "");
    ck_assert_int_eq(mkdir((root + "/dave/9").c_str(), 0700), 0);  // planted by root (uid 0)
    std::string err = ckpt_dir_ensure(root, "dave", "9", 1000, 1000);
    ck_assert_msg(err.find("owned by uid 0, not the job's uid 1000") != std::string::npos, "%s", err.c_str());
    ck_assert_int_eq(chown((root + "/dave").c_str(), 2000, 2000), 0);
    err = ckpt_dir_ensure(root, "dave", "1", 1000, 1000);
    ck_assert_msg(err.find("owned by uid 2000") != std::string::npos, "%s", err.c_str());
}
END_TEST

Suite *spank_suite() {
    Suite *s = suite_create("spank");
    TCase *tc = tcase_create("options");
    tcase_add_loop_test(tc, test_validate, 0, sizeof(kValidate) / sizeof(kValidate[0]));
    tcase_add_loop_test(tc, test_precedence, 0, sizeof(kPrecedence) / sizeof(kPrecedence[0]));
    tcase_add_test(tc, test_plugstack);
    tcase_add_test(tc, test_control_env);
    suite_add_tcase(s, tc);
    TCase *dir = tcase_create("ckpt_dir");
    tcase_add_test(dir, test_ckpt_dir_create);
    tcase_add_test(dir, test_ckpt_dir_refuse);
    suite_add_tcase(s, dir);
    if (geteuid() == 0) {
        TCase *root = tcase_create("ckpt_dir_root");
        tcase_add_test(root, test_ckpt_dir_foreign_owner);
        suite_add_tcase(s, root);
    }
    return s;
}

}  // namespace

int main() {
    SRunner *sr = srunner_create(spank_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (failed) return 1;
    if (geteuid() != 0) {
        std::fprintf(stderr, "check_spank: the foreign-owner case needs root; reporting SKIP\n");
        return 77;
    }
    return 0;
}
