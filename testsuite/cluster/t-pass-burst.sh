#!/bin/bash
# A burst of job ends queues few scheduling passes (doc/security.md R1). bob's guaranteed job
# keeps pending behind another of his (quota team-b full); then 8 tasks of carol's array end
# within about a second. Every ending job's idletime-ft-hook used to queue its own pass (an
# empty update of the pending job, plus a full job-table load): 8 passes. The hooks now share a
# gate: a pass only when none started after that job left COMPLETING, at most one a second.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
hog=$(it_submit bob -J burst-hog --quota=team-b -w a100-1 --gres=gpu:a100:4 "$IT_JOBS_DIR/sleep.sh" 120) || it_fail "sbatch hog"
it_wait_state "$hog" RUNNING 60 || it_fail "hog $hog did not start"
waiting=$(it_submit bob -J burst-waiting --quota=team-b -w a100-1 --gres=gpu:a100:4 "$IT_JOBS_DIR/sleep.sh" 1) || it_fail "sbatch"
it_wait_state "$waiting" PENDING 10 || it_fail "job $waiting should pend behind $hog"
arr=$(it_submit carol -J burst --quota=team-c --gres=gpu:a100:1 --array=1-8 "$IT_JOBS_DIR/sleep.sh" 2) || it_fail "sbatch array"
mapfile -t tasks < <(ic_poll 60 bash -c "[ \$(scontrol -o show job $arr | grep -c JobState=COMPLETED) = 8 ] && \
	scontrol -o show job $arr | grep -o '^JobId=[0-9]*' | cut -d= -f2")
[ ${#tasks[@]} = 8 ] || it_fail "the 8 array tasks did not all complete: $(scontrol -o show job "$arr" | grep -o 'JobState=[A-Z]*' | sort | uniq -c | tr '\n' ' ')"
log=$IC_LOGD/ft-hook.log
# Each hook logs its pass; let the slowest finish (it leaves COMPLETING, then at most 1 s).
sleep 4
passes=0
for t in "${tasks[@]}"; do grep -q "job $t: ended; scheduling pass queued" "$log" && passes=$((passes + 1)); done
it_info "8 job ends: $passes scheduling passes queued"
[ "$passes" -ge 1 ] || it_fail "no scheduling pass queued for 8 job ends ($(grep -E "job ($(IFS='|'; echo "${tasks[*]}")):" "$log" | tail -n3 | tr '\n' '|'))"
[ "$passes" -le 4 ] || it_fail "$passes scheduling passes for 8 job ends within seconds (at most 4 expected: one a second)"
it_assert_eq PENDING "$(it_job_field "$waiting" JobState)" "the waiting job's state (quota still full)"
# Hooks that waited for COMPLETING to clear shared one poll rate (poll_share.hpp): each listed
# its PID in the file next to the wake spool while it waited, and took it out when done.
pollers=$IC_SPOOL/ft-hook-wake.pollers
if [ -e "$pollers" ] || [ -L "$pollers" ]; then
	if [ -L "$pollers" ] || [ ! -f "$pollers" ]; then it_fail "$pollers is not a regular file"; fi
	it_assert_eq 600 "$(stat -c %a "$pollers")" "mode of $pollers"
	ic_poll 30 bash -c "! grep -q '[0-9]' '$pollers'" >/dev/null ||
		it_fail "hooks still listed in $pollers 30 s after the burst: $(tr '\n' ' ' <"$pollers")"
	it_info "poll share file: $(stat -c '%s bytes' "$pollers"), no hook listed"
fi
! grep -q "shared poll rate:" "$log" || it_fail "a hook could not use the shared poll rate: $(grep "shared poll rate:" "$log" | tail -n1)"
scancel "$hog" "$waiting"
it_pass
