#!/usr/bin/python3
"""Deterministic DDP training of a small MLP on sklearn's digits, preemptible through idletime.

The multi-rank form of train_digits.py, with the same flags and output lines. Start N ranks the
way torchrun does (env RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), or with srun
(SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID are used when RANK is unset; MASTER_ADDR and
MASTER_PORT must be set, e.g. MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" |
head -n1)). Backend: NCCL when CUDA is available, else gloo. Each step every rank trains on its
slice of the global batch; on the preemption notice reaching any rank, all ranks stop after the
same step, save it together (one checkpoint), rank 0 calls release(), and all exit 75. Periodic
saves every --ckpt-every steps. When all --steps are done rank 0 writes the raw float32
parameters to --out ("done <sha256>"); for a given world size, --out is bitwise identical
whether or not the run was interrupted. Lines are prefixed with the rank ("[r] saved 40");
on the notice: "[r] notice <step> at=<epoch s>", "[r] saved <step> seconds=<save time>".
Exit 69 when the checkpoints cannot be checked or read (munged down, clock skew, world size of
a sharded checkpoint), with one "idletime/train: ..." line.
"""
import argparse
import datetime
import hashlib
import os
import sys
import time

import torch
import torch.distributed as dist
from sklearn.datasets import load_digits

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from idletime import CheckpointError  # noqa: E402
from idletime.ddp import DistributedCheckpointer  # noqa: E402

EXIT_PREEMPTED = 75
EXIT_UNAVAILABLE = 69


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, required=True, help="optimizer steps in total")
    p.add_argument("--ckpt-every", type=int, default=50, help="steps between saves")
    p.add_argument("--out", required=True, help="file for the final raw float32 parameters")
    p.add_argument("--ckpt-dir", default=None, help="default: env IDLETIME_CKPT_DIR")
    p.add_argument("--batch-size", type=int, default=32, help="global batch (all ranks)")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--step-sleep", type=float, default=0.0, help="seconds per step (tests)")
    p.add_argument("--keep-last", type=int, default=3)
    p.add_argument("--async-save", action="store_true",
                   help="periodic saves return after the copy to host memory (the final "
                        "save on a notice stays synchronous and waits for them)")
    p.add_argument("--timeout", type=int, default=60, help="seconds a collective may wait")
    return p.parse_args()


def torchrun_env():
    """srun's variables as torchrun's, when the latter are missing."""
    for dst, src in (("RANK", "SLURM_PROCID"), ("WORLD_SIZE", "SLURM_NTASKS"),
                     ("LOCAL_RANK", "SLURM_LOCALID")):
        if dst not in os.environ and src in os.environ:
            os.environ[dst] = os.environ[src]
    missing = [k for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
               if k not in os.environ]
    if missing:
        sys.exit("idletime/train: missing environment %s (set them as torchrun does, or run "
                 "under srun with MASTER_ADDR and MASTER_PORT)" % ", ".join(missing))


def build(seed):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Dropout(0.1),
                                torch.nn.Linear(64, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=100, gamma=0.5)
    return model, opt, sched


def epoch_order(seed, epoch, n):
    g = torch.Generator()
    g.manual_seed(seed * 1000003 + epoch)
    return torch.randperm(n, generator=g)


def write_params(model, path):
    raw = b"".join(p.detach().cpu().contiguous().numpy().tobytes() for p in model.parameters())
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(raw)
        f.flush()
        os.fsync(f.fileno())  # durable before the barrier and os._exit
    os.replace(tmp, path)
    d = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(d)  # the rename too
    finally:
        os.close(d)
    return hashlib.sha256(raw).hexdigest()


def setup(a):
    torchrun_env()
    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group("nccl" if cuda else "gloo",
                            timeout=datetime.timedelta(seconds=a.timeout))
    device = torch.device("cuda") if cuda else torch.device("cpu")
    model, opt, sched = build(a.seed)
    torch.manual_seed(a.seed * 7919 + dist.get_rank())  # per-rank dropout streams
    ddp = torch.nn.parallel.DistributedDataParallel(model.to(device))
    ddp.register_comm_hook(dist.get_world_size(), ordered_mean_hook)
    return ddp, opt, sched, device


def ordered_mean_hook(world, bucket):
    """Gradient mean summed in rank order, element by element. DDP's default allreduce sums
    each element in an order that depends on where it lies in its bucket, and DDP lays out its
    buckets anew after the first step of every process: a resumed run would round differently
    from an uninterrupted one. Gathering and summing in rank order makes the result independent
    of the layout (costs world x the bucket in memory; fine for a demo-sized model)."""
    t = bucket.buffer()
    parts = [torch.empty_like(t) for _ in range(world)]
    dist.all_gather(parts, t)
    total = parts[0].clone()
    for p in parts[1:]:
        total += p
    t.copy_(total / world)
    fut = torch.futures.Future()
    fut.set_result(t)
    return fut


def main():
    a = parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    ddp, opt, sched, device = setup(a)
    rank, world = dist.get_rank(), dist.get_world_size()

    def say(msg):
        print("[%d] %s" % (rank, msg), flush=True)

    digits = load_digits()
    x = (torch.tensor(digits.data, dtype=torch.float32) / 16.0).to(device)
    y = torch.tensor(digits.target, dtype=torch.long).to(device)
    batches = len(x) // a.batch_size
    try:
        dc = DistributedCheckpointer(a.ckpt_dir, keep_last=a.keep_last)
        pos = dc.restore(ddp, opt, sched)
    except CheckpointError as e:
        print("idletime/train: rank %d cannot resume, stopping (checkpoints left as they are): %s"
              % (rank, e), file=sys.stderr, flush=True)
        return EXIT_UNAVAILABLE
    step, epoch, batch = (pos["step"], pos["epoch"], pos["batch"]) if pos else (0, 0, 0)
    saved = step if pos else -1
    say("resumed %d" % step if pos else "fresh")
    order = epoch_order(a.seed, epoch, len(x))
    while step < a.steps:
        idx = order[batch * a.batch_size:(batch + 1) * a.batch_size][rank::world].to(device)
        ddp.train()
        opt.zero_grad()
        torch.nn.functional.cross_entropy(ddp(x[idx]), y[idx]).backward()
        opt.step()
        sched.step()
        step, batch = step + 1, batch + 1
        if batch == batches:
            epoch, batch = epoch + 1, 0
            order = epoch_order(a.seed, epoch, len(x))
        dc.ckpt.progress(step)
        if a.step_sleep:
            time.sleep(a.step_sleep)
        if dc.should_stop(step):
            t0 = time.time()
            say("notice %d at=%.3f" % (step, t0))
            if saved != step:
                dc.save(step, ddp, opt, sched, epoch, batch)
            say("saved %d seconds=%.3f" % (step, time.time() - t0))
            try:
                dc.release()
            except CheckpointError as e:
                print("idletime/train: release skipped: %s" % e, file=sys.stderr, flush=True)
            dc.close()
            # No destroy_process_group(): os._exit follows, and the Reducer's destructor joined
            # a gloo thread that waited for the GIL (the Python comm hook): rank 0 hung there
            # (seen 2 of 5 runs of the 3-rank --async-save test, torch 1.13).
            return EXIT_PREEMPTED
        if step % a.ckpt_every == 0 and step < a.steps:
            dc.save(step, ddp, opt, sched, epoch, batch, asynchronous=a.async_save)
            saved = step
            say("saved %d" % step)
    dc.wait()  # an in-flight asynchronous save: durable (or its error) before the end
    dc.close()
    if rank == 0:
        say("done %s" % write_params(ddp.module, a.out))
    dist.barrier()
    return 0  # no destroy_process_group(): see __main__


if __name__ == "__main__":
    rc = main()
    if rc in (0, EXIT_PREEMPTED):  # also 0: teardown of DDP's Reducer could deadlock
        # The checkpoint is durable and released: leave now. Interpreter teardown with torch
        # loaded took 4-6 s per rank here, and the owner's job waits until every rank is gone.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)
    sys.exit(rc)
