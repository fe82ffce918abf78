// idletime-run [options] -- CMD [ARGS...]: see agent.hpp and doc/design/fault-tolerance.md.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "agent/agent.hpp"
#include "core/cmdline.hpp"
#include "hook/slurm_job.hpp"

namespace {

using namespace idletime;

uint32_t env_u32(const char *name) {
    const char *v = getenv(name);
    if (!v || !*v) return 0;
    char *end = nullptr;
    unsigned long n = strtoul(v, &end, 10);
    return *end ? 0 : uint32_t(n);
}

// Failure restarts already used by the job (its AdminComment, readable by the owner).
uint32_t used_failures(uint32_t job_id) {
    slurmjob::Job j;
    std::string err;
    ft::JobState st;
    if (!job_id || !slurmjob::load(job_id, j, err)) return 0;
    if (!ft::state_parse(j.snap.admin_comment, st, err)) return 0;
    return st.counters.failures;
}

void write_report(const agent::Options &o, const agent::Outcome &out, uint32_t job_id) {
    ft::AgentReport r;
    r.run = env_u32("SLURM_RESTART_COUNT");
    r.hung = out.hung;
    r.silent_s = out.silent_s;
    r.exit_code = out.status;
    r.worker_restarts = out.worker_restarts;
    r.lines = out.lines;
    r.overrides = o.overrides;
    std::string err;
    if (!slurmjob::set_comment(job_id, ft::report_serialize(r), err))
        fprintf(stderr, "idletime/run: cannot store the report in job %u: %s\n", job_id,
                err.c_str());
}

}  // namespace

int main(int argc, char **argv) {
    agent::Options o;
    std::string err;
    if (!agent::parse_options(argc, argv, o, err)) {
        fprintf(stderr, "idletime/run: %s\n", err.c_str());
        return agent::kExitUsage;
    }
    if (o.info) return o.info == 'h' ? cmdline::help(agent::kUsage) : cmdline::version("idletime-run");
    bool own_dir = false;
    if (o.heartbeat_dir.empty()) {
        const char *tmp = getenv("TMPDIR");
        std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/idletime-run.XXXXXX";
        if (!mkdtemp(tmpl.data())) {
            fprintf(stderr, "idletime/run: cannot create %s: %s\n", tmpl.c_str(), strerror(errno));
            return agent::kExitLaunch;
        }
        o.heartbeat_dir = tmpl;
        own_dir = true;
    }
    const uint32_t job_id = env_u32("SLURM_JOB_ID");
    if (job_id) slurmjob::init();
    const uint32_t base = o.ft.run_type == RunType::Async ? used_failures(job_id) : 0;
    fprintf(stderr, "idletime/run: %u worker(s), run type %s, policy %s, hang timeout %u s\n",
            o.workers, ft::run_type_str(o.ft.run_type), ft::policy_str(o.ft.policy),
            o.ft.hang_timeout_s);
    agent::Outcome out = agent::run_workers(o, base);
    if (job_id && o.report) write_report(o, out, job_id);
    if (own_dir) {
        std::error_code ec;
        std::filesystem::remove_all(o.heartbeat_dir, ec);
    }
    fprintf(stderr, "idletime/run: exit status %d%s\n", out.status, out.hung ? " (hung)" : "");
    return out.status;
}
