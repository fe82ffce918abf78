// idletime-quota: per quota guaranteed, used, lent, borrowed, pending; totals per pool and tenant
// (idletime-quota(1); the rules are src/views/accounting.hpp).
#include <slurm/slurm.h>

#include <ctime>
#include <iostream>

#include "core/cmdline.hpp"
#include "tools/views/cli.hpp"
#include "tools/views/slurm_read.hpp"
#include "views/output.hpp"

namespace {

using namespace idletime;
using namespace idletime::views;
const char *kProg = "idletime quota";
const char *kUsage = "Usage: idletime quota [--config=PATH] [--json]\nSee idletime-quota(1).\n";

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    std::string config;
    bool json = false;
    for (size_t i = 0; i < args.size(); i++) {
        std::string v;
        if (args[i] == "--help") return cmdline::help(kUsage);
        if (args[i] == "--version") return cmdline::version(kProg);
        if (args[i] == "--json") json = true;
        else if (cli::option(args, i, "--config", v)) config = v;
        else if (args[i].size() > 1 && args[i][0] == '-')
            return cmdline::unknown_option(kProg, args[i], kUsage);
        else return cli::bad(kProg, "unexpected argument \"" + args[i] + "\" (allowed: --config=PATH, --json)");
    }
    Config cfg;
    std::string err;
    if (!cli::load_config(config, cfg, err)) return cli::bad(kProg, err);
    slurm_init(nullptr);
    std::vector<JobInfo> jobs;
    if (!slurmread::load_jobs(jobs, err)) return std::cerr << kProg << ": slurm_load_jobs: " << err << "\n", 1;
    slurm_fini();
    Catalog cat(cfg);
    int64_t now = time(nullptr);
    std::vector<JobView> views;
    views.reserve(jobs.size());
    for (const JobInfo &j : jobs) views.push_back(derive(cat, j, now, true));
    Accounting a = account(cfg, views);
    std::cout << (json ? quota_json(a, now) : quota_table(a));
    return std::cout.flush() ? 0 : 1;
}
