// `idletime check` rules: a cluster built from the render output agrees; each change is found.

#include <sstream>

#include "core/render.hpp"
#include "views/check.hpp"
#include "views_fixture.hpp"

using namespace idletime;
using namespace idletime::views;

namespace {

// The cluster exactly as the config renders it (what a correct site has).
ClusterInfo agreeing() {
    const Config &cfg = example_config();
    ClusterInfo c;
    std::istringstream in(render_partitions(cfg));
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        auto kv = parse_conf_line(line);
        if (!kv.count("PartitionName")) {
            for (auto &[k, v] : kv) c.settings[k] = v;
            continue;
        }
        PartitionInfo p{kv["PartitionName"], kv["Nodes"], kv["PriorityTier"], kv["PreemptMode"],
                        kv.count("GraceTime") ? kv["GraceTime"] : "0", kv["QOS"], kv["AllowAccounts"], kv["State"]};
        c.partitions.push_back(p);
    }
    // Slurm reports more than the config asks for: extra list items must not count.
    c.settings["AccountingStorageEnforce"] = "associations,limits,qos,safe";
    c.settings["AccountingStorageTRES"] = "cpu,mem,energy,node,billing,fs/disk,vmem,pages,gres/gpu,gres/gpu:a100,gres/gpu:h100";
    c.settings["JobSubmitPlugins"] = "idletime";
    c.settings["KillWait"] = "30";
    c.plugstack_lists_spank = true;
    c.qos_grp_tres["idle"] = "";
    for (const Quota &q : cfg.quotas) {
        c.qos_grp_tres[q.name] = quota_grp_tres(q);
        for (const std::string &a : q.accounts) c.accounts.insert(a);
    }
    // Slurm prints memory in its own units: 16000M and 16000 are the same.
    c.qos_grp_tres["team-a"] = "gres/gpu=4,mem=16000,cpu=8";
    return c;
}

PartitionInfo &part(ClusterInfo &c, const char *name) {
    for (PartitionInfo &p : c.partitions)
        if (p.name == name) return p;
    ck_abort_msg("no partition %s", name);
    return c.partitions[0];
}

bool has(const std::vector<Finding> &f, const std::string &object, Severity s) {
    for (const Finding &x : f)
        if (x.object == object && x.severity == s) return true;
    return false;
}

}  // namespace

START_TEST(test_agrees) {
    std::vector<Finding> f = check_cluster(example_config(), agreeing());
    for (const Finding &x : f) fprintf(stderr, "unexpected: %s: %s vs %s\n", x.object.c_str(), x.have.c_str(), x.want.c_str());
    ck_assert_uint_eq(f.size(), 0);
}
END_TEST

START_TEST(test_preempt_idletime_agrees) {
    // idletime's own preempt plugin is as good as partition_prio (admin guide, many owners).
    ClusterInfo have = agreeing();
    have.settings["PreemptType"] = "preempt/idletime";
    std::vector<Finding> f = check_cluster(example_config(), have);
    for (const Finding &x : f) fprintf(stderr, "unexpected: %s: %s vs %s\n", x.object.c_str(), x.have.c_str(), x.want.c_str());
    ck_assert_uint_eq(f.size(), 0);
}
END_TEST

START_TEST(test_each_change_found) {
    struct {
        const char *name;
        void (*change)(ClusterInfo &);
        const char *object;
        Severity sev;
    } t[] = {
        {"preempt type", [](ClusterInfo &c) { c.settings["PreemptType"] = "preempt/qos"; }, "PreemptType", Severity::Mismatch},
        {"grace under qos", [](ClusterInfo &c) { c.settings["PreemptType"] = "preempt/qos"; },
         "partition idle-a100-east GraceTime", Severity::KnownBad},
        {"job requeue 0", [](ClusterInfo &c) { c.settings["JobRequeue"] = "0"; }, "JobRequeue", Severity::KnownBad},
        {"job requeue mismatch", [](ClusterInfo &c) { c.settings["JobRequeue"] = "0"; }, "JobRequeue", Severity::Mismatch},
        {"suspend", [](ClusterInfo &c) { c.settings["PreemptMode"] = "SUSPEND,GANG"; }, "PreemptMode", Severity::KnownBad},
        {"kill wait", [](ClusterInfo &c) { c.settings["KillWait"] = "300"; }, "KillWait", Severity::KnownBad},
        {"user signal", [](ClusterInfo &c) { c.settings["SlurmctldParameters"] = "enable_configless"; },
         "SlurmctldParameters", Severity::Mismatch},
        {"tres", [](ClusterInfo &c) { c.settings["AccountingStorageTRES"] = "cpu,mem,gres/gpu"; }, "AccountingStorageTRES",
         Severity::Mismatch},
        {"missing partition", [](ClusterInfo &c) { c.partitions.pop_back(); }, "partition idle-cpu-gen", Severity::Mismatch},
        {"nodes", [](ClusterInfo &c) { part(c, "quota-team-a").nodes = "a100-[1-3]"; }, "partition quota-team-a Nodes",
         Severity::Mismatch},
        {"tier", [](ClusterInfo &c) { part(c, "idle-a100-west").priority_tier = "10"; },
         "partition idle-a100-west PriorityTier", Severity::Mismatch},
        {"grace", [](ClusterInfo &c) { part(c, "idle-a100-west").grace_time = "300"; },
         "partition idle-a100-west GraceTime", Severity::Mismatch},
        {"idle preempt off", [](ClusterInfo &c) { part(c, "idle-h100-main").preempt_mode = "OFF"; },
         "partition idle-h100-main PreemptMode", Severity::KnownBad},
        {"accounts", [](ClusterInfo &c) { part(c, "quota-team-h").allow_accounts = "team-h"; },
         "partition quota-team-h AllowAccounts", Severity::Mismatch},
        {"qos", [](ClusterInfo &c) { part(c, "quota-team-b").qos = "normal"; }, "partition quota-team-b QOS",
         Severity::Mismatch},
        {"grp tres", [](ClusterInfo &c) { c.qos_grp_tres["team-c"] = "gres/gpu=4"; }, "QOS team-c GrpTRES",
         Severity::Mismatch},
        {"qos missing", [](ClusterInfo &c) { c.qos_grp_tres.erase("team-x"); }, "QOS team-x", Severity::Mismatch},
        {"idle qos missing", [](ClusterInfo &c) { c.qos_grp_tres.erase("idle"); }, "QOS idle", Severity::Mismatch},
        {"account", [](ClusterInfo &c) { c.accounts.erase("team-cpu"); }, "account team-cpu", Severity::Mismatch},
        {"job submit", [](ClusterInfo &c) { c.settings["JobSubmitPlugins"] = "lua"; }, "JobSubmitPlugins", Severity::Mismatch},
        {"spank", [](ClusterInfo &c) { c.plugstack_lists_spank = false; }, "PlugStackConfig", Severity::Mismatch},
        {"site partition inherits REQUEUE", [](ClusterInfo &c) {
             c.partitions.push_back({"batch", "a100-[1-4],cpu-[1-2]", "1", "", "0", "", "ALL", "UP"});
         }, "partition batch PreemptMode", Severity::KnownBad},
    };
    for (auto &c : t) {
        ClusterInfo ci = agreeing();
        c.change(ci);
        std::vector<Finding> f = check_cluster(example_config(), ci);
        ck_assert_msg(has(f, c.object, c.sev), "%s: no finding for %s", c.name, c.object);
        for (const Finding &x : f) ck_assert_msg(!x.fix.empty(), "%s: finding without fix", c.name);
    }
}
END_TEST

// Site partitions that chose their PreemptMode, sit above the quota tier or share no pool node
// are the site's business.
START_TEST(test_site_partitions_ok) {
    ClusterInfo c = agreeing();
    c.partitions.push_back({"batch", "a100-[1-4]", "1", "OFF", "0", "", "ALL", "UP"});
    c.partitions.push_back({"scavenger", "a100-[1-4]", "1", "REQUEUE", "0", "", "ALL", "UP"});
    c.partitions.push_back({"urgent", "a100-[1-4]", "20", "", "0", "", "ALL", "UP"});
    c.partitions.push_back({"login", "login-[1-2]", "1", "", "0", "", "ALL", "UP"});
    std::vector<Finding> f = check_cluster(example_config(), c);
    for (const Finding &x : f) fprintf(stderr, "unexpected: %s: %s vs %s\n", x.object.c_str(), x.have.c_str(), x.want.c_str());
    ck_assert_uint_eq(f.size(), 0);
}
END_TEST

START_TEST(test_parse_helpers) {
    auto kv = parse_conf_line("PartitionName=p Nodes=a-[1-2] State=UP");
    ck_assert_str_eq(kv["Nodes"].c_str(), "a-[1-2]");
    ck_assert_uint_eq(kv.size(), 3);
    ck_assert(parse_tres("mem=16G,cpu=8") == parse_tres("cpu=8,mem=16384M"));
    ck_assert(parse_tres("gres/gpu=4") != parse_tres("gres/gpu=8"));
}
END_TEST

Suite *make_suite() {
    Suite *s = suite_create("views_check");
    TCase *t = tcase_create("check");
    tcase_add_test(t, test_agrees);
    tcase_add_test(t, test_preempt_idletime_agrees);
    tcase_add_test(t, test_each_change_found);
    tcase_add_test(t, test_parse_helpers);
    tcase_add_test(t, test_site_partitions_ok);
    suite_add_tcase(s, t);
    return s;
}

VIEWS_CHECK_MAIN
