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
import signal
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
    p.add_argument("--wait", choices=["poll", "signal"], default="poll",
                   help="poll: look at the notice flag every 20 ms; signal: sleep until a signal "
                        "arrives (bench/reclaim/scale.sh: 512 victims on 2 cores)")
    a = p.parse_args()
    try:
        ck = Checkpointer()
        sig = ck.install_notice()
        last = ck.latest()
    except CheckpointError as e:  # munged down, clock skew, unusable dir: never restart at 1
        say("idletime/probe: cannot resume, stopping: %s" % e)
        return 69
    buf = bytearray(os.urandom(1 << 20)) * a.save_mb
    step = last[0] + 1 if last else 1
    say("ready %.3f pid=%d step=%d signal=%s" % (time.time(), os.getpid(), step, sig.name))
    t_end = time.time() + a.work_seconds
    noticed = False
    wake = None
    if a.wait == "signal":  # any signal writes a byte here, after its Python handler has run
        wake, w = os.pipe()
        os.set_blocking(w, False)
        signal.set_wakeup_fd(w)
    while time.time() < t_end:
        if wake is None:
            time.sleep(0.02)
        elif select.select([wake], [], [], max(0.0, min(60.0, t_end - time.time())))[0]:
            os.read(wake, 512)
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
