#include "views/check.hpp"

#include <cstdlib>
#include <sstream>

#include "core/hostlist.hpp"
#include "core/render.hpp"

namespace idletime::views {
namespace {

using Items = std::set<std::string>;

Items split(const std::string &s, char sep = ',') {
    Items out;
    std::string item;
    std::istringstream in(s);
    while (std::getline(in, item, sep))
        if (!item.empty()) out.insert(item);
    return out;
}

std::string join(const Items &s) {
    std::string out;
    for (const std::string &x : s) out += (out.empty() ? "" : ",") + x;
    return out;
}

std::string or_missing(const std::string &s) { return s.empty() ? "(unset)" : s; }

bool same_hosts(const std::string &a, const std::string &b) {
    std::vector<std::string> x, y;
    std::string err;
    if (!hostlist_expand(a, x, err) || !hostlist_expand(b, y, err)) return a == b;
    return Items(x.begin(), x.end()) == Items(y.begin(), y.end());
}

struct Ctx {
    const Config &cfg;
    const ClusterInfo &have;
    std::vector<Finding> out;
    void add(Severity s, std::string obj, std::string h, std::string w, std::string fix) {
        out.push_back(Finding{s, std::move(obj), std::move(h), std::move(w), std::move(fix)});
    }
    std::string setting(const std::string &k) const {
        auto it = have.settings.find(k);
        return it == have.settings.end() ? "" : it->second;
    }
};

// Global keys: exact for the preemption trio; "contains" for list-valued keys.
void check_global(Ctx &c, const std::string &key, const std::string &want) {
    std::string h = c.setting(key);
    bool list = key == "SlurmctldParameters" || key == "GresTypes" || key == "AccountingStorageTRES" ||
                key == "AccountingStorageEnforce";
    if (list) {
        Items hv = split(h), missing;
        for (const std::string &w : split(want))
            if (!hv.count(w)) missing.insert(w);
        if (!missing.empty())
            c.add(Severity::Mismatch, key, or_missing(h), want,
                  "slurm.conf: add " + join(missing) + " to " + key + ", then restart slurmctld");
    } else if (key == "PreemptType" && h == "preempt/idletime" && want == "preempt/partition_prio") {
        // idletime's own preempt plugin: partition_prio's rules plus victim order and node holds.
    } else if (h != want) {
        c.add(Severity::Mismatch, key, or_missing(h), want,
              "slurm.conf: set " + key + "=" + want + ", then scontrol reconfigure");
    }
}

const PartitionInfo *find_part(const ClusterInfo &h, const std::string &name) {
    for (const PartitionInfo &p : h.partitions)
        if (p.name == name) return &p;
    return nullptr;
}

void check_partition(Ctx &c, const std::map<std::string, std::string> &w) {
    const std::string name = w.at("PartitionName");
    const std::string obj = "partition " + name;
    const PartitionInfo *p = find_part(c.have, name);
    if (!p) {
        c.add(Severity::Mismatch, obj, "(missing)", "present",
              "slurm.conf: add the PartitionName=" + name + " line of `idletime render --section=partitions`");
        return;
    }
    auto field = [&](const char *key, const std::string &have, bool equal) {
        auto it = w.find(key);
        std::string want = it == w.end() ? "" : it->second;
        if (it == w.end() || equal) return;
        c.add(Severity::Mismatch, obj + " " + key, or_missing(have), want,
              "slurm.conf: PartitionName=" + name + " " + key + "=" + want + ", then scontrol reconfigure");
    };
    auto get = [&](const char *k) { auto it = w.find(k); return it == w.end() ? std::string() : it->second; };
    field("Nodes", p->nodes, same_hosts(p->nodes, get("Nodes")));
    field("PriorityTier", p->priority_tier, p->priority_tier == get("PriorityTier"));
    field("PreemptMode", p->preempt_mode, p->preempt_mode == get("PreemptMode"));
    field("GraceTime", p->grace_time, p->grace_time == get("GraceTime") || (get("GraceTime").empty()));
    field("QOS", p->qos, p->qos == get("QOS"));
    field("AllowAccounts", p->allow_accounts, split(p->allow_accounts) == split(get("AllowAccounts")));
    field("State", p->state, p->state == get("State"));
}

void check_qos(Ctx &c) {
    const std::string &idle = c.cfg.idle.idle_qos;
    if (!c.have.qos_grp_tres.count(idle))
        c.add(Severity::Mismatch, "QOS " + idle, "(missing)", "present",
              "sacctmgr -i add qos " + idle + "  (or: sh sacctmgr-script objects)");
    for (const Quota &q : c.cfg.quotas) {
        std::string want = quota_grp_tres(q);
        auto it = c.have.qos_grp_tres.find(q.name);
        if (it == c.have.qos_grp_tres.end()) {
            c.add(Severity::Mismatch, "QOS " + q.name, "(missing)", "GrpTRES=" + want,
                  "sacctmgr -i add qos " + q.name + "; sacctmgr -i modify qos " + q.name + " set GrpTRES=" + want);
        } else if (parse_tres(it->second) != parse_tres(want)) {
            c.add(Severity::Mismatch, "QOS " + q.name + " GrpTRES", or_missing(it->second), want,
                  "sacctmgr -i modify qos " + q.name + " set GrpTRES=" + want);
        }
    }
}

void check_accounts(Ctx &c) {
    Items seen;
    for (const Quota &q : c.cfg.quotas)
        for (const std::string &a : q.accounts)
            if (seen.insert(a).second && !c.have.accounts.count(a))
                c.add(Severity::Mismatch, "account " + a, "(missing)", "present (quota " + q.name + ")",
                      "sacctmgr -i add account " + a + "  (or: sh sacctmgr-script objects)");
}

void check_plugins(Ctx &c) {
    if (!split(c.setting("JobSubmitPlugins")).count("idletime") &&
        !split(c.setting("JobSubmitPlugins")).count("job_submit/idletime"))
        c.add(Severity::Mismatch, "JobSubmitPlugins", or_missing(c.setting("JobSubmitPlugins")), "idletime",
              "slurm.conf: JobSubmitPlugins=idletime (and PluginDir with job_submit_idletime.so), restart slurmctld");
    if (!c.have.plugstack_lists_spank)
        c.add(Severity::Mismatch, "PlugStackConfig", or_missing(c.setting("PlugStackConfig")),
              "a plugstack.conf line for spank_idletime.so",
              "plugstack.conf: add `required spank_idletime.so config=/etc/idletime/idletime.json`");
}

void check_known_bad(Ctx &c) {
    std::string type = c.setting("PreemptType");
    if (type == "preempt/qos")
        for (const PartitionInfo &p : c.have.partitions)
            if (!p.grace_time.empty() && p.grace_time != "0")
                c.add(Severity::KnownBad, "partition " + p.name + " GraceTime", p.grace_time, "0 under preempt/qos",
                      "under preempt/qos the partition GraceTime is ignored; use PreemptType=preempt/partition_prio");
    if (c.setting("JobRequeue") == "0")
        c.add(Severity::KnownBad, "JobRequeue", "0", "1",
              "JobRequeue=0 turns preempted idle-time jobs into failures: set JobRequeue=1");
    if (c.setting("PreemptMode").find("SUSPEND") != std::string::npos)
        c.add(Severity::KnownBad, "PreemptMode", c.setting("PreemptMode"), "REQUEUE",
              "SUSPEND keeps GPU memory of the victim: set PreemptMode=REQUEUE");
    std::string kw = c.setting("KillWait");
    if (!kw.empty() && std::strtoul(kw.c_str(), nullptr, 10) > 60)
        c.add(Severity::KnownBad, "KillWait", kw, "<= 60",
              "owners wait up to GraceTime+KillWait for reclaimed GPUs: set KillWait=30");
    for (const PartitionInfo &p : c.have.partitions)
        if (p.name.rfind("idle-", 0) == 0 && p.preempt_mode == "OFF")
            c.add(Severity::KnownBad, "partition " + p.name + " PreemptMode", "OFF", "REQUEUE",
                  "idle partitions must be preemptible: PreemptMode=REQUEUE");
}

// A site partition (not rendered by idletime) that shares nodes with a pool and inherits the
// cluster-wide PreemptMode=REQUEUE below the quota tier: adopting idletime silently made its jobs
// preemptible by quota jobs. An explicit PreemptMode (even REQUEUE) is the site's own choice.
void check_site_partitions(Ctx &c) {
    Items pool_nodes;
    for (const Pool &p : c.cfg.pools) pool_nodes.insert(p.node_names.begin(), p.node_names.end());
    for (const PartitionInfo &p : c.have.partitions) {
        bool ours = false;
        for (const Quota &q : c.cfg.quotas) ours = ours || p.name == quota_partition(q);
        for (const Pool &pool : c.cfg.pools) ours = ours || p.name == idle_partition(pool);
        if (ours || !p.preempt_mode.empty() || c.setting("PreemptMode") == "OFF") continue;
        if (std::strtoul(p.priority_tier.c_str(), nullptr, 10) >= c.cfg.idle.quota_priority_tier) continue;
        std::vector<std::string> nodes;
        std::string err;
        if (!hostlist_expand(p.nodes, nodes, err)) continue;
        bool shared = false;
        for (const std::string &n : nodes) shared = shared || pool_nodes.count(n);
        if (shared)
            c.add(Severity::KnownBad, "partition " + p.name + " PreemptMode",
                  "(inherits " + c.setting("PreemptMode") + ")", "OFF, or a PreemptMode of its own",
                  "its jobs on pool nodes are preempted by quota jobs: add PreemptMode=OFF to its PartitionName "
                  "line (or PreemptMode=REQUEUE if that is intended), then scontrol reconfigure");
    }
}

}  // namespace

std::map<std::string, std::string> parse_conf_line(const std::string &line) {
    std::map<std::string, std::string> out;
    std::istringstream in(line);
    std::string tok;
    while (in >> tok) {
        size_t eq = tok.find('=');
        if (eq != std::string::npos) out[tok.substr(0, eq)] = tok.substr(eq + 1);
    }
    return out;
}

std::map<std::string, std::string> parse_tres(const std::string &tres) {
    std::map<std::string, std::string> out;
    for (const std::string &item : split(tres)) {
        size_t eq = item.find('=');
        if (eq == std::string::npos) continue;
        std::string k = item.substr(0, eq), v = item.substr(eq + 1);
        if (k == "mem" && !v.empty()) {
            char unit = v.back();
            uint64_t n = std::strtoull(v.c_str(), nullptr, 10);
            if (unit == 'G') n *= 1024;
            else if (unit == 'T') n *= 1024 * 1024;
            v = std::to_string(n);
        }
        out[k] = v;
    }
    return out;
}

std::vector<Finding> check_cluster(const Config &cfg, const ClusterInfo &have) {
    Ctx c{cfg, have, {}};
    std::istringstream in(render_partitions(cfg));
    std::string line;
    std::vector<std::map<std::string, std::string>> parts;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        auto kv = parse_conf_line(line);
        if (kv.count("PartitionName")) parts.push_back(kv);
        else
            for (const auto &[k, v] : kv) check_global(c, k, v);
    }
    for (const auto &p : parts) check_partition(c, p);
    check_qos(c);
    check_accounts(c);
    check_plugins(c);
    check_known_bad(c);
    check_site_partitions(c);
    return c.out;
}

}  // namespace idletime::views
