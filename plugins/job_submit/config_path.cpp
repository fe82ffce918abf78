#include "plugins/job_submit/config_path.hpp"

#include <fstream>
#include <sstream>

#include "plugins/spank/idletime_env.h"

namespace idletime::jobsubmit {
namespace {

bool is_our_plugin(const std::string &path) {
    const std::string name = "spank_idletime.so";
    return path.size() >= name.size() && path.compare(path.size() - name.size(), name.size(), name) == 0 &&
           (path.size() == name.size() || path[path.size() - name.size() - 1] == '/');
}

}  // namespace

std::string plugstack_config_arg(const char *plugstack_path) {
    if (!plugstack_path || !*plugstack_path) return "";
    std::ifstream in(plugstack_path);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line.substr(0, line.find('#')));
        std::string kind, so, arg;
        if (!(words >> kind >> so) || (kind != "required" && kind != "optional") || !is_our_plugin(so)) continue;
        while (words >> arg)
            if (arg.rfind("config=", 0) == 0 && arg.size() > 7) return arg.substr(7);
        return "";
    }
    return "";
}

std::string config_path(const char *env_value, const char *plugstack_path) {
    if (env_value && *env_value) return env_value;
    std::string from_plugstack = plugstack_config_arg(plugstack_path);
    return from_plugstack.empty() ? IDLETIME_DEFAULT_CONFIG : from_plugstack;
}

}  // namespace idletime::jobsubmit
