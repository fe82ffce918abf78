// idletime-replay: replays a public GPU-cluster trace on the local Slurm cluster under up to four
// configurations (A no borrowing, B plain Slurm scavenger, C idletime, D C + scheduling plugins)
// and reports the metrics.
#include "options.hpp"
#include "report.hpp"
#include "runner.hpp"
#include "setup.hpp"
#include "slurm_client.hpp"

#include "replay/stream.hpp"
#include "spread.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

namespace fs = std::filesystem;
using namespace idletime::replay;

namespace {

struct Trace {
    std::vector<TraceRecord> records;
    ReadStats stats;
};

[[noreturn]] void bad_input(const std::string &msg)
{
    std::cerr << "idletime-replay: " << msg << "\n";
    std::exit(2);
}

// Reads the trace (exit 2 when it cannot be read as its kind or holds no job) and, for sacct
// and swf without --window-len, sets the window to the whole trace.
Trace load_trace(Options &o)
{
    auto reader = make_trace_reader(o.kind, o.procs_per_gpu);
    if (!reader)
        bad_input("--kind '" + o.kind + "' unknown, allowed: " + trace_reader_kinds());
    std::ifstream in(o.trace);
    if (!in)
        bad_input("cannot read --trace '" + o.trace + "'");
    Trace t;
    try {
        t.records = reader->read(in, o.trace, t.stats);
    } catch (const std::exception &e) {
        bad_input(e.what());
    }
    if (t.records.empty())
        bad_input("--trace '" + o.trace + "': no job read as " + o.kind + " (" +
                  std::to_string(t.stats.rows) + " rows, " + std::to_string(t.stats.bad_total()) + " bad" +
                  (t.stats.first_bad.empty() ? "" : ", first: " + t.stats.first_bad.begin()->second) + ")");
    if (o.kind != "openb" && !o.given.count("--window-len")) {
        int64_t last = 0;
        for (const auto &r : t.records)
            last = std::max({last, r.creation_s, r.deletion_s});
        o.map.window_len_s = std::max<int64_t>(1, last + 1 - o.map.window_start_s);
    }
    if (!o.site_config.empty()) {
        try {
            o.map.site_quotas = load_site_quotas(o);
        } catch (const std::exception &e) {
            bad_input(e.what());
        }
    }
    return t;
}

JobStream map_stream(const Options &o, const Trace &t)
{
    try {
        return map_trace(t.records, o.map);
    } catch (const std::exception &e) {
        bad_input(e.what());
    }
}

// Exit 2 when no job of the trace has the QOS or partition that --idle-qos/--idle-partition
// names: a misspelt name would replay a site without one idle-time job.
void check_idle_rule(const Options &o, const Trace &t)
{
    const IdleRule &r = o.map.idle;
    if (r.kind == IdleRuleKind::Share || (!o.given.count("--idle-qos") && !o.given.count("--idle-partition")))
        return;  // openb's default QOS BE may be absent from a pod list
    bool qos = r.kind == IdleRuleKind::Qos;
    std::set<std::string> names;
    for (const auto &rec : t.records) {
        const std::string &n = qos ? rec.qos_name : rec.partition;
        if (n == r.name)
            return;
        if (!n.empty())
            names.insert(n);
    }
    std::string seen;
    for (const auto &n : names)
        seen += (seen.empty() ? "" : ", ") + n;
    bad_input(std::string(qos ? "--idle-qos" : "--idle-partition") + " '" + r.name + "': no job of --trace '" +
              o.trace + "' has it (" + (qos ? "QOS" : "partitions") + " in the trace: " +
              (seen.empty() ? "none" : seen) + ")");
}

// Exit 2 when a seed's mapping keeps no job: a run would replay nothing.
void check_mapped(const Options &o, const JobStream &js)
{
    if (!js.jobs.empty())
        return;
    const MapStats &m = js.stats;
    bad_input("--trace '" + o.trace + "': no job left after mapping with seed " + std::to_string(o.map.seed) +
              " (" + std::to_string(m.pods) + " jobs: " + std::to_string(m.outside_window) +
              " outside --window-start/--window-len, " + std::to_string(m.no_gpu) + " without GPU, " +
              std::to_string(m.never_scheduled) + " never started, " + std::to_string(m.sampled_out) +
              " left out by --sample, " + std::to_string(m.unmapped_spec) + " of a GPU model --spec-map does not map, " +
              std::to_string(m.fractional_skipped + m.no_quota) + " fractional or in no site quota)");
}

// What an earlier replay wrote into --out: its stream and report files, configuration and seed
// directories. Only these are removed, and only where the directory holds the replay's marker.
bool replay_entry(const fs::directory_entry &e)
{
    std::string n = e.path().filename().string(), ext = e.path().extension().string();
    if (e.is_directory())
        return (n.size() == 1 && n[0] >= 'A' && n[0] <= 'D') ||
               (n.rfind("seed-", 0) == 0 && n.size() > 5 && n.find_first_not_of("0123456789", 5) == std::string::npos);
    return e.is_regular_file() && (ext == ".csv" || ext == ".md" || ext == ".json" || ext == ".png" || ext == ".svg");
}

// --out: a new or empty directory, or one an earlier replay wrote (its marker file), whose files
// are removed first so none of an earlier run (seed-3 of three seeds, configuration D) sits beside
// this run's. Anything else exits 2, before a file is written.
void prepare_out(const std::string &out)
{
    const std::string marker = out + "/.idletime-replay";
    std::error_code ec;
    if (fs::exists(out, ec) && !fs::is_directory(out, ec))
        bad_input("--out '" + out + "' exists and is not a directory");
    if (fs::is_directory(out, ec) && !fs::is_empty(out, ec)) {
        if (!fs::exists(marker, ec))
            bad_input("--out '" + out + "' is not empty and was not written by idletime-replay: name a new or empty directory");
        for (const auto &e : fs::directory_iterator(out, ec))
            if (replay_entry(e))
                fs::remove_all(e.path(), ec);
    }
    fs::create_directories(out, ec);
    if (ec)
        bad_input("--out '" + out + "': cannot create it: " + ec.message());
    if (!std::ofstream(marker).good())
        bad_input("--out '" + out + "': cannot write in it");
}

void write_stream_files(const Options &o, const JobStream &js, const ReadStats &rs)
{
    std::error_code ec;
    fs::create_directories(o.out, ec);
    std::ofstream jobs(o.out + "/jobs.csv"), quotas(o.out + "/quotas.csv"), md(o.out + "/mapping.md");
    if (ec || !jobs || !quotas || !md)
        bad_input("--out '" + o.out + "': cannot write the job stream there");
    write_jobs_csv(jobs, js.jobs);
    write_quotas_csv(quotas, js.quotas);
    md << mapping_markdown(o, js, rs);
    write_replay_config(o.out + "/idletime.json", js, o);
    if (!jobs.flush() || !quotas.flush() || !md.flush())
        bad_input("--out '" + o.out + "': writing the job stream failed (disk full?)");
}

int run_all(const Options &o, const JobStream &js, const ReadStats &rs, std::vector<ConfigResult> &results)
{
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
    write_report_md(o.out + "/report.md", results, o.command_line,
                    mapping_markdown(o, js, rs) + "\n" + compression_markdown(o, js));
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
    Trace t = load_trace(o);
    check_idle_rule(o, t);
    std::vector<std::pair<Options, JobStream>> streams;  // every seed mapped before a file is written
    for (uint64_t seed : o.seeds) {
        Options so = o;
        so.map.seed = seed;
        if (o.seeds.size() > 1)
            so.out = o.out + "/seed-" + std::to_string(seed);
        JobStream js = map_stream(so, t);
        check_mapped(so, js);
        streams.emplace_back(std::move(so), std::move(js));
    }
    prepare_out(o.out);
    std::vector<std::vector<ConfigResult>> by_seed;
    int rc = 0;
    try {
        for (const auto &[so, js] : streams) {
            write_stream_files(so, js, t.stats);
            std::cout << "idletime/replay: seed " << so.map.seed << ": " << js.jobs.size() << " jobs ("
                      << js.stats.guaranteed << " guaranteed, " << js.stats.idle << " idle-time) over "
                      << js.span_s << " s; " << t.stats.bad_total() << " bad trace rows; stream in "
                      << so.out << "/jobs.csv" << std::endl;
            if (o.command == "map")
                continue;
            by_seed.emplace_back();
            rc = std::max(rc, run_all(so, js, t.stats, by_seed.back()));
        }
        if (o.command == "run" && o.seeds.size() > 1)
            write_spread_md(o.out + "/report.md", o.out + "/summary.csv", o.seeds, by_seed, o.command_line);
        return rc;
    } catch (const std::exception &e) {
        std::cerr << "idletime-replay: " << e.what() << "\n";
        return 1;
    }
}
