// The note preempt/idletime leaves in a victim's SystemComment when Slurm picks it for a
// guaranteed job, and its reading by idletime-ft-hook: which job the victim was preempted for.
// Only slurmctld writes a job's SystemComment (no scontrol update or submit option sets it), so
// the hook may trust it as slurmctld's word. One line, kept last: "idletime: preempted at <unix
// time> for job <id>". Slurm-free and I/O-free.
#pragma once
#include <cstdint>
#include <string>

namespace idletime {

constexpr const char *kVictimNotePrefix = "idletime: preempted at ";
// The note is written only while the SystemComment, without earlier notes, is at most this long
// (Slurm's burst buffer plugins keep theirs under 1,024 characters too).
constexpr size_t kVictimNoteMaxOld = 900;

// old with any earlier note removed and the note for (owner, at) appended on its own line.
// Returns false (out untouched) when owner is 0 or the remaining text is over kVictimNoteMaxOld.
bool victim_note_replace(const std::string &old, uint32_t owner, int64_t at, std::string &out);

// The job a victim was preempted for, from its SystemComment: the note's job when its time lies
// within grace_s + 2 s before preempt_time and 2 s after it (Slurm sets preempt_time right after
// it asks for the grace time, and again when GraceTime runs out; the job's start_time is no
// bound: Slurm changes it once the run is requeued). 0 when there is no note, more than one (the
// plugin keeps exactly one: another line that looks like one is not slurmctld's), it is
// malformed, or it is older (an earlier preemption's).
uint32_t victim_note_owner(const std::string &system_comment, int64_t preempt_time, int64_t grace_s);

}  // namespace idletime
