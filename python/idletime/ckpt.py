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
           "TimeLimitReached", "WorldSizeError", "load_library"]

_LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)
_ALLREDUCE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64),
                                 ctypes.c_size_t)


class _Group(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_uint), ("world_size", ctypes.c_uint),
                ("allreduce_max", _ALLREDUCE_FN), ("arg", ctypes.c_void_p),
                ("run_id", ctypes.c_char_p), ("timeout_s", ctypes.c_uint)]


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


class WorldSizeError(CheckpointError):
    """A sharded file of a checkpoint saved by another number of ranks (errno EXDEV, C:
    IDLETIME_CKPT_EWORLD): restart with the saved world size. Replicated files never raise it."""


_ERRORS = {errno.ENOTCONN: MungeUnavailableError, errno.ETIME: ClockSkewError,
           errno.ETIMEDOUT: TimeLimitReached, errno.EXDEV: WorldSizeError}


def _error(code, msg):
    return _ERRORS.get(code, CheckpointError)(code, msg)


_lib = None


def load_library():
    """Loads libidletime-ckpt once and declares its functions."""
    global _lib
    if _lib is not None:
        return _lib
    # IDLETIME_CKPT_LIB, when set, is the only library tried: silently loading another one
    # (an older install under /usr/local) would hide the mistake.
    explicit = os.environ.get("IDLETIME_CKPT_LIB")
    names = [explicit] if explicit else ["libidletime-ckpt.so.0", "libidletime-ckpt.so",
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
        "deadline": (ctypes.c_int64, [H]), "notice_signal": (i, [H]), "notice_fd": (i, [H]),
        "progress": (i, [H, u64]), "release": (i, [H]),
        "group_init": (None, [ctypes.POINTER(_Group)]),
        "join": (i, [H, ctypes.POINTER(_Group)]),
        "agree": (i, [H, u64, ctypes.POINTER(i)]),
        "add_replicated": (i, [H, cp, ctypes.c_void_p, sz]),
        "rank": (ctypes.c_uint, [H]), "world_size": (ctypes.c_uint, [H]),
    }
    # Missing from an older library: single-process use and the flag still work without them.
    optional = {"group_init", "join", "agree", "add_replicated", "rank", "world_size", "notice_fd"}
    for short, (res, args) in sigs.items():
        try:
            fn = getattr(lib, "idletime_ckpt_" + short)
        except AttributeError:
            if short in optional:
                continue
            raise
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
            msg = self._message()
            cb_error, self._cb_error = getattr(self, "_cb_error", None), None
            if cb_error is not None:
                msg = "%s (%s: %s)" % (msg, type(cb_error).__name__, cb_error)
            raise _error(-rc, msg)
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
        """Bytes of one file, checked against the manifest's size and checksum (XXH3-128; SHA-256 in format 1).

        In a group, name is the replicated file, else this rank's shard (WorldSizeError when the
        checkpoint was saved by another world size)."""
        got = ctypes.c_size_t()
        rc = self._lib.idletime_ckpt_read(self._handle(), step, _enc(name), None, 0,
                                          ctypes.byref(got))
        if rc == -errno.ERANGE:
            buf = ctypes.create_string_buffer(got.value)
            self._check(self._lib.idletime_ckpt_read(self._h, step, _enc(name), buf, len(buf),
                                                     ctypes.byref(got)))
            return buf.raw[:got.value]
        self._check(rc)
        return b""

    def path(self, step, name):
        buf = ctypes.create_string_buffer(4096)
        self._check(self._lib.idletime_ckpt_file_path(self._handle(), step, _enc(name), buf,
                                                      len(buf)))
        return buf.value.decode()

    # -- saving --
    def begin(self, step):
        self._pending = []
        self._check(self._lib.idletime_ckpt_begin(self._handle(), step))

    def add(self, name, data, replicated=False):
        """data: bytes or any buffer (bytearray, memoryview, numpy array); not copied here.

        In a group (join()): this rank's shard, unless replicated (only rank 0's copy is written;
        readable on any world size)."""
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
        fn = self._lib.idletime_ckpt_add_replicated if replicated else self._lib.idletime_ckpt_add
        self._check(fn(self._handle(), _enc(name), ptr, n))

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

    # -- multi-rank jobs --
    def join(self, rank=None, world_size=None, allreduce_max=None, run_id=None, timeout=0):
        """Makes this checkpointer one rank of a group (see ckpt.h, "Multi-rank jobs").

        rank/world_size None: env RANK/WORLD_SIZE, else SLURM_PROCID/SLURM_NTASKS.
        allreduce_max(list of ints) -> list of ints, the element-wise maximum over all ranks
        (values are 0..2**64-1); None: the library's file coordinator in the checkpoint
        directory (run_id, timeout in seconds: see ckpt.h).
        """
        if not hasattr(self._lib, "idletime_ckpt_join"):
            raise CheckpointError(errno.ENOSYS, "join(): the loaded libidletime-ckpt has no "
                                  "multi-rank support; install the matching library version")
        g = _Group()
        self._lib.idletime_ckpt_group_init(ctypes.byref(g))
        if rank is not None:
            g.rank = rank
        if world_size is not None:
            g.world_size = world_size
        if allreduce_max is not None:
            def call(_arg, values, n):
                try:
                    out = allreduce_max([values[k] for k in range(n)])
                    for k in range(n):
                        values[k] = int(out[k])
                    return 0
                except Exception as e:  # noqa: BLE001 (reported by the failing call)
                    self._cb_error = e
                    return -errno.EIO
            self._allreduce = _ALLREDUCE_FN(call)  # kept alive as long as the handle
            g.allreduce_max = self._allreduce
        self._run_id = _enc(run_id)
        g.run_id = self._run_id
        g.timeout_s = int(timeout)
        self._check(self._lib.idletime_ckpt_join(self._handle(), ctypes.byref(g)))

    def agree(self, step):
        """Collective, once per step on every rank: True on all ranks when any got the notice."""
        stop = ctypes.c_int()
        self._check(self._lib.idletime_ckpt_agree(self._handle(), step, ctypes.byref(stop)))
        return bool(stop.value)

    @property
    def rank(self):
        return self._lib.idletime_ckpt_rank(self._handle())

    @property
    def world_size(self):
        return self._lib.idletime_ckpt_world_size(self._handle())

    # -- notice, heartbeat, release --
    def install_notice(self, signo=0):
        """signo 0 = env IDLETIME_CKPT_SIGNAL (default SIGUSR1); SIGTERM is always caught."""
        self._check(self._lib.idletime_ckpt_install_notice(self._handle(), int(signo)))
        # A later signal.signal() for these signals would replace the library's handler.
        return signal.Signals(self._lib.idletime_ckpt_notice_signal(self._h))

    def notice_fd(self):
        """A descriptor that becomes readable when the notice (or SIGTERM) arrives, for select(),
        selectors or asyncio's loop.add_reader(); do not read or close it. It stays readable: stop
        watching it once it fired (asyncio: remove_reader in the callback). The library's handler
        is a C sigaction, so signal.set_wakeup_fd() never fires for the notice: use this. A forked
        child calls install_notice() again before asking for it."""
        if not hasattr(self._lib, "idletime_ckpt_notice_fd"):
            raise CheckpointError(errno.ENOSYS, "notice_fd(): the loaded libidletime-ckpt is older "
                                  "than this binding; install the matching library")
        fd = self._lib.idletime_ckpt_notice_fd(self._handle())
        if fd < 0:
            raise CheckpointError(-fd, "notice_fd(): call install_notice() first")
        return fd

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
