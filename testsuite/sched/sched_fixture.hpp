// Shared by the sched suites: config loading from testsuite data and JobView builders.
#pragma once
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "core/config.hpp"
#include "idletime/sched.h"
#include "sched/policy.hpp"

// After the standard headers: check.h defines a fail() macro that breaks <ios>.
#include <check.h>

namespace fx {

inline std::string srcpath(const std::string &rel) {
    const char *top = std::getenv("top_srcdir");
    return std::string(top ? top : ".") + "/" + rel;
}

inline std::shared_ptr<const idletime::Config> load(const std::string &rel) {
    std::ifstream in(srcpath(rel));
    std::ostringstream ss;
    ss << in.rdbuf();
    auto cfg = std::make_shared<idletime::Config>();
    std::vector<std::string> errors;
    ck_assert_msg(idletime::config_parse(ss.str(), *cfg, errors), "%s: %s", rel.c_str(),
                  errors.empty() ? "?" : errors.front().c_str());
    return cfg;
}

// The example config (team-a/team-b share a100-east, team-c on a100-west) and the cluster one.
inline idletime::sched::Policy example(uint32_t min_run = 0) {
    return idletime::sched::Policy(load("etc/idletime.json"), {min_run});
}
inline idletime::sched::Policy cluster16() {
    return idletime::sched::Policy(load("testsuite/sched/data/sched16.json"), {0});
}

// A C API handle with the cluster config loaded (min_run as idletime_sched_load takes it).
inline idletime_sched_t *capi_cluster16(const char *min_run = "") {
    idletime_sched_t *s = idletime_sched_new();
    char err[256] = "";
    ck_assert_msg(idletime_sched_load(s, srcpath("testsuite/sched/data/sched16.json").c_str(), min_run, err,
                                      sizeof(err)) == 0,
                  "%s", err);
    return s;
}

// A running job in `part` (tier by name: quota-* 10, idle-* 1, else given).
inline idletime::sched::JobView job(uint32_t id, const char *part, uint32_t gpus, int64_t start,
                                    const char *comment = "", const char *account = "") {
    idletime::sched::JobView v;
    v.job_id = id;
    v.partition = part;
    std::string_view p(part);
    v.priority_tier = p.rfind("quota-", 0) == 0 ? 10 : p.rfind("idle-", 0) == 0 ? 1 : 5;
    v.preempt_off = p.rfind("quota-", 0) == 0;
    v.gpus = gpus;
    v.start_time = start;
    v.submit_time = start > 0 ? start - 5 : 0;
    v.comment = comment;
    v.account = account;
    return v;
}

}  // namespace fx
