// The running cluster for `idletime check`: slurm.conf settings, partitions, QOS limits,
// accounts (libslurm and slurmdb public API) and whether plugstack.conf loads spank_idletime.
#include <slurm/slurm.h>
#include "compat/slurm_api.h"
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>

#include <fstream>
#include <map>
#include <sstream>

#include "tools/views/slurm_read.hpp"

namespace idletime::slurmread {
namespace {

std::string s(const char *p) { return p ? p : ""; }

// PREEMPT_MODE_* bits as slurm.conf spells them.
std::string preempt_mode(uint16_t m) {
    if (m == NO_VAL16) return "";
    std::string out;
    auto add = [&](const char *n) { out += (out.empty() ? "" : ",") + std::string(n); };
    if (m & PREEMPT_MODE_SUSPEND) add("SUSPEND");
    if (m & PREEMPT_MODE_REQUEUE) add("REQUEUE");
    if (m & PREEMPT_MODE_CANCEL) add("CANCEL");
    if (m & PREEMPT_MODE_WITHIN) add("WITHIN");
    if (m & PREEMPT_MODE_GANG) add("GANG");
    return out.empty() ? "OFF" : out;
}

// AccountingStorageEnforce bits (src/common/read_config.h values, stable since 17.x).
std::string enforce(uint16_t e) {
    static const std::pair<uint16_t, const char *> bits[] = {
        {1 << 0, "associations"}, {1 << 1, "limits"}, {1 << 2, "wckeys"}, {1 << 3, "qos"},
        {1 << 4, "safe"},         {1 << 5, "nojobs"}, {1 << 6, "nosteps"}};
    std::string out;
    for (auto [b, n] : bits)
        if (e & b) out += (out.empty() ? "" : ",") + std::string(n);
    return out.empty() ? "none" : out;
}

std::string part_state(uint16_t st) {
    switch (st) {
    case PARTITION_UP: return "UP";
    case PARTITION_DOWN: return "DOWN";
    case PARTITION_DRAIN: return "DRAIN";
    case PARTITION_INACTIVE: return "INACTIVE";
    }
    return "UNKNOWN";
}

bool load_settings(views::ClusterInfo &out, std::string &err) {
    slurm_conf_t *c = nullptr;
    if (slurm_load_ctl_conf(0, &c) != SLURM_SUCCESS) return err = slurm_strerror(idletime_slurm_errno()), false;
    auto &m = out.settings;
    m["PreemptType"] = s(c->preempt_type);
    m["PreemptMode"] = preempt_mode(c->preempt_mode);
    m["JobRequeue"] = std::to_string(c->job_requeue);
    m["SlurmctldParameters"] = s(c->slurmctld_params);
    m["GresTypes"] = s(c->gres_plugins);
    m["AccountingStorageTRES"] = s(c->accounting_storage_tres);
    m["AccountingStorageEnforce"] = enforce(c->accounting_storage_enforce);
    m["JobSubmitPlugins"] = s(c->job_submit_plugins);
    m["PlugStackConfig"] = s(c->plugstack);
    m["KillWait"] = std::to_string(c->kill_wait);
    std::ifstream ps(s(c->plugstack));
    std::string line;
    while (std::getline(ps, line)) {
        std::string t = line.substr(0, line.find('#'));
        if (t.find("spank_idletime.so") != std::string::npos) out.plugstack_lists_spank = true;
    }
    idletime_free_ctl_conf(c);
    return true;
}

bool load_partitions(views::ClusterInfo &out, std::string &err) {
    partition_info_msg_t *msg = nullptr;
    if (slurm_load_partitions(0, &msg, SHOW_ALL) != SLURM_SUCCESS) return err = slurm_strerror(idletime_slurm_errno()), false;
    for (uint32_t i = 0; i < msg->record_count; i++) {
        const partition_info_t &p = msg->partition_array[i];
        views::PartitionInfo x;
        x.name = s(p.name);
        x.nodes = s(p.nodes);
        x.priority_tier = std::to_string(p.priority_tier);
        x.preempt_mode = preempt_mode(p.preempt_mode);
        x.grace_time = std::to_string(p.grace_time);
        x.qos = s(p.qos_char);
        x.allow_accounts = p.allow_accounts ? p.allow_accounts : "ALL";
        x.state = part_state(p.state_up);
        out.partitions.push_back(x);
    }
    slurm_free_partition_info_msg(msg);
    return true;
}

template <class T, class F>
void each(idletime_list_t l, F f) {
    if (!l) return;
    idletime_list_itr_t it = slurm_list_iterator_create(l);
    while (void *x = slurm_list_next(it)) f(*static_cast<T *>(x));
    slurm_list_iterator_destroy(it);
    slurm_list_destroy(l);
}

// "1=8,2=16000,1001=4" -> "cpu=8,mem=16000M,gres/gpu=4" with the TRES names of slurmdbd.
std::string tres_names(const std::string &ids, const std::map<uint32_t, std::string> &names) {
    std::string out, item;
    std::istringstream in(ids);
    while (std::getline(in, item, ',')) {
        size_t eq = item.find('=');
        if (eq == std::string::npos) continue;
        auto it = names.find(uint32_t(std::strtoul(item.c_str(), nullptr, 10)));
        std::string n = it == names.end() ? item.substr(0, eq) : it->second;
        out += (out.empty() ? "" : ",") + n + "=" + item.substr(eq + 1) + (n == "mem" ? "M" : "");
    }
    return out;
}

bool load_accounting(views::ClusterInfo &out, std::string &err) {
    uint16_t flags = 0;
    void *db = slurmdb_connection_get(&flags);
    if (!db) return err = "cannot connect to slurmdbd: " + std::string(slurm_strerror(idletime_slurm_errno())), false;
    std::map<uint32_t, std::string> names;
    slurmdb_tres_cond_t tc;
    slurmdb_init_tres_cond(&tc, 0);
    each<slurmdb_tres_rec_t>(slurmdb_tres_get(db, &tc), [&](slurmdb_tres_rec_t &t) {
        names[t.id] = s(t.type) + (t.name && *t.name ? "/" + s(t.name) : "");
    });
    slurmdb_qos_cond_t qc{};
    each<slurmdb_qos_rec_t>(slurmdb_qos_get(db, &qc), [&](slurmdb_qos_rec_t &q) {
        out.qos_grp_tres[s(q.name)] = tres_names(s(q.grp_tres), names);
    });
    slurmdb_account_cond_t ac{};
    each<slurmdb_account_rec_t>(slurmdb_accounts_get(db, &ac),
                                [&](slurmdb_account_rec_t &a) { out.accounts.insert(s(a.name)); });
    slurmdb_connection_close(&db);
    return true;
}

}  // namespace

bool load_cluster(views::ClusterInfo &out, std::string &err) {
    out = views::ClusterInfo{};
    return load_settings(out, err) && load_partitions(out, err) && load_accounting(out, err);
}

}  // namespace idletime::slurmread
