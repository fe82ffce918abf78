"""A private munged for the Python tests (own key, socket, pid/log/seed files), stopped by PID."""
import os
import shutil
import subprocess
import tempfile
import time


class Munged:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="idletime-ckpt-pymunge.")
        os.chmod(self.dir, 0o755)  # munged refuses a 0700 socket directory
        self.socket = os.path.join(self.dir, "socket")
        key = os.path.join(self.dir, "key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o600)
        self.proc = subprocess.Popen(
            ["/usr/sbin/munged", "-F", "--socket=" + self.socket, "--key-file=" + key,
             "--pid-file=" + self.dir + "/pid", "--log-file=" + self.dir + "/log",
             "--seed-file=" + self.dir + "/seed"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(500):
            if os.path.exists(self.socket):
                return
            time.sleep(0.01)
        self.stop()
        raise RuntimeError("munged did not start")

    def stop(self):
        if self.proc:
            self.proc.terminate()
            self.proc.wait()
            self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)
