#!/bin/bash
# Light victim for bench/reclaim/scale.sh VICTIM=replay-job: idletime-replay-job(1) (C++, the
# checkpoint library's C API; a few MiB where the Python probe takes ~17 MiB) works until its
# preemption notice, saves, calls release() and exits; its events go to the job's output file
# ("<epoch> start|notice|saved|release ...", one line each, appended over requeues).
# Env: IDLETIME_CKPT_DIR (spank/idletime sets it per job).
exec "${IDLETIME_PREFIX:?bench/reclaim/scale-lib.sh sc_fill passes it}/bin/idletime-replay-job" --work 86400 --log /dev/stdout --mode ckpt \
	--ckpt-dir "${IDLETIME_CKPT_DIR:?spank/idletime sets it for idle-time jobs}" --ckpt-every 86400
