#include "tools/views/cli.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

namespace idletime::cli {

int bad(const char *prog, const std::string &msg) {
    std::cerr << prog << ": " << msg << "\n";
    return kBadInput;
}

bool option(const std::vector<std::string> &args, size_t &i, const char *name, std::string &value) {
    const std::string &a = args[i];
    size_t n = std::strlen(name);
    if (a.compare(0, n, name) != 0) return false;
    if (a.size() > n && a[n] == '=') {
        value = a.substr(n + 1);
        return true;
    }
    if (a.size() != n) return false;
    if (i + 1 >= args.size()) {
        value.clear();  // the caller reports an empty value
        return true;
    }
    value = args[++i];
    return true;
}

bool load_config(const std::string &opt, Config &cfg, std::string &err) {
    std::string path = opt;
    if (path.empty()) {
        const char *env = std::getenv("IDLETIME_CONFIG");
        path = env && *env ? env : kDefaultConfig;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        err = "config " + path + ": cannot read: " + std::strerror(errno) + " (use --config=PATH or IDLETIME_CONFIG)";
        return false;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    std::vector<std::string> errors;
    if (config_parse(ss.str(), cfg, errors)) return true;
    err = "config " + path + ": " + (errors.empty() ? "invalid" : errors[0]);
    if (errors.size() > 1) err += " (and " + std::to_string(errors.size() - 1) + " more; run idletime validate)";
    return false;
}

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> out;
    std::string item;
    std::istringstream in(s);
    while (std::getline(in, item, sep))
        if (!item.empty()) out.push_back(item);
    return out;
}

}  // namespace idletime::cli
