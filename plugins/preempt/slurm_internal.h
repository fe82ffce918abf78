/*
 * slurm_internal.h - Slurm's internal controller headers for the thin C plugins, plus the
 * helpers both plugins share to copy a job record into an idletime_sched_job_t.
 * Built only against the exact Slurm source tree (--with-slurm-src); release differences are in
 * slurm_2205.h and slurm_2411.h.
 */
#ifndef IDLETIME_SLURM_INTERNAL_H
#define IDLETIME_SLURM_INTERNAL_H

/* Our configure passes these as -D; Slurm's config.h defines them with its own values. */
#undef PACKAGE
#undef PACKAGE_BUGREPORT
#undef PACKAGE_NAME
#undef PACKAGE_STRING
#undef PACKAGE_TARNAME
#undef PACKAGE_URL
#undef PACKAGE_VERSION
#undef VERSION

#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <stdint.h>
#include <time.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/assoc_mgr.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

/* What differs between Slurm releases is in one adapter header per series; this is the only
 * place that chooses. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
#include "plugins/preempt/slurm_2411.h"
#else
#include "plugins/preempt/slurm_2205.h"
#endif

#include "idletime/sched.h"

/* Plugins must be built for the exact running Slurm; a test build overrides this to check that
 * slurmctld refuses a mismatched plugin without going down. */
#ifndef IDLETIME_PLUGIN_VERSION
#define IDLETIME_PLUGIN_VERSION SLURM_VERSION_NUMBER
#endif

/* Position of gres/gpu in slurmctld's TRES arrays, or -1 (not tracked: AccountingStorageTRES). */
int idletime_gpu_tres_pos(time_t now);

/* Fills v from job_ptr as seen in partition part (NULL = the job's partition).
 * Strings point into the job record: v is valid only while the caller holds the job lock. */
/* with_quota: also the --quota hint (a scan of the SPANK environment); preemptable() needs none. */
void idletime_job_view(job_record_t *job_ptr, part_record_t *part, idletime_sched_job_t *v, time_t now,
		       bool with_quota);

/* Config file: $IDLETIME_CONFIG, else /etc/idletime/idletime.json. */
const char *idletime_config_path(void);

/* Time spent in the plugin's hot call (call_stats.c). */
typedef struct {
	uint64_t calls, ns, max_ns;
	uint64_t off_hold; /* calls refused before the policy: off a waiting owner's held nodes */
	uint64_t off_hold_seen; /* off_hold at the watcher's last look */
	time_t first, last; /* CLOCK_MONOTONIC seconds of the period's first and last timed call, or
			     * of a watcher's look that found new off-hold refusals */
} idletime_call_stats_t;

/* One plugin's policy state and how it reports (plugin_config.c). */
typedef struct {
	pthread_mutex_t *lock;     /* guards *sched, stop and kicked */
	idletime_sched_t **sched;  /* created by idletime_plugin_init */
	const char *who;           /* log prefix, e.g. "idletime/preempt" */
	const char *min_run_env;   /* env var of the minimum run time (s), or NULL */
	const char *without;       /* what the plugin does with no config ever loaded */
	const char *timed_call;    /* the call timed by idletime_call_begin/_end, e.g. "preemptable()" */
	idletime_call_stats_t stats; /* guarded by lock */
	/* The watcher's own: slurm_conf.last_update at the last load, and whether a later
	 * reconfigure in that same second (1 s resolution) is still possible, then the file. */
	time_t conf_seen;
	bool settled;
	struct stat file;
	pthread_t watcher;
	pthread_cond_t wake;
	bool watching, stop, kicked;
} idletime_plugin_t;

/* init(): creates the state, loads the config (slurmctld start, no job lock held) and starts
 * the watcher thread that reloads it after `scontrol reconfigure`, outside slurmctld's locks
 * (keeping the last good one when the file is broken). SLURM_SUCCESS or SLURM_ERROR. */
int idletime_plugin_init(idletime_plugin_t *p);
/* Ask the watcher to look now (site_factor_p_reconfig); never blocks on I/O. */
void idletime_plugin_kick(idletime_plugin_t *p);
/* Stops the watcher (joins it) and frees the state. */
void idletime_plugin_fini(idletime_plugin_t *p);

/* Time one call: begin before, end after (with p->lock held). The watcher logs a summary line
 * once the calls pause for 5 s, or every 60 s while they keep coming. */
void idletime_call_begin(struct timespec *t0);
void idletime_call_end(idletime_plugin_t *p, const struct timespec *t0);
/* With p->lock held: a summary that is due (and resets the counts), else false. */
bool idletime_call_stats_take(idletime_plugin_t *p, idletime_call_stats_t *out);
/* Counts a call refused before the timed part (counted in the summary as off_hold). */
void idletime_call_off_hold(idletime_plugin_t *p);
void idletime_call_stats_log(const idletime_plugin_t *p, const idletime_call_stats_t *s);

#endif
