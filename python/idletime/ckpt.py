"""ctypes binding of libidletime-ckpt (include/idletime/ckpt.h); standard library only.

The library is found through env IDLETIME_CKPT_LIB (a path), else the standard names
libidletime-ckpt.so.0 / libidletime-ckpt.so on the loader path.
"""
import ctypes
import ctypes.util
import errno
import os
import signal

__all__ = ["Checkpointer", "CheckpointError", "MungeUnavailableError", "ClockSkewError",
           "TimeLimitReached", "load_library"]

_LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)


class _Options(ctypes.Structure):
    _fields_ = [("keep_last", ctypes.c_uint), ("job_id", ctypes.c_char_p),
                ("require_munge", ctypes.c_int), ("log", _LOG_FN), ("log_arg", ctypes.c_void_p)]


class CheckpointError(OSError):
    """A library call failed: .errno is the positive errno, str() the library's message."""


class MungeUnavailableError(CheckpointError):
    """munged did not answer (down, wrong IDLETIME_MUNGE_SOCKET): checkpoints could not be checked.

    errno ENOTCONN (C: IDLETIME_CKPT_EMUNGE). Not a verdict on any checkpoint: stop (exit
    non-zero) and retry once munged is back; never start from step 0 on it.
    """


class ClockSkewError(CheckpointError):
    """A checkpoint's munge credential was made in the future (the nodes' clocks differ).

    errno ETIME (C: IDLETIME_CKPT_ESKEW). Sync the clocks and retry; do not start from step 0.
    """


class TimeLimitReached(CheckpointError):
    """release() at the job's time limit (Slurm's warning uses the notice signal): nothing was
    requeued and the job ends TIMEOUT. errno ETIMEDOUT (C: IDLETIME_CKPT_ETIMELIMIT). Not an error
    of the checkpoints: exit; --requeue-at-time-limit asks the hook to requeue the job."""


_ERRORS = {errno.ENOTCONN: MungeUnavailableError, errno.ETIME: ClockSkewError,
           errno.ETIMEDOUT: TimeLimitReached}


def _error(code, msg):
    return _ERRORS.get(code, CheckpointError)(code, msg)


_lib = None


def load_library():
    """Loads libidletime-ckpt once and declares its functions."""
    global _lib
    if _lib is not None:
        return _lib
    names = [os.environ.get("IDLETIME_CKPT_LIB"), "libidletime-ckpt.so.0", "libidletime-ckpt.so",
             ctypes.util.find_library("idletime-ckpt")]
    errors = []
    for name in filter(None, names):
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError as e:
            errors.append(str(e))
    else:
        raise OSError("idletime/ckpt: cannot load libidletime-ckpt (set IDLETIME_CKPT_LIB): "
                      + "; ".join(errors))
    H, u64, sz, cp = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_char_p
    i = ctypes.c_int
    sigs = {
        "options_init": (None, [ctypes.POINTER(_Options)]),
        "open": (i, [cp, ctypes.POINTER(_Options), ctypes.POINTER(H)]),
        "close": (i, [H]), "last_error": (cp, [H]), "dir": (cp, [H]),
        "latest": (i, [H, ctypes.POINTER(u64), ctypes.c_char_p, sz]),
        "begin": (i, [H, u64]), "add": (i, [H, cp, ctypes.c_void_p, sz]),
        "commit": (i, [H]), "commit_async": (i, [H]), "wait": (i, [H]), "saving": (i, [H]),
        "file_count": (i, [H, u64, ctypes.POINTER(sz)]),
        "file_info": (i, [H, u64, sz, ctypes.POINTER(cp), ctypes.POINTER(u64)]),
        "read": (i, [H, u64, cp, ctypes.c_void_p, sz, ctypes.POINTER(sz)]),
        "file_path": (i, [H, u64, cp, ctypes.c_char_p, sz]),
        "install_notice": (i, [H, i]), "preempt_requested": (i, [H]),
        "deadline": (ctypes.c_int64, [H]), "notice_signal": (i, [H]),
        "progress": (i, [H, u64]), "release": (i, [H]),
    }
    for short, (res, args) in sigs.items():
        fn = getattr(lib, "idletime_ckpt_" + short)
        fn.restype, fn.argtypes = res, args
    _lib = lib
    return lib


def _enc(s):
    return s.encode() if isinstance(s, str) else s


class Checkpointer:
    """One checkpoint directory (see ckpt.h for the on-disk format and the trust rules).

    directory None = env IDLETIME_CKPT_DIR; job_id None = env SLURM_JOB_ID, "" = none;
    require_munge None = on iff a job id is known; log(msg) receives rejection messages
    (default: the library prints them to stderr with the prefix "idletime/ckpt: ").
    """

    def __init__(self, directory=None, keep_last=3, job_id=None, require_munge=None, log=None):
        self._lib = load_library()
        self._h = ctypes.c_void_p()
        self._pending = []  # keeps buffers alive until commit returns
        opt = _Options()
        self._lib.idletime_ckpt_options_init(ctypes.byref(opt))
        opt.keep_last = keep_last
        opt.job_id = _enc(job_id)
        opt.require_munge = -1 if require_munge is None else int(bool(require_munge))
        self._log = _LOG_FN(lambda _arg, msg: log(msg.decode(errors="replace"))) if log else None
        if self._log:
            opt.log = self._log
        rc = self._lib.idletime_ckpt_open(_enc(directory), ctypes.byref(opt), ctypes.byref(self._h))
        if rc:
            msg = self._message()
            self._lib.idletime_ckpt_close(self._h)
            self._h = None
            raise CheckpointError(-rc, msg)

    # -- plumbing --
    def _message(self):
        m = self._lib.idletime_ckpt_last_error(self._h)
        return m.decode(errors="replace") if m else ""

    def _check(self, rc):
        if rc < 0:
            raise _error(-rc, self._message())
        return rc

    def _handle(self):
        if not self._h:
            raise CheckpointError(errno.EBADF, "checkpointer is closed")
        return self._h

    def close(self):
        """Waits for an in-flight save and frees the handle; raises its error if it failed."""
        if self._h:
            h, self._h = self._h, None
            rc = self._lib.idletime_ckpt_close(h)
            if rc:
                raise CheckpointError(-rc, "in-flight save failed at close")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def directory(self):
        return self._lib.idletime_ckpt_dir(self._handle()).decode()

    # -- reading --
    def latest(self):
        """(step, path) of the newest complete checkpoint, or None.

        Planted or copied checkpoints (another uid's, job's or cluster's credential, bad digest,
        corrupt files) are logged and skipped, as if absent. Raises MungeUnavailableError when
        munged is unreachable and ClockSkewError on a credential from the future: then nothing
        was skipped, and the caller must stop rather than start from scratch.
        """
        step, path = ctypes.c_uint64(), ctypes.create_string_buffer(4096)
        rc = self._lib.idletime_ckpt_latest(self._handle(), ctypes.byref(step), path, len(path))
        if rc == -errno.ENOENT:
            return None
        self._check(rc)
        return step.value, path.value.decode()

    def files(self, step):
        """[(name, size)] of a complete checkpoint, in manifest order."""
        n = ctypes.c_size_t()
        self._check(self._lib.idletime_ckpt_file_count(self._handle(), step, ctypes.byref(n)))
        out = []
        for i in range(n.value):
            name, size = ctypes.c_char_p(), ctypes.c_uint64()
            self._check(self._lib.idletime_ckpt_file_info(self._h, step, i, ctypes.byref(name),
                                                          ctypes.byref(size)))
            out.append((name.value.decode(), size.value))
        return out

    def read(self, step, name):
        """Bytes of one file, checked against the manifest's size and checksum (XXH3-128; SHA-256 in format 1)."""
        size = dict(self.files(step)).get(name)
        if size is None:
            raise CheckpointError(errno.ENOENT, "checkpoint step %d has no file %r" % (step, name))
        buf, got = ctypes.create_string_buffer(max(size, 1)), ctypes.c_size_t()
        self._check(self._lib.idletime_ckpt_read(self._h, step, _enc(name), buf, len(buf),
                                                 ctypes.byref(got)))
        return buf.raw[:got.value]

    def path(self, step, name):
        buf = ctypes.create_string_buffer(4096)
        self._check(self._lib.idletime_ckpt_file_path(self._handle(), step, _enc(name), buf,
                                                      len(buf)))
        return buf.value.decode()

    # -- saving --
    def begin(self, step):
        self._pending = []
        self._check(self._lib.idletime_ckpt_begin(self._handle(), step))

    def add(self, name, data):
        """data: bytes or any buffer (bytearray, memoryview, numpy array); not copied here."""
        if isinstance(data, bytes):
            ptr, n, keep = data, len(data), data
        else:
            mv = memoryview(data).cast("B")
            if mv.readonly:
                keep = bytes(mv)
                ptr, n = keep, len(keep)
            else:
                ptr = (ctypes.c_char * mv.nbytes).from_buffer(mv)
                n, keep = mv.nbytes, (ptr, mv)
        self._pending.append(keep)
        self._check(self._lib.idletime_ckpt_add(self._handle(), _enc(name), ptr, n))

    def commit(self, asynchronous=False):
        """Persists the begun checkpoint; asynchronous: copy now, persist in the background."""
        fn = self._lib.idletime_ckpt_commit_async if asynchronous else self._lib.idletime_ckpt_commit
        try:
            self._check(fn(self._handle()))
        finally:
            self._pending = []

    def save(self, step, items, asynchronous=False):
        """items: {name: buffer}."""
        self.begin(step)
        for name, data in items.items():
            self.add(name, data)
        self.commit(asynchronous)

    def wait(self):
        self._check(self._lib.idletime_ckpt_wait(self._handle()))

    @property
    def saving(self):
        return bool(self._lib.idletime_ckpt_saving(self._handle()))

    # -- notice, heartbeat, release --
    def install_notice(self, signo=0):
        """signo 0 = env IDLETIME_CKPT_SIGNAL (default SIGUSR1); SIGTERM is always caught."""
        self._check(self._lib.idletime_ckpt_install_notice(self._handle(), int(signo)))
        # A later signal.signal() for these signals would replace the library's handler.
        return signal.Signals(self._lib.idletime_ckpt_notice_signal(self._h))

    @property
    def preempt_requested(self):
        return bool(self._lib.idletime_ckpt_preempt_requested(self._handle()))

    @property
    def deadline(self):
        """Epoch seconds by which the job must be done saving, or 0 before any notice."""
        return self._lib.idletime_ckpt_deadline(self._handle())

    def progress(self, step):
        self._check(self._lib.idletime_ckpt_progress(self._handle(), step))

    def release(self):
        """After the final save is durable: requeue our own Slurm job now if Slurm picked it as a
        preemption victim. At a time-limit warning (no preemption recorded by Slurm) it does not
        requeue: it waits until Slurm ends the job at its limit (TIMEOUT); see ckpt.h."""
        self._check(self._lib.idletime_ckpt_release(self._handle()))
