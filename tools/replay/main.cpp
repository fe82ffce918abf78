// idletime-replay: replays a public GPU-cluster trace on the local Slurm cluster under up to four
// configurations (A no borrowing, B plain Slurm scavenger, C idletime, D C + scheduling plugins)
// and reports the metrics.
#include "options.hpp"
#include "out_dir.hpp"
#include "report.hpp"
#include "runner.hpp"
#include "setup.hpp"
#include "slurm_client.hpp"

#include "replay/stream.hpp"
#include "spread.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
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
    std::cerr << "idletime-replay: " << printable(msg) << "\n";
    std::exit(2);
}

// Reads the trace (exit 2 when it cannot be read as its kind or holds no job) and, for sacct
// and swf without --window-len, sets the window to the whole trace.
Trace load_trace(Options &o)
{
    auto reader = make_trace_reader(o.kind, o.procs_per_gpu);
    if (!reader)
        bad_input("--kind '" + o.kind + "' unknown, allowed: " + trace_reader_kinds());
    std::error_code ec;
    if (fs::is_directory(o.trace, ec))
        bad_input("--trace '" + o.trace + "' is a directory, not a trace file");
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

// Exit 2 when a seed's mapping keeps no job (a run would replay nothing), or no idle-time job
// although --idle-qos/--idle-partition named one (all of its jobs were dropped in the mapping).
void check_mapped(const Options &o, const JobStream &js)
{
    bool named = o.given.count("--idle-qos") || o.given.count("--idle-partition");
    if (!js.jobs.empty() && named && js.stats.idle == 0)
        bad_input(std::string(o.map.idle.kind == IdleRuleKind::Qos ? "--idle-qos" : "--idle-partition") + " '" +
                  o.map.idle.name + "': none of the " + std::to_string(js.jobs.size()) + " jobs kept with seed " +
                  std::to_string(o.map.seed) + " has it (its jobs are outside the window, without GPU or left out): "
                  "no idle-time job to replay");
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

// The job stream files of one seed into dir; throws on any failure to write.
void write_stream_files(const Options &o, const std::string &dir, const JobStream &js, const ReadStats &rs)
{
    fs::create_directories(dir);
    std::ofstream jobs(dir + "/jobs.csv"), quotas(dir + "/quotas.csv"), md(dir + "/mapping.md");
    if (!jobs || !quotas || !md)
        throw std::runtime_error("cannot create the job stream files");
    write_jobs_csv(jobs, js.jobs);
    write_quotas_csv(quotas, js.quotas);
    md << mapping_markdown(o, js, rs);
    write_replay_config(dir + "/idletime.json", js, o);
    if (!jobs.flush() || !quotas.flush() || !md.flush())
        throw std::runtime_error("writing the job stream failed (disk full?)");
}

// Every seed's stream, staged inside --out and moved into place only when all are whole; exit 2
// (with --out as it was) when --out cannot be used or written.
void publish_streams(const Options &o, const std::vector<std::pair<Options, JobStream>> &streams, const Trace &t)
{
    try {
        OutDir out(o.out, {o.trace, o.site_config});
        const std::string stage = out.stage();
        try {
            for (const auto &[so, js] : streams)
                write_stream_files(so, so.out == o.out ? stage : stage + so.out.substr(o.out.size()), js, t.stats);
            out.publish();
        } catch (const OutDirError &) {
            throw;
        } catch (const std::exception &e) {
            throw OutDirError("--out '" + o.out + "': " + e.what());
        }
    } catch (const std::exception &e) {
        bad_input(e.what());
    }
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

// rc, or 1 when standard output could not be written (a full disk, a closed pipe): the progress
// lines name the stream and report files a caller relies on.
int checked_stdout(int rc)
{
    if (std::cout.flush())
        return rc;
    std::cerr << "idletime-replay: cannot write standard output\n";
    return 1;
}

// A reader that closes stdout (`| head`) must not kill a run mid-configuration (the cluster would
// stay in the replay's configuration): SIGPIPE is caught, so the write fails and checked_stdout()
// reports it. Caught, not ignored: the programs the replay starts get the default action back.
void catch_sigpipe()
{
    struct sigaction sa {};
    sa.sa_handler = [](int) {};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPIPE, &sa, nullptr);
}

}  // namespace

int main(int argc, char **argv)
{
    catch_sigpipe();
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
    publish_streams(o, streams, t);
    std::vector<std::vector<ConfigResult>> by_seed;
    int rc = 0;
    try {
        for (const auto &[so, js] : streams) {
            char span[32];
            std::snprintf(span, sizeof span, "%.1f", js.span_s);
            std::cout << "idletime/replay: seed " << so.map.seed << ": " << js.jobs.size()
                      << (js.jobs.size() == 1 ? " job (" : " jobs (") << js.stats.guaranteed << " guaranteed, "
                      << js.stats.idle << " idle-time) over " << span << " s; " << t.stats.bad_total()
                      << (t.stats.bad_total() == 1 ? " bad trace row" : " bad trace rows") << "; stream in " << so.out
                      << "/jobs.csv" << std::endl;
            if (o.command == "map")
                continue;
            by_seed.emplace_back();
            rc = std::max(rc, run_all(so, js, t.stats, by_seed.back()));
        }
        if (o.command == "run" && o.seeds.size() > 1)
            write_spread_md(o.out + "/report.md", o.out + "/summary.csv", o.seeds, by_seed, o.command_line);
        return checked_stdout(rc);
    } catch (const std::exception &e) {
        std::cerr << "idletime-replay: " << printable(e.what()) << "\n";
        return 1;
    }
}
