// Shared by the view tools: option matching, the config path rule, bad-input exits.
#pragma once
#include <string>
#include <vector>

#include "core/config.hpp"

namespace idletime::cli {

constexpr int kBadInput = 2;
constexpr const char *kDefaultConfig = "/etc/idletime/idletime.json";

// Prints "PROG: MSG" to stderr and returns kBadInput.
int bad(const char *prog, const std::string &msg);

// "--name=value" or "--name value" (advances i). False when arg is not --name.
bool option(const std::vector<std::string> &args, size_t &i, const char *name, std::string &value);

// --config=PATH, else $IDLETIME_CONFIG, else /etc/idletime/idletime.json. False with err (the
// path and the first error, "and N more" when there are more).
bool load_config(const std::string &opt, Config &cfg, std::string &err);

std::vector<std::string> split(const std::string &s, char sep = ',');

}  // namespace idletime::cli
