#include "options.hpp"

#include "core/cmdline.hpp"
#include "replay/trace.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>

namespace idletime::replay {

namespace {

[[noreturn]] void bad(const std::string &msg)
{
    std::cerr << "idletime-replay: " << printable(msg) << " (see idletime-replay --help)\n";
    std::exit(2);
}

// Paths and names of the command line go into messages, mapping.md, report.md and Slurm job
// fields: a control character in one is refused, not carried along.
void refuse_control_characters(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        a.erase(std::remove(a.begin(), a.end(), '\\'), a.end());  // printable() escapes it too
        if (printable(a) != a)
            bad("argument " + std::to_string(i) + " '" + argv[i] +
                "' holds a control character or a byte that is not UTF-8");
    }
}

double num(const std::string &opt, const std::string &v)
{
    char *end = nullptr;
    double d = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || d < 0)
        bad(opt + " '" + v + "' is not a non-negative number");
    return d;
}

const std::string &nonempty(const std::string &opt, const std::string &v)
{
    if (v.empty())
        bad(opt + " needs a name");
    return v;
}

std::map<std::string, std::string> spec_map(const std::string &v)
{
    std::map<std::string, std::string> out;
    if (v.empty() || v.back() == ',')
        bad("--spec-map '" + v + "' must be MODEL=SPEC,... (e.g. G2=h100)");
    std::stringstream ss(v);
    std::string item;
    while (std::getline(ss, item, ',')) {
        auto eq = item.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == item.size() || item.find('=', eq + 1) != std::string::npos)
            bad("--spec-map item '" + item + "' must be MODEL=SPEC (e.g. G2=h100)");
        std::string spec = item.substr(eq + 1);
        if (spec.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") != std::string::npos)
            bad("--spec-map item '" + item + "': SPEC must be a pool name of --pools (lower-case letters and digits)");
        out[item.substr(0, eq)] = spec;
    }
    return out;
}

// num() takes any non-negative strtod value (1e3, inf, nan): is d a whole number in [lo, hi]?
bool in_whole_range(double d, double lo, double hi)
{
    return std::isfinite(d) && d >= lo && d <= hi && d == std::floor(d);
}

int64_t whole(const std::string &opt, const std::string &v, int64_t lo, int64_t hi, const std::string &what)
{
    double d = num(opt, v);
    if (!in_whole_range(d, double(lo), double(hi)))
        bad(opt + " '" + v + "' must be " + what + ", a whole number from " + std::to_string(lo) + " to " +
            std::to_string(hi));
    return int64_t(d);
}

// A finite number in [lo, hi] (lo itself excluded when open_lo).
double number(const std::string &opt, const std::string &v, double lo, double hi, bool open_lo, const std::string &what)
{
    double d = num(opt, v);
    if (!std::isfinite(d) || d < lo || (open_lo && d == lo) || d > hi) {
        char range[96];
        std::snprintf(range, sizeof(range), "%s%g to %g", open_lo ? "more than " : "", lo, hi);
        bad(opt + " '" + v + "' must be " + what + ", " + range);
    }
    return d;
}

constexpr int64_t kMaxSeed = 4294967295;      // seeds are 32-bit
constexpr int64_t kMaxTraceS = 3155760000;    // 100 years of trace seconds
constexpr double kWeekS = 7 * 86400.0;

// --pools a100=256,h100=64: the local pools (name = GRES type), GPUs each.
std::vector<LocalPool> pools_arg(const std::string &v)
{
    std::vector<LocalPool> out;
    if (!v.empty() && v.back() == ',')
        bad("--pools '" + v + "' ends with a comma (e.g. a100=256,h100=256)");
    std::stringstream ss(v);
    std::string item;
    while (std::getline(ss, item, ',')) {
        auto eq = item.find('=');
        std::string name = eq == std::string::npos ? item : item.substr(0, eq);
        bool ok_name = !name.empty() && name.size() <= 16 && std::islower(static_cast<unsigned char>(name[0])) &&
                       name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") == std::string::npos;
        if (eq == std::string::npos || !ok_name || eq + 1 == item.size())
            bad("--pools item '" + item + "' must be NAME=GPUS, NAME a lower-case letter then up to 15 lower-case "
                "letters and digits (e.g. a100=256)");
        double d = num("--pools item '" + item + "': GPUS", item.substr(eq + 1));
        const int most = kMaxLocalNodes * kMaxNodeGpus;
        if (!in_whole_range(d, 1, most))
            bad("--pools item '" + item + "': GPUS must be a whole number from 1 to " + std::to_string(most));
        int g = int(d);
        for (const auto &p : out)
            if (p.name == name)
                bad("--pools names pool '" + name + "' twice");
        out.push_back({name, name, g});
    }
    if (out.empty())
        bad("--pools '" + v + "' names no pool (e.g. a100=256,h100=256)");
    return out;
}

using Setter = std::function<void(Options &, const std::string &)>;

const std::map<std::string, Setter> &setters()
{
    static const std::map<std::string, Setter> t{
        {"--trace", [](Options &o, const std::string &v) { o.trace = v; }},
        {"--kind", [](Options &o, const std::string &v) {
             if (v != "openb" && v != "sacct" && v != "swf")
                 bad("--kind '" + v + "' unknown, allowed: openb, sacct, swf");
             o.kind = v;
         }},
        {"--quotas", [](Options &o, const std::string &v) {
             if (v != "teams" && v != "accounts")
                 bad("--quotas '" + v + "' unknown, allowed: teams, accounts (or --site-config FILE)");
             o.map.quota_source = v == "teams" ? QuotaSource::Teams : QuotaSource::Accounts;
         }},
        {"--site-config", [](Options &o, const std::string &v) { o.site_config = v; }},
        {"--quota-percentile", [](Options &o, const std::string &v) {
             o.map.quota_percentile = number("--quota-percentile", v, 0, 100, true, "a percentile") / 100;
         }},
        {"--max-quotas", [](Options &o, const std::string &v) {
             o.map.max_quotas = int(whole("--max-quotas", v, 1, 1000, "quotas per pool"));
         }},
        {"--idle-share", [](Options &o, const std::string &v) {
             o.map.idle = {IdleRuleKind::Share, "", number("--idle-share", v, 0, 1, false, "a share of each account's jobs")};
         }},
        {"--idle-qos", [](Options &o, const std::string &v) { o.map.idle = {IdleRuleKind::Qos, nonempty("--idle-qos", v), 0}; }},
        {"--idle-partition", [](Options &o, const std::string &v) {
             o.map.idle = {IdleRuleKind::Partition, nonempty("--idle-partition", v), 0};
         }},
        {"--procs-per-gpu", [](Options &o, const std::string &v) {
             o.procs_per_gpu = int(whole("--procs-per-gpu", v, 1, 4096, "SWF processors per GPU"));
         }},
        {"--seeds", [](Options &o, const std::string &v) {
             std::stringstream ss(v);
             std::string item;
             o.seeds.clear();
             while (std::getline(ss, item, ','))
                 o.seeds.push_back(uint64_t(whole("--seeds item", item, 0, kMaxSeed, "a seed")));
             if (o.seeds.empty() || o.seeds.size() > 9 || v.back() == ',')
                 bad("--seeds '" + v + "' must list 1 to 9 seeds (e.g. 1,2,3)");
             for (size_t i = 0; i < o.seeds.size(); i++)
                 for (size_t j = i + 1; j < o.seeds.size(); j++)
                     if (o.seeds[i] == o.seeds[j])
                         bad("--seeds '" + v + "' names seed " + std::to_string(o.seeds[i]) + " twice");
         }},
        {"--out", [](Options &o, const std::string &v) { o.out = v; }},
        {"--window-start", [](Options &o, const std::string &v) {
             o.map.window_start_s = whole("--window-start", v, 0, kMaxTraceS, "trace seconds");
         }},
        {"--window-len", [](Options &o, const std::string &v) {
             o.map.window_len_s = whole("--window-len", v, 1, kMaxTraceS, "trace seconds");
         }},
        {"--compress", [](Options &o, const std::string &v) {
             o.map.compress = number("--compress", v, 1, 1e6, false, "a compression factor");
         }},
        {"--seed", [](Options &o, const std::string &v) { o.map.seed = uint64_t(whole("--seed", v, 0, kMaxSeed, "a seed")); }},
        {"--teams", [](Options &o, const std::string &v) { o.map.teams = int(whole("--teams", v, 1, 64, "quotas per pool")); }},
        {"--min-duration", [](Options &o, const std::string &v) {
             o.map.min_duration_s = number("--min-duration", v, 0, 3600, false, "replay seconds");
         }},
        {"--sample", [](Options &o, const std::string &v) {
             o.map.sample = number("--sample", v, 0, 1, true, "the share of jobs kept");
         }},
        {"--max-gpus", [](Options &o, const std::string &v) {
             o.map.max_gpus_per_job = whole("--max-gpus", v, 1, kMaxNodeGpus, "GPUs per node");
         }},
        {"--pools", [](Options &o, const std::string &v) { o.map.pools = pools_arg(v); }},
        {"--spec-map", [](Options &o, const std::string &v) { o.map.model_to_spec = spec_map(v); }},
        {"--fractional", [](Options &o, const std::string &v) {
             if (v != "round-up" && v != "skip")
                 bad("--fractional '" + v + "' unknown, allowed: round-up, skip");
             o.map.fractional = v == "skip" ? Fractional::Skip : Fractional::RoundUp;
         }},
        {"--configs", [](Options &o, const std::string &v) {
             if (v.empty() || v.find_first_not_of("ABCD") != std::string::npos)
                 bad("--configs '" + v + "' must be letters of A, B, C, D (e.g. ABCD)");
             for (size_t i = 0; i < v.size(); i++)
                 if (v.find(v[i], i + 1) != std::string::npos)
                     bad("--configs '" + v + "' names " + v[i] + " twice (each configuration runs once)");
             o.configs = v;
         }},
        {"--cluster-dir", [](Options &o, const std::string &v) { o.cluster_dir = v; }},
        {"--start-script", [](Options &o, const std::string &v) { o.start_script = v; }},
        {"--prefix", [](Options &o, const std::string &v) { o.prefix = v; }},
        {"--worker", [](Options &o, const std::string &v) { o.worker = v; }},
        {"--poll", [](Options &o, const std::string &v) { o.poll_s = number("--poll", v, 0.05, 60, false, "seconds"); }},
        {"--timeout", [](Options &o, const std::string &v) { o.timeout_s = number("--timeout", v, 0, kWeekS, false, "seconds"); }},
        {"--ckpt-every", [](Options &o, const std::string &v) {
             o.ckpt_every_s = number("--ckpt-every", v, 0.1, 86400, false, "seconds");
         }},
        {"--requeue-delay", [](Options &o, const std::string &v) {
             o.requeue_delay_s = int(whole("--requeue-delay", v, 0, 3600, "seconds"));
         }},
        {"--c-routing", [](Options &o, const std::string &v) {
             if (v != "plugin" && v != "direct")
                 bad("--c-routing '" + v + "' unknown, allowed: plugin, direct");
             o.route_by_plugin = v == "plugin";
         }},
    };
    return t;
}

}  // namespace

const char *const kUsage =
    "Usage: idletime-replay map|run [--kind openb|sacct|swf] --trace FILE --out DIR [options]\n"
    "  map: write the job stream (jobs.csv, quotas.csv, idletime.json, mapping.md) to DIR\n"
    "  run: map, then replay it on the local cluster under configurations A, B, C, D and write\n"
    "       the report (summary.csv, report.md, alloc/waits/lost/quota-X .png/.svg, A-D/)\n"
    "trace:   --kind openb|sacct|swf (default openb) --procs-per-gpu N (swf)\n"
    "mapping: --window-start S --window-len S --compress F --seed N --seeds N,N,...\n"
    "         --spec-map MODEL=SPEC,... --fractional round-up|skip --min-duration S\n"
    "         --sample SHARE --no-carry-over --gangs --no-gangs\n"
    "cluster: --pools NAME=GPUS,... (default a100=16,h100=16) --max-gpus N (GPUs per node, 4)\n"
    "quotas:  --quotas teams|accounts --teams K --quota-percentile P --max-quotas N\n"
    "         --site-config FILE (quotas and accounts of the site's idletime.json)\n"
    "idle:    --idle-qos NAME | --idle-partition NAME | --idle-share SHARE (seeded, per account)\n"
    "run:     --configs ABCD --cluster-dir DIR --start-script FILE --prefix DIR --worker FILE\n"
    "         --poll S --timeout S --ckpt-every S --requeue-delay S --c-routing plugin|direct\n"
    "         --allow-foreign-jobs\n"
    "--help, --version\n"
    "Exit status: 0 ok (map: stream written), 1 run: an invariant or the cluster failed, or\n"
    "standard output could not be written (map too),\n"
    "2 bad input (also a trace with no usable job), nothing written\n";

Options parse_options(int argc, char **argv)
{
    Options o;
    o.map.pools = {{"a100", "a100", 16}, {"h100", "h100", 16}};
    o.map.compress = 240;
    o.map.seed = 1;
    refuse_control_characters(argc, argv);
    for (int i = 0; i < argc; i++)
        o.command_line += (i ? " " : "") + std::string(argv[i]);
    for (int i = 1; i < argc; i++) {  // `idletime-replay run --help` too
        if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h")
            std::exit(cmdline::help(kUsage));
        if (std::string(argv[i]) == "--version")
            std::exit(cmdline::version("idletime-replay"));
    }
    if (argc >= 2 && setters().count(std::string(argv[1]).substr(0, std::string(argv[1]).find('='))))
        bad("first argument must be 'map' or 'run' (e.g. idletime-replay map --trace FILE --out DIR)");
    if (argc >= 2 && argv[1][0] == '-')
        std::exit(cmdline::unknown_option("idletime-replay", argv[1], kUsage));
    if (argc < 2 || (std::string(argv[1]) != "map" && std::string(argv[1]) != "run"))
        bad("first argument must be 'map' or 'run'");
    o.command = argv[1];
    for (int i = 2; i < argc; i++) {
        std::string a = argv[i], v;
        if (a == "--no-carry-over") { o.map.carry_over = false; continue; }
        if (a == "--gangs" || a == "--no-gangs") {
            o.map.split_gangs = a == "--gangs";
            o.given.insert("--gangs");
            continue;
        }
        if (a == "--allow-foreign-jobs") { o.allow_foreign = true; continue; }
        auto eq = a.find('=');
        if (eq != std::string::npos) {
            v = a.substr(eq + 1);
            a = a.substr(0, eq);
        } else if (i + 1 < argc) {
            v = argv[++i];
        } else if (setters().count(a)) {
            bad("option " + a + " needs a value");
        }
        auto it = setters().find(a);
        if (it == setters().end())
            std::exit(cmdline::unknown_option("idletime-replay", a, kUsage));
        it->second(o, v);
        o.given.insert(a);
    }
    if (o.trace.empty() || o.out.empty())
        bad("--trace FILE and --out DIR are required");
    if (o.given.count("--idle-qos") + o.given.count("--idle-partition") + o.given.count("--idle-share") > 1)
        bad("--idle-qos, --idle-partition and --idle-share exclude each other (one rule picks the idle-time jobs)");
    if (o.given.count("--spec-map"))
        for (const auto &[model, spec] : o.map.model_to_spec) {
            bool known = false;
            for (const auto &p : o.map.pools)
                known = known || p.spec == spec;
            if (!known)
                bad("--spec-map item '" + model + "=" + spec + "': '" + spec + "' is not a pool of --pools");
        }
    apply_kind_defaults(o);
    return o;
}

void apply_kind_defaults(Options &o)
{
    bool openb = o.kind == "openb";
    auto unset = [&](const char *opt) { return !o.given.count(opt); };
    bool idle_given = !unset("--idle-share") || !unset("--idle-qos") || !unset("--idle-partition");
    if (openb) {  // doc/replay/README.md: 12 busy trace hours, 240x, 80 % of the pods
        if (unset("--window-start")) o.map.window_start_s = 12100000;
        if (unset("--window-len")) o.map.window_len_s = 43200;
        if (unset("--sample")) o.map.sample = 0.8;
        if (unset("--spec-map")) o.map.model_to_spec = {{"V100M16", "a100"}, {"V100M32", "a100"}, {"G2", "h100"}};
        if (!idle_given) o.map.idle = {IdleRuleKind::Qos, "BE", 0};
    } else {
        if (unset("--quotas")) o.map.quota_source = QuotaSource::Accounts;
        if (unset("--gangs")) o.map.split_gangs = true;
        if (unset("--spec-map"))  // each local pool's GRES type is its name: jobs of that type go there
            for (const auto &p : o.map.pools)
                o.map.model_to_spec[p.spec] = p.spec;
        if (!idle_given) o.map.idle = {IdleRuleKind::Share, "", 0.25};
    }
    if (!o.site_config.empty())
        o.map.quota_source = QuotaSource::Site;
    if (o.seeds.empty())
        o.seeds = {o.map.seed};
    else if (!unset("--seed"))
        bad("--seed and --seeds exclude each other");
}

}  // namespace idletime::replay
