// slurmd start (S_CTX_SLURMD): this node's GPUs (hwloc, src/views) against its pool and Gres, the
// check `idletime check --node` does. Never blocks or fails slurmd: hwloc reads local files only;
// the Gres lookup and the drain need slurmctld, so they run in a detached grandchild (libslurm's
// public API, symbols from slurmd itself) that alarm() ends after kChildSeconds.
#include <slurm/slurm.h>
#include "compat/slurm_api.h"
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "core/config.hpp"
#include "plugins/spank/hooks.hpp"
#include "views/gpu.hpp"

namespace idletime::spank {
namespace {

constexpr unsigned kChildSeconds = 120;

// slurmd's own argv (for -N NAME): /proc/self/cmdline, NUL-separated.
std::vector<std::string> own_argv() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::vector<std::string> argv;
    for (std::string a; std::getline(in, a, '\0');) argv.push_back(a);
    return argv;
}

std::string host_name() {
    char host[256] = {0};
    if (gethostname(host, sizeof host - 1) != 0) return "";
    return host;
}

bool load_config(const std::string &path, Config &cfg, std::string &err) {
    std::ifstream in(path);
    if (!in) return err = path + ": cannot read the config", false;
    std::stringstream ss;
    ss << in.rdbuf();
    std::vector<std::string> errors;
    if (config_parse(ss.str(), cfg, errors)) return true;
    err = path + ": " + (errors.empty() ? std::string("invalid config") : errors[0]);
    return false;
}

const Pool *pool_of_node(const Config &cfg, const std::string &node) {
    for (const Pool &p : cfg.pools)
        for (const std::string &n : p.node_names)
            if (n == node) return &p;
    return nullptr;
}

struct Check {
    std::string node;
    const Pool *pool = nullptr;
    std::vector<views::GpuDevice> gpus;
    bool drain = false;
};

void drain_node(const Check &c, const std::vector<views::NodeFinding> &f) {
    std::string reason = views::drain_reason(f);
    update_node_msg_t u;
    slurm_init_update_node_msg(&u);
    u.node_names = const_cast<char *>(c.node.c_str());
    u.node_state = NODE_STATE_DRAIN;
    u.reason = const_cast<char *>(reason.c_str());
    if (slurm_update_node(&u) != SLURM_SUCCESS)
        slurm_error("idletime/spank: node %s: cannot drain it: %s", c.node.c_str(), slurm_strerror(idletime_slurm_errno()));
    else
        slurm_info("idletime/spank: node %s: drained (node_check.on_mismatch \"drain\"): %s", c.node.c_str(),
                   reason.c_str());
}

// Grandchild: the node's Gres as slurmctld has it, then the full comparison and the drain.
void gres_and_drain(const Check &c) {
    node_info_msg_t *msg = nullptr;
    if (slurm_load_node_single(&msg, const_cast<char *>(c.node.c_str()), SHOW_ALL) != SLURM_SUCCESS || !msg ||
        msg->record_count == 0) {
        slurm_error("idletime/spank: node %s: Gres not checked: slurmctld did not answer for it (%s)%s", c.node.c_str(),
                    slurm_strerror(idletime_slurm_errno()), c.drain ? "; not drained" : "");
        if (msg) slurm_free_node_info_msg(msg);
        return;
    }
    std::string gres = msg->node_array[0].gres ? msg->node_array[0].gres : "";
    slurm_free_node_info_msg(msg);
    std::vector<views::NodeFinding> f = views::check_node(*c.pool, c.gpus, gres, true);
    for (const views::NodeFinding &x : f)
        if (x.what == "Gres")
            slurm_error("idletime/spank: node %s: GPU mismatch: %s", c.node.c_str(), views::finding_text(x).c_str());
    if (f.empty())
        slurm_info("idletime/spank: node %s: GPUs agree with pool %s and Gres=%s", c.node.c_str(),
                   c.pool->name.c_str(), gres.empty() ? "(none)" : gres.c_str());
    else if (c.drain)
        drain_node(c, f);
}

// Double fork: slurmd reaps the short-lived child at once and never waits for the grandchild.
void spawn_detached(const Check &c) {
    pid_t p = fork();
    if (p < 0) {
        slurm_error("idletime/spank: node %s: fork failed; Gres not checked, not drained", c.node.c_str());
        return;
    }
    if (p == 0) {
        setsid();
        if (fork() == 0) {
            alarm(kChildSeconds);
            try {
                gres_and_drain(c);
            } catch (...) {
            }
        }
        _exit(0);
    }
    waitpid(p, nullptr, 0);
}

void run(const std::string &config_path) {
    Check c;
    c.node = views::slurmd_node_name(own_argv(), getenv("SLURMD_NODENAME"), host_name());
    Config cfg;
    std::string err;
    if (!load_config(config_path, cfg, err))
        return slurm_error("idletime/spank: node check of %s skipped: %s", c.node.c_str(), err.c_str());
    c.pool = pool_of_node(cfg, c.node);
    if (!c.pool)
        return slurm_info("idletime/spank: node %s is in no pool of %s; no GPU check", c.node.c_str(),
                          config_path.c_str());
    auto t0 = std::chrono::steady_clock::now();
    if (!views::detect_gpus("", c.gpus, err))
        return slurm_error("idletime/spank: node %s: GPU check skipped: %s", c.node.c_str(), err.c_str());
    long ms = long(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count());
    c.drain = cfg.node_check.on_mismatch == OnMismatch::Drain;
    std::vector<views::NodeFinding> f = views::check_node(*c.pool, c.gpus, "", false);
    slurm_info("idletime/spank: node %s (pool %s): hwloc detected %s in %ld ms", c.node.c_str(), c.pool->name.c_str(),
               views::describe(c.gpus).c_str(), ms);
    for (const views::NodeFinding &x : f)
        slurm_error("idletime/spank: node %s: GPU mismatch: %s", c.node.c_str(), views::finding_text(x).c_str());
    if (!f.empty() && !c.drain)
        slurm_info("idletime/spank: node %s: not draining: node_check.on_mismatch is \"log\"", c.node.c_str());
    spawn_detached(c);
}

}  // namespace

void slurmd_node_check(const std::string &config_path) noexcept {
    try {
        run(config_path);
    } catch (const std::exception &e) {
        slurm_error("idletime/spank: node check: internal error: %s", e.what());
    } catch (...) {
        slurm_error("idletime/spank: node check: internal error");
    }
}

}  // namespace idletime::spank
