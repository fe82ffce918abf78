#!/usr/bin/python3
"""Job side of t-sec-reopen-save: big asynchronous saves while other processes reopen the dir.

  reopen_save.py save DIR STEPS MIB   saves steps 1..STEPS of MIB MiB each (commit_async, then
                                      wait); prints "saved <step>" after each, "saver done".
  reopen_save.py reopen DIR STOPFILE  until STOPFILE exists: open DIR (as a monitor would),
                                      latest() (verifies the newest step fully), close; prints
                                      "reopen n=<opens> during=<opens that overlapped a save>
                                      seq=<distinct latest steps>" or "reopen error <msg>".
The job id (SLURM_JOB_ID) binds both to the same checkpoints; munge is required.
"""
import os
import sys

from idletime import Checkpointer, CheckpointError


def temps(d):
    try:
        return any(n.startswith(".tmp-step-") for n in os.listdir(d))
    except FileNotFoundError:
        return False


def save(d, steps, mib):
    buf = bytearray(os.urandom(1 << 20)) * mib
    with Checkpointer(d, keep_last=2) as ck:
        for step in range(1, steps + 1):
            buf[:8] = step.to_bytes(8, "little")
            ck.save(step, {"state.bin": buf, "meta.txt": b"step %d" % step}, asynchronous=True)
            ck.wait()
            print("saved %d" % step, flush=True)
    print("saver done", flush=True)


def reopen(d, stop):
    n = during = 0
    seq = []
    while not os.path.exists(stop):
        before = temps(d)
        try:
            with Checkpointer(d) as ck:
                got = ck.latest()
                if got is not None:
                    step = got[0]
                    if ck.read(step, "meta.txt") != b"step %d" % step:
                        raise CheckpointError(5, "step %d has the wrong meta.txt" % step)
                    if seq and step < seq[-1]:
                        raise CheckpointError(5, "latest went back from %d to %d" % (seq[-1], step))
                    if not seq or seq[-1] != step:
                        seq.append(step)
        except CheckpointError as e:
            print("reopen error %s" % e, flush=True)
            return 1
        n += 1
        during += before and temps(d)
    print("reopen n=%d during=%d seq=%s" % (n, during, ",".join(map(str, seq))), flush=True)
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "save":
        save(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(reopen(sys.argv[2], sys.argv[3]))
