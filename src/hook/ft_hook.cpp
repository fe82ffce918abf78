// idletime-ft-hook: EpilogSlurmctld program. Judges the run that just ended with the ft core
// and applies the plan: store counters and reasons in the job's AdminComment, requeue with a
// begin time (backoff), or leave the job failed. See doc/design/fault-tolerance.md.
#include <syslog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "core/cmdline.hpp"
#include "core/config.hpp"
#include "core/log_text.hpp"
#include "core/signals.hpp"
#include "core/victim_note.hpp"
#include "hook/resume.hpp"
#include "hook/retention.hpp"
#include "hook/slurm_job.hpp"
#include "hook/waker.hpp"
#include "hook/pass_gate.hpp"
#include "hook/preemptor.hpp"
#include "hook/journal.hpp"
#include "hook/hook_cli.hpp"
#include "hook/poll_share.hpp"

namespace {

using namespace idletime;
using hook::Options;
using hook::kProg;

FILE *g_log = nullptr;  // --log file, else syslog

void logf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void logf(const char *fmt, ...) {
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    // Job names, reasons and report text come from users: one line per call, whatever they hold.
    const std::string line = idletime::log_text(buf);
    if (g_log) {
        fprintf(g_log, "%ld idletime/ft-hook: %s\n", long(time(nullptr)), line.c_str());
        fflush(g_log);
    } else {
        syslog(LOG_INFO, "idletime/ft-hook: %s", line.c_str());
    }
}

bool read_text(const std::string &path, std::string &out) {
    std::ifstream in(path);
    if (!in) return false;
    std::stringstream ss;
    ss << in.rdbuf();
    out = ss.str();
    return !in.bad();
}

// A whole site config text, parsed and validated; out = its fault_tolerance settings.
bool load_ft(const std::string &text, FtSettings &out, std::string &err,
             std::vector<std::string> *partitions = nullptr, IdleSettings *idle = nullptr) {
    Config cfg;
    std::vector<std::string> errors;
    if (config_parse(text, cfg, errors)) config_validate(cfg, errors);
    if (errors.empty() && !ft_validate(cfg.ft, err)) errors.push_back(err);
    if (!errors.empty()) {
        err = errors[0];
        return false;
    }
    out = cfg.ft;
    if (idle) *idle = cfg.idle;
    if (partitions) {
        for (const auto &q : cfg.quotas) partitions->push_back(quota_partition(q));
        for (const auto &pool : cfg.pools) partitions->push_back(idle_partition(pool));
    }
    return true;
}

// Keeps a copy of the config that loaded, for the day an edit breaks it. Written only when it
// changed, through a temp file and rename (hooks of several jobs may run at once).
void save_last_good(const std::string &path, const std::string &text) {
    std::string old;
    if (path.empty() || (read_text(path, old) && old == text)) return;
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    const std::string tmp = path + ".tmp." + std::to_string(getpid());
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << text;
        if (!out.flush()) {
            logf("cannot write the last good config %s", tmp.c_str());
            unlink(tmp.c_str());
            return;
        }
    }
    if (rename(tmp.c_str(), path.c_str()) != 0) {
        logf("cannot save the last good config %s: %s", path.c_str(), strerror(errno));
        unlink(tmp.c_str());
    }
}

// Site settings: the config's fault_tolerance object; when it is unreadable or invalid, the
// last good config (--last-good), else built-in defaults. Every fallback is logged with why.
FtSettings site_settings(const std::string &path, const std::string &last_good,
                         std::vector<std::string> &partitions, IdleSettings &idle) {
    std::string text, err, why;
    FtSettings s;
    if (!read_text(path, text)) {
        why = "not readable";
    } else if (load_ft(text, s, err, &partitions, &idle)) {
        save_last_good(last_good, text);
        return s;
    } else {
        why = "invalid (" + err + ")";
    }
    std::string lg_err;
    if (!last_good.empty() && read_text(last_good, text) && load_ft(text, s, lg_err, &partitions, &idle)) {
        logf("config %s %s: refused, using the last good config saved in %s", path.c_str(),
             why.c_str(), last_good.c_str());
        return s;
    }
    logf("config %s %s and no usable last good config%s%s: using built-in fault-tolerance "
         "defaults", path.c_str(), why.c_str(), last_good.empty() ? "" : " in ",
         last_good.c_str());
    return FtSettings{};
}

// Per-job options the SPANK plugin exported into the epilog environment.
std::map<std::string, std::string> env_overrides() {
    static const std::pair<const char *, const char *> keys[] = {
        {"MAX_RESTARTS", "max_restarts"}, {"MAX_PREEMPTIONS", "max_preemptions"},
        {"FT_POLICY", "ft_policy"},       {"HANG_TIMEOUT", "hang_timeout"},
        {"RUN_TYPE", "run_type"},         {"REQUEUE_AT_TIME_LIMIT", "requeue_at_time_limit"}};
    std::map<std::string, std::string> kv;
    for (const auto &[env, key] : keys) {
        for (const char *prefix : {"SPANK_IDLETIME_", "IDLETIME_"}) {
            const char *v = getenv((std::string(prefix) + env).c_str());
            if (v && *v) {
                kv[key] = v;
                break;
            }
        }
    }
    return kv;
}

// Sleeps between two polls that began at start: fast_ms while less than fast_for_s has passed
// (slurmctld usually answers within seconds), slow_ms after that; longer when slurmctld took
// answer_ms to answer the last poll (hook::paced_pause_ms).
void poll_pause(std::chrono::steady_clock::time_point start, int fast_for_s, int fast_ms,
                int slow_ms, int64_t answer_ms = 0) {
    const bool early = std::chrono::steady_clock::now() - start < std::chrono::seconds(fast_for_s);
    std::this_thread::sleep_for(std::chrono::milliseconds(hook::paced_pause_ms(early ? fast_ms : slow_ms, answer_ms)));
}

// slurmjob::load, timed: answer_ms is how long slurmctld took (it paces the next poll).
bool timed_load(uint32_t id, slurmjob::Job &j, std::string &err, int64_t &answer_ms) {
    const auto asked = std::chrono::steady_clock::now();
    const bool ok = slurmjob::load(id, j, err);
    answer_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - asked).count();
    return ok;
}

// Retries op until it succeeds, fails for a reason a retry cannot fix, or the deadline passes
// (slurmctld may be restarting). Logs at most twice: first failure, giving up.
template <class F> bool retry(const char *what, uint32_t id, int wait_s, F op) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(wait_s);
    std::string err;
    int n = 0;
    for (;; n++) {
        slurmjob::clear_error();
        if (op(err)) return true;
        if (slurmjob::last_error_final() || std::chrono::steady_clock::now() >= until) break;
        if (n == 0) logf("job %u: %s failed (%s), retrying for up to %d s", id, what, err.c_str(),
                         wait_s);
        std::this_thread::sleep_for(std::chrono::milliseconds(n < 10 ? 200 : 1000));
    }
    logf("job %u: %s failed for good after %d attempts: %s", id, what, n + 1, err.c_str());
    return false;
}

// The job and the state of its nodes, read while the epilog still runs: slurmctld keeps the
// job COMPLETING until then, so preempt_time and nodes are those of the run that ended (a Slurm
// requeue clears them once the job is no longer completing). start_time is the run's only when
// the job was not requeued: a requeued job's is Slurm's expected start (ft judge.cpp knows).
bool snapshot(uint32_t id, int wait_s, slurmjob::Job &job) {
    if (!retry("job load", id, wait_s,
               [&](std::string &err) { return slurmjob::load(id, job, err); }))
        return false;
    // The epilog's own view of the run (see JobSnapshot::node_requeue).
    const char *rc = getenv("SLURM_JOB_RESTART_COUNT");
    if (job.snap.requeued && rc && *rc) {
        char *end = nullptr;
        unsigned long env_run = strtoul(rc, &end, 10);
        job.snap.node_requeue = !*end && env_run + 1 == job.snap.restart_cnt;
    }
    if (job.snap.nodes.empty()) job.snap.nodes = slurmjob::expand_hosts(getenv("SLURM_JOB_NODELIST"));
    std::string err;
    if (!slurmjob::failed_nodes(job.snap.nodes, job.snap.failed_nodes, err))
        logf("job %u: node states unknown (%s): no node failure detection", id, err.c_str());
    return true;
}

void exclude(uint32_t id, const slurmjob::Job &job, const std::vector<std::string> &nodes,
             int wait_s) {
    if (nodes.empty()) return;
    std::string list;
    for (const auto &n : nodes) list += (list.empty() ? "" : ",") + n;
    if (retry("exclude nodes", id, wait_s, [&](std::string &err) {
            return slurmjob::exclude_nodes(id, job.exc_nodes, nodes, err);
        }))
        logf("job %u: excluded failed node(s) %s from its next run", id, list.c_str());
}

bool store(uint32_t id, const ft::JobState &st, int wait_s) {
    const std::string text = ft::state_serialize(st);
    return retry("AdminComment update", id, wait_s, [&](std::string &err) {
        return slurmjob::set_admin_comment(id, text, err);
    });
}

bool store_accounting(uint32_t id, int64_t start, const ft::JobState &st, int wait_s) {
    const std::string text = ft::state_serialize(st);
    return retry("accounting AdminComment update", id, wait_s, [&](std::string &err) {
        return slurmjob::set_accounting_admin_comment(id, start, text, err);
    });
}

// slurmctld starts a job whose BeginTime has passed only at its next scheduling pass, and no
// event triggers one then: backfill skips its pass when nothing changed, the full pass runs
// every sched_interval (60 s). Once the backoff is over, an update of the begin time (to now)
// queues a pass, so the restart follows the backoff within about a second. Only when the job
// still waits for the begin time this hook set; nothing is lost if this never happens.
constexpr time_t kMinRequeueGap = 2;  // seconds between a requeue and the next run's start

void wake_one(uint32_t id, time_t begin) {
    retry("scheduling after the backoff", id, 5, [&](std::string &err) {
        slurmjob::Job j;
        if (!slurmjob::load(id, j, err)) return false;
        if (!j.pending || j.eligible_time != int64_t(begin)) return true;  // started or changed
        return slurmjob::set_begin_time(id, time(nullptr), err);
    });
}

// No process sleeps per job (1,000 requeued array tasks must not leave 1,000 sleepers): the
// wake-up goes into the shared spool directory and at most one hook process serves all of them.
void wake_at_begin(const std::string &dir, uint32_t id, time_t begin) {
    std::string err;
    if (!hook::wake_enqueue(dir, id, begin, err)) {
        logf("job %u: no wake-up at its begin time (%s): it starts at the next scheduling pass", id,
             err.c_str());
        return;
    }
    if (hook::wake_serve(dir, wake_one)) logf("backoff wake-ups in %s all served", dir.c_str());
}

// A finished job accepts no update: requeue first (once it has left COMPLETING, slurmctld
// refuses it before), then set the begin time and store the counters.
bool do_requeue(uint32_t id, const ft::Plan &p, const slurmjob::Job &job, int wait_s,
                const std::string &wake_dir) {
    bool ok = retry("requeue", id, wait_s, [&](std::string &err) {
        slurmjob::Job j;
        if (!slurmjob::load(id, j, err)) return false;
        if (j.pending) return true;  // already back in the queue
        if (j.completing) {
            err = "job still completing";
            return false;
        }
        return slurmjob::requeue(id, err);
    });
    if (!ok) return false;
    // Never in the requeue's own second: slurmd revokes the last run's credential with 1 s
    // resolution, and a run launched in that second is killed ("Job credential revoked").
    const time_t begin = std::max<time_t>(p.begin_at, time(nullptr) + kMinRequeueGap);
    retry("begin time update", id, wait_s, [&](std::string &err) {
        return slurmjob::set_begin_time(id, begin, err);
    });
    exclude(id, job, p.exclude_nodes, wait_s);
    ft::JobState st = p.new_state;
    st.pending.clear();
    if (!store(id, st, wait_s)) return false;
    if (!wake_dir.empty() && begin > time(nullptr)) wake_at_begin(wake_dir, id, begin);
    return true;
}

// --wake-dir, else "ft-hook-wake" next to the last good config, else the built-in state dir.
std::string wake_spool(const Options &o) {
    if (!o.wake_dir.empty()) return o.wake_dir;
    if (!o.last_good.empty())
        return std::filesystem::path(o.last_good).parent_path().string() + "/ft-hook-wake";
    return IDLETIME_DEFAULT_WAKE_DIR;
}

// A preempted run: which quota reclaimed its resources, and the job that took them. The owner
// starts once the victim has left its nodes, within seconds; look for up to wait_s.
// One look: with slurmctld's note, that one job (a single-job load); without, the shared
// snapshot of recently started quota jobs (loaded by at most one hook a second for the whole
// cluster; see preemptor.hpp). Then the pick for this victim.
bool look_for_preemptor(uint32_t id, const slurmjob::Job &job, uint32_t noted, const std::string &snapshot,
                        slurmjob::StartedJob &who, std::string &err) {
    // The whole job table (2,048 running and 1,536 pending at issue 14's scale) holds slurmctld's
    // job read lock while it is packed, and the owners still waiting for their victims need the
    // write lock: with the owner's id one job is enough.
    // (With a note only that job counts, so the table would not name anyone else.)
    err.clear();  // this look's error only
    std::vector<slurmjob::StartedJob> jobs;
    slurmjob::StartedJob one;
    const int64_t since = time(nullptr) - 3600;
    if (noted) {
        slurmjob::Job owner;
        if (!slurmjob::load(noted, owner, err, false)) return false;
        if (owner.snap.job_id == noted && hook::as_started_quota_job(owner, since, one)) jobs.push_back(one);
        return hook::pick_preemptor(jobs, id, job.snap.nodes, job.snap.preempt_time, noted, who);
    }
    std::string text;
    const hook::ProduceFn load = [since](std::string &t, std::string &e) {
        std::vector<slurmjob::Job> all;
        std::vector<slurmjob::StartedJob> quota;
        slurmjob::StartedJob q;
        if (!slurmjob::started_quota_jobs(since, all, e)) return false;
        for (const auto &j : all)
            if (hook::as_started_quota_job(j, since, q)) quota.push_back(std::move(q));
        t = hook::started_jobs_encode(quota);
        return true;
    };
    if (!hook::snapshot_shared(snapshot, hook::kPreemptorSnapshotMs, load, text, err)) return false;
    if (!hook::started_jobs_decode(text, jobs)) {
        err = snapshot + ": malformed";
        return false;
    }
    return hook::pick_preemptor(jobs, id, job.snap.nodes, job.snap.preempt_time, noted, who);
}

// grace_s: the idle-time partitions' GraceTime, which bounds how old slurmctld's note may be.
void name_preemptor(uint32_t id, const slurmjob::Job &job, int wait_s, int64_t grace_s,
                    const std::string &snapshot, ft::Plan &p) {
    if (p.cause.verdict != ft::Verdict::Preempted || p.new_state.history.empty() ||
        job.snap.preempt_time <= 0)
        return;
    const uint32_t noted = victim_note_owner(job.system_comment, job.snap.preempt_time, grace_s);
    slurmjob::StartedJob who;
    std::string err;
    const auto start = std::chrono::steady_clock::now();
    const auto until = start + std::chrono::seconds(wait_s);
    while (!look_for_preemptor(id, job, noted, snapshot, who, err)) {
        if (std::chrono::steady_clock::now() >= until) {
            logf("job %u: no job of a quota partition started on its nodes within %d s%s%s: "
                 "preempting job unknown", id, wait_s, err.empty() ? "" : ": ", err.c_str());
            return;
        }
        // The owner usually starts within a second or two of the requeue, and the run stays held
        // until it is named: look often at first (the snapshot is loaded at most once a second
        // for the whole cluster, however many victims look), then every 2 s.
        poll_pause(start, 10, 500, 2000);
    }
    ft::RunRecord &r = p.new_state.history.back();
    r.by = who.job_id;
    r.quota = who.quota;
    r.reason = "reclaimed by quota " + who.quota + " (job " + std::to_string(who.job_id) + ")";
    if (noted)
        logf("job %u: %s (slurmctld's note)", id, r.reason.c_str());
    else if (job.system_comment.find(kVictimNotePrefix) != std::string::npos)
        logf("job %u: %s (first quota job started on its nodes; its SystemComment note is not of "
             "this preemption at %lld: %s)", id, r.reason.c_str(), (long long)job.snap.preempt_time,
             job.system_comment.c_str());
    else
        logf("job %u: %s (first quota job started on its nodes)", id, r.reason.c_str());
}

// A preempted run goes back to the queue with Slurm's hold (BeginTime = requeue + cred_expire +
// 1 s) although it did nothing wrong: lift it as soon as slurmctld reports the old allocation
// cleaned up on every node (see resume.hpp and notice-and-release.md section 5). Runs detached,
// after slurmctld has the epilog's end; polls one job (one RPC) every 0.25-1 s for up to wait_s.
void resume_preempted(uint32_t id, uint32_t run, int wait_s) {
    int cred = 0;
    std::string err, why;
    if (!slurmjob::cred_expire_s(cred, err)) {
        logf("job %u: credential lifetime unknown (%s): Slurm's requeue hold stays", id, err.c_str());
        return;
    }
    const auto start = std::chrono::steady_clock::now();
    const auto until = start + std::chrono::seconds(wait_s);
    for (int n = 0;; n++) {
        slurmjob::Job j;
        slurmjob::clear_error();
        int64_t answer_ms = 0;
        if (timed_load(id, j, err, answer_ms)) {
            const hook::ResumeView v{j.pending, j.completing, j.snap.restart_cnt, j.submit_time,
                                     j.eligible_time};
            const hook::Resume r = hook::resume_step(v, run, cred, time(nullptr), why);
            if (r == hook::Resume::Leave) {
                if (n == 0) logf("job %u: requeue hold not lifted: %s", id, why.c_str());
                return;
            }
            if (r == hook::Resume::Release) {
                if (slurmjob::set_begin_time(id, time(nullptr), err)) {
                    logf("job %u: preempted run %u requeued; %s: eligible now (Slurm's hold was "
                         "until %lld)", id, run, why.c_str(), (long long)j.eligible_time);
                    return;
                }
                why = "begin time update failed: " + err;
            }
        } else if (slurmjob::last_error_final()) {
            return;  // job gone
        } else {
            why = err;
        }
        if (std::chrono::steady_clock::now() >= until) {
            logf("job %u: requeue hold not lifted within %d s (%s): it starts at Slurm's BeginTime",
                 id, wait_s, why.c_str());
            return;
        }
        poll_pause(start, 10, 250, 1000, answer_ms);
    }
}

// Polls until slurmctld reports the job out of COMPLETING or gone (every 0.25 s for the first
// 5 s, then every second: one job load each); false after wait_s, with a last poll at the
// deadline. With share_path, the pause grows with the hooks polling at the same time, up to 5 s
// (poll_share.hpp: a mass end); the count is read again every second.
bool left_completing(uint32_t id, int wait_s, const std::string &share_path = "") {
    using namespace std::chrono;
    std::string err;
    const auto start = steady_clock::now();
    const auto until = start + seconds(wait_s);
    std::unique_ptr<hook::PollerSlot> slot;
    for (;;) {
        slurmjob::Job j;
        slurmjob::clear_error();
        int64_t answer_ms = 0;
        if (timed_load(id, j, err, answer_ms) ? !j.completing : slurmjob::last_error_final()) return true;
        const auto polled = steady_clock::now();
        if (polled >= until) return false;
        if (!slot && !share_path.empty()) {  // registered only once a first poll did not do
            std::string why;
            slot = std::make_unique<hook::PollerSlot>(share_path, why);
            if (!why.empty()) logf("job %u: shared poll rate: %s (polling at its own rate)", id, why.c_str());
        }
        for (int64_t w = 1; w > 0;) {
            const auto now = steady_clock::now();
            const auto ms = [](auto d) { return int64_t(duration_cast<milliseconds>(d).count()); };
            w = hook::wait_before_poll_ms(ms(now - start), ms(now - polled), ms(until - now),
                                          slot ? slot->pollers() : 1, answer_ms);
            if (w > 0) std::this_thread::sleep_for(milliseconds(std::min<int64_t>(w, 1000)));
        }
    }
}

// slurmctld queues a scheduling pass when the nodes report their epilogs, but none when an
// EpilogSlurmctld ends (22.05: prep_epilog_slurmctld_callback -> cleanup_completing), and this hook
// keeps every job COMPLETING until it has detached. When the nodes answered first, the GPUs a run
// frees waited for backfill's next pass: 8 back-to-back jobs of one quota started 20-30 s apart,
// each by sched/backfill, and an owner's victims 23 s after it ended. So once this job has left
// COMPLETING, an update that changes nothing of one eligible pending job queues the pass that
// schedules every pending job (prefer a victim this job preempted: its GPUs are the ones freed).
// True while the job is still pending as the run this hook judged left it (same restart count):
// a record stored now cannot overwrite that of a later run (a user may set StartTime=now).
bool same_run_pending(uint32_t id, uint32_t restart_cnt) {
    slurmjob::Job j;
    std::string err;
    slurmjob::clear_error();
    return slurmjob::load(id, j, err, false) && j.pending && j.snap.restart_cnt == restart_cnt;
}

void wake_scheduler(uint32_t id, int wait_s, const std::string &wake_dir) {
    std::string err;
    if (!left_completing(id, wait_s, wake_dir + ".pollers"))
        return logf("job %u: still completing after %d s: no scheduling pass queued for it", id, wait_s);
    using namespace std::chrono;
    const int64_t done_ms = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
    hook::PassGate gate;
    gate.stamp_path = wake_dir + ".pass";  // next to the spool: one gate for the cluster
    const bool mine = hook::pass_gate_enter(gate, done_ms, err);
    if (!err.empty()) logf("job %u: pass gate: %s (queueing the pass anyway)", id, err.c_str());
    if (!mine) return;  // a pass started after this job left COMPLETING covers it
    err.clear();
    std::vector<slurmjob::Job> pending;
    if (!slurmjob::pending_jobs(pending, err)) {
        logf("job %u: cannot list pending jobs (%s): they start at the next scheduling pass", id,
             err.c_str());
        return;
    }
    const time_t now = time(nullptr);
    const slurmjob::Job *pick = nullptr;
    for (const auto &v : pending) {
        if (v.completing || v.eligible_time > now || v.array_meta) continue;  // R6: no array-wide update
        ft::JobState st;
        const bool victim = !v.snap.admin_comment.empty() &&
                            ft::state_parse(v.snap.admin_comment, st, err) &&
                            !st.history.empty() && st.history.back().by == id;
        if (!pick || victim) pick = &v;
        if (victim) break;
    }
    if (!pick) return;
    if (slurmjob::queue_pass(pick->snap.job_id, err))
        logf("job %u: ended; scheduling pass queued (through pending job %u)", id, pick->snap.job_id);
    else
        logf("job %u: scheduling pass not queued (%s): pending jobs start at the next pass", id,
             err.c_str());
}

int run(const Options &o, slurmjob::Job &job) {
    std::vector<std::string> parts;  // the partitions the config renders; empty = unknown
    IdleSettings idle;  // defaults when no config loads
    const FtSettings site = site_settings(o.config, o.last_good, parts, idle);
    job.snap.notice_signal = signal_number(idle.checkpoint_signal);
    // job_submit's warn_time is GraceTime; Slurm checks for warnings every 30 s, and may be late.
    job.snap.notice_window_s = int64_t(idle.grace_time_s) + 60;
    job.snap.managed_partition =
        parts.empty() || std::find(parts.begin(), parts.end(), job.partition) != parts.end();
    ft::Plan p = ft::judge(site, job.snap, time(nullptr));
    for (const auto &n : p.notes) logf("job %u: %s", o.job_id, n.c_str());
    if (p.op == ft::Op::Nothing) return 0;
    logf("job %u run %u: %s -> %s (%s); preemptions=%u failures=%u node_failures=%u", o.job_id,
         ft::ended_run(job.snap), p.cause.reason.c_str(), ft::op_str(p.op),
         p.decision.reason.c_str(), p.new_state.counters.preemptions,
         p.new_state.counters.failures, p.new_state.counters.node_failures);
    const bool resumes = p.op == ft::Op::Record && job.snap.requeued &&
                         p.cause.verdict == ft::Verdict::Preempted && !o.foreground;
    // slurmctld queues a scheduling pass after every successful job update but none when an
    // EpilogSlurmctld ends: when this hook ends after the nodes' epilogs, the owner that reclaimed
    // the GPUs would wait for the next periodic pass (measured 9 s, up to 30 s). Once the run has
    // left COMPLETING, store its record now (the preemptor is named below, once the owner runs):
    // that update queues the pass. The run stays held by Slurm until resume_preempted.
    if (resumes && left_completing(o.job_id, o.wait_s)) store(o.job_id, p.new_state, o.wait_s);
    // A victim stays held until its owner runs (no start-and-preempt loop): the owner starts at the
    // latest GraceTime after the notice. Below Slurm's requeue hold (cred_expire + 1 s, 121 s by
    // default), so that no later run has started meanwhile; 30 s when a requeue or cancel waits.
    const int grace_wait = int(std::min<uint32_t>(idle.grace_time_s, 3600)) + 10;
    name_preemptor(o.job_id, job, o.foreground ? 5 : resumes ? std::clamp(grace_wait, 30, 110) : 30,
                   idle.grace_time_s, wake_spool(o) + ".started", p);
    if (resumes && !same_run_pending(o.job_id, job.snap.restart_cnt)) {
        logf("job %u: run %u started (or ended) before its preemptor was named: the record stored "
             "at its end stays", o.job_id, job.snap.restart_cnt);
        return 0;
    }
    bool ok = true;
    switch (p.op) {
    case ft::Op::Requeue:
        ok = do_requeue(o.job_id, p, job, o.wait_s, o.foreground ? std::string() : wake_spool(o));
        break;
    case ft::Op::Record:
        if (job.snap.requeued) exclude(o.job_id, job, p.exclude_nodes, o.wait_s);
        ok = job.snap.requeued ? store(o.job_id, p.new_state, o.wait_s)
                               : store_accounting(o.job_id, job.snap.start_time, p.new_state,
                                                  o.accounting_s);
        break;
    case ft::Op::Cancel:
        ok = store(o.job_id, p.new_state, o.wait_s) &&
             retry("cancel", o.job_id, o.wait_s,
                   [&](std::string &err) { return slurmjob::cancel(o.job_id, err); });
        break;
    case ft::Op::Nothing:
        break;
    }
    // A preempted run resumes as soon as its old allocation is gone, not after Slurm's hold; only
    // once its counters, history and excluded nodes are stored, which the next run's end reads.
    // Not in the foreground: this process is the epilog that keeps the job COMPLETING.
    if (ok && resumes) resume_preempted(o.job_id, job.snap.restart_cnt, o.wait_s);
    return ok ? 0 : 1;
}

// The journal of hooks in flight (journal.hpp): next to the wake spool, like its .pass and .started.
std::string journal_dir(const Options &o) { return wake_spool(o) + ".jobs"; }

// Before detaching: an entry that outlives this process if it is killed (security.md R5), with
// what the snapshot saw at the job's end that slurmctld's record will not show later.
void journal_start(const Options &o, const slurmjob::Job &job, bool have, hook::JournalEntry &entry) {
    hook::InFlight e;
    e.job = o.job_id;
    const char *rc = getenv("SLURM_JOB_RESTART_COUNT");
    uint32_t env_run = 0;
    e.restart_cnt = have ? job.snap.restart_cnt : rc && hook::parse_u32(rc, env_run) ? env_run : 0;
    e.written = time(nullptr);
    e.snapshot = have;
    e.requeued = have && job.snap.requeued;
    e.submit_time = have ? job.submit_time : 0;
    if (have) {
        e.nodes = job.snap.nodes;
        e.failed_nodes = job.snap.failed_nodes;
    }
    e.overrides = env_overrides();
    std::string err;
    if (!hook::journal_begin(journal_dir(o), e, entry, err))
        logf("job %u: no journal entry (%s): if this hook is stopped mid-way, no other finishes its work",
             o.job_id, err.c_str());
}

// The work a stopped hook left: judged again from slurmctld's record (a finished job's is stable)
// with the node states and options of the hook's snapshot. Later while the job is completing or
// slurmctld does not answer; a job slurmctld no longer knows (MinJobAge) is dropped.
hook::Orphan recover_one(const Options &base, const hook::InFlight &e) {
    Options o = base;
    o.job_id = e.job;
    o.wait_s = 60;
    slurmjob::Job job;
    std::string err;
    slurmjob::clear_error();
    if (!slurmjob::load(e.job, job, err)) {
        const bool gone = slurmjob::last_error_final();
        logf("job %u: its hook stopped before it had finished; the job cannot be loaded (%s): %s", e.job,
             err.c_str(), gone ? "nothing recovered (slurmctld keeps an ended job MinJobAge seconds)" : "left for a later hook");
        return gone ? hook::Orphan::Drop : hook::Orphan::Later;
    }
    if (job.completing) {
        logf("job %u: its hook stopped before it had finished; the job is still completing: left for a later hook", e.job);
        return hook::Orphan::Later;
    }
    hook::JobNow now;
    now.pending = job.pending;
    now.ended = !job.pending && job.snap.end != ft::JobEnd::Other && !job.snap.requeued;
    now.restart_cnt = job.snap.restart_cnt;
    now.submit_time = job.submit_time;
    const std::string why = hook::not_recoverable(e, now);
    if (!why.empty()) {
        logf("job %u: its hook stopped before it had finished; %s", e.job, why.c_str());
        return hook::Orphan::Drop;
    }
    logf("job %u: finishing the work its hook left when it was stopped (slurmctld restarted under it?)", e.job);
    job.snap.env_overrides = e.overrides;
    if (job.snap.nodes.empty()) job.snap.nodes = e.nodes;
    if (e.snapshot) job.snap.failed_nodes = e.failed_nodes;
    else if (!slurmjob::failed_nodes(job.snap.nodes, job.snap.failed_nodes, err))
        logf("job %u: node states unknown (%s): no node failure detection", e.job, err.c_str());
    retention::run_for_job(o.config, o.job_id, job.user_id, [](const std::string &m) { logf("%s", m.c_str()); });
    run(o, job);
    return hook::Orphan::Done;
}

// At most max entries of stopped hooks, oldest first; entries older than a day are dropped.
size_t recover_orphans(const Options &o, size_t max) {
    const std::string dir = journal_dir(o);
    return hook::journal_orphans(
        dir, max, 86400, time(nullptr),
        [&](const hook::InFlight &e) {
            try {
                return recover_one(o, e);
            } catch (const std::exception &x) {
                logf("job %u: recovering its stopped hook's work failed: %s: entry dropped", e.job, x.what());
                return hook::Orphan::Drop;
            }
        },
        [&](const std::string &name, const std::string &why) {
            logf("journal %s/%s: %s", dir.c_str(), name.c_str(), why.c_str());
        });
}

}  // namespace

int main(int argc, char **argv) {
    Options o;
    if (!hook::parse_args(argc, argv, o)) return cmdline::kExitUsage;
    if (!o.log.empty()) g_log = fopen(o.log.c_str(), "a");
    if (!g_log) openlog("idletime-ft-hook", LOG_PID, LOG_DAEMON);
    // slurm_init() exits the process (Slurm's fatal()) when it cannot read slurm.conf: say why
    // first, in our own log, rather than leave slurmctld's "EpilogSlurmctld exit status 1" alone.
    const char *conf = std::getenv("SLURM_CONF");
    if (conf && *conf && access(conf, R_OK) != 0) {
        logf("job %u: cannot read SLURM_CONF=%s (%s): nothing decided", o.job_id, conf, std::strerror(errno));
        return 1;
    }
    if (o.recover) {  // the journal first: its errors say more than slurm.conf's
        std::string err;
        const int dfd = hook::journal_dir_open(journal_dir(o), err);
        if (dfd < 0) {
            fprintf(stderr, "%s: %s\n", kProg, err.c_str());
            return 1;
        }
        close(dfd);
    }
    slurmjob::init();
    if (o.recover) {
        try {
            const size_t n = recover_orphans(o, SIZE_MAX);
            printf("%s: %zu stopped hook(s) recovered from %s\n", kProg, n, journal_dir(o).c_str());
            return 0;
        } catch (const std::exception &e) {
            logf("recover: internal error: %s", e.what());
            return 1;
        }
    }
    hook::JournalEntry entry;
    struct EndEntry {
        hook::JournalEntry &e;
        ~EndEntry() { hook::journal_end(e); }
    } end_entry{entry};
    try {
        slurmjob::Job job;
        const bool have = snapshot(o.job_id, o.snapshot_s, job);
        if (!o.foreground) {
            journal_start(o, job, have, entry);
            hook::detach();
        }
        if (!have && !snapshot(o.job_id, o.wait_s, job)) return 1;
        job.snap.env_overrides = env_overrides();
        // Checkpoint directories of ended jobs (the job's owner as slurmctld reports it).
        retention::run_for_job(o.config, o.job_id, job.user_id, [](const std::string &m) { logf("%s", m.c_str()); });
        const int rc = run(o, job);
        // A run that ended for good freed its resources: pending jobs may start now.
        if (!o.foreground && !job.snap.requeued) wake_scheduler(o.job_id, 60, wake_spool(o));
        hook::journal_end(entry);
        // Then the work of hooks that were stopped mid-way (a few: this process is one job's).
        if (!o.foreground) recover_orphans(o, 4);
        return rc;
    } catch (const std::exception &e) {
        logf("job %u: internal error: %s", o.job_id, e.what());
        return 1;
    }
}
