"""DDP resume test: train_ddp.py with 2 gloo ranks (started as torchrun starts them), uninterrupted
vs. interrupted by a notice that reaches only one rank: every rank stops at the same step, the
ranks save one checkpoint together and exit 75, the restarted ranks resume from it, and the final
parameters are bitwise equal. A 2-rank start on that 4-rank checkpoint resumes the replicated
state (model, optimizer, scheduler, position) and warns about the per-rank RNG states. (The
cluster tests run 4 local ranks and 2 nodes x 2 tasks; 2 ranks keep make check short.)"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "..", "..", "python", "idletime", "examples", "train_ddp.py")
STEPS = 120
WORLD = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_ranks(ckpt_dir, out, sleep, world=WORLD, extra=()):
    port = str(free_port())
    procs = []
    for r in range(world):
        env = dict(os.environ)
        for k in ("SLURM_JOB_ID", "IDLETIME_CKPT_SIGNAL", "IDLETIME_HEARTBEAT_FILE",
                  "SLURM_PROCID", "SLURM_NTASKS"):
            env.pop(k, None)
        env.update(RANK=str(r), WORLD_SIZE=str(world), LOCAL_RANK=str(r),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        cmd = [sys.executable, TRAIN, "--steps", str(STEPS), "--ckpt-every", "40", "--out", out,
               "--ckpt-dir", ckpt_dir, "--step-sleep", str(sleep), "--timeout", "30"] + list(extra)
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, env=env))
    return procs


def finish(procs):
    res = [p.communicate(timeout=180) for p in procs]
    return [p.returncode for p in procs], [o for o, _ in res], [e for _, e in res]


class DdpResumeTest(unittest.TestCase):
    def setUp(self):
        self.base = tempfile.mkdtemp(prefix="idletime-ckpt-ddp.")

    def tearDown(self):
        shutil.rmtree(self.base, ignore_errors=True)

    def test_notice_on_one_rank_then_bitwise_equal(self):
        full, cut = os.path.join(self.base, "full"), os.path.join(self.base, "cut")
        rcs, outs, errs = finish(start_ranks(os.path.join(self.base, "a"), full, 0))
        self.assertEqual(rcs, [0] * WORLD, errs)
        d = os.path.join(self.base, "b")
        procs = start_ranks(d, cut, 0.02)
        for line in procs[0].stdout:  # rank 0's "saved 40": then only rank 1 gets the notice
            if line.startswith("[0] saved 40"):
                procs[1].send_signal(signal.SIGUSR1)
                break
        rcs, outs, errs = finish(procs)
        self.assertEqual(rcs, [75] * WORLD, errs)
        notices = [[l.split()[2] for l in o.splitlines() if " notice " in l] for o in outs]
        self.assertEqual(len(set(n[0] for n in notices)), 1, outs)  # one step for all
        stop = int(notices[0][0])
        self.assertLess(stop, STEPS)
        self.assertFalse(os.path.exists(cut))
        # A 1-rank start on the 2-rank checkpoint: replicated state resumes, RNG warned.
        two = os.path.join(self.base, "c")
        shutil.copytree(d, two)
        rcs, outs, errs = finish(start_ranks(two, os.path.join(self.base, "one"), 0, world=1))
        self.assertEqual(rcs, [0], errs)
        self.assertIn("[0] resumed %d" % stop, outs[0])
        self.assertIn("per-rank RNG states not", errs[0])
        # Same world size: resumes at the agreed step and ends bitwise equal.
        rcs, outs, errs = finish(start_ranks(d, cut, 0))
        self.assertEqual(rcs, [0] * WORLD, errs)
        for r in range(WORLD):
            self.assertIn("[%d] resumed %d" % (r, stop), outs[r].splitlines())
        with open(full, "rb") as f1, open(cut, "rb") as f2:
            a, b = f1.read(), f2.read()
        self.assertGreater(len(a), 4000)
        self.assertTrue(a == b, "final parameters differ after interrupted DDP training")

    def test_async_saves_three_ranks_bitwise_equal_to_sync(self):
        """--async-save on 3 gloo ranks: periodic saves in the background (file-coordinated
        commit), a notice on rank 2 after the async save of step 40 started, resume with async
        saves: final parameters bitwise equal to an uninterrupted run with synchronous saves."""
        world, asy = 3, ["--async-save"]
        full, cut = os.path.join(self.base, "full3"), os.path.join(self.base, "cut3")
        rcs, outs, errs = finish(start_ranks(os.path.join(self.base, "s"), full, 0, world))
        self.assertEqual(rcs, [0] * world, errs)
        d = os.path.join(self.base, "as")
        procs = start_ranks(d, cut, 0.02, world, asy)
        for line in procs[0].stdout:
            if line.startswith("[0] saved 40"):
                procs[2].send_signal(signal.SIGUSR1)
                break
        rcs, outs, errs = finish(procs)
        self.assertEqual(rcs, [75] * world, errs)
        stop = int([l.split()[2] for l in outs[1].splitlines() if " notice " in l][0])
        self.assertGreaterEqual(stop, 40)
        self.assertTrue(os.path.isdir(os.path.join(d, "step-%012d" % stop)), os.listdir(d))
        self.assertTrue(os.path.isdir(os.path.join(d, "step-%012d" % 40)), os.listdir(d))
        rcs, outs, errs = finish(start_ranks(d, cut, 0, world, asy))
        self.assertEqual(rcs, [0] * world, errs)
        for r in range(world):
            self.assertIn("[%d] resumed %d" % (r, stop), outs[r].splitlines())
        with open(full, "rb") as f1, open(cut, "rb") as f2:
            a, b = f1.read(), f2.read()
        self.assertGreater(len(a), 4000)
        self.assertTrue(a == b, "final parameters differ after async-saved DDP training")


class WriteParamsTest(unittest.TestCase):
    def test_final_params_fsynced_before_exit(self):
        # The final params file is written just before the barrier and os._exit: the file and
        # its rename must be fsync'd there (before, neither was).
        import importlib.util
        from unittest import mock
        import torch
        spec = importlib.util.spec_from_file_location("train_ddp", TRAIN)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        base = tempfile.mkdtemp(prefix="idletime-ckpt-params.")
        self.addCleanup(shutil.rmtree, base, True)
        synced = []
        real = os.fsync
        with mock.patch.object(mod.os, "fsync", side_effect=lambda fd: (synced.append(
                os.readlink("/proc/self/fd/%d" % fd)), real(fd))[1]):
            mod.write_params(torch.nn.Linear(2, 2), os.path.join(base, "p"))
        self.assertEqual(synced, [os.path.join(base, "p.tmp"), base])


if __name__ == "__main__":
    unittest.main()
