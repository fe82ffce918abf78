#!/bin/bash
# Two nodes x 2 tasks, one srun step of train_ddp.py (ranks from SLURM_PROCID/SLURM_NTASKS):
# preempted by an owner on one of the nodes, every rank stops at one step, one checkpoint,
# resumed, bitwise equal to an uninterrupted run (ddp-lib.sh).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../bench/reclaim/lib.sh
. "$IC_SRC/../../bench/reclaim/lib.sh"
# shellcheck source=ddp-lib.sh
. "$(dirname "$0")/ddp-lib.sh"
it_begin
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
rc_env || it_fail "idletime is not installed in $RC_PREFIX"
IT_SUBMIT_ENV+=" MASTER_ADDR=127.0.0.1"  # the test cluster's nodes all listen on loopback
ddp_preempt_test ddp-srun ddp-srun.sh -N 2 --ntasks-per-node=2 -w a100-[1-2] --gres=gpu:a100:2
it_pass
