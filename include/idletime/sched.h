/*
 * sched.h - C API of the idletime scheduling policy used by preempt/idletime and
 * site_factor/idletime (thin C plugins inside slurmctld).
 *
 * Nothing here does I/O except idletime_sched_load (reads the config file once); the plugins
 * call it outside slurmctld's locks and swap the result in with idletime_sched_take_config.
 * No function throws, aborts or blocks. Times are unix seconds, GPU counts whole
 * GPUs of the whole job. An idletime_sched_t is not thread-safe: callers serialise
 * (the plugins hold a mutex; slurmctld calls them under its job write lock anyway).
 */
#ifndef IDLETIME_SCHED_H
#define IDLETIME_SCHED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct idletime_sched idletime_sched_t;

/* One job, copied from Slurm's job record for one call. NULL strings = empty. */
typedef struct {
	uint32_t job_id;
	const char *partition;  /* partition it runs in, or is being tried for */
	const char *partitions; /* requested list "a,b" (pending jobs); NULL = partition */
	uint32_t priority_tier; /* PriorityTier of partition */
	int preempt_off;        /* 1: partition has PreemptMode=OFF */
	uint32_t gpus;          /* allocated (running) or requested (pending) GPUs */
	int64_t start_time;     /* 0 = not started */
	int64_t submit_time;
	int64_t preempt_time;   /* preemption notice sent at; 0 = none */
	int64_t preempt_start;  /* preemptor: victims last picked for it at; 0 = never */
	const char *comment;    /* job Comment; may carry "idletime:ckpt=<unix time>" */
	const char *account;
	const char *quota_hint; /* --quota from the job's SPANK environment */
} idletime_sched_job_t;

/* New policy without a config: answers exactly like preempt/partition_prio and sets no
 * site factor. RET NULL only when out of memory. */
idletime_sched_t *idletime_sched_new(void);
void idletime_sched_free(idletime_sched_t *s);

/*
 * IN config_path: idletime JSON (idletime.json(5)).
 * IN min_run_time: seconds an idle-time job runs before it may be preempted, decimal
 *    0..604800; NULL or "" = 0.
 * RET 0, or -1 with a one-line err; on error the previous config and settings stay.
 */
int idletime_sched_load(idletime_sched_t *s, const char *config_path, const char *min_run_time, char *err,
                        size_t errlen);
int idletime_sched_has_config(const idletime_sched_t *s); /* 1 after a successful load */
/* dst takes src's config and settings (src loaded off-lock by a watcher thread); dst's victim
 * candidates stay, its borrowing snapshot is dropped. RET 0, -1 on NULL. No I/O. */
int idletime_sched_take_config(idletime_sched_t *dst, const idletime_sched_t *src);
uint32_t idletime_sched_min_run_time(const idletime_sched_t *s);

/* 1 if a job of partition a (tier ta) may ever preempt one of partition b (tier tb,
 * b_off = PreemptMode=OFF); else 0. */
int idletime_sched_partitions_may_preempt(const idletime_sched_t *s, const char *a, uint32_t ta, const char *b,
                                          uint32_t tb, int b_off);

/* 1 if preemptor may preempt preemptee now (pair rules + minimum run time), else 0.
 * An allowed preemptee is also noted as a victim candidate of preemptor. */
int idletime_sched_preemptable(idletime_sched_t *s, const idletime_sched_job_t *preemptor,
                               const idletime_sched_job_t *preemptee, int64_t now);

/* 1, once, when the last idletime_sched_preemptable() that returned 1 gave a guaranteed job its
 * first candidate for its current submission and a pass may be asked for now: the caller asks
 * Slurm for a scheduling pass instead of waiting for slurmctld's once-a-second loop
 * (doc/design/notice-and-release.md, section 10). Requests are at least gap_s s apart (the
 * site's batch_sched_delay), with gap_s 0 at most 4 a second. 0 otherwise, and for every later
 * candidate of the same job. */
int idletime_sched_pass_wanted(idletime_sched_t *s, uint32_t gap_s, int64_t now);

/* Position of job_id among the noted candidates of the latest preemptor, 0 = preempt
 * first (least work lost). The first call after new notes sorts them once.
 * RET UINT32_MAX for a job that is not a candidate. */
uint32_t idletime_sched_victim_rank(idletime_sched_t *s, uint32_t job_id);

/* Node holds (doc/design/notice-and-release.md, section 8): while a guaranteed job waits for
 * its victims to leave, preempt/idletime makes their nodes its required nodes, so Slurm sets
 * aside only those nodes (not the job's partition) and starts nothing else on them.
 *
 * Victim victim_id's grace time starts now: Slurm picked it for the preemptor whose candidates
 * preemptable() noted last. RET that preemptor's job id when it runs in a quota partition and
 * victim_id is one of its candidates, else 0. */
uint32_t idletime_sched_victim_picked(const idletime_sched_t *s, uint32_t victim_id);
/* The new SystemComment of a victim Slurm picked for guaranteed job `owner` at time `at`: old
 * (NULL = none) without earlier idletime notes, plus the line "idletime: preempted at <at> for job
 * <owner>", read by idletime-ft-hook to name the preemptor (src/core/victim_note.hpp). RET its
 * length, written into buf with its NUL; 0 (buf untouched): owner 0, old too long, or buf too
 * small. */
size_t idletime_sched_victim_note(const char *old, uint32_t owner, int64_t at, char *buf, size_t len);
/* victim_id joins job_id's hold. RET 1: job_id is held from now until `until`; 0: it was held
 * already (deadline moved to the later one); -1: not held (too many holds, out of memory, id 0). */
int idletime_sched_hold_begin(idletime_sched_t *s, uint32_t job_id, uint32_t restarts, int64_t until,
                              uint32_t victim_id);
/* Up to max held job ids into ids; RET how many. */
size_t idletime_sched_hold_ids(const idletime_sched_t *s, uint32_t *ids, size_t max);
/* Up to max victims of job_id's hold into ids; RET how many. */
size_t idletime_sched_hold_victims(const idletime_sched_t *s, uint32_t job_id, uint32_t *ids, size_t max);
/* 1: job_id's hold stays: pending, same restart count, and before its deadline, or (victims_leaving:
 * one of its victims is still notified and running or completing) within 600 s after it, or
 * within 3 s of the first call that saw no victim leaving; 0: it ends now and is forgotten, or
 * there was none (the caller gives the nodes back). */
int idletime_sched_hold_keep(idletime_sched_t *s, uint32_t job_id, int pending, uint32_t restarts,
                             int victims_leaving, int64_t now);

/* Borrowing snapshot: reset, then add every running job (idle-time ones are counted). */
void idletime_sched_borrow_reset(idletime_sched_t *s, int64_t now);
void idletime_sched_borrow_add(idletime_sched_t *s, const idletime_sched_job_t *running);
int64_t idletime_sched_borrow_taken_at(const idletime_sched_t *s); /* -1 = never */

/* Site factor of a pending job before Slurm's NICE_OFFSET (0..1000999999).
 * RET 1 and *factor set for idle-time jobs (every requested partition idle, quota known);
 * 0 and *factor untouched otherwise. */
int idletime_sched_site_factor(const idletime_sched_t *s, const idletime_sched_job_t *pending, int64_t now,
                               uint32_t *factor);

/* Checkpoint time claimed in a Comment if it lies in [start, now]; else now (no valid claim:
 * counts as nothing to lose, i.e. the least protected). */
int64_t idletime_ckpt_comment_time(const char *comment, int64_t start, int64_t now);

#ifdef __cplusplus
}
#endif
#endif
