"""unittest for the ctypes binding idletime.ckpt (run by /usr/bin/python3, needs root)."""
import errno
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mungetest import Munged  # noqa: E402
from idletime import Checkpointer, CheckpointError, MungeUnavailableError  # noqa: E402

MUNGED = None


def setUpModule():
    global MUNGED
    MUNGED = Munged()
    os.environ["IDLETIME_MUNGE_SOCKET"] = MUNGED.socket


def tearDownModule():
    MUNGED.stop()


class BindingTest(unittest.TestCase):
    def setUp(self):
        self.base = tempfile.mkdtemp(prefix="idletime-ckpt-py.")
        self.dir = os.path.join(self.base, "ck")
        self.log = []

    def tearDown(self):
        shutil.rmtree(self.base, ignore_errors=True)

    def open(self, **kw):
        kw.setdefault("job_id", "31337")
        return Checkpointer(self.dir, log=self.log.append, **kw)

    def test_roundtrip_sync_and_async(self):
        with self.open() as c:
            self.assertIsNone(c.latest())
            c.save(1, {"a": b"hello", "b": bytearray(b"\x00" * 1000)})
            buf = bytearray(b"x" * 100000)
            c.save(2, {"big": buf, "mv": memoryview(b"readonly")}, asynchronous=True)
            buf[:] = b"y" * len(buf)  # copied before commit returned
            c.wait()
            step, path = c.latest()
            self.assertEqual((step, path), (2, os.path.join(self.dir, "step-000000000002")))
            self.assertEqual(c.files(2), [("big", 100000), ("mv", 8)])
            self.assertEqual(c.read(2, "big"), b"x" * 100000)
            self.assertEqual(c.read(1, "a"), b"hello")
            self.assertTrue(os.path.isfile(c.path(1, "b")))
            with open(os.path.join(path, "MANIFEST.json"), encoding="utf-8") as f:
                self.assertIn('"munge":"MUNGE:', f.read())
        self.assertEqual(self.log, [])

    def test_corruption_falls_back(self):
        with self.open() as c:
            c.save(1, {"a": b"one"})
            c.save(2, {"a": b"two"})
        with open(os.path.join(self.dir, "step-000000000002", "a"), "wb") as f:
            f.write(b"TWO")
        with self.open() as c:
            self.assertEqual(c.latest()[0], 1)
            self.assertEqual(c.read(1, "a"), b"one")
            with self.assertRaises(CheckpointError) as cm:
                c.files(2)
            self.assertEqual(cm.exception.errno, errno.ENOENT)
        self.assertTrue(any("XXH3-128 checksum" in m for m in self.log), self.log)

    def test_untrusted_dirs_refused(self):
        os.mkdir(self.dir, 0o700)
        os.chown(self.dir, 65534, 65534)
        with self.assertRaises(CheckpointError) as cm:
            self.open()
        self.assertEqual(cm.exception.errno, errno.EPERM)
        self.assertIn("owned by uid 65534", str(cm.exception))
        os.chown(self.dir, 0, 0)
        os.chmod(self.dir, 0o777)
        with self.assertRaisesRegex(CheckpointError, "group/world writable"):
            self.open()

    def test_other_job_refused(self):
        with self.open(job_id="1") as c:
            c.save(1, {"a": b"x"})
        with self.open(job_id="2") as c:
            self.assertIsNone(c.latest())
        self.assertTrue(any('written by job "1"' in m for m in self.log), self.log)

    def test_explicit_library_is_the_only_one(self):
        """IDLETIME_CKPT_LIB that cannot be loaded is an error, never a silent fall-back to
        another libidletime-ckpt (an older one under /usr/local, say)."""
        env = dict(os.environ, IDLETIME_CKPT_LIB=os.path.join(self.base, "missing.so"))
        r = subprocess.run([sys.executable, "-c", "import idletime.ckpt as c; c.load_library()"],
                           env=env, capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertIn("cannot load libidletime-ckpt", r.stderr)
        self.assertIn("missing.so", r.stderr)

    def test_munge_down_raises_not_skips(self):
        with self.open() as c:
            c.save(1, {"a": b"one"})
        listing = sorted(os.listdir(self.dir))
        os.environ["IDLETIME_MUNGE_SOCKET"] = os.path.join(self.base, "no-munged")
        try:
            with self.open() as c:
                with self.assertRaises(MungeUnavailableError) as cm:
                    c.latest()
                self.assertEqual(cm.exception.errno, errno.ENOTCONN)
                self.assertIsInstance(cm.exception, CheckpointError)
                self.assertIn("munge unavailable", str(cm.exception))
                self.assertIn("IDLETIME_MUNGE_SOCKET", str(cm.exception))
        finally:
            os.environ["IDLETIME_MUNGE_SOCKET"] = MUNGED.socket
        self.assertEqual(sorted(os.listdir(self.dir)), listing)
        self.assertEqual(self.log, [])
        with self.open() as c:
            self.assertEqual(c.latest()[0], 1)

    def test_errors_are_exceptions(self):
        with self.open() as c:
            c.save(5, {"a": b"x"})
            with self.assertRaisesRegex(CheckpointError, "steps must increase"):
                c.save(5, {"a": b"x"})
            with self.assertRaisesRegex(CheckpointError, "invalid checkpoint file name"):
                c.save(6, {"../evil": b"x"})
            with self.assertRaisesRegex(CheckpointError, "no numeric Slurm job id"):
                Checkpointer(self.dir + "2", job_id="").release()
        with self.assertRaisesRegex(CheckpointError, "IDLETIME_CKPT_DIR"):
            env = os.environ.pop("IDLETIME_CKPT_DIR", None)
            try:
                Checkpointer(None)
            finally:
                if env is not None:
                    os.environ["IDLETIME_CKPT_DIR"] = env

    def test_notice_and_heartbeat_in_child(self):
        code = (
            "import os, signal, time, sys\n"
            "from idletime import Checkpointer\n"
            "c = Checkpointer(%r, job_id='')\n"
            "assert c.install_notice() == signal.SIGUSR2\n"
            "assert not c.preempt_requested and c.deadline == 0\n"
            "c.progress(9)\n"
            "t = time.time()\n"
            "os.kill(os.getpid(), signal.SIGUSR2)\n"
            # The kernel may deliver the signal to any thread of the process: wait for the flag.
            "for _ in range(300):\n"
            "    if c.preempt_requested: break\n"
            "    time.sleep(0.01)\n"
            "assert c.preempt_requested\n"
            "assert abs(c.deadline - (t + 7)) <= 1, c.deadline\n"
            "print(open(os.environ['IDLETIME_HEARTBEAT_FILE']).read(), end='')\n" % self.dir)
        env = dict(os.environ, IDLETIME_CKPT_SIGNAL="SIGUSR2", IDLETIME_GRACE_TIME="7",
                   IDLETIME_HEARTBEAT_FILE=os.path.join(self.base, "hb"))
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=False)
        self.assertEqual(out.returncode, 0, out.stderr)
        step, when, saving = out.stdout.split()
        self.assertEqual((step, saving), ("9", "0"))
        self.assertLessEqual(abs(int(when) - __import__("time").time()), 5)

    def test_notice_fd_wakes_select(self):
        code = (
            "import os, select, signal\n"
            "from idletime import Checkpointer, CheckpointError\n"
            "c = Checkpointer(%r, job_id='')\n"
            "try:\n"
            "    c.notice_fd()\n"
            "    raise SystemExit('notice_fd() before install_notice() did not raise')\n"
            "except CheckpointError as e:\n"
            "    assert 'install_notice' in str(e), e\n"
            "c.install_notice()\n"
            "fd = c.notice_fd()\n"
            "assert select.select([fd], [], [], 0)[0] == []\n"
            "os.kill(os.getpid(), signal.SIGUSR1)\n"
            # [] would mean the 60 s timeout passed: the notice must wake select().
            "r = select.select([fd], [], [], 60)[0]\n"
            "assert r == [fd] and c.preempt_requested, r\n"
            "print('woken')\n" % self.dir)
        env = dict(os.environ)
        env.pop("IDLETIME_CKPT_SIGNAL", None)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=False)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout, "woken\n")


if __name__ == "__main__":
    unittest.main()
