// Command line and environment of idletime-run.
#include <getopt.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "agent/agent.hpp"
#include "core/cmdline.hpp"
#include "core/config.hpp"

#ifndef IDLETIME_DEFAULT_CONFIG
#define IDLETIME_DEFAULT_CONFIG "/etc/idletime/idletime.json"
#endif

namespace idletime::agent {

const char *const kUsage =
    "Usage: idletime-run [OPTIONS] -- CMD [ARGS...]\n"
    "Runs CMD as the job's worker(s) with hang detection, error-pattern matching and restarts.\n"
    "  --max-restarts=N  --ft-policy=P  --hang-timeout=S  --run-type=sync|async\n"
    "                    per-job fault-tolerance settings (override the site config)\n"
    "  --workers=N       start N workers (1-256); --srun: each as its own srun step\n"
    "  --heartbeat-dir=DIR  --kill-wait=S (0-3600)  --no-report  --config=FILE\n"
    "  --help, --version\n"
    "Exit status: the workers' (128+N for signal N), 124 hung, 127 cannot start, 2 bad input.\n"
    "See doc/design/fault-tolerance.md.\n";

namespace {

bool load_site(const std::string &path, bool explicit_path, FtSettings &out, std::string &err) {
    std::ifstream in(path);
    if (!in) {
        if (!explicit_path) return true;  // no site config here: built-in defaults
        err = "cannot read config \"" + path + "\"";
        return false;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    Config cfg;
    std::vector<std::string> errors;
    if (config_parse(ss.str(), cfg, errors)) config_validate(cfg, errors);
    if (errors.empty() && !ft_validate(cfg.ft, err)) errors.push_back(err);
    if (!errors.empty()) {
        err = "config \"" + path + "\": " + errors[0];
        return false;
    }
    out = cfg.ft;
    return true;
}

bool count(const char *name, const char *v, uint32_t lo, uint32_t hi, uint32_t &out,
           std::string &err) {
    char *end = nullptr;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < long(lo) || n > long(hi)) {
        err = std::string("invalid ") + name + " \"" + v + "\" (allowed: " + std::to_string(lo) +
              "-" + std::to_string(hi) + ")";
        return false;
    }
    out = uint32_t(n);
    return true;
}

void env_overrides(std::map<std::string, std::string> &kv) {
    static const std::pair<const char *, const char *> keys[] = {
        {"IDLETIME_MAX_RESTARTS", "max_restarts"}, {"IDLETIME_MAX_PREEMPTIONS", "max_preemptions"},
        {"IDLETIME_FT_POLICY", "ft_policy"},       {"IDLETIME_HANG_TIMEOUT", "hang_timeout"},
        {"IDLETIME_RUN_TYPE", "run_type"}};
    // sbatch --max-restarts etc. reach the job as SLURM_SPANK_IDLETIME_* (SPANK plugin).
    for (const auto &[env, key] : keys) {
        const char *v = getenv(("SLURM_SPANK_" + std::string(env)).c_str());
        if (!v || !*v) v = getenv(env);
        if (v && *v) kv[key] = v;
    }
}

}  // namespace

bool parse_options(int argc, char **argv, Options &o, std::string &err) {
    static const option longopts[] = {
        {"max-restarts", required_argument, nullptr, 'r'}, {"ft-policy", required_argument, nullptr, 'p'},
        {"hang-timeout", required_argument, nullptr, 't'}, {"run-type", required_argument, nullptr, 'y'},
        {"workers", required_argument, nullptr, 'n'},      {"srun", no_argument, nullptr, 's'},
        {"heartbeat-dir", required_argument, nullptr, 'b'}, {"kill-wait", required_argument, nullptr, 'k'},
        {"no-report", no_argument, nullptr, 'R'},          {"config", required_argument, nullptr, 'c'},
        {"help", no_argument, nullptr, 'h'},               {"version", no_argument, nullptr, 'V'},
        {nullptr, 0, nullptr, 0}};
    env_overrides(o.overrides);
    const char *cfg_env = getenv("IDLETIME_CONFIG");
    o.config = cfg_env && *cfg_env ? cfg_env : IDLETIME_DEFAULT_CONFIG;
    bool explicit_cfg = cfg_env && *cfg_env;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+:", longopts, nullptr)) != -1) {
        switch (c) {
        case 'r': o.overrides["max_restarts"] = optarg; break;
        case 'p': o.overrides["ft_policy"] = optarg; break;
        case 't': o.overrides["hang_timeout"] = optarg; break;
        case 'y': o.overrides["run_type"] = optarg; break;
        case 'n': if (!count("--workers", optarg, 1, 256, o.workers, err)) return false; break;
        case 's': o.srun = true; break;
        case 'b': o.heartbeat_dir = optarg; break;
        case 'k': if (!count("--kill-wait", optarg, 0, 3600, o.kill_wait_s, err)) return false; break;
        case 'R': o.report = false; break;
        case 'c': o.config = optarg; explicit_cfg = true; break;
        case 'h': case 'V': o.info = char(c); return true;
        case ':':
            err = std::string("option \"") + argv[optind - 1] + "\" needs a value";
            return false;
        default:
            err = cmdline::unknown_option_text(argv[optind - 1], kUsage);
            return false;
        }
    }
    for (int i = optind; i < argc; i++) o.cmd.emplace_back(argv[i]);
    if (o.cmd.empty()) {
        err = "no command given (usage: idletime-run [options] -- CMD [ARGS...])";
        return false;
    }
    if (!load_site(o.config, explicit_cfg, o.ft, err)) return false;
    return ft::apply_overrides(o.ft, o.overrides, err);
}

}  // namespace idletime::agent
