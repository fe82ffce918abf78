// Config parsing and validation: every rule, table-driven as edits of one valid config.
#include <fstream>
#include <sstream>

#include "check_main.hpp"
#include "core/config.hpp"
#include "../check_string.hpp"

namespace {

const std::string kBase =
    R"({"tenants":[{"name":"t"},{"name":"u"}],
 "pools":[{"name":"p","tenant":"t","type":"high-performance","gpu_spec":"a100","nodes":"n[1-2]",
           "node":{"gpus":4,"cpus":8,"memory_mb":1000}},
          {"name":"g","tenant":"u","type":"general","nodes":"c1","node":{"gpus":0,"cpus":4,"memory_mb":500}}],
 "quotas":[{"name":"q","pool":"p","gpus":4,"cpus":8,"memory_mb":1000,"accounts":["a"]},
           {"name":"r","pool":"p","gpus":4,"accounts":["b"]},
           {"name":"s","pool":"g","gpus":0,"cpus":4,"accounts":["a"]}],
 "idle":{"grace_time":30,"checkpoint_signal":"USR1"}})";

struct Case {
    const char *from;   // text of kBase to replace (first occurrence)
    const char *to;
    const char *error;  // expected substring of the first error; nullptr = valid
};

const Case kCases[] = {
    {"", "", nullptr},
    {R"("tenants":)", R"("tenantz":[],"tenants":)", "$: unknown key \"tenantz\""},
    {R"("grace_time":30)", R"("grace_time":"30")", "$.idle.grace_time: must be a non-negative integer"},
    {R"("grace_time":30)", R"("grace_time":-1)", "$.idle.grace_time: must be a non-negative integer"},
    {R"("checkpoint_signal":"USR1")", R"("checkpoint_signal":"KILL")", "$.idle.checkpoint_signal: \"KILL\" is not allowed"},
    {R"({"name":"u"})", R"({"name":"t"})", "$.tenants[1].name: duplicate tenant"},
    {R"("name":"g")", R"("name":"p")", "$.pools[1].name: duplicate pool"},
    {R"("name":"r")", R"("name":"q")", "$.quotas[1].name: duplicate quota"},
    {R"("pool":"g")", R"("pool":"nope")", "$.quotas[2].pool: unknown pool \"nope\""},
    {R"("tenant":"u")", R"("tenant":"v")", "$.pools[1].tenant: unknown tenant \"v\""},
    {R"("gpus":4,"accounts":["b"])", R"("gpus":5,"accounts":["b"])", "$.quotas[1].gpus: quotas of pool \"p\" add up to 9 GPUs, more than the pool's 8"},
    {R"("cpus":4,"accounts")", R"("cpus":5,"accounts")", "$.quotas[2].cpus: quotas of pool \"g\" add up to 5 CPUs"},
    {R"("memory_mb":1000,"accounts")", R"("memory_mb":2001,"accounts")", "$.quotas[0].memory_mb: quotas of pool \"p\" add up to 2001 MiB"},
    {R"("type":"general")", R"("type":"general","gpu_spec":"t4")", "$.pools[1].gpu_spec: a general pool has no GPU spec"},
    {R"("type":"general")", R"("type":"fast")", "$.pools[1].type: \"fast\" is not allowed (use \"general\" or \"high-performance\")"},
    {R"("gpu_spec":"a100",)", "", "$.pools[0].gpu_spec: is required for a high-performance pool"},
    {R"(["b"])", R"(["a"])", "$.quotas[1].accounts: account \"a\" is already mapped to quota \"q\" of the same pool \"p\""},
    {R"({"name":"u"})", R"({"name":"u"},{"name":"w"})", "$.tenants[2]: tenant \"w\" is empty"},
    {R"("nodes":"c1")", R"("nodes":"n1")", "$.pools[1].nodes: node \"n1\" is already in pool \"p\""},
    {R"("nodes":"c1")", R"("nodes":"c[2-1]")", "$.pools[1].nodes: bad range"},
    {R"("name":"q")", R"("name":"q r")", "$.quotas[0].name: \"q r\" is not allowed"},
    {R"(["a"]},)", R"([]},)", "$.quotas[0].accounts: must list at least one Slurm account"},
    {R"("accounts":["b"])", R"("accounts":"b")", "$.quotas[1].accounts: must be an array"},
    {R"("node":{"gpus":4,)", R"("node":{"gpus":4,"disk":1,)", "$.pools[0].node: unknown key \"disk\""},
    {R"(,"node":{"gpus":0,"cpus":4,"memory_mb":500})", "", "$.pools[1].node: is required"},
    {R"("idle":{)", R"("fault_tolerance":{"retryable_patterns":["(unclosed"]},"idle":{)", "$.fault_tolerance.retryable_patterns[0]: invalid regular expression"},
    {R"("idle":{)", R"("fault_tolerance":{"policy":"always"},"idle":{)", "$.fault_tolerance.policy: \"always\" is not allowed"},
    {R"("idle":{)", R"("fault_tolerance":{"max_restarts":-2},"idle":{)", "$.fault_tolerance.max_restarts: must be a non-negative integer"},
    {R"("idle":{)", R"("fault_tolerance":{"retryable_exit_codes":[137,1]},"idle":{)", "$.fault_tolerance.retryable_exit_codes: exit code 1 is also in permanent_exit_codes"},
    {R"("idle":{)", R"("fault_tolerance":{"retryable_exit_codes":[0]},"idle":{)", "$.fault_tolerance.retryable_exit_codes[0]: must be an integer from 1 to 255"},
    {R"("idle":{)", R"("fault_tolerance":{"backoff_initial":60,"backoff_max":10},"idle":{)", "$.fault_tolerance.backoff_max: must be at least backoff_initial"},
    {R"("grace_time":30)", R"("grace_time":30,"idle_priority_tier":10)", "$.idle.idle_priority_tier: must be lower"},
    {R"("grace_time":30)", R"("grace_time":30,"min_run_time":604801)", "$.idle.min_run_time: must be at most 604800"},
    {R"("grace_time":30)", R"("grace_time":30,"min_run_time":600)", nullptr},
    {R"("grace_time":30)", R"("grace_time":30,"checkpoint_root":"rel/dir")", "$.idle.checkpoint_root: must be an absolute path"},
    {R"("grace_time":30)", R"("grace_time":30,"checkpoint_root":"/tmp/ckpt")", "$.idle.checkpoint_root: \"/tmp/ckpt\" is below /tmp, which users can write"},
    {R"("grace_time":30)", R"("grace_time":30,"checkpoint_root":"/var/tmp")", "$.idle.checkpoint_root: \"/var/tmp\" is below /var/tmp, which users can write"},
    {R"("grace_time":30)", R"("grace_time":30,"checkpoint_root":"/dev/shm/x/y")", "$.idle.checkpoint_root: \"/dev/shm/x/y\" is below /dev/shm, which users can write"},
    {R"("grace_time":30)", R"("grace_time":30,"checkpoint_root":"/var/spool/../../tmp/x")", "$.idle.checkpoint_root: \"/var/spool/../../tmp/x\" has a \".\" or \"..\" component"},
    {R"("grace_time":30)", R"("grace_time":30,"checkpoint_root":"/var/tmpfoo/ckpt")", nullptr},
    {R"("grace_time":30)", R"("grace_time":30,"checkpoint_root":"/srv/ckpt/")", nullptr},
    {R"("grace_time":30)", R"("grace_time":30,"checkpoint_retention":0)", nullptr},
    {R"("grace_time":30)", R"("grace_time":30,"checkpoint_retention":31622400)", nullptr},
    {R"("grace_time":30)", R"("grace_time":30,"checkpoint_retention":31622401)", "$.idle.checkpoint_retention: must be at most 31622400"},
    {R"("grace_time":30)", R"("grace_time":30,"checkpoint_retention":"3d")", "$.idle.checkpoint_retention: must be a non-negative integer"},
    {R"("grace_time":30)", R"("grace_time":30,"idle_qos":"q")", "$.idle.idle_qos: \"q\" is also a quota name"},
    {R"("idle":{)", R"("node_check":{"on_mismatch":"drain"},"idle":{)", nullptr},
    {R"("idle":{)", R"("node_check":{"on_mismatch":"reboot"},"idle":{)", "$.node_check.on_mismatch: \"reboot\" is not allowed (use \"log\" or \"drain\")"},
    {R"("idle":{)", R"("node_check":{"on_mismatch":true},"idle":{)", "$.node_check.on_mismatch: must be a string"},
    {R"("idle":{)", R"("node_check":{"drain":true},"idle":{)", "$.node_check: unknown key \"drain\""},
    {R"("idle":{)", R"("node_check":"log","idle":{)", "$.node_check: must be an object"},
    {R"({"tenants")", R"([{"tenants")", "$: not valid JSON"},
    {R"("idle":{)", R"("idle":{,)", "$: not valid JSON"},
};

std::string edited(const Case &c) {
    std::string s = kBase;
    if (*c.from) {
        size_t at = s.find(c.from);
        ck_assert_msg(at != std::string::npos, "fixture text not found: %s", c.from);
        s.replace(at, std::string(c.from).size(), c.to);
    }
    return s;
}

}  // namespace

START_TEST(test_rules) {
    const Case &c = kCases[_i];
    idletime::Config cfg;
    std::vector<std::string> errors;
    bool ok = idletime::config_parse(edited(c), cfg, errors);
    if (!c.error) {
        ck_assert_msg(ok, "valid config rejected: %s", errors.empty() ? "" : errors[0].c_str());
        return;
    }
    ck_assert_msg(!ok, "case %d accepted, expected: %s", _i, c.error);
    bool found = false;
    for (const std::string &e : errors) found = found || e.find(c.error) == 0;
    ck_assert_msg(found, "case %d: got \"%s\" (%zu errors), expected one starting \"%s\"", _i, errors[0].c_str(),
                  errors.size(), c.error);
}
END_TEST

START_TEST(test_model_and_defaults) {
    idletime::Config cfg;
    std::vector<std::string> errors;
    ck_assert(idletime::config_parse(kBase, cfg, errors));
    ck_assert_uint_eq(cfg.pools[0].node_names.size(), 2);
    ck_assert_uint_eq(cfg.pools[0].total_gpus(), 8);
    ck_assert_cxx_str_eq(cfg.idle.checkpoint_signal, "USR1");
    ck_assert_int_eq(cfg.idle.checkpoint_signo, 10);
    ck_assert_uint_eq(cfg.ft.max_restarts, 3);
    ck_assert(cfg.ft.policy == idletime::FtPolicy::ExitCode);
    ck_assert(cfg.node_check.on_mismatch == idletime::OnMismatch::Log);
    ck_assert_cxx_str_eq(idletime::quota_partition(cfg.quotas[0]), "quota-q");
    ck_assert_cxx_str_eq(idletime::idle_partition(cfg.pools[1]), "idle-g");
}
END_TEST

// The one parser of "quota-<q>" (the hook, the job views, the replay and job_submit share it).
START_TEST(test_quota_of_partition) {
    using idletime::quota_of_partition;
    ck_assert_cxx_str_eq(std::string(quota_of_partition("quota-gpu-a")), "gpu-a");
    ck_assert_cxx_str_eq(std::string(quota_of_partition(idletime::quota_partition("q"))), "q");
    ck_assert(quota_of_partition("quota-").empty());      // no quota named
    ck_assert(quota_of_partition("quota").empty());
    ck_assert(quota_of_partition("idle-a100").empty());
    ck_assert(quota_of_partition("xquota-a").empty());    // a prefix, not a substring
    ck_assert(quota_of_partition("QUOTA-a").empty());     // as quota_partition renders it
    ck_assert(quota_of_partition("").empty());
    // A list is not a name: the whole tail is returned, so callers cut at the first comma.
    ck_assert_cxx_str_eq(std::string(quota_of_partition("quota-a,idle-x")), "a,idle-x");
}
END_TEST

START_TEST(test_example_config_valid) {
    std::ifstream in(srcpath("etc/idletime.json"));
    std::stringstream ss;
    ss << in.rdbuf();
    idletime::Config cfg;
    std::vector<std::string> errors;
    ck_assert_msg(idletime::config_parse(ss.str(), cfg, errors), "%s", errors.empty() ? "unreadable" : errors[0].c_str());
    ck_assert_uint_eq(cfg.pools.size(), 5);
    ck_assert(cfg.node_check.on_mismatch == idletime::OnMismatch::Log);  // the local cluster logs only
}
END_TEST

Suite *make_suite() {
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("rules");
    tcase_add_loop_test(tc, test_rules, 0, sizeof kCases / sizeof kCases[0]);
    tcase_add_test(tc, test_model_and_defaults);
    tcase_add_test(tc, test_example_config_valid);
    tcase_add_test(tc, test_quota_of_partition);
    suite_add_tcase(s, tc);
    return s;
}

IDLETIME_CHECK_MAIN
