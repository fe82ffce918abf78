// Everything around a replay run that is not the run itself: the replay's idletime config,
// cluster (re)configuration through testsuite/cluster/start.sh, and the mapping summary.
#pragma once
#include "options.hpp"
#include "runner.hpp"

#include <ostream>
#include <string>

namespace idletime::replay {

// Markdown: the mapping parameters, pod counts by fate, and the derived quotas.
std::string mapping_markdown(const Options &o, const JobStream &js, const ReadStats &rs);
// Markdown: what the compression factor does to this stream, with its numbers.
std::string compression_markdown(const Options &o, const JobStream &js);
// The quotas of --site-config (parsed and validated by the policy core), each pool translated
// to a local pool: by --spec-map of its gpu_spec, else a local pool of that spec or name
// (CPU-only quotas, 0 GPUs in a pool without gpu_spec, are left out).
// Throws std::runtime_error (one line) naming what does not fit.
std::vector<SiteQuota> load_site_quotas(const Options &o);
// idletime.json for the replay: tenant "openb", one high-performance pool per local pool
// (by default a100-[1-4], h100-[1-4]; --pools, --max-gpus), one quota per derived team, accounts named like the quotas.
void write_replay_config(const std::string &path, const JobStream &js, const Options &o);
// Runs start.sh --config <out>/idletime.json for this configuration (plugins for C and D only,
// --extra-conf with the requeue delay when asked and D's scheduling plugins). Throws std::runtime_error on failure.
void start_cluster(const Options &o, const ConfigPlan &plan, const std::string &dir);
// Throws std::runtime_error naming the plugin file a configuration needs and does not find.
void check_plugins(const Options &o, const ConfigPlan &plan);
// Gives root an association with every quota account; refuses when other jobs are active
// (unless --allow-foreign-jobs). Throws std::runtime_error.
// Then waits for slurmctld's first scheduling pass (wait_first_schedule).
void prepare_cluster(const Options &o, const JobStream &js);
// Returns once slurmctld has run a scheduling pass (sdiag's Total cycles > 0), so that time 0 of
// a replay is not spent waiting for it; throws std::runtime_error after timeout_s.
void wait_first_schedule(std::ostream &out, double timeout_s = 60);
// Throws when jobs of others are pending or running (unless --allow-foreign-jobs); a cluster
// that does not answer counts as idle.
void refuse_if_busy(const Options &o);
// Leaves the cluster as the tests expect it: start.sh with the repository's etc/idletime.json
// and the plugins. Failure is reported, not thrown (the replay's results stand).
void restore_cluster(const Options &o);
RunSetup run_setup(const Options &o, const std::string &dir);
// Checks that the running slurmctld has this configuration's PreemptType, PriorityType and
// job_submit plugins; returns them as one line for the report. Throws std::runtime_error naming
// the difference (a configuration that silently ran with other plugins would compare nothing).
std::string verify_ctld(const ConfigPlan &plan);

}  // namespace idletime::replay
