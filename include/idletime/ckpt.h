/*
 * idletime checkpoint library (libidletime-ckpt): atomic, verified checkpoints, the preemption
 * notice, a progress heartbeat and fast release of a preempted Slurm job.
 *
 * Conventions
 *   - Every function returns 0 on success or a negative errno value (-EINVAL, -ENOENT, -EIO, ...);
 *     on failure idletime_ckpt_last_error(h) gives a one-line message. No function throws,
 *     aborts or exits. Sizes are bytes, times are seconds since the Unix epoch, steps are
 *     caller-chosen uint64_t numbers (newer = larger).
 *   - A handle is used by one thread at a time; the library runs one background thread of its own
 *     for asynchronous saves.
 *
 * Layout on disk (the directory is trusted only if it is a real directory, owned by the caller's
 * effective uid and not group/world writable; otherwise open fails and nothing is read):
 *   <dir>/step-<12-digit step>/<name>...        data files, one per added buffer
 *   <dir>/step-<12-digit step>/MANIFEST.json    written last: {"format":"idletime-ckpt-2",
 *        "step":N, "job_id":"123", "uid":U, "saved_at":T, "saved_at_ns":NS,
 *        "files":[{"name":..,"size":..,"xxh3_128":"<32 hex>"}], "munge":"<credential>"}
 *   The munge credential's payload is "<format> job=<job id> step=<step> digest=<SHA-256 of the
 *   manifest's canonical text>"; the canonical text covers every field above but "munge".
 *   Formats: saves write "idletime-ckpt-2" (per-file XXH3-128, canonical big-endian hex as
 *   `xxhsum -H2` prints it). "idletime-ckpt-1" manifests (per-file "sha256", 64 hex) written by
 *   earlier versions are still read and verified the same way; any other format is rejected.
 *   A checkpoint is written into <dir>/.tmp-step-N@<host>@<pid>@<start>@<seq>/, every file and
 *   the directory are fsynced, then it is renamed into place and <dir> is fsynced. For the whole
 *   save the writer holds an OFD write lock (fcntl F_OFD_SETLK) on <temp>.lock, which exists
 *   before the temporary and is removed after it. open() removes a temporary only when its
 *   writer is gone: no lock file, or its lock can be taken; on a file system without byte-range
 *   locks, when the name says "this host" and that pid (with that start time) has exited. So
 *   opening a directory never deletes the in-progress save of another rank, process or host.
 *   Pruned copies (.tmp-del-*) are always removable.
 *
 * Trust (why a non-cryptographic per-file checksum is enough)
 *   The data files live in step directories that, like <dir>, must be owned by us and not
 *   group/world writable, so only our uid (or root) can create, replace or change them. What
 *   binds a checkpoint to our uid, job and step is the munge credential over the SHA-256 digest
 *   of the manifest, which lists every file's size and checksum: another user can neither plant
 *   files nor forge or reuse a manifest. The only writer that could craft colliding file
 *   contents is the owner, who can sign any manifest anyway; so the per-file checksum only has
 *   to detect corruption (torn or lost writes, bit rot, truncation, a stray edit), which
 *   XXH3-128 does (128 bits; sizes are checked separately) at memory speed instead of SHA-256's
 *   ~1.7 GB/s, keeping persist near disk speed.
 *
 * Environment
 *   IDLETIME_CKPT_DIR        checkpoint directory when open() gets dir == NULL
 *   SLURM_JOB_ID             default job id
 *   IDLETIME_MUNGE_SOCKET    munged socket (default: libmunge's default socket)
 *   IDLETIME_CKPT_SIGNAL     notice signal: name ("USR1", "SIGUSR2") or number; default SIGUSR1
 *   IDLETIME_GRACE_TIME      seconds from the notice to the deadline (default 0)
 *   IDLETIME_HEARTBEAT_FILE  heartbeat file written by idletime_ckpt_progress (unset: no-op)
 */
#ifndef IDLETIME_CKPT_H
#define IDLETIME_CKPT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/* Named errors (negative errnos like every other error; added without renumbering any).
 * IDLETIME_CKPT_EMUNGE: munged did not answer (down, wrong IDLETIME_MUNGE_SOCKET, overloaded):
 *   the checkpoints could not be checked. Not a verdict on them: retry when munged is back.
 * IDLETIME_CKPT_ESKEW: a credential was made in the future by the saving host's clock (munge
 *   EMUNGE_CRED_REWOUND): the clocks of the nodes differ; sync them (chrony/ntpd) and retry. */
#define IDLETIME_CKPT_EMUNGE (-ENOTCONN)
#define IDLETIME_CKPT_ESKEW (-ETIME)
/* IDLETIME_CKPT_ETIMELIMIT: release() at the job's time limit: nothing requeued, the job ends
 *   TIMEOUT (see idletime_ckpt_release). Not an error of the checkpoints. */
#define IDLETIME_CKPT_ETIMELIMIT (-ETIMEDOUT)
/* IDLETIME_CKPT_EWORLD: a sharded file of a checkpoint saved by a different number of ranks
 *   (read() in a group): restart with the saved world size. Replicated files have no such rule. */
#define IDLETIME_CKPT_EWORLD (-EXDEV)

#ifdef __cplusplus
extern "C" {
#endif

typedef struct idletime_ckpt idletime_ckpt_t;

/* Receives each message about a rejected checkpoint or a cleanup (one line, no newline).
 * Default sink: stderr with the prefix "idletime/ckpt: ". May be called from the library's
 * background thread (pruning after an async save). */
typedef void (*idletime_ckpt_log_fn)(void *arg, const char *msg);

typedef struct idletime_ckpt_options {
    unsigned keep_last;       /* complete checkpoints to keep, >= 1; 0 = default 3 */
    const char *job_id;       /* NULL = env SLURM_JOB_ID (unset: no job id); "" = no job id */
    int require_munge;        /* -1 = default (1 iff a job id is known), 0 = off, 1 = on.
                               * On: every save carries a munge credential and latest() accepts
                               * only checkpoints whose credential decodes to the caller's uid
                               * with the same job id, step and digest. Off: none written or
                               * checked. */
    idletime_ckpt_log_fn log; /* NULL = stderr */
    void *log_arg;
} idletime_ckpt_options_t;

/* Fills *opt with the defaults above. */
void idletime_ckpt_options_init(idletime_ckpt_options_t *opt);

/* Opens (creating with mode 0700 if missing; the parent must exist) the checkpoint directory.
 * dir NULL = env IDLETIME_CKPT_DIR; opt NULL = defaults. On failure *out is a handle that only
 * carries the error message (read it with last_error, free it with close) or NULL when out of
 * memory. Errors: -EINVAL (no dir, bad option), -EPERM (untrusted directory: symlink, other
 * owner, group/world writable, not a directory), -ENOENT (parent missing), other -errno. */
int idletime_ckpt_open(const char *dir, const idletime_ckpt_options_t *opt, idletime_ckpt_t **out);

/* Waits for an in-flight save, then frees h. NULL is fine. Returns the in-flight save's result. */
int idletime_ckpt_close(idletime_ckpt_t *h);

/* One-line message of the last failure on h ("" if none). Valid until the next call on h. */
const char *idletime_ckpt_last_error(const idletime_ckpt_t *h);

/* The checkpoint directory (absolute path as given/resolved). */
const char *idletime_ckpt_dir(const idletime_ckpt_t *h);

/* Newest complete checkpoint: manifest parses, every file has its size and checksum, and (munge
 * required) the credential decodes to our uid and job (expired/replayed credentials count as
 * authentic). Rejected ones (planted or copied: credential of another uid, job or munge key,
 * no credential, bad digest, corrupt files) are logged and skipped; when none is left, -ENOENT
 * and last_error lists what was rejected. *step gets its step; path (may be NULL) gets its
 * directory. Returns 0, -ENOENT (none), -ERANGE (path_len too small), -EIO,
 * IDLETIME_CKPT_EMUNGE (munged unreachable) or IDLETIME_CKPT_ESKEW (clock skew): these two
 * stop the search, nothing is skipped or changed, and last_error names the cause and the fix.
 * A caller must not start from scratch on them: a job would silently lose its progress. */
int idletime_ckpt_latest(idletime_ckpt_t *h, uint64_t *step, char *path, size_t path_len);

/* ---- Saving ----
 * begin(step) -> add(name, data, size)... -> commit() or commit_async().
 * Names: 1-200 chars of [A-Za-z0-9._-], not starting with '.', not "MANIFEST.json", unique.
 * add() records the pointer only: the buffer must stay valid and unchanged until commit() or
 * commit_async() returns. commit_async() copies all buffers into library memory (reused from
 * save to save), returns, and persists in the background thread. At most one save is in
 * flight: commit_async() and commit() first WAIT for a previous in-flight save (they never
 * return EBUSY). A failed background save is never published; its error is returned once by
 * the next call of begin/commit/commit_async/wait/release (that call does nothing else; call
 * it again). After each successful save, older complete checkpoints beyond keep_last are
 * deleted; the newest complete one is never deleted. After an async save they are renamed
 * away (no longer checkpoints) before wait() returns, and their files are removed by the
 * background thread afterwards, before it starts the next save and before close() returns
 * (deleting is kept off the path to durability; a process killed meanwhile leaves .tmp-del-*
 * entries, removed on the next open). Errors: -EINVAL (bad name/step/order,
 * step <= newest saved), -EEXIST (duplicate name), -ENOSPC/-EIO/-EACCES... from the disk,
 * -EPROTO (munge could not sign; the message says when munged was unreachable). */
int idletime_ckpt_begin(idletime_ckpt_t *h, uint64_t step);
int idletime_ckpt_add(idletime_ckpt_t *h, const char *name, const void *data, size_t size);
int idletime_ckpt_commit(idletime_ckpt_t *h);
int idletime_ckpt_commit_async(idletime_ckpt_t *h);
/* Waits until no save is in flight; returns its error if it failed (once). */
int idletime_ckpt_wait(idletime_ckpt_t *h);
/* 1 while an async save is being persisted, else 0. */
int idletime_ckpt_saving(const idletime_ckpt_t *h);

/* ---- Reading a complete checkpoint (verified like latest(); -ENOENT if step is not complete
 * or was rejected; IDLETIME_CKPT_EMUNGE / IDLETIME_CKPT_ESKEW as in latest()) ---- */
int idletime_ckpt_file_count(idletime_ckpt_t *h, uint64_t step, size_t *count);
/* i-th file (manifest order); *name valid until the next call on h. size may be NULL. */
int idletime_ckpt_file_info(idletime_ckpt_t *h, uint64_t step, size_t i, const char **name,
                            uint64_t *size);
/* Reads file name into buf (cap bytes); *len = its size. The bytes read are checked against the
 * manifest's size and checksum again. -ERANGE if cap is too small (then *len = needed size),
 * -ENOENT unknown name, -EIO mismatch. */
int idletime_ckpt_read(idletime_ckpt_t *h, uint64_t step, const char *name, void *buf, size_t cap,
                       size_t *len);
/* Path of file name into path (path_len bytes); -ERANGE if too small. */
int idletime_ckpt_file_path(idletime_ckpt_t *h, uint64_t step, const char *name, char *path,
                            size_t path_len);

/* ---- Preemption notice ----
 * Installs handlers for signo (0 = env IDLETIME_CKPT_SIGNAL, default SIGUSR1) and SIGTERM. The
 * handlers only set a flag and record the time (process-wide; previous handlers are replaced).
 * NCCL also uses SIGUSR1: pick another signal through the environment when it matters.
 * Errors: -EINVAL (unknown signal name/number or SIGKILL/SIGSTOP). */
int idletime_ckpt_install_notice(idletime_ckpt_t *h, int signo);
/* 1 once the notice (or SIGTERM) arrived, else 0. */
int idletime_ckpt_preempt_requested(const idletime_ckpt_t *h);
/* Notice time + IDLETIME_GRACE_TIME seconds (epoch seconds), or 0 before any notice. */
int64_t idletime_ckpt_deadline(const idletime_ckpt_t *h);
/* Signal number the notice handler listens to, or 0 if not installed. */
int idletime_ckpt_notice_signal(const idletime_ckpt_t *h);
/* For event loops (poll, select, epoll, asyncio's add_reader): a descriptor that becomes readable
 * when the notice (or SIGTERM) arrives and stays readable: a level-triggered watcher fires on
 * every turn, so stop watching it once it fired (asyncio: remove_reader in the callback). Do not
 * read from it or close it (closing breaks it for the rest of the process; the handler never
 * raises SIGPIPE). It is the read end of a non-blocking, close-on-exec socket pair the handler
 * sends one byte on, one per process, kept until exit (close() leaves it open; a later
 * install_notice keeps it). A forked child's notice does not reach its parent's descriptor; the
 * child gets -ENOENT until it calls install_notice itself (then its own pair).
 * -ENOENT before install_notice. */
int idletime_ckpt_notice_fd(const idletime_ckpt_t *h);

/* ---- Heartbeat ----
 * Replaces the file env IDLETIME_HEARTBEAT_FILE (temp file + rename, no fsync) with one line
 *   "<step> <unix_time> <saving 0|1>\n"
 * saving is 1 while a save is being persisted (the library rewrites the file itself when a
 * save starts and ends), so a hang detector must not fire while it is 1. Env unset: no-op,
 * returns 0. */
int idletime_ckpt_progress(idletime_ckpt_t *h, uint64_t step);

/* ---- Fast release ----
 * Waits for the in-flight save, and if it (and every earlier one) succeeded, asks Slurm to
 * requeue our own job now (slurm_requeue(job_id, JOB_RUNNING): slurmctld requeues it only if it
 * is still RUNNING, or suspended, when the request arrives) so the preempting job need not wait for the grace
 * period. Call it only after a preemption notice: a job that finished its work should just
 * exit. On success Slurm will terminate this job shortly; exit. Errors: -EINVAL (no job id or a
 * non-numeric one; checked first, Slurm is not contacted), a failed save's error (nothing is
 * requeued), -ECANCELED (Slurm refused, or the job is no longer RUNNING: scancel also sends the
 * SIGTERM that raises the notice, and a job being cancelled is not requeued; the message says
 * which; a scancel that reaches slurmctld after that check returns 0 and is not requeued either).
 * The final save's checkpoint-time update already loaded the job: when that load is at most 10 s
 * old and shows the preemption, release() uses it and costs one RPC, the requeue.
 * Time limit: the notice signal is also Slurm's warning before the job's time limit. release()
 * requeues only a job Slurm has picked as a preemption victim (its preempt_time is set). When
 * Slurm records no preemption and the time limit is near, release() does not requeue: it waits
 * (polling slurmctld every 2 s) until Slurm ends the job at its limit, so the job ends TIMEOUT,
 * and then returns IDLETIME_CKPT_ETIMELIMIT (-ETIMEDOUT) if still alive (requeues at once if Slurm picks the job as a victim
 * meanwhile). Jobs submitted with --requeue-at-time-limit are requeued by the fault-tolerance
 * hook after they end TIMEOUT, counted like a restart. No preemption and the limit not near
 * (a stray signal): -ECANCELED, nothing requeued. */
int idletime_ckpt_release(idletime_ckpt_t *h);

/* ---- Multi-rank jobs (a group: one checkpoint per job, saved by all ranks together) ----
 * Call order on every rank (doc/design/multi-rank-checkpoints.md):
 *   open -> join -> install_notice -> latest + read (resume)
 *   each step: agree(step, &stop); every save: begin(step), add()/add_replicated()..., commit()
 *   stop: begin/add/commit of that step, then release() (only rank 0 asks Slurm), exit.
 * join(), agree(), latest() and commit() are collectives: every rank calls them, in the same
 * order, with the same step. The agreement runs through allreduce_max (e.g. MPI_Allreduce with
 * MPI_MAX on MPI_UINT64_T, or torch.distributed) or, when it is NULL, through a built-in
 * coordinator: small files in <dir>/.group/ (the checkpoint directory must be one file system
 * that every rank sees, as for the shards themselves); a rank that does not arrive within
 * timeout_s makes the others fail with -ETIMEDOUT naming it: no rank hangs.
 * Commit protocol: each rank writes and fsyncs its files in its own locked temporary; after an
 * agreement that every rank succeeded, rank 0 checks every shard (owner, mode, type, size as
 * listed by its rank), moves the files into its temporary, writes MANIFEST.json (with
 * "world_size", signed with munge) last, fsyncs, renames it into place; a second agreement
 * reports the result to every rank. A rank killed at any moment leaves the previous step as
 * latest(); the other ranks get an error (or -ETIMEDOUT) from commit(). Files added with add()
 * are this rank's shard (stored as "rank-<r>.<name>"); add_replicated() files are written by
 * rank 0 only (stored as <name>) and can be read on any world size.
 * commit_async() in a group (every rank, same step, like commit()): on the caller's thread it
 * waits for this rank's previous in-flight save (returning its error, once), checks with one
 * collective that every rank saves the same step (-EPROTO if not), copies the buffers into
 * library memory and returns. The background thread of each rank then writes and fsyncs its
 * shard, and the two agreements of the commit protocol go through a second built-in file
 * coordinator ("<run_id>.bg", or "bg-<nonce agreed by the caller's allreduce>" when
 * allreduce_max is given: files in <dir>/.group/): the caller's allreduce_max is NEVER called
 * from the background thread, so it may be an MPI or torch collective bound to the caller's
 * thread. The caller may call agree() and other collectives while a save is in flight. wait()
 * (and commit(), commit_async(), release(), close()) wait for it; its failure (a rank died:
 * -ETIMEDOUT after timeout_s; another rank's write failed: -EIO) is returned once by the next
 * call, and nothing of that step is published unless rank 0 had already renamed it complete.
 * A rank killed at any moment leaves the previous complete step as latest(). */
typedef int (*idletime_ckpt_allreduce_fn)(void *arg, uint64_t *values, size_t n);

typedef struct idletime_ckpt_group {
    unsigned rank;                       /* 0 .. world_size-1 */
    unsigned world_size;                 /* >= 1 */
    idletime_ckpt_allreduce_fn allreduce_max; /* element-wise max over all ranks, in place;
                                          * returns 0 or a negative errno; NULL = built-in */
    void *arg;                           /* passed to allreduce_max */
    const char *run_id;                  /* built-in coordinator: unique per start of the group;
                                          * NULL = env IDLETIME_GROUP_RUN_ID, else
                                          * "<SLURM_JOB_ID>.<SLURM_RESTART_COUNT>.<SLURM_STEP_ID>" */
    unsigned timeout_s;                  /* built-in coordinator: 0 = 120 s */
} idletime_ckpt_group_t;

/* Defaults: rank/world_size from env RANK/WORLD_SIZE (torchrun), else SLURM_PROCID/SLURM_NTASKS
 * (srun), else 0/1; built-in coordinator. */
void idletime_ckpt_group_init(idletime_ckpt_group_t *g);
/* Makes h a member of the group (once, before any save). Errors: -EINVAL (bad rank/world,
 * missing run id for the built-in coordinator, called twice or after a save). */
int idletime_ckpt_join(idletime_ckpt_t *h, const idletime_ckpt_group_t *g);
/* Collective, once per step at the same point on every rank: *stop = 1 on every rank when any
 * rank has received the notice, else 0. -EPROTO when the ranks pass different steps,
 * -ETIMEDOUT / the callback's error when a rank is gone. Without join(): the local notice. */
int idletime_ckpt_agree(idletime_ckpt_t *h, uint64_t step, int *stop);
/* Like add(), for state every rank holds identically (DDP model, optimizer): only rank 0's
 * copy is written; readable on any world size. Without join() the same as add(). */
int idletime_ckpt_add_replicated(idletime_ckpt_t *h, const char *name, const void *data,
                                 size_t size);
/* This handle's rank and world size (0 and 1 without join()). */
unsigned idletime_ckpt_rank(const idletime_ckpt_t *h);
unsigned idletime_ckpt_world_size(const idletime_ckpt_t *h);
/* In a group: latest() is collective and fails with -EPROTO when the ranks disagree; read(),
 * file_path() resolve <name> to the replicated file, else to this rank's "rank-<r>.<name>",
 * failing with IDLETIME_CKPT_EWORLD when the checkpoint was saved by another world size;
 * release() asks Slurm only on rank 0 (other ranks wait for their save and return 0). */

#ifdef __cplusplus
}
#endif

#endif /* IDLETIME_CKPT_H */
