// Fault-tolerance decision core: pure functions, no Slurm, no I/O, time passed in.
// Units: seconds; times are Unix epoch seconds (int64_t). Exit statuses are shell-style 0-255
// (128+N = killed by signal N). See doc/design/fault-tolerance.md for the whole state machine.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ft_settings.hpp"

namespace idletime {

// Rejects settings that cannot work: an invalid regular expression, an exit code outside 1-255
// or in both lists, backoff_factor < 1, backoff_max < backoff_initial. err: one line naming the
// field, what is wrong and what is allowed. Called by the config loader before a config is used.
bool ft_validate(const FtSettings &s, std::string &err);

namespace ft {

const char *policy_str(FtPolicy p);
const char *run_type_str(RunType r);
bool parse_policy(const std::string &text, FtPolicy &out);
bool parse_run_type(const std::string &text, RunType &out);

// Per-job overrides (SPANK options / agent flags). Keys: max_restarts, max_preemptions,
// ft_policy, hang_timeout, run_type, requeue_at_time_limit (yes|no). Values as text; counts are decimal 0..1000000.
// On error returns false, leaves s untouched and names the key and the allowed values in err.
bool apply_overrides(FtSettings &s, const std::map<std::string, std::string> &kv,
                     std::string &err);

// "SIGKILL" for 9, "" for numbers without a well-known name.
std::string signal_name(int signo);

// ---- Exit classification ----
// NodeFailure: a node of the job failed; retried like a preemption (never the job's fault).
// TimeLimit: the run reached its time limit; requeued only with requeue_at_time_limit.
enum class Verdict { Success, Retryable, Permanent, Preempted, NodeFailure, TimeLimit };
const char *verdict_str(Verdict v);

struct ExitInfo {
    int exit_code = 0;        // 0-255 as the shell reports it
    int signal = 0;           // killing signal, 0 = exited normally (then exit_code counts)
    bool preempted = false;   // Slurm picked this run as a preemption victim
    bool hung = false;        // the agent stopped it because it was silent
    uint32_t silent_s = 0;    // how long it was silent (reason text only)
    bool node_fail = false;   // a node of the job failed
    bool cancelled = false;   // scancel by the user or an admin: never restarted
    bool timeout = false;     // hit its time limit: never restarted
    std::vector<std::string> output_lines;  // candidate lines the agent matched
};

struct Classification {
    Verdict verdict = Verdict::Success;
    std::string reason;  // e.g. "exit code 137 (SIGKILL)"
    std::string kind;    // short tag stored in history: ok, exit, sig, hung, node, preempt, ...
};

// Compiled patterns of one FtSettings. Construct only from validated settings (a pattern that
// fails to compile is skipped).
class Matcher {
public:
    explicit Matcher(const FtSettings &s);
    ~Matcher();
    Matcher(const Matcher &) = delete;
    Matcher &operator=(const Matcher &) = delete;
    // Index into permanent_patterns / retryable_patterns of the first match, or -1.
    int permanent(const std::string &line) const;
    int retryable(const std::string &line) const;
    bool any(const std::string &line) const { return permanent(line) >= 0 || retryable(line) >= 0; }

private:
    struct Impl;
    Impl *impl_;
};

Classification classify(const FtSettings &s, const Matcher &m, const ExitInfo &e);

// ---- Restart decision ----
struct Counters {
    uint32_t preemptions = 0;
    uint32_t failures = 0;  // failure restarts done (the budget max_restarts limits)
    uint32_t node_failures = 0;  // restarts after node failures (capped by kMaxNodeFailures)
    uint32_t time_limits = 0;    // requeues at the time limit (--requeue-at-time-limit); they
                                 // share the max_restarts budget with failures
};
// A job that loses this many nodes is probably what breaks them: it fails then.
// Counters saturate at UINT32_MAX instead of wrapping (a forged report's "w" cannot reset them).
constexpr uint32_t sat_add(uint32_t a, uint32_t b) { return a > UINT32_MAX - b ? UINT32_MAX : a + b; }
constexpr uint32_t kMaxNodeFailures = 10;

enum class Action { Complete, Restart, Fail };
const char *action_str(Action a);

struct Decision {
    Action action = Action::Complete;
    uint32_t delay_s = 0;  // wait before the restart (failures only; preemptions restart at once)
    std::string reason;    // e.g. "max restarts exceeded (last cause: exit code 137 (SIGKILL))"
    Counters after;        // counters to store with the job
};

// Delay before failure restart number n (1-based): initial * factor^(n-1), capped at max.
uint32_t backoff_s(const FtSettings &s, uint32_t n);

Decision decide(const FtSettings &s, const Counters &c, const Classification &cl);

// ---- Hang detection ----
struct Heartbeat {
    uint64_t step = 0;
    int64_t time = 0;
    bool saving = false;
};
// Parses "<step> <unix_time> <saving 0|1>" (trailing newline allowed). False on anything else.
bool parse_heartbeat(const std::string &text, Heartbeat &out);

struct Activity {
    int64_t started = 0;         // when the workers were launched
    int64_t last_output = 0;     // last byte on stdout/stderr, 0 = none yet
    int64_t last_heartbeat = 0;  // last time the heartbeat file changed, 0 = none yet
    bool saving = false;         // the heartbeat says a checkpoint is being written
};

struct HangCheck {
    bool hung = false;
    int64_t silent_s = 0;   // seconds since the last sign of life
    int64_t next_check = 0; // earliest time the answer can change (0 = never, detection off)
};

// timeout_s 0 disables detection. A saving job is never hung.
HangCheck hang_check(uint32_t timeout_s, const Activity &a, int64_t now);

// ---- Durable per-job state (the job's AdminComment) ----
struct RunRecord {
    uint32_t run = 0;       // Slurm restart count of the run (0 = first run)
    std::string kind;       // Classification::kind
    std::string reason;     // Classification::reason (truncated)
    std::string action;     // action_str of the decision
    int64_t ended = 0;
    int64_t ckpt = 0;       // newest durable checkpoint when the run ended (Comment
                            // "idletime:ckpt=<t>"): the next run resumes from it; 0 = none
    uint32_t by = 0;        // preemptions: the job that took the resources (0 = unknown)
    std::string quota{};    // preemptions: the quota that reclaimed them ("" = unknown)
};

struct JobState {
    std::string mode;           // requested --idle-resources (job_submit stamps it at submission)
    Counters counters;
    int64_t judged_start = -1;  // start time of the last run already decided, -1 = none
    std::string pending;        // "requeue" while a decided requeue is not yet confirmed
    int64_t begin_at = 0;       // begin time for the pending requeue
    std::string final_reason;   // why the job was not restarted (Fail), else empty
    std::vector<RunRecord> history;  // newest last, at most kMaxHistory
};
constexpr size_t kMaxHistory = 8;
constexpr size_t kMaxReason = 120;
constexpr const char *kStatePrefix = "idletime-ft:";

// Compact text "idletime-ft:{json}" (under ~1.5 KB).
std::string state_serialize(const JobState &st);
// Empty text -> empty state, true. Garbage -> empty state, false, err says why. Never throws.
bool state_parse(const std::string &text, JobState &out, std::string &err);
// Appends a run record, trimming history and reason length.
// run: Slurm restart count; start: the run's start time (the key that makes judging idempotent).
void state_record(JobState &st, uint32_t run, int64_t start, const Classification &cl,
                  const Decision &d, int64_t now);

// ---- Agent report (the job's Comment, written by idletime-run as the job's user) ----
struct AgentReport {
    uint32_t run = 0;             // SLURM_RESTART_COUNT of the run that wrote it
    bool hung = false;
    uint32_t silent_s = 0;
    int exit_code = 0;            // status the agent exited with
    uint32_t worker_restarts = 0; // async restarts done inside the allocation (use the budget)
    std::vector<std::string> lines;  // matched output lines (at most kMaxLines)
    std::map<std::string, std::string> overrides;  // apply_overrides keys the job ran with
};
constexpr size_t kMaxLines = 4;
constexpr size_t kMaxLine = 160;
constexpr const char *kReportPrefix = "idletime-run:";

std::string report_serialize(const AgentReport &r);
bool report_parse(const std::string &text, AgentReport &out, std::string &err);

}  // namespace ft
}  // namespace idletime
