// Rendering: golden output for the example config, determinism, and the C API.
#include <fstream>
#include <sstream>

#include "check_main.hpp"
#include "core/render.hpp"
#include "idletime/idletime.h"

namespace {
std::string slurp(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    ck_assert_msg(in.good(), "cannot read %s", path.c_str());
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

idletime::Config example() {
    idletime::Config cfg;
    std::vector<std::string> errors;
    ck_assert(idletime::config_parse(slurp(srcpath("etc/idletime.json")), cfg, errors));
    return cfg;
}
}  // namespace

START_TEST(test_golden) {
    std::string got = idletime::render(example(), idletime::Section::All);
    std::string want = slurp(srcpath("testsuite/unit/data/render-example.txt"));
    ck_assert_msg(got == want, "render output differs from testsuite/unit/data/render-example.txt");
}
END_TEST

START_TEST(test_deterministic) {
    ck_assert(idletime::render(example(), idletime::Section::All) == idletime::render(example(), idletime::Section::All));
}
END_TEST

// No rendered partition is Default=YES: job_submit/idletime routes jobs without -p (issue 12).
START_TEST(test_no_default_partition) {
    std::string p = idletime::render_partitions(example());
    std::istringstream lines(p);
    for (std::string l; std::getline(lines, l);)
        if (l.rfind("PartitionName=", 0) == 0) ck_assert_msg(l.find("Default=") == std::string::npos, "%s", l.c_str());
    ck_assert(p.find("# None is Default=YES: job_submit/idletime sends a job without -p") != std::string::npos);
}
END_TEST

START_TEST(test_idle_partition_accounts) {
    std::string p = idletime::render_partitions(example());
    // beta's pool admits only beta's accounts; acme's h100 pool never admits team-x.
    ck_assert(p.find("PartitionName=idle-h100-beta Nodes=h100-[3-4] PriorityTier=1 PreemptMode=REQUEUE GraceTime=30 "
                     "QOS=idle AllowAccounts=team-x State=UP\n") != std::string::npos);
    ck_assert(p.find("PartitionName=idle-h100-main Nodes=h100-[1-2] PriorityTier=1 PreemptMode=REQUEUE GraceTime=30 "
                     "QOS=idle AllowAccounts=team-h,team-a State=UP\n") != std::string::npos);
    ck_assert(p.find("PartitionName=idle-cpu-gen Nodes=cpu-[1-2] PriorityTier=1 PreemptMode=REQUEUE GraceTime=30 "
                     "QOS=idle AllowAccounts=team-cpu State=UP\n") != std::string::npos);
}
END_TEST

START_TEST(test_capi) {
    std::string json = slurp(srcpath("etc/idletime.json"));
    idletime_config_t *cfg = nullptr;
    char err[256];
    ck_assert_int_eq(idletime_config_parse(json.data(), json.size(), &cfg, err, sizeof err), 0);
    idletime_request_t req = {nullptr, "team-b", IDLETIME_MODE_ONLY, nullptr};
    idletime_resolution_t *res = nullptr;
    ck_assert_int_eq(idletime_resolve(cfg, &req, &res, err, sizeof err), 0);
    ck_assert_str_eq(idletime_resolution_partitions(res), "idle-a100-east,idle-a100-west");
    ck_assert_str_eq(idletime_resolution_quota(res), "team-b");
    ck_assert_str_eq(idletime_resolution_tenant(res), "acme");
    ck_assert_int_eq(idletime_resolution_requeue(res), 1);
    idletime_resolution_free(res);
    const char *owner = nullptr;
    ck_assert_int_eq(idletime_partition_kind(cfg, "idle-a100-west", &owner), IDLETIME_PART_IDLE);
    ck_assert_str_eq(owner, "a100-west");
    ck_assert_int_eq(idletime_partition_kind(cfg, "quota-team-x", &owner), IDLETIME_PART_QUOTA);
    ck_assert_int_eq(idletime_partition_kind(cfg, "debug", &owner), IDLETIME_PART_UNKNOWN);
    ck_assert_int_eq(idletime_account_has_quota(cfg, "team-a"), 1);
    ck_assert_int_eq(idletime_account_has_quota(cfg, "physics"), 0);
    ck_assert_int_eq(idletime_account_has_quota(cfg, nullptr), 0);
    ck_assert_str_eq(idletime_config_quota_accounts(cfg), "team-a, team-b, team-c, team-h, team-x, team-cpu");
    idletime_idle_settings_t s;
    idletime_config_idle_settings(cfg, &s);
    ck_assert_uint_eq(s.grace_time_s, 30);
    ck_assert_str_eq(s.checkpoint_signal_name, "USR1");
    idletime_mode_t m;
    ck_assert_int_eq(idletime_mode_parse("sometimes", &m, err, sizeof err), -1);
    ck_assert_str_eq(err, "invalid --idle-resources value \"sometimes\" (allowed: none, acceptable, only)");
    idletime_config_free(cfg);
    ck_assert_int_eq(idletime_config_load("/nonexistent/idletime.json", &cfg, err, sizeof err), -1);
    ck_assert_str_eq(err, "/nonexistent/idletime.json: cannot read: No such file or directory");
}
END_TEST

Suite *make_suite() {
    Suite *s = suite_create("render");
    TCase *tc = tcase_create("render");
    tcase_add_test(tc, test_golden);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_idle_partition_accounts);
    tcase_add_test(tc, test_no_default_partition);
    tcase_add_test(tc, test_capi);
    suite_add_tcase(s, tc);
    return s;
}

IDLETIME_CHECK_MAIN
