#!/usr/bin/python3
"""bench/ckpt multi-rank: save stall and persist throughput of one W-rank checkpoint (each rank
writes its shard, one commit) against a single process saving the same bytes through the
library, and against torch.save + fsync of the same state, all in one run; ratios printed.

Usage: bench/ckpt/multirank.py [--ranks 4] [--mib 128] [--rounds 3] [--dir /var/tmp]
Needs Debian's python3-torch and the library (IDLETIME_CKPT_LIB, PYTHONPATH=python/).
A save's stall is the slowest rank's time in commit() (every rank's state is durable and the
step published when it returns); throughput = total bytes / stall. No munge (no job id).
Async group save (same state, same run): the caller's blocking time in save(asynchronous=True)
(copy to host memory; the previous save already waited for), and the time until wait() returns
(shard durable, step sealed by rank 0 through the file coordinator); slowest rank per round.
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from idletime import Checkpointer  # noqa: E402


def state(mib, seed):
    g = torch.Generator()
    g.manual_seed(seed)
    n = mib * (1 << 20) // 4
    return torch.rand(n, generator=g)


def torch_save_fsync(obj, path, prev=None):
    """torch.save into a new file + fsync, as a checkpoint per step would (overwriting one file
    in place measured 3x faster here than writing new files, for either saver); the previous
    round's file is removed after the timing."""
    t0 = time.perf_counter()
    with open(path, "wb") as f:
        torch.save(obj, f)
        f.flush()
        os.fsync(f.fileno())
    took = time.perf_counter() - t0
    if prev and os.path.exists(prev):
        os.unlink(prev)
    return took


def rank_main(a):
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    shard = state(a.mib // world, rank)
    ck = Checkpointer(os.path.join(a.dir, "group"), keep_last=1, job_id="", require_munge=False)

    def allreduce_max(values):
        t = torch.tensor([v - (1 << 63) for v in values], dtype=torch.int64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return [int(x) + (1 << 63) for x in t.tolist()]

    ck.join(rank, world, allreduce_max=allreduce_max)
    buf = shard.numpy()
    group_s, tsave_s = [], []
    for r in range(a.rounds + 1):
        dist.barrier()
        t0 = time.perf_counter()
        ck.save(r + 1, {"shard": buf})
        group_s.append(time.perf_counter() - t0)
        dist.barrier()  # each rank torch.saves its own shard in parallel (what DDP users do)
        name = os.path.join(a.dir, "tsave-%d-%%d.pt" % rank)
        tsave_s.append(torch_save_fsync(shard, name % r, name % (r - 1)))
    block_s, durable_s = [], []
    for r in range(a.rounds + 1):
        dist.barrier()
        t0 = time.perf_counter()
        ck.save(a.rounds + 2 + r, {"shard": buf}, asynchronous=True)
        block_s.append(time.perf_counter() - t0)
        ck.wait()
        durable_s.append(time.perf_counter() - t0)
    ck.close()
    print(json.dumps({"rank": rank, "group_s": group_s[1:], "tsave_s": tsave_s[1:],
                      "block_s": block_s[1:], "durable_s": durable_s[1:]}), flush=True)
    dist.destroy_process_group()


def single(a):
    whole = state(a.mib, 99)
    ck = Checkpointer(os.path.join(a.dir, "single"), keep_last=1, job_id="", require_munge=False)
    lib_s, tsave_s = [], []
    for r in range(a.rounds + 1):
        t0 = time.perf_counter()
        ck.save(r + 1, {"state": whole.numpy()})
        lib_s.append(time.perf_counter() - t0)
        name = os.path.join(a.dir, "tsave-single-%d.pt")
        tsave_s.append(torch_save_fsync(whole, name % r, name % (r - 1)))
    ck.close()
    return statistics.median(lib_s[1:]), statistics.median(tsave_s[1:])


def launch(a):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for r in range(a.ranks):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(a.ranks), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable, __file__, "--rank-of", a.dir,
                                       "--mib", str(a.mib), "--rounds", str(a.rounds)],
                                      stdout=subprocess.PIPE, text=True, env=env))
    res = []
    for p in procs:
        out, _ = p.communicate(timeout=1800)
        if p.returncode:
            sys.exit("idletime/ckpt-bench: a rank failed (exit %d)" % p.returncode)
        res.append(json.loads(out.strip().splitlines()[-1]))
    # per round, the slowest rank decides the stall
    def slowest(key):
        return statistics.median(max(r[key][i] for r in res) for i in range(a.rounds))
    return slowest("group_s"), slowest("tsave_s"), slowest("block_s"), slowest("durable_s")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--mib", type=int, default=128, help="total state, all ranks together")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--dir", default="/var/tmp")
    p.add_argument("--rank-of", default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    torch.set_num_threads(1)
    if a.rank_of:
        a.dir = a.rank_of
        return rank_main(a)
    work = tempfile.mkdtemp(prefix="idletime-mr-bench.", dir=a.dir)
    try:
        a.dir = work
        group, group_tsave, block, durable = launch(a)
        one, one_tsave = single(a)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    mb = a.mib * (1 << 20) / 1e6
    print("ranks %d, state %d MiB in total, median of %d rounds" % (a.ranks, a.mib, a.rounds))
    print("group_save_s %.3f (%.1f MB/s)  slowest rank in commit(), one published step" % (group, mb / group))
    print("single_save_s %.3f (%.1f MB/s)  one process, same bytes" % (one, mb / one))
    print("torch_save_per_rank_s %.3f  every rank torch.save + fsync of its shard" % group_tsave)
    print("torch_save_single_s %.3f  one process torch.save + fsync of the whole state" % one_tsave)
    print("async_group_block_s %.4f  slowest rank in save(asynchronous=True): copy to host"
          % block)
    print("async_group_durable_s %.3f  until wait() returns: every shard durable, step sealed"
          % durable)
    print("async_vs_sync_group_block %.3fx (caller blocking time, lower is better)"
          % (block / group))
    print("group_vs_single_stall %.2fx (lower is better)" % (group / one))
    print("group_vs_torch_save_per_rank %.2fx" % (group / group_tsave))
    print("group_vs_torch_save_single %.2fx" % (group / one_tsave))


if __name__ == "__main__":
    sys.exit(main())
