// Where job_submit/idletime finds the site config (read at init and after reconfigure only):
//   1. $IDLETIME_CONFIG in slurmctld's environment;
//   2. the config=PATH argument of spank_idletime.so in PlugStackConfig, so sites name the file
//      once for both plugins;
//   3. /etc/idletime/idletime.json.
#pragma once
#include <string>

namespace idletime::jobsubmit {

// config=PATH of the first spank_idletime.so line of a plugstack.conf; "" if none or unreadable.
std::string plugstack_config_arg(const char *plugstack_path);

// Applies the order above. env_value/plugstack_path may be NULL.
std::string config_path(const char *env_value, const char *plugstack_path);

}  // namespace idletime::jobsubmit
