// The hook's in-flight journal (security.md R5). The detached part of idletime-ft-hook can be
// killed before it has finished: `systemctl restart slurmctld` stops every process of the unit's
// cgroup, and the detached hooks are in it. A job whose failed run was to be requeued then stayed
// FAILED. So before it detaches, each hook leaves one entry per job in a journal directory,
// locked (flock) for as long as some process works on it, and removes it when done. An entry
// whose lock can be taken belongs to a hook that died: the next hook (any job's end) or
// `idletime-ft-hook --recover` finishes its work. Entries hold what the hook's snapshot at the
// job's end saw that slurmctld's record no longer shows (node states, per-job options).
#pragma once
#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace idletime::hook {

struct InFlight {
    uint32_t job = 0;
    uint32_t restart_cnt = 0;  // Slurm's restart count when the run ended (the hook's snapshot)
    int64_t written = 0;       // when the entry was written (epoch seconds)
    bool snapshot = false;     // the fields below come from a snapshot taken at the job's end
    bool requeued = false;     // Slurm had put the job back to PENDING (preemption, node failure)
    int64_t submit_time = 0;   // the job's submit time then (a reused job id has another)
    std::vector<std::string> nodes, failed_nodes;  // the run's nodes, those failed at its end
    std::map<std::string, std::string> overrides;  // per-job options from the epilog environment
};

// One entry being worked on: its lock lives in the open file, which a fork inherits.
struct JournalEntry {
    std::string path;
    int fd = -1;
};

// Opens dir, creating it (mode 0700) if needed: it must be a directory, not a symlink, owned by
// this process's user and closed to others (mode 0700). Returns an O_DIRECTORY descriptor or -1
// with err.
int journal_dir_open(const std::string &dir, std::string &err);

// Writes the entry for e.job, locked, atomically (a temporary file renamed into place: a reader
// sees a whole, locked entry or none). A previous entry of the same job is replaced. false with err.
bool journal_begin(const std::string &dir, const InFlight &e, JournalEntry &out, std::string &err);
// The work is done: removes the entry if it is still this one, then releases the lock. Safe on
// an empty JournalEntry.
void journal_end(JournalEntry &e);

// What became of an orphan handed over: Done (recovered) and Drop (nothing to recover) remove
// it; Later keeps it for a later sweep (e.g. the job is still completing).
enum class Orphan { Done, Drop, Later };
// Why an entry was removed without being handed to the caller.
using DropFn = std::function<void(const std::string &name, const std::string &why)>;
// Entries whose writer is gone (their lock is free), oldest first, at most max of them: for each,
// takes its lock, calls fn, and removes it unless fn says Later (and unless a newer entry of the
// same job has replaced it meanwhile). Entries older than max_age_s, malformed ones and anything
// that is not a regular file are removed and reported to drop (directories are left alone);
// temporary files of dead writers older than max_age_s are removed. Returns how many fn reported
// Done.
size_t journal_orphans(const std::string &dir, size_t max, int64_t max_age_s, time_t now,
                       const std::function<Orphan(const InFlight &)> &fn, const DropFn &drop);

// What slurmctld's record says of an entry's job when it is recovered.
struct JobNow {
    bool pending = false;       // PENDING (or requeued and waiting)
    bool ended = false;         // ended, not requeued, with an end the ft core can judge
    uint32_t restart_cnt = 0;
    int64_t submit_time = 0;
};
// Why a stopped hook's job is not judged again, or "" when it is to be: it has ended, in the same
// run the hook saw (same restart count), as the same job (its id not handed to a new job: the
// snapshot's submit time, or without a snapshot submitted no later than the entry was written),
// and Slurm had not requeued it.
std::string not_recoverable(const InFlight &e, const JobNow &now);

// Text of an entry and back (one JSON object). Decode is strict: false with err for anything else.
std::string journal_encode(const InFlight &e);
bool journal_decode(const std::string &text, InFlight &e, std::string &err);

}  // namespace idletime::hook
