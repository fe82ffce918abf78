#!/usr/bin/python3
"""Victim job for the notice/release tests and bench/reclaim: waits for the preemption notice.

--on-notice release: save a checkpoint of --save-mb MiB (synchronously), call release(), exit 75.
--on-notice ignore:  keep running (Slurm alone: the job waits for GraceTime, SIGTERM, KillWait).
--on-notice finish:  the real work ends --finish-seconds after the notice; exit 0 (no release).
--work-seconds S:    finish the "real work" after S seconds and exit 0 (notice or not).
If the checkpoint directory cannot be read (munged unreachable, clock skew): one line, exit 69.
Prints one line per event with epoch seconds: "ready <t> pid=<pid>", "notice <t> signal=<name>",
"saved <t> step=<n> seconds=<save time>", "released <t>", "done <t>".
"""
import argparse
import os
import select
import sys
import time

from idletime import Checkpointer, CheckpointError


def say(*words):
    print(*words, flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--on-notice", choices=["release", "ignore", "finish"], default="release")
    p.add_argument("--save-mb", type=int, default=64)
    p.add_argument("--finish-seconds", type=float, default=2.0)
    p.add_argument("--work-seconds", type=float, default=3600)
    # The probe waits on the library's notice descriptor (notice_fd(): the C handler writes to
    # it), so it wakes at the notice; --poll-interval only bounds each wait, as a training loop's
    # step bounds its look at the flag. bench/reclaim/scale.sh uses 0.25 s (512 victims, 2 cores).
    p.add_argument("--poll-interval", type=float, default=0.02,
                   help="longest wait for the notice descriptor before looking again (default 0.02)")
    a = p.parse_args()
    if a.poll_interval <= 0:
        p.error("--poll-interval must be > 0 seconds")
    try:
        ck = Checkpointer()
        sig = ck.install_notice()
        notice_fd = ck.notice_fd()
        last = ck.latest()
    except CheckpointError as e:  # munged down, clock skew, unusable dir: never restart at 1
        say("idletime/probe: cannot resume, stopping: %s" % e)
        return 69
    buf = bytearray(os.urandom(1 << 20)) * a.save_mb
    step = last[0] + 1 if last else 1
    say("ready %.3f pid=%d step=%d signal=%s" % (time.time(), os.getpid(), step, sig.name))
    t_end = time.time() + a.work_seconds
    noticed = False
    while time.time() < t_end:
        if not noticed:
            select.select([notice_fd], [], [], a.poll_interval)
        else:
            time.sleep(a.poll_interval)  # the descriptor stays readable once the notice came
        if ck.preempt_requested and not noticed:
            noticed = True
            say("notice %.3f" % time.time())
            if a.on_notice == "ignore":
                continue
            if a.on_notice == "finish":
                t_end = min(t_end, time.time() + a.finish_seconds)
                continue
            t0 = time.time()
            ck.save(step, {"state.bin": buf})
            say("saved %.3f step=%d seconds=%.3f" % (time.time(), step, time.time() - t0))
            try:
                ck.release()
            except CheckpointError as e:
                say("release failed: %s" % e)
                return 1
            say("released %.3f" % time.time())
            ck.close()
            return 75
    ck.close()
    say("done %.3f" % time.time())
    return 0


if __name__ == "__main__":
    sys.exit(main())
