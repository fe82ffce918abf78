#include "setup.hpp"
#include "slurm_client.hpp"

#include "core/config.hpp"

#include <json-c/json.h>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <set>
#include <spawn.h>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <fcntl.h>

extern char **environ;
namespace fs = std::filesystem;

namespace idletime::replay {

namespace {

// Runs argv (stdin /dev/null, stdout+stderr appended to log); returns the exit status.
int spawn_wait(const std::vector<std::string> &args, const std::string &log)
{
    std::vector<char *> argv;
    for (const auto &a : args)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid = 0;
    int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return 127;
    int status = 0;
    if (waitpid(pid, &status, 0) < 0)
        return 127;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string self_dir()
{
    std::error_code ec;
    auto p = fs::read_symlink("/proc/self/exe", ec);
    return ec ? "." : p.parent_path().string();
}

std::string pool_names(const Options &o)
{
    std::string out;
    for (const auto &p : o.map.pools)
        out += (out.empty() ? "" : ", ") + p.name;
    return out;
}

// Each emulated GPU comes with 2 CPUs and 4000 MB, in the pools' nodes and in the quotas alike.
constexpr int kCpusPerGpu = 2;
constexpr int kMemoryMbPerGpu = 4000;

json_object *pool_json(const LocalPool &p, const char *tenant, int node_gpus)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(p.name.c_str()));
    json_object_object_add(o, "tenant", json_object_new_string(tenant));
    json_object_object_add(o, "type", json_object_new_string("high-performance"));
    json_object_object_add(o, "gpu_spec", json_object_new_string(p.spec.c_str()));
    std::string nodes = p.name + "-[1-" + std::to_string(p.gpus / node_gpus) + "]";
    json_object_object_add(o, "nodes", json_object_new_string(nodes.c_str()));
    json_object *node = json_object_new_object();
    json_object_object_add(node, "gpus", json_object_new_int(node_gpus));
    json_object_object_add(node, "cpus", json_object_new_int(kCpusPerGpu * node_gpus));
    json_object_object_add(node, "memory_mb", json_object_new_int(kMemoryMbPerGpu * node_gpus));
    json_object_object_add(o, "node", node);
    return o;
}

json_object *quota_json(const Quota &q)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(q.name.c_str()));
    json_object_object_add(o, "pool", json_object_new_string(q.pool.c_str()));
    json_object_object_add(o, "gpus", json_object_new_int(q.gpus));
    json_object_object_add(o, "cpus", json_object_new_int(kCpusPerGpu * q.gpus));
    json_object_object_add(o, "memory_mb", json_object_new_int(kMemoryMbPerGpu * q.gpus));
    json_object *acc = json_object_new_array();
    json_object_array_add(acc, json_object_new_string(q.name.c_str()));
    json_object_object_add(o, "accounts", acc);
    return o;
}

}  // namespace

void write_replay_config(const std::string &path, const JobStream &js, const Options &o)
{
    json_object *root = json_object_new_object();
    json_object *tenants = json_object_new_array();
    json_object *t = json_object_new_object();
    const char *tenant = o.kind == "openb" ? "openb" : "site";
    std::string desc = "quotas derived from the " + o.kind + " trace by idletime-replay";
    json_object_object_add(t, "name", json_object_new_string(tenant));
    json_object_object_add(t, "description", json_object_new_string(desc.c_str()));
    json_object_array_add(tenants, t);
    json_object_object_add(root, "tenants", tenants);
    json_object *pools = json_object_new_array();
    for (const auto &p : o.map.pools)
        json_object_array_add(pools, pool_json(p, tenant, o.map.max_gpus_per_job));
    json_object_object_add(root, "pools", pools);
    json_object *quotas = json_object_new_array();
    for (const auto &q : js.quotas)
        json_object_array_add(quotas, quota_json(q));
    json_object_object_add(root, "quotas", quotas);
    json_object *idle = json_object_new_object();
    json_object_object_add(idle, "grace_time", json_object_new_int(30));
    json_object_object_add(idle, "checkpoint_signal", json_object_new_string("USR1"));
    json_object_object_add(idle, "requeue", json_object_new_boolean(1));
    // Root-owned and writable by root only, as spank/idletime and validate require (not below
    // the output directory, which may be under /var/tmp). The replayed jobs checkpoint into their
    // own --ckpt-dir; this is only the per-job IDLETIME_CKPT_DIR spank/idletime creates.
    const std::string root_dir = "/var/spool/idletime-replay/checkpoints";
    json_object_object_add(idle, "checkpoint_root", json_object_new_string(root_dir.c_str()));
    json_object_object_add(root, "idle", idle);
    int rc = json_object_to_file_ext(path.c_str(), root, JSON_C_TO_STRING_PRETTY);
    json_object_put(root);
    if (rc != 0)
        throw std::runtime_error("cannot write " + path);
}

void check_plugins(const Options &o, const ConfigPlan &plan)
{
    const std::string plugin_dir = o.prefix + "/lib/idletime/slurm/";
    if (plan.plugins && o.route_by_plugin && !fs::exists(plugin_dir + "job_submit_idletime.so"))
        throw std::runtime_error(std::string("configuration ") + plan.letter + " needs " + plugin_dir +
                                 "job_submit_idletime.so (make install), or --c-routing=direct");
    if (plan.needs_plugin && !fs::exists(plugin_dir + plan.needs_plugin))
        throw std::runtime_error(std::string("configuration ") + plan.letter + " needs " + plugin_dir +
                                 plan.needs_plugin + " (configure --with-slurm-src, make install), or --configs without " +
                                 plan.letter);
}

void start_cluster(const Options &o, const ConfigPlan &plan, const std::string &dir)
{
    std::string script = o.start_script.empty() ? std::string(IDLETIME_SRCDIR) + "/testsuite/cluster/start.sh"
                                                : o.start_script;
    std::vector<std::string> args{script, "--config", fs::absolute(o.out).string() + "/idletime.json",
                                  "--prefix", o.prefix, "--dir", o.cluster_dir};
    check_plugins(o, plan);
    if (!plan.plugins)
        args.push_back("--no-plugins");
    if (o.requeue_delay_s > 0 || plan.slurm_extra) {
        std::string extra = fs::absolute(dir).string() + "/extra.conf";
        std::ofstream conf(extra);
        if (o.requeue_delay_s > 0)
            conf << "# idletime-replay: requeued jobs wait cred_expire seconds (default 120)\n"
                 << "AuthInfo=socket=" << o.cluster_dir << "/munge/munge.socket.2,cred_expire="
                 << o.requeue_delay_s << "\n";
        if (plan.slurm_extra)
            conf << "# idletime-replay: configuration " << plan.letter << "\n" << plan.slurm_extra;
        args.insert(args.end(), {"--extra-conf", extra});
    }
    std::string log = fs::absolute(dir).string() + "/cluster-start.log";
    int rc = spawn_wait(args, log);
    if (rc != 0)
        throw std::runtime_error("cluster start failed (exit " + std::to_string(rc) + "): see " + log);
}

void prepare_cluster(const Options &o, const JobStream &js)
{
    std::string accounts;
    for (const auto &q : js.quotas)
        accounts += (accounts.empty() ? "" : ",") + q.name;
    // Exit status 1 means "nothing new added" when root has them already; submissions check.
    spawn_wait({"sacctmgr", "-i", "add", "user", "root", "account=" + accounts}, o.out + "/sacctmgr.log");
    refuse_if_busy(o);
    wait_first_schedule(std::cout);
}

// A restarted slurmctld runs its first scheduling pass about 3 s after it starts, whatever is
// submitted meanwhile; a replay that began sooner charged those seconds to every job of its first
// burst (guaranteed wait p50 2.9 s in C/D against 1.1 s in B, whose longer restart hid them).
void wait_first_schedule(std::ostream &out, double timeout_s)
{
    using clock = std::chrono::steady_clock;
    auto t0 = clock::now();
    bool slept = false;
    for (;; slept = true) {
        if (schedule_cycles() > 0)
            break;
        double waited = std::chrono::duration<double>(clock::now() - t0).count();
        if (waited >= timeout_s)
            throw std::runtime_error("slurmctld ran no scheduling pass within " +
                                     std::to_string(int(timeout_s)) + " s of the cluster start (sdiag: Total cycles 0)");
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - t0).count();
    if (slept)
        out << "idletime/replay: waited " << ms << " ms for slurmctld's first scheduling pass" << std::endl;
}

namespace {

// Jobs that an earlier replay into the same --out left behind (it was killed, and slurmctld
// recovered them, or requeued them after a restart): this user's, their work dir inside --out,
// which this run replaces. They are cancelled, with a line saying so, and waited for (60 s).
std::set<uint32_t> cancel_leftovers(const Options &o)
{
    std::string out = fs::absolute(o.out).lexically_normal().string();
    while (out.size() > 1 && out.back() == '/')  // "x/" normalizes to ".../x/"
        out.pop_back();
    std::vector<uint32_t> ids = own_jobs_under(out);
    if (ids.empty())
        return {};
    std::cerr << "idletime-replay: cancelling " << ids.size() << " jobs of an earlier replay into " << o.out
              << " (their work dir is there: was that replay killed?)" << std::endl;
    for (uint32_t id : ids)
        cancel_job(id);
    std::set<uint32_t> set(ids.begin(), ids.end());
    for (int i = 0; i < 120; i++) {
        bool active = false;
        std::vector<JobView> views;
        try {
            views = load_jobs(set);
        } catch (const SlurmError &) {  // slurmctld busy with the cancels: look again
            active = true;
        }
        for (const JobView &v : views)
            active = active || job_state_active(v);
        if (!active)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return set;
}

}  // namespace

void refuse_if_busy(const Options &o)
{
    int foreign = 0;
    try {
        foreign = foreign_active_jobs(cancel_leftovers(o));
    } catch (const SlurmError &) {
        return;  // slurmctld does not answer: nothing runs there
    }
    if (foreign > 0 && !o.allow_foreign)
        throw std::runtime_error(std::to_string(foreign) +
                                 " jobs of others are pending or running on the cluster; wait, or "
                                 "pass --allow-foreign-jobs");
}

void restore_cluster(const Options &o)
{
    std::string script = o.start_script.empty() ? std::string(IDLETIME_SRCDIR) + "/testsuite/cluster/start.sh"
                                                : o.start_script;
    std::string log = fs::absolute(o.out).string() + "/cluster-restore.log";
    int rc = spawn_wait({script, "--prefix", o.prefix, "--dir", o.cluster_dir}, log);
    if (rc != 0)
        std::cerr << "idletime/replay: restoring the cluster's default config failed (exit " << rc
                  << "): see " << log << "\n";
}

RunSetup run_setup(const Options &o, const std::string &dir)
{
    RunSetup s;
    s.out_dir = fs::absolute(dir).lexically_normal().string();  // as cancel_leftovers compares it
    s.worker = o.worker.empty() ? self_dir() + "/idletime-replay-job" : o.worker;
    s.slurm_conf = o.cluster_dir + "/etc/slurm.conf";
    s.munge_socket = o.cluster_dir + "/munge/munge.socket.2";
    s.route_by_plugin = o.route_by_plugin;
    s.poll_s = o.poll_s > 0 ? o.poll_s : 0.5;
    s.timeout_s = o.timeout_s > 0 ? o.timeout_s : 2 * o.map.window_len_s / o.map.compress + 600;
    s.ckpt_every_s = o.ckpt_every_s > 0 ? o.ckpt_every_s : 10;
    return s;
}

std::string verify_ctld(const ConfigPlan &plan)
{
    CtldPlugins p = load_ctld_plugins();
    const std::string want_submit = plan.plugins ? "idletime" : "";
    const std::pair<const char *, std::pair<std::string, std::string>> checks[] = {
        {"PreemptType", {p.preempt_type, plan.preempt_type}},
        {"PriorityType", {p.priority_type, plan.priority_type}},
        {"JobSubmitPlugins", {p.job_submit, want_submit}},
    };
    std::string line;
    for (const auto &[key, v] : checks) {
        if (v.first != v.second)
            throw std::runtime_error(std::string("configuration ") + plan.letter + ": slurmctld runs " + key + "=" +
                                     (v.first.empty() ? "(none)" : v.first) + ", expected " +
                                     (v.second.empty() ? "(none)" : v.second));
        line += (line.empty() ? "" : ", ") + std::string(key) + "=" + (v.first.empty() ? "(none)" : v.first);
    }
    return line;
}

namespace {

const char *quota_rule(const Options &o)
{
    switch (o.map.quota_source) {
    case QuotaSource::Teams: return "hashed teams per pool";
    case QuotaSource::Accounts: return "one quota per account and pool";
    case QuotaSource::Site: return "the site's quotas (--site-config)";
    }
    return "?";
}

std::string idle_rule(const Options &o)
{
    const IdleRule &r = o.map.idle;
    std::ostringstream s;
    if (r.kind == IdleRuleKind::Share)
        s << "a seeded " << r.share * 100 << " % of each account's jobs";
    else
        s << (r.kind == IdleRuleKind::Qos ? "QOS " : "partition ") << r.name;
    return s.str();
}

}  // namespace

std::string mapping_markdown(const Options &o, const JobStream &js, const ReadStats &rs)
{
    const MapStats &s = js.stats;
    std::ostringstream m;
    m << std::fixed << std::setprecision(1);
    m << "## Job stream\n\nTrace `" << o.trace << "` (" << o.kind << "), window [" << o.map.window_start_s
      << ", " << o.map.window_start_s + o.map.window_len_s << ") trace s (" << o.map.window_len_s / 3600.0
      << " h), compressed " << o.map.compress << "x into " << js.span_s << " s; seed " << o.map.seed
      << ", quotas: " << quota_rule(o);
    if (o.map.quota_source == QuotaSource::Teams)
        m << " (" << o.map.teams << " per pool)";
    m << ", sized by the p" << o.map.quota_percentile * 100 << " of concurrent guaranteed GPUs"
      << "; idle-time jobs: " << idle_rule(o) << "; gangs " << (o.map.split_gangs ? "split into whole nodes" : "capped to one node")
      << "; minimum duration " << o.map.min_duration_s << " s, sample share " << o.map.sample
      << ", carry-over " << (o.map.carry_over ? "on" : "off") << ".\n\n";
    if (o.kind == "sacct") {  // so that --window-start can be worked out from a date
        char when[32];
        std::tm tm{};
        time_t t0 = time_t(rs.epoch0);
        gmtime_r(&t0, &tm);
        std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
        m << "Trace second 0 is " << when << " (the earliest Submit, read as UTC); --window-start counts from it.\n\n";
    }
    m << "Trace rows: " << rs.rows << " read, " << rs.steps_skipped << " job steps skipped, "
      << rs.duplicates_skipped << " earlier records of requeued jobs skipped, " << rs.start_assumed
      << " with start assumed at submit (SWF wait -1), " << rs.bad_total() << " bad.\n\n";
    if (!rs.bad.empty()) {
        m << "| bad rows: reason | rows | first |\n|---|---|---|\n";
        for (const auto &[reason, n] : rs.bad)
            m << "| " << reason << " | " << n << " | " << rs.first_bad.at(reason) << " |\n";
        m << "\n";
    }
    m << "| trace jobs | kept | guaranteed | idle-time | no GPU | never scheduled | outside window | sampled out | "
         "spec not mapped | shared GPU skipped | no quota | shared GPU rounded up | GPUs capped | gangs | "
         "gangs cut to pool | gang GPUs rounded up | idle capped to quota | accounts folded | accounts renamed | carried over | "
         "clipped at end | raised to min duration |\n";
    m << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    m << "| " << s.pods << " | " << s.kept << " | " << s.guaranteed << " | " << s.idle << " | " << s.no_gpu
      << " | " << s.never_scheduled << " | " << s.outside_window << " | " << s.sampled_out << " | " << s.unmapped_spec << " | "
      << s.fractional_skipped << " | " << s.no_quota << " | " << s.fractional_rounded << " | " << s.gpus_capped << " | "
      << s.gangs << " | " << s.gang_capped << " | " << s.gang_rounded_up << " | " << s.be_capped_to_quota << " | "
      << s.accounts_merged << " | " << s.accounts_renamed << " | "
      << s.carried_over << " | " << s.clipped_at_end << " | " << s.floored << " |\n\n";
    m << "| quota | pool | GPUs | demand (p" << o.map.quota_percentile * 100
      << " concurrent guaranteed GPUs in the trace window, or site GPUs) |\n|---|---|---|---|\n";
    for (const auto &q : js.quotas)
        m << "| " << q.name << " | " << q.pool << " | " << q.gpus << " | " << q.demand_gpus << " |\n";
    double gsec = 0, isec = 0;
    for (const auto &j : js.jobs)
        (j.cls == JobClass::Idle ? isec : gsec) += j.duration_s * j.gpus;
    int cap = 0;
    for (const auto &p : o.map.pools)
        cap += p.gpus;
    m << "\nOffered work: guaranteed " << gsec << " GPU-s, idle-time " << isec << " GPU-s = "
      << 100 * (gsec + isec) / (cap * js.span_s) << " % of " << cap << " GPUs x " << js.span_s << " s.\n";
    return m.str();
}

std::string compression_markdown(const Options &o, const JobStream &js)
{
    double c = o.map.compress;
    std::ostringstream m;
    m << std::fixed << std::setprecision(0);
    m << "## What compression distorts\n\nThe trace runs " << std::setprecision(1) << c
      << "x faster here; Slurm's fixed costs do not shrink, so measured in trace time they grow "
      << c << "x:\n\n"
      << std::setprecision(0)
      << "| fixed cost | replay s | the same in trace s |\n|---|---|---|\n"
      << "| Slurm time stamps (1 s resolution) | 1 | " << c << " |\n"
      << "| poll interval of the driver | " << std::setprecision(1) << o.poll_s << " | " << std::setprecision(0)
      << o.poll_s * c << " |\n"
      << "| GraceTime of idle partitions (B: the owner waits it out) | 30 | " << 30 * c << " |\n"
      << "| requeue delay (BeginTime = cred_expire + 1) | " << (o.requeue_delay_s > 0 ? o.requeue_delay_s + 1 : 121)
      << " | " << (o.requeue_delay_s > 0 ? o.requeue_delay_s + 1 : 121) * c << " |\n"
      << "| checkpoint interval of the worker | " << o.ckpt_every_s << " | " << o.ckpt_every_s * c << " |\n\n"
      << js.stats.floored << " of " << js.jobs.size() << " jobs ran shorter than the " << std::setprecision(1)
      << o.map.min_duration_s << " s minimum once compressed and were raised to it (offered work above "
      << "the trace's); every wait, owner wait and lost GPU-second here is in replay seconds. The "
      << "comparison across configurations is fair (all pay the same costs), but preemption costs weigh "
      << c << "x more against job length than on the trace's cluster, and waits caused by these fixed "
      << "costs (grace time, requeue delay, 1 s scheduling steps) are not the trace's.\n";
    return m.str();
}

std::vector<SiteQuota> load_site_quotas(const Options &o)
{
    std::error_code ec;
    if (!fs::exists(o.site_config, ec))
        throw std::runtime_error("cannot read --site-config '" + o.site_config + "': no such file");
    if (!fs::is_regular_file(o.site_config, ec) || fs::file_size(o.site_config, ec) > (1u << 20) || ec)
        throw std::runtime_error("--site-config '" + o.site_config + "' is not a regular file of at most 1 MiB "
                                 "(an idletime.json)");
    std::ifstream in(o.site_config);
    if (!in)
        throw std::runtime_error("cannot read --site-config '" + o.site_config + "'");
    std::stringstream text;
    text << in.rdbuf();
    idletime::Config cfg;
    std::vector<std::string> errors;
    if (!idletime::config_parse(text.str(), cfg, errors) || !errors.empty())
        throw std::runtime_error("--site-config '" + o.site_config + "': " +
                                 (errors.empty() ? "not a valid idletime.json" : errors.front()));
    std::vector<SiteQuota> out;
    for (const auto &q : cfg.quotas) {
        const idletime::Pool *p = cfg.pool(q.pool);
        if (q.gpus == 0 && (!p || p->gpu_spec.empty()))
            continue;  // a CPU-only quota: its jobs have no GPU to replay
        std::string spec = p && !p->gpu_spec.empty() ? p->gpu_spec : q.pool;
        auto mapped = o.map.model_to_spec.find(spec);
        if (mapped != o.map.model_to_spec.end())
            spec = mapped->second;
        std::string local;
        for (const auto &lp : o.map.pools)
            if (lp.spec == spec || lp.name == q.pool)
                local = lp.name;
        if (local.empty())
            throw std::runtime_error("--site-config: quota '" + q.name + "' is in pool '" + q.pool + "' (GPU spec '" +
                                     spec + "'), which maps to no local pool; add --spec-map " + spec + "=POOL (pools: " +
                                     pool_names(o) + ")");
        out.push_back({q.name, local, int(q.gpus), q.accounts});
    }
    return out;
}

}  // namespace idletime::replay
