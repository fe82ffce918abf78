"""PyTorch resume test: train_digits.py uninterrupted vs. interrupted twice by the real notice
signal (save, exit, new process restores, continues): the final parameters are bitwise equal."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "..", "..", "python", "idletime", "examples", "train_digits.py")
STEPS = 240


def start(args, ckpt_dir, out, sleep):
    env = dict(os.environ)
    for k in ("SLURM_JOB_ID", "IDLETIME_CKPT_SIGNAL", "IDLETIME_HEARTBEAT_FILE"):
        env.pop(k, None)
    cmd = [sys.executable, TRAIN, "--steps", str(STEPS), "--ckpt-every", "40", "--out", out,
           "--ckpt-dir", ckpt_dir, "--step-sleep", str(sleep)] + args
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


def interrupt_after(proc, line_prefix):
    """Sends the notice once a line starting with line_prefix appeared; returns all lines."""
    lines = []
    for line in proc.stdout:
        lines.append(line.strip())
        if line.startswith(line_prefix):
            proc.send_signal(signal.SIGUSR1)
            break
    rest, err = proc.communicate(timeout=120)
    return lines + [l.strip() for l in rest.splitlines()], proc.returncode, err


class TorchResumeTest(unittest.TestCase):
    def setUp(self):
        self.base = tempfile.mkdtemp(prefix="idletime-ckpt-torch.")

    def tearDown(self):
        shutil.rmtree(self.base, ignore_errors=True)

    def test_interrupted_twice_is_bitwise_equal(self):
        full, cut = os.path.join(self.base, "full"), os.path.join(self.base, "cut")
        p = start([], os.path.join(self.base, "a"), full, 0)
        out, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 0, err)
        # 1st interruption: after the first periodic save; 2nd: right after resuming.
        d = os.path.join(self.base, "b")
        lines, rc, err = interrupt_after(start([], d, cut, 0.01), "saved 40")
        self.assertEqual(rc, 75, err)
        first = [l for l in lines if l.startswith("notice")]
        self.assertEqual(len(first), 1, lines)
        lines, rc, err = interrupt_after(start([], d, cut, 0.01), "resumed")
        self.assertEqual(rc, 75, err)
        self.assertIn("resumed %s" % first[0].split()[1], lines)
        notice2 = int([l for l in lines if l.startswith("notice")][0].split()[1])
        self.assertLess(notice2, STEPS)
        self.assertFalse(os.path.exists(cut))
        p = start([], d, cut, 0)
        out, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 0, err)
        self.assertIn("resumed %d" % notice2, out.split("\n"))
        with open(full, "rb") as f1, open(cut, "rb") as f2:
            a, b = f1.read(), f2.read()
        self.assertGreater(len(a), 4000)
        self.assertTrue(a == b, "final parameters differ after interrupted training")


if __name__ == "__main__":
    unittest.main()
