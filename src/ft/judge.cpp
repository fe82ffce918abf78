// The hook's decision for one ended run: snapshot in, plan out. Pure.
#include "ft/judge.hpp"

#include <sys/wait.h>

#include <charconv>
#include <cstring>

namespace idletime::ft {

const char *op_str(Op o) {
    switch (o) {
    case Op::Nothing: return "nothing";
    case Op::Record: return "record";
    case Op::Requeue: return "requeue";
    case Op::Cancel: return "cancel";
    }
    return "?";
}

uint32_t ended_run(const JobSnapshot &j) {
    return j.requeued && j.restart_cnt > 0 ? j.restart_cnt - 1 : j.restart_cnt;
}

namespace {

// The agent's report for this very run, if the Comment holds one.
bool take_report(const JobSnapshot &j, AgentReport &rep, std::vector<std::string> &notes) {
    if (j.comment.rfind(kReportPrefix, 0) != 0) return false;
    std::string err;
    if (!report_parse(j.comment, rep, err)) {
        notes.push_back("agent report ignored: " + err);
        return false;
    }
    if (rep.run != ended_run(j)) {
        notes.push_back("agent report of run " + std::to_string(rep.run) + " ignored (this is run " +
                        std::to_string(ended_run(j)) + ")");
        return false;
    }
    return true;
}

// Newest durable checkpoint the job published in its Comment ("idletime:ckpt=<unix time>",
// written by libidletime-ckpt, see src/sched/comment.cpp); 0 when there is none.
int64_t published_checkpoint(const std::string &comment) {
    static constexpr std::string_view tok = "idletime:ckpt=";
    for (size_t pos = comment.find(tok); pos != std::string::npos; pos = comment.find(tok, pos + 1)) {
        if (pos > 0 && !std::strchr(" \t,;\n", comment[pos - 1])) continue;
        const char *b = comment.data() + pos + tok.size(), *e = comment.data() + comment.size();
        int64_t t = 0;
        auto r = std::from_chars(b, e, t);
        if (r.ec == std::errc{} && r.ptr != b && (r.ptr == e || std::strchr(" \t,;\n", *r.ptr)) && t > 0)
            return t;
    }
    return 0;
}

// A job may ask for fewer failure restarts than the site's max_restarts, never more.
void cap_to_site(const FtSettings &site, FtSettings &s, std::vector<std::string> &notes) {
    if (s.max_restarts <= site.max_restarts) return;
    notes.push_back("max_restarts " + std::to_string(s.max_restarts) + " asked by the job is above the site's " +
                    "limit " + std::to_string(site.max_restarts) + ": using " + std::to_string(site.max_restarts));
    s.max_restarts = site.max_restarts;
}

bool was_preempted(const JobSnapshot &j) {
    if (j.end == JobEnd::Completed && j.wait_status == 0) return false;  // finished in grace time
    if (j.end == JobEnd::Preempted) return true;
    // A requeued (pending) job reports its expected start, not the run's, and Slurm clears
    // preempt_time when it requeues: one still set belongs to the run that ended.
    if (j.requeued) return j.preempt_time > 0;
    return j.preempt_time > 0 && j.preempt_time >= j.start_time;
}

// Killed by the notice signal (or a shell's 128+N for it) within the warning window before its
// time limit: Slurm's time-limit warning, which job_submit sets to the same signal as the
// preemption notice. Such a run reached its limit; retrying it would bypass the limit.
static bool died_of_time_limit_warning(const JobSnapshot &j, const ExitInfo &e) {
    if (j.notice_signal <= 0 || j.time_limit_s <= 0 || j.end_time <= 0 || j.start_time <= 0) return false;
    const bool by_notice = e.signal == j.notice_signal || (e.signal == 0 && e.exit_code == 128 + j.notice_signal);
    return by_notice && j.end_time >= j.start_time + j.time_limit_s - j.notice_window_s;
}

ExitInfo exit_info(const JobSnapshot &j, const AgentReport *rep) {
    ExitInfo e;
    e.preempted = was_preempted(j);
    e.cancelled = j.end == JobEnd::Cancelled;
    e.timeout = j.end == JobEnd::Timeout;
    // Slurm requeues a batch job whose node failed before the hook sees it (state PENDING):
    // then a node of the run being down is the sign.
    e.node_fail = !e.preempted && (j.end == JobEnd::NodeFail ||
                                   (j.requeued && (j.node_requeue || !j.failed_nodes.empty())));
    if (WIFSIGNALED(j.wait_status)) e.signal = WTERMSIG(j.wait_status);
    else e.exit_code = WEXITSTATUS(j.wait_status);
    if (!e.preempted && died_of_time_limit_warning(j, e)) e.timeout = true;
    if (rep) {
        e.hung = rep->hung;
        e.silent_s = rep->silent_s;
        e.output_lines = rep->lines;
    }
    return e;
}

std::vector<std::string> to_exclude(const JobSnapshot &j) {
    std::vector<std::string> out;
    // Which node failed is unknown when it is back already: avoid all nodes of the run.
    const auto &bad = j.failed_nodes.empty() && j.node_requeue ? j.nodes : j.failed_nodes;
    for (const auto &n : bad) {
        bool required = false, ran = j.nodes.empty();
        for (const auto &r : j.required_nodes) required = required || r == n;
        for (const auto &r : j.nodes) ran = ran || r == n;
        if (!required && ran) out.push_back(n);
    }
    return out;
}

void settle(Plan &p, const JobSnapshot &j, int64_t now) {
    switch (p.decision.action) {
    case Action::Complete:
        p.op = Op::Record;
        break;
    case Action::Restart:
        if (j.requeued) {
            p.op = Op::Record;  // Slurm requeued it already (preemption, node failure)
            break;
        }
        p.op = Op::Requeue;
        p.begin_at = now + p.decision.delay_s;
        p.new_state.pending = "requeue";
        p.new_state.begin_at = p.begin_at;
        break;
    case Action::Fail:
        p.op = j.requeued ? Op::Cancel : Op::Record;
        break;
    }
}

}  // namespace

Plan judge(const FtSettings &site, const JobSnapshot &j, int64_t now) {
    Plan p;
    if (j.end == JobEnd::Other) {
        p.notes.push_back("job has not ended (still running or in an unknown state): nothing to do");
        return p;
    }
    if (!j.managed_partition && j.env_overrides.empty() && j.admin_comment.rfind(kStatePrefix, 0) != 0) {
        p.notes.push_back("not an idletime job (a site partition, no idletime options or state): left to Slurm");
        return p;
    }
    std::string err;
    JobState st;
    if (!state_parse(j.admin_comment, st, err))
        p.notes.push_back("AdminComment is not idletime state (" + err + "): counters start at 0");
    // The run's key: its start time; for a requeued job (start time not reported) its number.
    const int64_t key = j.start_time > 0 && !j.requeued ? j.start_time : int64_t(ended_run(j));
    if (st.judged_start == key) {
        p.notes.push_back("run " + std::to_string(j.restart_cnt) + " was judged already");
        return p;
    }
    FtSettings s = site;
    if (!apply_overrides(s, j.env_overrides, err)) p.notes.push_back("job options ignored: " + err);
    AgentReport rep;
    const bool have = take_report(j, rep, p.notes);
    if (have && !apply_overrides(s, rep.overrides, err))
        p.notes.push_back("agent settings ignored: " + err);
    cap_to_site(site, s, p.notes);
    ExitInfo e = exit_info(j, have ? &rep : nullptr);
    Counters c = st.counters;
    if (have) c.failures = sat_add(c.failures, rep.worker_restarts);  // async restarts in the allocation
    Matcher m(s);
    if (j.end == JobEnd::OutOfMemory)
        p.cause = Classification{Verdict::Permanent, "out of memory (OOM killer)", "oom"};
    else if (j.requeued && !e.preempted && !e.node_fail)
        p.cause = Classification{Verdict::Success, "requeued by its owner or an admin", "requeue"};
    else
        p.cause = classify(s, m, e);
    p.decision = decide(s, c, p.cause);
    if (p.cause.kind == "requeue") p.decision.reason = p.cause.reason;
    state_record(st, ended_run(j), key, p.cause, p.decision, now);
    st.history.back().ckpt = published_checkpoint(j.comment);  // what the next run resumes from
    p.new_state = st;
    settle(p, j, now);
    if (p.cause.verdict == Verdict::NodeFailure && p.decision.action == Action::Restart)
        p.exclude_nodes = to_exclude(j);
    return p;
}

}  // namespace idletime::ft
