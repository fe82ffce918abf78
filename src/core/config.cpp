#include "core/config.hpp"

namespace idletime {
namespace {
template <class T>
const T *find_named(const std::vector<T> &v, const std::string &name) {
    for (const T &x : v)
        if (x.name == name) return &x;
    return nullptr;
}
}  // namespace

const Tenant *Config::tenant(const std::string &name) const { return find_named(tenants, name); }
const Pool *Config::pool(const std::string &name) const { return find_named(pools, name); }
const Quota *Config::quota(const std::string &name) const { return find_named(quotas, name); }

std::string quota_partition(const Quota &q) { return quota_partition(std::string_view(q.name)); }
std::string idle_partition(const Pool &p) { return "idle-" + p.name; }

const char *ft_policy_name(FtPolicy p) {
    switch (p) {
    case FtPolicy::None: return "none";
    case FtPolicy::ExitCode: return "exit-code";
    case FtPolicy::ExitCodeAndErrorMsg: return "exit-code-and-error-msg";
    }
    return "?";
}

const char *run_type_name(RunType r) { return r == RunType::Sync ? "sync" : "async"; }

}  // namespace idletime
