#!/usr/bin/python3
"""Deterministic training of a small MLP on sklearn's digits, checkpointed through idletime.

Resumes from the newest complete checkpoint in --ckpt-dir (default env IDLETIME_CKPT_DIR),
saves asynchronously every --ckpt-every steps, and on the preemption notice (env
IDLETIME_CKPT_SIGNAL, default SIGUSR1, or SIGTERM) saves synchronously after the current step,
calls release() (requeues the own Slurm job at once; skipped without SLURM_JOB_ID) and exits 75.
When all --steps are done it writes the raw float32 parameters to --out and exits 0; the same
arguments give bitwise-identical --out whether or not (and wherever) the run was interrupted.
Prints one line per event: "resumed <step>", "saved <step>", "notice <step>", "done <sha256>".
If the checkpoints cannot be checked (munged unreachable, clock skew) or the directory cannot be
used, it prints one "idletime/train: ..." line and exits 69 (EX_UNAVAILABLE) without touching
them, instead of silently training again from step 0.
"""
import argparse
import hashlib
import os
import sys
import time

import torch
from sklearn.datasets import load_digits

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from idletime import Checkpointer, CheckpointError  # noqa: E402
from idletime import torch_state  # noqa: E402

EXIT_PREEMPTED = 75
EXIT_UNAVAILABLE = 69


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, required=True, help="optimizer steps in total")
    p.add_argument("--ckpt-every", type=int, default=50, help="steps between async saves")
    p.add_argument("--out", required=True, help="file for the final raw float32 parameters")
    p.add_argument("--ckpt-dir", default=None, help="default: env IDLETIME_CKPT_DIR")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--step-sleep", type=float, default=0.0, help="seconds per step (tests)")
    p.add_argument("--keep-last", type=int, default=3)
    return p.parse_args()


def build(seed):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Dropout(0.1),
                                torch.nn.Linear(64, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return model, opt


def epoch_order(seed, epoch, n):
    """Batch order depends only on (seed, epoch), so a data position is enough to resume."""
    g = torch.Generator()
    g.manual_seed(seed * 1000003 + epoch)
    return torch.randperm(n, generator=g)


def write_params(model, path):
    raw = b"".join(p.detach().contiguous().numpy().tobytes() for p in model.parameters())
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(raw)
    os.replace(tmp, path)
    return hashlib.sha256(raw).hexdigest()


def main():
    a = parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    digits = load_digits()
    x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
    y = torch.tensor(digits.target, dtype=torch.long)
    batches = len(x) // a.batch_size
    model, opt = build(a.seed)
    try:
        ck = Checkpointer(a.ckpt_dir, keep_last=a.keep_last)
        ck.install_notice()
        pos = torch_state.restore(ck, model, opt)
    except CheckpointError as e:
        print("idletime/train: cannot resume, stopping (checkpoints left as they are): %s" % e,
              file=sys.stderr, flush=True)
        return EXIT_UNAVAILABLE
    step, epoch, batch = (pos["step"], pos["epoch"], pos["batch"]) if pos else (0, 0, 0)
    saved = step if pos else -1
    print("resumed %d" % step if pos else "fresh", flush=True)
    order = epoch_order(a.seed, epoch, len(x))
    while step < a.steps:
        idx = order[batch * a.batch_size:(batch + 1) * a.batch_size]
        model.train()
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x[idx]), y[idx]).backward()
        opt.step()
        step, batch = step + 1, batch + 1
        if batch == batches:
            epoch, batch = epoch + 1, 0
            order = epoch_order(a.seed, epoch, len(x))
        ck.progress(step)
        if a.step_sleep:
            time.sleep(a.step_sleep)
        if ck.preempt_requested:
            print("notice %d" % step, flush=True)
            if saved != step:
                torch_state.save(ck, step, model, opt, epoch, batch)
            ck.wait()
            print("saved %d" % step, flush=True)
            try:
                ck.release()
            except CheckpointError as e:
                print("idletime/train: release skipped: %s" % e, file=sys.stderr, flush=True)
            ck.close()
            return EXIT_PREEMPTED
        if step % a.ckpt_every == 0 and step < a.steps:
            torch_state.save(ck, step, model, opt, epoch, batch, asynchronous=True)
            saved = step
            print("saved %d" % step, flush=True)
    ck.close()
    print("done %s" % write_params(model, a.out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
