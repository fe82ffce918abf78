#!/bin/bash
# Which idle capacity an `only` job may use.
#  (a) high-performance: with a100-east full of guaranteed work, alice's `only` job of quota team-a
#      (a100-east) runs on team-c's idle a100-west nodes; with all a100 GPUs busy one more pends
#      for 10 s while acme's h100 nodes and beta's nodes are idle (never on another spec).
#  (b) another tenant: dave (beta, h100-beta) fills h100-[3-4]; one more pends while acme's
#      h100-[1-2] are idle.
#  (c) general pool: erin (team-cpu, cpu-gen) runs only in idle-cpu-gen on cpu-[1-2]; with those
#      full one more pends while the GPU nodes have free CPUs.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
JOB='sleep 600'

# running_on ID NODEREGEX PARTREGEX: job runs, on such nodes, in such a partition.
running_on() {
	it_wait_state "$1" RUNNING 30 || it_fail "job $1 did not start (Reason=$(it_job_field "$1" Reason))"
	local n p
	n=$(it_job_field "$1" NodeList) p=$(it_job_field "$1" Partition | cut -d, -f1)
	[[ $n =~ ^($2)$ ]] || it_fail "job $1 runs on $n, allowed: $2"
	[[ $p =~ ^($3)$ ]] || it_fail "job $1 runs in $p, allowed: $3"
}
# stays_pending ID PARTS: pends 10 s (sampled each second); its partition list is exactly PARTS.
stays_pending() {
	it_wait_reason "$1" 'Resources|Priority' 30 || it_fail "job $1: $(it_job_field "$1" JobState) Reason=$(it_job_field "$1" Reason)"
	it_assert_eq "$2" "$(it_job_field "$1" Partition)" "partitions of pending job $1"
	for _ in $(seq 1 10); do
		it_assert_eq PENDING "$(it_job_field "$1" JobState)" "state of job $1 (idle capacity elsewhere)"
		sleep 1
	done
}
idle_nodes() { sinfo -h -N -n "$1" -o '%N %T' | sort -u | awk '$2 == "idle"' | wc -l; }

# ---- (a)
g1=$(it_submit alice --quota=team-a -N1 --gres=gpu:a100:4 --wrap="$JOB") || it_fail "sbatch g1"
g2=$(it_submit bob --quota=team-b -N1 --gres=gpu:a100:4 --wrap="$JOB") || it_fail "sbatch g2"
running_on "$g1" 'a100-[12]' quota-team-a
running_on "$g2" 'a100-[12]' quota-team-b
o1=$(it_submit alice --idle-resources=only -N1 --gres=gpu:a100:4 --wrap="$JOB") || it_fail "sbatch o1"
running_on "$o1" 'a100-[34]' idle-a100-west
o2=$(it_submit alice --idle-resources=only -N1 --gres=gpu:a100:4 --wrap="$JOB") || it_fail "sbatch o2"
running_on "$o2" 'a100-[34]' idle-a100-west
o3=$(it_submit alice --idle-resources=only -N1 --gres=gpu:a100:1 --wrap="$JOB") || it_fail "sbatch o3"
it_assert_eq 4 "$(idle_nodes 'h100-[1-4]')" "idle h100 nodes while o3 waits"
stays_pending "$o3" idle-a100-east,idle-a100-west
it_info "(a) team-a's only jobs $o1 $o2 on team-c's a100-west; $o3 pends while 4 h100 nodes are idle"
it_cleanup_jobs || it_fail "jobs of (a) did not end"

# ---- (b)
d1=$(it_submit dave --idle-resources=only -N1 --gres=gpu:h100:4 --wrap="$JOB") || it_fail "sbatch d1"
d2=$(it_submit dave --idle-resources=only -N1 --gres=gpu:h100:4 --wrap="$JOB") || it_fail "sbatch d2"
running_on "$d1" 'h100-[34]' idle-h100-beta
running_on "$d2" 'h100-[34]' idle-h100-beta
d3=$(it_submit dave --idle-resources=only -N1 --gres=gpu:h100:1 --wrap="$JOB") || it_fail "sbatch d3"
it_assert_eq 2 "$(idle_nodes 'h100-[1-2]')" "idle acme h100 nodes while d3 waits"
stays_pending "$d3" idle-h100-beta
# the converse: acme's h100 job never lands on beta's idle nodes
a1=$(it_submit alice --idle-resources=only --quota=team-h -N1 --gres=gpu:h100:4 --wrap="$JOB") || it_fail "sbatch a1"
running_on "$a1" 'h100-[12]' idle-h100-main
it_info "(b) beta's jobs $d1 $d2 on h100-[3-4]; $d3 pends while acme's h100-[1-2] are idle; acme's $a1 on h100-[1-2]"
it_cleanup_jobs || it_fail "jobs of (b) did not end"

# ---- (c)
c1=$(it_submit erin --idle-resources=only -N1 -c 8 --mem=1000 --wrap="$JOB") || it_fail "sbatch c1"
c2=$(it_submit erin --idle-resources=only -N1 -c 8 --mem=1000 --wrap="$JOB") || it_fail "sbatch c2"
running_on "$c1" 'cpu-[12]' idle-cpu-gen
running_on "$c2" 'cpu-[12]' idle-cpu-gen
c3=$(it_submit erin --idle-resources=only -N1 -c 1 --mem=1000 --wrap="$JOB") || it_fail "sbatch c3"
stays_pending "$c3" idle-cpu-gen
it_info "(c) general pool: $c1 $c2 on cpu-[1-2] in idle-cpu-gen; $c3 pends while GPU nodes have free CPUs"
it_pass
