#!/usr/bin/python3
"""Bad-input cases of the checkpoint library, run inside a Slurm job (used by t-ckpt-badinput).

  ckpt_cases.py save DIR STEP [--job-id ID] [--mb N]   save one checkpoint (the "other user" side)
  ckpt_cases.py check [--missing P] [--unwritable D] [--full D] [--corrupt D] [--copied D]
                      [--planted D ({job} = SLURM_JOB_ID)] [--env]
Each check prints "case <name> ok <detail>" or "case <name> FAIL <detail>", then "alive" (the
process survived every error); exit 0 only when every case is ok.
"""
import argparse
import errno
import os
import sys

from idletime import Checkpointer, CheckpointError

FAILED = []


def report(name, ok, detail):
    print("case %s %s %s" % (name, "ok" if ok else "FAIL", detail), flush=True)
    if not ok:
        FAILED.append(name)


def expect_error(name, fn, want_errno, words):
    """fn() must raise CheckpointError with want_errno and a one-line message containing words."""
    try:
        fn()
    except CheckpointError as e:
        msg = str(e)
        ok = e.errno == want_errno and "\n" not in msg and all(w in msg for w in words)
        report(name, ok, "errno=%s msg=%s" % (errno.errorcode.get(e.errno, e.errno), msg))
        return
    report(name, False, "no error raised")


def opener(path, logs=None):
    return Checkpointer(path, log=(logs.append if logs is not None else None))


def tree(path):
    return sorted(os.listdir(path))


def case_missing(p):
    expect_error("missing", lambda: opener(p), errno.ENOENT, [os.path.dirname(p)])


def case_unwritable(d):
    ck = opener(d)
    expect_error("unwritable", lambda: ck.save(1, {"a.bin": b"x" * 1000}), errno.EACCES, [d])
    report("unwritable-nothing-left", tree(d) == [] and ck.latest() is None, "entries=%s" % tree(d))
    ck.close()


def case_full(d):
    ck = opener(d)
    ck.save(1, {"a.bin": os.urandom(100000)})
    big = bytearray(os.urandom(1 << 20)) * 8
    expect_error("full-sync", lambda: ck.save(2, {"big.bin": big}), errno.ENOSPC, ["No space"])
    ck.save(3, {"big.bin": big}, asynchronous=True)  # copies and returns; fails in the background
    expect_error("full-async", ck.wait, errno.ENOSPC, ["No space"])
    report("full-latest", ck.latest() is not None and ck.latest()[0] == 1,
           "latest=%s entries=%s" % (ck.latest(), tree(d)))
    ck.save(4, {"a.bin": b"after"})  # the disk has room again for a small one
    report("full-recovers", ck.latest()[0] == 4 and tree(d) == ["step-000000000001", "step-000000000004"],
           "entries=%s" % tree(d))
    ck.close()


def case_corrupt(d):
    ck = opener(d)
    for s in (1, 2, 3):
        ck.save(s, {"a.bin": os.urandom(4096)})
    ck.close()
    with open(os.path.join(d, "step-000000000003", "MANIFEST.json"), "r+b") as f:
        f.seek(10)
        f.write(b"\x00garbage{")
    with open(os.path.join(d, "step-000000000002", "a.bin"), "r+b") as f:
        f.truncate(100)
    logs = []
    ck = opener(d, logs)
    latest = ck.latest()
    said = " | ".join(logs)
    report("corrupt", latest is not None and latest[0] == 1 and "step-000000000003" in said
           and "step-000000000002" in said, "latest=%s log=%s" % (latest, said))
    ck.close()


def case_copied(d):
    logs = []
    ck = opener(d, logs)
    latest = ck.latest()
    said = " | ".join(logs)
    names = sorted(n for n in os.listdir(d) if n.startswith("step-"))
    report("copied-refused", latest is None and len(names) >= 1 and all(n in said for n in names),
           "latest=%s log=%s" % (latest, said))
    ck.save(7, {"own.bin": b"mine"})
    report("copied-own-works", ck.latest()[0] == 7, "latest=%s" % (ck.latest(),))
    ck.close()


def case_planted(d):
    d = d.replace("{job}", os.environ.get("SLURM_JOB_ID", ""))
    expect_error("planted", lambda: opener(d), errno.EPERM, [d, "owned by uid"])


def case_env(planted):
    """spank/idletime gave the job its own directory (<jobid>-<key>), never the planted one."""
    d = os.environ.get("IDLETIME_CKPT_DIR")
    planted = (planted or "").replace("{job}", os.environ.get("SLURM_JOB_ID", ""))
    own = d is not None and d != planted and os.path.isdir(d) and not os.path.islink(d) \
        and os.stat(d).st_uid == os.getuid()
    report("env-own", own, "IDLETIME_CKPT_DIR=%s planted=%s" % (d, planted))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("save")
    s.add_argument("dir")
    s.add_argument("step", type=int)
    s.add_argument("--job-id")
    s.add_argument("--mb", type=int, default=0)
    c = sub.add_parser("check")
    for name in ("missing", "unwritable", "full", "corrupt", "copied", "planted"):
        c.add_argument("--" + name)
    c.add_argument("--env", action="store_true",
                   help="IDLETIME_CKPT_DIR must be the job's own directory, not --planted's")
    a = p.parse_args()
    if a.cmd == "save":
        with Checkpointer(a.dir, job_id=a.job_id) as ck:
            ck.save(a.step, {"state.bin": b"planted by uid %d " % os.getuid() + b"x" * (a.mb << 20)})
        print("saved %d in %s" % (a.step, a.dir), flush=True)
        return 0
    cases = [("missing", case_missing), ("unwritable", case_unwritable), ("full", case_full),
             ("corrupt", case_corrupt), ("copied", case_copied), ("planted", case_planted)]
    for name, fn in cases:
        arg = getattr(a, name)
        if arg:
            try:
                fn(arg)
            except CheckpointError as e:
                report(name, False, "unexpected error: %s" % e)
    if a.env:
        case_env(a.planted)
    print("alive", flush=True)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
