// Unit tests of job_submit/idletime's decision against the example config (etc/idletime.json)
// and the real policy core: one row per submission, expected partitions or rejection.
#include <check.h>
#include <unistd.h>

#include <cstdio>

#include <cstring>
#include <string>
#include <vector>
#include <utility>

#include "plugins/job_submit/config_path.hpp"
#include "plugins/job_submit/decide.hpp"
#include "plugins/job_submit/env_edit.hpp"
#include "testsuite/check_string.hpp"

// libslurm exports Slurm's allocator (declared only in internal headers): the same functions
// slurmctld uses to free job_desc arrays.
extern "C" {
char *slurm_xstrdup(const char *str);
void slurm_xfree(void **item);
void *slurm_xrecalloc(void **item, size_t count, size_t size, bool clear, bool try_only, const char *file, int line,
                      const char *func);
size_t slurm_xsize(void *item);
}

using namespace idletime::jobsubmit;

namespace {

idletime_config_t *g_cfg = nullptr;

struct Case {
    const char *name;
    std::vector<const char *> spank_env;
    const char *account, *partition, *tres_per_node;
    Action action;
    const char *expect;  // Apply: partitions; Reject: substring of the message
    ErrorKind error;
};

const Case kCases[] = {
    {"no options, -p of the site", {}, "team-a", "debug", "gres:gpu:a100:2", Action::Untouched, "", ErrorKind::None},
    {"no options, -p of a quota", {}, "team-b", "quota-team-b", nullptr, Action::Untouched, "", ErrorKind::None},
    {"no options = none", {}, "team-a", nullptr, "gres:gpu:a100:2", Action::Apply, "quota-team-a", ErrorKind::None},
    {"no options, one quota", {}, "team-b", nullptr, nullptr, Action::Apply, "quota-team-b", ErrorKind::None},
    {"no options, hint", {"IDLETIME_ACCOUNT=team-x"}, nullptr, nullptr, nullptr, Action::Apply, "quota-team-x",
     ErrorKind::None},
    {"no options, hint of two quotas", {"IDLETIME_ACCOUNT=team-a"}, nullptr, nullptr, nullptr, Action::Reject,
     "several quotas", ErrorKind::Account},
    {"no options, no quota", {}, "physics", nullptr, nullptr, Action::Reject,
     "no partition given and account \"physics\" has no idletime quota; submit with -A ACCOUNT of a quota "
     "(accounts with quotas: team-a, team-b, team-c, team-h, team-x, team-cpu) or name a partition with -p",
     ErrorKind::Account},
    {"no options, no account", {}, nullptr, nullptr, nullptr, Action::Reject,
     "no partition given and the job's account is not known", ErrorKind::Account},
    {"only by account+spec", {"IDLETIME_MODE=only"}, "team-a", nullptr, "gres:gpu:a100:2", Action::Apply,
     "idle-a100-east,idle-a100-west", ErrorKind::None},
    {"acceptable", {"IDLETIME_MODE=acceptable", "IDLETIME_QUOTA=team-a"}, "team-a", nullptr, nullptr,
     Action::Apply, "quota-team-a,idle-a100-east,idle-a100-west", ErrorKind::None},
    {"none", {"IDLETIME_MODE=none", "IDLETIME_QUOTA=team-b"}, "team-b", nullptr, nullptr, Action::Apply,
     "quota-team-b", ErrorKind::None},
    {"quota alone = none", {"IDLETIME_QUOTA=team-c"}, "team-c", nullptr, nullptr, Action::Apply, "quota-team-c",
     ErrorKind::None},
    {"h100 stays in tenant", {"IDLETIME_MODE=only", "IDLETIME_QUOTA=team-h"}, "team-a", nullptr, nullptr,
     Action::Apply, "idle-h100-main", ErrorKind::None},
    {"general pool own pool", {"IDLETIME_MODE=only"}, "team-cpu", nullptr, nullptr, Action::Apply, "idle-cpu-gen",
     ErrorKind::None},
    {"SPANK_ prefix", {"SPANK_IDLETIME_MODE=only", "SPANK_IDLETIME_QUOTA=team-b"}, "team-b", nullptr, nullptr,
     Action::Apply, "idle-a100-east,idle-a100-west", ErrorKind::None},
    {"default account hint", {"IDLETIME_MODE=only", "IDLETIME_ACCOUNT=team-b"}, nullptr, nullptr, nullptr,
     Action::Apply, "idle-a100-east,idle-a100-west", ErrorKind::None},
    {"-p agrees", {"IDLETIME_MODE=only", "IDLETIME_QUOTA=team-a"}, "team-a", "idle-a100-west", nullptr,
     Action::Apply, "idle-a100-west", ErrorKind::None},
    {"-p disagrees", {"IDLETIME_MODE=only", "IDLETIME_QUOTA=team-a"}, "team-a", "idle-a100-west,idle-h100-beta",
     nullptr, Action::Reject, "partition \"idle-h100-beta\" does not fit --idle-resources=only", ErrorKind::Partition},
    {"-p quota with only", {"IDLETIME_MODE=only", "IDLETIME_QUOTA=team-a"}, "team-a", "quota-team-a", nullptr,
     Action::Reject, "partition \"quota-team-a\"", ErrorKind::Partition},
    {"unknown mode", {"IDLETIME_MODE=sometimes"}, "team-a", nullptr, nullptr, Action::Reject,
     "allowed: none, acceptable, only", ErrorKind::Mode},
    {"unknown quota", {"IDLETIME_MODE=only", "IDLETIME_QUOTA=nosuch"}, "team-a", nullptr, nullptr, Action::Reject,
     "unknown quota \"nosuch\"", ErrorKind::Quota},
    {"quota not allowed", {"IDLETIME_MODE=only", "IDLETIME_QUOTA=team-b"}, "team-a", nullptr, nullptr,
     Action::Reject, "may not use quota \"team-b\"", ErrorKind::Account},
    {"spec of other pool", {"IDLETIME_MODE=only", "IDLETIME_QUOTA=team-a"}, "team-a", nullptr, "gres:gpu:h100:1",
     Action::Reject, "needs a quota of a \"h100\" pool", ErrorKind::GpuSpec},
    {"spec not offered", {"IDLETIME_MODE=only", "IDLETIME_QUOTA=team-a"}, "team-a", nullptr, "gres:gpu:v100:1",
     Action::Reject, "not offered in tenant \"acme\"", ErrorKind::GpuSpec},
    {"general pool asks a100", {"IDLETIME_MODE=only"}, "team-cpu", nullptr, "gres:gpu:a100:1", Action::Reject,
     "general pool", ErrorKind::GpuSpec},
    {"two gpu types", {"IDLETIME_MODE=only"}, "team-a", nullptr, "gres:gpu:a100:1,gres:gpu:h100:1", Action::Reject,
     "GPU types a100 and h100", ErrorKind::GpuSpec},
    {"no account", {"IDLETIME_MODE=only"}, nullptr, nullptr, nullptr, Action::Reject, "account is not known",
     ErrorKind::Account},
    {"ambiguous account", {"IDLETIME_MODE=only"}, "team-a", nullptr, nullptr, Action::Reject, "several quotas",
     ErrorKind::Account},
};

START_TEST(test_decide) {
    const Case &c = kCases[_i];
    job_desc_msg_t desc;
    std::memset(&desc, 0, sizeof(desc));
    std::vector<std::string> env(c.spank_env.begin(), c.spank_env.end());
    std::vector<char *> ptrs;
    for (std::string &e : env) ptrs.push_back(e.data());
    desc.spank_job_env = ptrs.data();
    desc.spank_job_env_size = static_cast<uint32_t>(ptrs.size());
    desc.account = const_cast<char *>(c.account);
    desc.partition = const_cast<char *>(c.partition);
    desc.tres_per_node = const_cast<char *>(c.tres_per_node);
    Decision d = decide(g_cfg, view_of(&desc));
    ck_assert_msg(d.action == c.action, "%s: action %d, message \"%s\"", c.name, int(d.action), d.message.c_str());
    ck_assert_msg(d.error == c.error, "%s: error kind %d", c.name, int(d.error));
    if (c.action == Action::Apply) ck_assert_str_eq(d.partitions.c_str(), c.expect);
    if (c.action == Action::Reject) {
        ck_assert_msg(d.message.find(c.expect) != std::string::npos, "%s: \"%s\"", c.name, d.message.c_str());
        ck_assert_msg(d.message.rfind("idletime: ", 0) == 0, "%s: no prefix", c.name);
        ck_assert(d.message.find('\n') == std::string::npos);
        ck_assert_int_ne(slurm_rc(d.error), 0);
    }
}
END_TEST

START_TEST(test_settings_written) {
    const char *env[] = {"IDLETIME_MODE=only", "IDLETIME_ACCOUNT=team-b"};
    job_desc_msg_t desc;
    std::memset(&desc, 0, sizeof(desc));
    desc.spank_job_env = const_cast<char **>(env);
    desc.spank_job_env_size = 2;
    Decision d = decide(g_cfg, view_of(&desc));
    ck_assert(d.action == Action::Apply);
    ck_assert_str_eq(d.set_account.c_str(), "team-b");  // Slurm validates the association
    ck_assert(d.requeue);
    ck_assert(d.notice);
    ck_assert_int_eq(d.warn_signal, 10);  // USR1 in the example config
    ck_assert_int_eq(d.warn_time, 30);    // idle.grace_time
    ck_assert_int_eq(d.warn_flags, 0);    // no script: srun/salloc job, every step gets it
    // The requested mode, in the initial fault-tolerance record (views read it after start).
    ck_assert_str_eq(d.admin_comment.c_str(), "idletime-ft:{\"v\":1,\"m\":\"only\"}");
    desc.script = const_cast<char *>("#!/bin/sh\ntrain\n");
    d = decide(g_cfg, view_of(&desc));
    // sbatch: the batch shell's process group (children, srun forwarding to its steps)
    ck_assert_int_eq(d.warn_flags, KILL_FULL_JOB | KILL_JOB_BATCH);
    desc.script = nullptr;
    const char *none_env[] = {"IDLETIME_MODE=none", "IDLETIME_QUOTA=team-b"};
    desc.spank_job_env = const_cast<char **>(none_env);
    desc.account = const_cast<char *>("team-b");
    d = decide(g_cfg, view_of(&desc));
    ck_assert(d.action == Action::Apply);
    ck_assert(!d.requeue && !d.notice && d.set_account.empty());
    ck_assert_str_eq(d.admin_comment.c_str(), "idletime-ft:{\"v\":1,\"m\":\"none\"}");
}
END_TEST

struct JobEnvCase {
    std::vector<const char *> spank_env;
    const char *account, *tres_per_node;
    std::vector<std::pair<std::string, std::string>> expect;
};

const JobEnvCase kJobEnv[] = {
    // account team-a maps to team-a and team-h: the GPU spec chose, the job must be told which.
    {{"IDLETIME_MODE=only"}, "team-a", "gres:gpu:a100:1", {{"IDLETIME_QUOTA", "team-a"}}},
    {{"IDLETIME_MODE=acceptable"}, "team-a", "gres:gpu:h100:1", {{"IDLETIME_QUOTA", "team-h"}}},
    {{"IDLETIME_MODE=only", "IDLETIME_QUOTA=team-h"}, "team-a", nullptr, {}},
    {{"IDLETIME_QUOTA=team-c"}, "team-c", nullptr, {{"IDLETIME_MODE", "none"}}},
    {{"SPANK_IDLETIME_MODE=only"}, "team-b", nullptr, {{"IDLETIME_QUOTA", "team-b"}}},
};

START_TEST(test_job_env) {
    const JobEnvCase &c = kJobEnv[_i];
    job_desc_msg_t desc;
    std::memset(&desc, 0, sizeof(desc));
    std::vector<char *> ptrs;
    for (const char *e : c.spank_env) ptrs.push_back(const_cast<char *>(e));
    desc.spank_job_env = ptrs.data();
    desc.spank_job_env_size = static_cast<uint32_t>(ptrs.size());
    desc.account = const_cast<char *>(c.account);
    desc.tres_per_node = const_cast<char *>(c.tres_per_node);
    Decision d = decide(g_cfg, view_of(&desc));
    ck_assert_msg(d.action == Action::Apply, "case %d: %s", _i, d.message.c_str());
    ck_assert_msg(d.job_env == c.expect, "case %d: %zu entries, first %s", _i, d.job_env.size(),
                  d.job_env.empty() ? "-" : d.job_env[0].second.c_str());
}
END_TEST

struct ModifyCase {
    const char *partition;
    bool admin;
    Action action;
};

const ModifyCase kModify[] = {
    {"idle-a100-west", false, Action::Reject},         // a `none` job borrowing after submission
    {"quota-team-a", false, Action::Reject},           // an `only` job becoming guaranteed
    {"idle-h100-beta", false, Action::Reject},         // another tenant's pool
    {"other,quota-team-b", false, Action::Reject},     // one managed name is enough
    {"debug", false, Action::Untouched},               // not idletime's
    {nullptr, false, Action::Untouched},               // update without a partition change
    {"", false, Action::Untouched},
    {"quota-team-a,idle-a100-east", true, Action::Untouched},  // admins may
};

START_TEST(test_modify) {
    const ModifyCase &c = kModify[_i];
    Decision d = decide_modify(g_cfg, c.partition, c.admin);
    ck_assert_msg(d.action == c.action, "case %d: %s", _i, d.message.c_str());
    if (c.action == Action::Reject) {
        ck_assert_msg(d.message.find("is managed by idletime") != std::string::npos, "%s", d.message.c_str());
        ck_assert_int_ne(slurm_rc(d.error), 0);
    }
    ck_assert(decide_modify(nullptr, "quota-team-a", false).action == Action::Untouched);
}
END_TEST

const Allocator kXalloc{slurm_xstrdup, slurm_xrecalloc, slurm_xfree};

// Builds an array the way slurmctld's unpack does (xmalloc'd), edits it, frees it as Slurm does.
START_TEST(test_env_set) {
    uint32_t n = 0;
    char **arr = nullptr;
    ck_assert(env_set(kXalloc, &arr, &n, "IDLETIME_QUOTA", "team-a"));  // from empty
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(arr[0], "IDLETIME_QUOTA=team-a");
    ck_assert_ptr_null(arr[1]);
    ck_assert(env_set(kXalloc, &arr, &n, "IDLETIME_MODE", "only"));
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(arr[1], "IDLETIME_MODE=only");
    ck_assert_int_ge(slurm_xsize(arr), 3 * sizeof(char *));  // Slurm's header still describes the array
    ck_assert(env_set(kXalloc, &arr, &n, "IDLETIME_QUOTA", "team-h"));  // replaced, not added
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(arr[0], "IDLETIME_QUOTA=team-h");
    char *spanked = slurm_xstrdup("SPANK_IDLETIME_X=1");
    slurm_xfree(reinterpret_cast<void **>(&arr[1]));
    arr[1] = spanked;
    ck_assert(env_set(kXalloc, &arr, &n, "IDLETIME_X", "2", "SPANK_"));  // prefixed form replaced
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(arr[1], "IDLETIME_X=2");
    ck_assert(env_set(kXalloc, &arr, &n, "IDLETIME_QUOTA_OTHER", "z"));  // prefix of a name is not it
    ck_assert_int_eq(n, 3);
    for (uint32_t i = 0; i < n; ++i) slurm_xfree(reinterpret_cast<void **>(&arr[i]));
    slurm_xfree(reinterpret_cast<void **>(&arr));
    ck_assert_ptr_null(arr);
}
END_TEST

START_TEST(test_no_config) {
    job_desc_msg_t desc;
    std::memset(&desc, 0, sizeof(desc));
    ck_assert(decide(nullptr, view_of(&desc)).action == Action::Untouched);
    const char *env[] = {"IDLETIME_MODE=only"};
    desc.spank_job_env = const_cast<char **>(env);
    desc.spank_job_env_size = 1;
    Decision d = decide(nullptr, view_of(&desc));
    ck_assert(d.action == Action::Reject && d.error == ErrorKind::NoConfig);
}
END_TEST

struct GpuCase {
    std::vector<std::string> tres;
    std::vector<std::string> expect;
};

const GpuCase kGpu[] = {
    {{"gres:gpu:a100:2"}, {"a100"}},
    {{"gres:gpu:2"}, {}},
    {{"gres:gpu:a100"}, {"a100"}},
    {{"gres:gpu:a100:1,gres:gpu:h100:1"}, {"a100", "h100"}},
    {{"gres:nic:fast:1"}, {}},
    {{"gres/gpu:h100:1"}, {"h100"}},
    {{"gres:gpu:a100:1", "gres:gpu:a100:4"}, {"a100"}},
    {{""}, {}},
};

START_TEST(test_gpu_types) {
    ck_assert_msg(gpu_types(kGpu[_i].tres) == kGpu[_i].expect, "case %d", _i);
}
END_TEST

START_TEST(test_config_path) {
    char tmpl[] = "/tmp/check_job_submit.XXXXXX";
    int fd = mkstemp(tmpl);
    ck_assert_int_ge(fd, 0);
    const char text[] = "# site stack\noptional /x/other.so config=/nope\n"
                        "required  /usr/local/lib/idletime/slurm/spank_idletime.so default_quota=q config=/site/it.json\n";
    ck_assert_int_eq(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
    close(fd);
    ck_assert(plugstack_config_arg(tmpl) == "/site/it.json");
    ck_assert(config_path(nullptr, tmpl) == "/site/it.json");
    ck_assert(config_path("/env.json", tmpl) == "/env.json");
    ck_assert(config_path("", "/does/not/exist") == "/etc/idletime/idletime.json");
    ck_assert(config_path(nullptr, nullptr) == "/etc/idletime/idletime.json");
    unlink(tmpl);
}
END_TEST

// A plain job (no idletime option, no -p) of an account without a quota goes to the site's own
// Default=YES partition when there is one; an idletime partition as default does not count.
START_TEST(test_plain_default_partition) {
    job_desc_msg_t desc;
    std::memset(&desc, 0, sizeof(desc));
    desc.account = const_cast<char *>("physics");
    Submission sub = view_of(&desc);
    ck_assert(needs_account(sub) == false && is_plain_unrouted(sub));
    sub.default_partition = "batch";
    ck_assert(decide(g_cfg, sub).action == Action::Untouched);
    sub.default_partition = "quota-team-a";
    Decision d = decide(g_cfg, sub);
    ck_assert(d.action == Action::Reject && d.error == ErrorKind::Account);
    sub.account.reset();  // account unknown: the site default still takes it
    sub.default_partition = "batch";
    ck_assert(needs_account(sub));
    ck_assert(decide(g_cfg, sub).action == Action::Untouched);
    sub.default_account = "team-b";  // slurmctld's DefaultAccount has a quota: routed as none
    d = decide(g_cfg, sub);
    ck_assert(d.action == Action::Apply && !d.notice && !d.requeue);
    ck_assert_cxx_str_eq(d.partitions, "quota-team-b");
    ck_assert_cxx_str_eq(d.set_account, "team-b");
    ck_assert_uint_eq(d.job_env.size(), 2);
    ck_assert_cxx_str_eq(d.job_env[0].second, "none");
    ck_assert_cxx_str_eq(d.job_env[1].second, "team-b");
    desc.partition = const_cast<char *>("batch");  // -p: never touched, no account lookup
    sub = view_of(&desc);
    ck_assert(!needs_account(sub) && !is_plain_unrouted(sub));
    ck_assert(decide(g_cfg, sub).action == Action::Untouched);
}
END_TEST

// Account precedence: -A (job_desc->account) > slurmctld's DefaultAccount > the sbatch-side hint.
START_TEST(test_account_precedence) {
    const char *env[] = {"IDLETIME_MODE=only", "IDLETIME_ACCOUNT=team-a"};
    job_desc_msg_t desc;
    std::memset(&desc, 0, sizeof(desc));
    desc.spank_job_env = const_cast<char **>(env);
    desc.spank_job_env_size = 2;
    Submission sub = view_of(&desc);  // the hint team-a maps to two quotas: used, it would reject
    sub.default_account = "team-b";
    Decision d = decide(g_cfg, sub);
    ck_assert(d.action == Action::Apply);
    ck_assert_cxx_str_eq(d.set_account, "team-b");
    ck_assert_cxx_str_eq(d.quota, "team-b");
    sub.account_hint.reset();  // no hint at all (spank account_hint=no): the cache decides alone
    d = decide(g_cfg, sub);
    ck_assert_cxx_str_eq(d.set_account, "team-b");
    desc.account = const_cast<char *>("team-b");
    sub = view_of(&desc);
    sub.default_account = "team-a";  // maps to two quotas: used, it would reject
    d = decide(g_cfg, sub);
    ck_assert(d.action == Action::Apply);
    ck_assert(d.set_account.empty());  // the job named its account: left to Slurm
    ck_assert_cxx_str_eq(d.quota, "team-b");
}
END_TEST

// Issue 11 item 6: a checkpoint claim is bound to the time it is written.
struct Claim {
    const char *comment;
    bool at_submit;
    const char *want;  // nullptr: left as it is
};
const int64_t kClaimNow = 1700000000;
const Claim kClaims[] = {
    {"idletime:ckpt=1700000000", false, nullptr},
    {"note idletime:ckpt=1699999950", false, nullptr},               // 50 s old: a real publish
    {"idletime:ckpt=1699999939", false, "idletime:ckpt=1700000000"},  // 61 s old: forged
    {"a idletime:ckpt=1600000000 b", false, "a idletime:ckpt=1700000000 b"},
    {"idletime:ckpt=1700000061", false, "idletime:ckpt=1700000000"},  // future
    {"idletime:ckpt=soon", false, "idletime:ckpt=1700000000"},
    {"idletime:ckpt=-5", false, "idletime:ckpt=1700000000"},
    {"just my text", false, nullptr},
    {"", false, nullptr},
    {"note idletime:ckpt=1700000000", true, "note "},
    {"idletime:ckpt=1;x idletime:ckpt=2", true, ";x "},
    {"plain", true, nullptr},
};

START_TEST(test_ckpt_claim) {
    const Claim &c = kClaims[_i];
    auto got = sanitize_ckpt_claim(c.comment, kClaimNow, c.at_submit);
    if (!c.want) {
        ck_assert_msg(!got, "%s: changed to '%s'", c.comment, got ? got->c_str() : "");
    } else {
        ck_assert_msg(got && *got == c.want, "%s: got '%s', want '%s'", c.comment, got ? got->c_str() : "(unchanged)",
                      c.want);
    }
}
END_TEST

}  // namespace

int main() {
    char err[512];
    if (idletime_config_load(IDLETIME_EXAMPLE_CONFIG, &g_cfg, err, sizeof(err)) != 0) {
        std::fprintf(stderr, "check_job_submit: %s\n", err);
        return 1;
    }
Suite *s = suite_create("job_submit");
    TCase *tc = tcase_create("decide");
    tcase_add_loop_test(tc, test_decide, 0, sizeof(kCases) / sizeof(kCases[0]));
    tcase_add_test(tc, test_settings_written);
    tcase_add_test(tc, test_account_precedence);
    tcase_add_test(tc, test_plain_default_partition);
    tcase_add_test(tc, test_no_config);
    tcase_add_loop_test(tc, test_job_env, 0, sizeof(kJobEnv) / sizeof(kJobEnv[0]));
    tcase_add_test(tc, test_env_set);
    tcase_add_loop_test(tc, test_modify, 0, sizeof(kModify) / sizeof(kModify[0]));
    tcase_add_test(tc, test_config_path);
    tcase_add_loop_test(tc, test_ckpt_claim, 0, sizeof(kClaims) / sizeof(kClaims[0]));
    tcase_add_loop_test(tc, test_gpu_types, 0, sizeof(kGpu) / sizeof(kGpu[0]));
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    idletime_config_free(g_cfg);
    return failed == 0 ? 0 : 1;
}
