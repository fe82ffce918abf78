// SPANK option table and precedence (command line > environment > plugstack default).
// Slurm-free so it is unit-tested without a cluster; spank_idletime.cpp is the glue.
#pragma once
#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace idletime::spank {

enum class ValueKind {
    Enum,   // one of OptionSpec::allowed ("a|b|c")
    Count,  // non-negative decimal integer that fits 32 bits (counts, seconds)
    Name,   // 1-64 of [A-Za-z0-9._-]
};

struct OptionSpec {
    const char *name;         // command-line option without "--"
    const char *arginfo;      // shown in --help
    const char *usage;        // shown in --help
    const char *user_env;     // environment fallback read at submission
    const char *default_key;  // plugstack argument "<key>=VALUE"
    const char *job_var;      // job control variable (-> job_submit) and job environment variable
    ValueKind kind;
    const char *allowed;      // Enum only: "a|b|c"
    bool routing;             // decides partitions: sent only when the user asked for idletime
    const char *bare = nullptr;  // the argument is optional; given without one it means this
};

// Index of each option in kOptions (also the SPANK option "val").
enum OptionIndex : int { kIdleResources, kQuota, kMaxRestarts, kFtPolicy, kHangTimeout, kRunType,
                         kRequeueAtTimeLimit, kOptionCount };

extern const std::array<OptionSpec, kOptionCount> kOptions;

// "" when value is valid for spec, else one line naming the source, the value and what is allowed.
std::string validate(const OptionSpec &spec, std::string_view value, std::string_view source);

using Getenv = std::function<std::optional<std::string>(const char *name)>;

class OptionState {
public:
    // Command-line value (idempotent: Slurm may call option callbacks twice). "" or error.
    std::string set_cli(int index, const char *value);
    // Plugstack arguments: config=PATH and default_<option>=VALUE. "" or the first error.
    std::string parse_plugstack(int argc, char *const argv[]);
    // Reads each option's user_env; an invalid value is an error. "" or the first error.
    std::string load_env(const Getenv &getenv_fn);

    std::optional<std::string> effective(int index) const;
    bool user_given(int index) const { return cli_[index] || env_[index]; }
    // The user asked for idletime routing (--idle-resources or --quota, by option or environment).
    bool routing_requested() const;
    // (job_var, value) pairs for the job control environment; empty when nothing applies.
    std::vector<std::pair<std::string, std::string>> control_env() const;
    const std::string &config_path() const { return config_path_; }
    // munged socket for checkpoint credentials in jobs; "" = libmunge's default.
    const std::string &munge_socket() const { return munge_socket_; }
    // account_hint=yes (default): sbatch asks slurmctld for the user's DefaultAccount (one RPC) when
    // the job names none in the environment; no: job_submit/idletime looks it up itself (needs a
    // build with --with-slurm-src).
    bool account_hint() const { return account_hint_; }

private:
    std::array<std::optional<std::string>, kOptionCount> cli_, env_, def_;
    std::string config_path_ = "/etc/idletime/idletime.json";
    std::string munge_socket_;
    bool account_hint_ = true;
};

}  // namespace idletime::spank
