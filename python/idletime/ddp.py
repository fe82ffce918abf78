"""Preemptible multi-rank PyTorch training (DDP and the like) through libidletime-ckpt.

    import torch.distributed as dist
    from idletime.ddp import DistributedCheckpointer
    dist.init_process_group("gloo")               # or "nccl"; env RANK, WORLD_SIZE, MASTER_*
    dc = DistributedCheckpointer(args.ckpt_dir)   # joins the group, installs the notice handler
    pos = dc.restore(model, opt, sched)           # None: fresh start
    while step < steps:
        ...one step...
        if dc.should_stop(step):                  # True on every rank once any rank got it
            dc.save(step, model, opt, sched, epoch, batch)
            dc.release()                          # rank 0 asks Slurm to requeue, others no-op
            sys.exit(75)

Every rank makes every call, at the same step. Model, optimizer and LR scheduler are saved
once (rank 0, replicated: DDP keeps them identical) unless sharded=True (each rank its own, e.g.
a ZeRO-style sharded optimizer); the data position once (the same on every rank);
the RNG states (torch, CUDA, numpy, Python) per rank. A replicated checkpoint resumes on any world size (the per-rank
RNG states are then not restored: a warning says so); a sharded one only on the world size that
saved it (WorldSizeError, one line). The agreement runs through the job's own process group
(torch.distributed.all_reduce with MAX): no other coordinator, no extra port.
"""
import sys

import torch
import torch.distributed as dist

from . import torch_state
from .ckpt import Checkpointer, WorldSizeError

__all__ = ["DistributedCheckpointer"]

_SHIFT = 1 << 63  # uint64 <-> int64, order-preserving


class DistributedCheckpointer:
    """One rank's view of the job's checkpoints; see the module docstring for the call order."""

    def __init__(self, directory=None, keep_last=3, group=None, signo=0, log=None):
        if not dist.is_initialized():
            raise RuntimeError("idletime.ddp: call torch.distributed.init_process_group first")
        self.group = group
        self.rank = dist.get_rank(group)
        self.world_size = dist.get_world_size(group)
        nccl = dist.get_backend(group) == "nccl"
        self._device = torch.device("cuda", torch.cuda.current_device()) if nccl else None
        self.ckpt = Checkpointer(directory, keep_last=keep_last, log=log)
        self.ckpt.join(self.rank, self.world_size, allreduce_max=self._allreduce_max)
        self.ckpt.install_notice(signo)

    def _allreduce_max(self, values):
        t = torch.tensor([v - _SHIFT for v in values], dtype=torch.int64, device=self._device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=self.group)
        return [int(x) + _SHIFT for x in t.tolist()]

    @property
    def preempt_requested(self):
        """This rank's own notice flag (not agreed; use should_stop in the loop)."""
        return self.ckpt.preempt_requested

    def should_stop(self, step):
        """Collective: True on every rank when any rank got the notice. Call once per step."""
        return self.ckpt.agree(step)

    def save(self, step, model, optimizer=None, scheduler=None, epoch=0, batch=0, extra=None,
             sharded=False, asynchronous=False):
        """Collective: one checkpoint of step from every rank; durable on return.

        asynchronous: return once the state is copied to host memory; each rank writes and
        fsyncs its shard in the background and rank 0 seals the step once every shard is
        durable (their agreement goes through files in the checkpoint directory, never through
        torch.distributed off the main thread). A later save, wait() or release() waits for it
        first and raises its error."""
        net = model.module if hasattr(model, "module") else model
        shared = {"model": net.state_dict()}
        if optimizer is not None:
            shared["optimizer"] = optimizer.state_dict()
        if scheduler is not None:
            shared["scheduler"] = scheduler.state_dict()
        position = {"step": step, "epoch": epoch, "batch": batch, "extra": extra}
        own = {"rng": torch_state._rng_state()}
        self.ckpt.begin(step)
        for parts, replicated in ((shared, not sharded), ({"position": position}, True),
                                  (own, False)):
            for name, obj in parts.items():
                skeleton, tensors = torch_state.encode(obj)
                self.ckpt.add(name + ".json", skeleton, replicated=replicated)
                self.ckpt.add(name + ".pt", tensors, replicated=replicated)
        self.ckpt.commit(asynchronous)

    def wait(self):
        """Waits for this rank's in-flight asynchronous save; raises its error (once)."""
        self.ckpt.wait()

    def _load(self, step, name):
        return torch_state.decode(self.ckpt.read(step, name + ".json"),
                                  self.ckpt.read(step, name + ".pt"))

    def restore(self, model, optimizer=None, scheduler=None):
        """Collective: loads the newest complete checkpoint; returns the position dict
        {"step", "epoch", "batch", "extra"} or None when there is none.

        MungeUnavailableError / ClockSkewError: stop the job, never train from scratch on them.
        WorldSizeError: sharded state saved by another world size."""
        found = self.ckpt.latest()
        if found is None:
            return None
        step = found[0]
        net = model.module if hasattr(model, "module") else model
        net.load_state_dict(self._load(step, "model"))
        if optimizer is not None:
            optimizer.load_state_dict(self._load(step, "optimizer"))
        if scheduler is not None:
            scheduler.load_state_dict(self._load(step, "scheduler"))
        try:
            torch_state._set_rng_state(self._load(step, "rng"))
        except WorldSizeError:
            # Replicated state on a new world size: the per-rank RNG states do not map.
            self._warn("checkpoint step %d was saved by another world size: model, optimizer, "
                       "scheduler and data position restored, per-rank RNG states not" % step)
        return self._load(step, "position")

    def _warn(self, msg):
        print("idletime/ddp: rank %d: %s" % (self.rank, msg), file=sys.stderr, flush=True)

    def release(self):
        """After the final save: rank 0 requeues the job (see Checkpointer.release); no-op
        elsewhere."""
        self.ckpt.release()

    def close(self):
        self.ckpt.close()
