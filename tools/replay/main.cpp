// idletime-replay: replays a public GPU-cluster trace on the local Slurm cluster under up to four
// configurations (A no borrowing, B plain Slurm scavenger, C idletime, D C + scheduling plugins)
// and reports the metrics.
#include "options.hpp"
#include "report.hpp"
#include "runner.hpp"
#include "setup.hpp"
#include "slurm_client.hpp"

#include "replay/stream.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>

namespace fs = std::filesystem;
using namespace idletime::replay;

namespace {

JobStream load_stream(const Options &o)
{
    auto reader = make_trace_reader(o.kind);
    if (!reader) {
        std::cerr << "idletime-replay: --kind '" << o.kind << "' unknown, allowed: " << trace_reader_kinds() << "\n";
        std::exit(2);
    }
    std::ifstream in(o.trace);
    if (!in) {
        std::cerr << "idletime-replay: cannot read --trace '" << o.trace << "'\n";
        std::exit(2);
    }
    try {
        auto recs = reader->read(in, o.trace);
        return map_trace(recs, o.map);
    } catch (const std::exception &e) {
        std::cerr << "idletime-replay: " << e.what() << "\n";
        std::exit(2);
    }
}

void write_stream_files(const Options &o, const JobStream &js)
{
    fs::create_directories(o.out);
    std::ofstream jobs(o.out + "/jobs.csv"), quotas(o.out + "/quotas.csv"), md(o.out + "/mapping.md");
    write_jobs_csv(jobs, js.jobs);
    write_quotas_csv(quotas, js.quotas);
    md << mapping_markdown(o, js);
    write_replay_config(o.out + "/idletime.json", js, o);
}

int run_all(const Options &o, const JobStream &js)
{
    std::vector<ConfigResult> results;
    bool slurm_ready = fs::exists(o.cluster_dir + "/etc/slurm.conf");
    if (slurm_ready) {  // a cluster may be up: do not reconfigure it under someone's jobs
        slurm_client_init(o.cluster_dir + "/etc/slurm.conf");
        refuse_if_busy(o);
    }
    for (char letter : o.configs)  // before the first configuration runs, not 15 minutes in
        check_plugins(o, config_plan(letter));
    for (char letter : o.configs) {
        const ConfigPlan &plan = config_plan(letter);
        std::string dir = o.out + "/" + letter;
        fs::create_directories(dir);
        std::cout << "idletime/replay: configuration " << letter << ": " << plan.title << std::endl;
        try {
            start_cluster(o, plan, dir);
        } catch (...) {
            restore_cluster(o);  // never leave the shared cluster in the replay's config
            throw;
        }
        if (!slurm_ready) {
            slurm_client_init(o.cluster_dir + "/etc/slurm.conf");
            slurm_ready = true;
        }
        RunSetup s = run_setup(o, dir);
        ConfigResult r{letter, plan.title, {}, {}, {}, {}};
        try {
            r.ctld = verify_ctld(plan);
            std::cout << "idletime/replay: configuration " << letter << ": slurmctld " << r.ctld << std::endl;
            prepare_cluster(o, js);
            r.log = run_config(js, plan, s, std::cout);
        } catch (...) {
            restore_cluster(o);
            throw;
        }
        for (const auto &p : o.map.pools)
            r.log.pool_capacity[p.name] = p.gpus;
        r.metrics = compute_metrics(r.log);
        r.violations = check_invariants(r.log);
        write_config_files(dir, r);
        for (const auto &v : r.violations)
            std::cerr << "idletime/replay: configuration " << letter << ": INVARIANT FAILED: " << v << "\n";
        results.push_back(std::move(r));
    }
    restore_cluster(o);
    write_summary_csv(o.out + "/summary.csv", results);
    write_report_md(o.out + "/report.md", results, o.command_line, mapping_markdown(o, js));
    bool plots = write_plots(o.out, results);
    int failed = 0;
    for (const auto &r : results)
        failed += int(r.violations.size());
    std::cout << "idletime/replay: report in " << o.out << "/report.md; " << failed
              << " invariant violation(s)" << std::endl;
    return failed || !plots ? 1 : 0;
}

}  // namespace

int main(int argc, char **argv)
{
    Options o = parse_options(argc, argv);
    JobStream js = load_stream(o);
    try {
        write_stream_files(o, js);
        std::cout << "idletime/replay: " << js.jobs.size() << " jobs (" << js.stats.guaranteed
                  << " guaranteed, " << js.stats.idle << " idle-time) over " << js.span_s
                  << " s; stream in " << o.out << "/jobs.csv" << std::endl;
        if (o.command == "map")
            return 0;
        return run_all(o, js);
    } catch (const std::exception &e) {
        std::cerr << "idletime-replay: " << e.what() << "\n";
        return 1;
    }
}
