// idletime-check: the running cluster against the config (idletime-check(8)); --node: this
// node's GPUs (hwloc) against its pool and Gres, optionally draining it.
#include <slurm/slurm.h>
#include <unistd.h>

#include <iostream>

#include "core/cmdline.hpp"
#include "tools/views/cli.hpp"
#include "tools/views/slurm_read.hpp"
#include "views/gpu.hpp"
#include "views/output.hpp"

namespace {

using namespace idletime;
using namespace idletime::views;
const char *kProg = "idletime check";
const char *kUsage =
    "Usage: idletime check [--config=PATH] [--json]\n"
    "       idletime check --node[=NAME] [--topology=FILE.xml] [--no-slurm] [--drain] [--config=PATH]\n"
    "Exit status: 0 the cluster (node) agrees with the config, 1 mismatches found or Slurm\n"
    "unreachable, 2 bad input. See idletime-check(8).\n";

struct Opts {
    std::string config, node, topology;
    bool json = false, node_mode = false, drain = false, no_slurm = false;
};

int parse(const std::vector<std::string> &args, Opts &o) {
    for (size_t i = 0; i < args.size(); i++) {
        std::string v;
        const std::string &a = args[i];
        if (a == "--help") return cmdline::help(kUsage), -1;
        if (a == "--version") return cmdline::version(kProg), -1;
        if (a == "--json") o.json = true;
        else if (a == "--drain") o.drain = true;
        else if (a == "--no-slurm") o.no_slurm = true;
        else if (a == "--node") o.node_mode = true;
        else if (a.rfind("--node=", 0) == 0) o.node_mode = true, o.node = a.substr(7);
        else if (cli::option(args, i, "--config", v)) o.config = v;
        else if (cli::option(args, i, "--topology", v)) {
            if (v.empty()) return cli::bad(kProg, "--topology needs an hwloc XML file (lstopo --of xml)");
            o.topology = v;
        } else if (a.size() > 1 && a[0] == '-')
            return cmdline::unknown_option(kProg, a, kUsage);
        else
            return cli::bad(kProg, "unexpected argument \"" + a + "\" (see idletime check --help)");
    }
    if (!o.node_mode && (o.drain || !o.topology.empty() || o.no_slurm))
        return cli::bad(kProg, "--drain, --topology and --no-slurm need --node");
    if (o.drain && o.no_slurm) return cli::bad(kProg, "--drain needs Slurm; drop --no-slurm");
    return 0;
}

int cluster(const Config &cfg, const Opts &o) {
    ClusterInfo have;
    std::string err;
    if (!slurmread::load_cluster(have, err)) return std::cerr << kProg << ": " << err << "\n", 1;
    std::vector<Finding> f = check_cluster(cfg, have);
    if (o.json) std::cout << findings_json(f);
    else if (f.empty()) std::cout << "idletime check: the cluster agrees with the config\n";
    else std::cout << findings_text(f) << f.size() << " finding(s)\n";
    return f.empty() ? 0 : 1;
}

const Pool *pool_of_node(const Config &cfg, const std::string &node) {
    for (const Pool &p : cfg.pools)
        for (const std::string &n : p.node_names)
            if (n == node) return &p;
    return nullptr;
}

int node(const Config &cfg, Opts &o) {
    if (o.node.empty()) {
        char host[256] = {0};
        gethostname(host, sizeof host - 1);
        o.node = std::string(host).substr(0, std::string(host).find('.'));
    }
    const Pool *pool = pool_of_node(cfg, o.node);
    if (!pool) return cli::bad(kProg, "node \"" + o.node + "\" is in no pool of the config (use --node=NAME)");
    std::vector<GpuDevice> gpus;
    std::string err, gres;
    if (!detect_gpus(o.topology, gpus, err)) return std::cerr << kProg << ": " << err << "\n", 1;
    if (!o.no_slurm && !slurmread::node_gres(o.node, gres, err)) return std::cerr << kProg << ": " << err << "\n", 1;
    std::vector<NodeFinding> f = check_node(*pool, gpus, gres, !o.no_slurm);
    std::cout << "node " << o.node << " (pool " << pool->name << "): detected " << describe(gpus) << "\n";
    for (const NodeFinding &x : f) std::cout << "mismatch: " << finding_text(x) << "\n";
    if (f.empty()) std::cout << "idletime check: node " << o.node << " agrees with pool " << pool->name << "\n";
    // --drain, or node_check.on_mismatch "drain" in the config; --no-slurm cannot drain.
    bool drain = o.drain || (cfg.node_check.on_mismatch == OnMismatch::Drain && !o.no_slurm);
    if (!f.empty() && !drain)
        std::cout << "not draining " << o.node << ": "
                  << (o.no_slurm ? "--no-slurm" : "node_check.on_mismatch is \"log\" (use --drain to drain)") << "\n";
    if (!f.empty() && drain) {
        std::string reason = drain_reason(f);
        if (!slurmread::drain_node(o.node, reason, err)) return std::cerr << kProg << ": " << err << "\n", 1;
        std::cout << "drained " << o.node << ": " << reason << "\n";
    }
    return f.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    Opts o;
    int rc = parse(args, o);
    if (rc) return rc < 0 ? 0 : rc;
    Config cfg;
    std::string err;
    if (!cli::load_config(o.config, cfg, err)) return cli::bad(kProg, err);
    if (!o.no_slurm) slurm_init(nullptr);
    rc = o.node_mode ? node(cfg, o) : cluster(cfg, o);
    if (!o.no_slurm) slurm_fini();
    return rc;
}
