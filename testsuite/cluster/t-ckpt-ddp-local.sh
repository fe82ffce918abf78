#!/bin/bash
# One node, 4 local DDP ranks started by the batch script the way torchrun starts them (RANK,
# WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT): preempted by an owner, every rank stops at
# one step, one checkpoint, resumed, bitwise equal to an uninterrupted run (ddp-lib.sh).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../bench/reclaim/lib.sh
. "$IC_SRC/../../bench/reclaim/lib.sh"
# shellcheck source=ddp-lib.sh
. "$(dirname "$0")/ddp-lib.sh"
it_begin
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
rc_env || it_fail "idletime is not installed in $RC_PREFIX"
ddp_preempt_test ddp-local ddp-local.sh -w a100-1 --gres=gpu:a100:4 -c 4
it_pass
