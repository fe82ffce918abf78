/*
 * plugin_config.c - config lifecycle shared by preempt/idletime and site_factor/idletime: create
 * the policy state once, (re)load the config keeping the last good one, free it at fini.
 *
 * No file I/O under slurmctld's locks: the file is read at init (slurmctld start) and otherwise
 * only by one watcher thread per plugin, which holds no slurmctld lock. It looks once a second
 * (or when woken by site_factor_p_reconfig) at slurm_conf.last_update, parses a changed config
 * into a fresh state without any lock, and only then takes the plugin's mutex for the pointer
 * swap (idletime_sched_take_config). Scheduling calls never wait for a read. The watcher also
 * logs the time spent in the plugin's hot call (call_stats.c).
 */
#include "plugins/preempt/slurm_internal.h"

#include <stdlib.h>
#include <string.h>

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* slurm_conf.last_update without slurmctld's conf lock (fini may run under it, and the watcher
 * is joined there): one aligned word, read atomically. */
static time_t conf_update_time(void)
{
	return __atomic_load_n(&slurm_conf.last_update, __ATOMIC_RELAXED);
}

/* Reads and parses the config without any lock, then installs it under p->lock. Only the
 * watcher (or init, before it starts) calls this: conf_seen/settled/file are its own. */
static void load_staged(idletime_plugin_t *p)
{
	char err[512] = "out of memory";
	const char *path = idletime_config_path();
	const char *min_run = p->min_run_env ? getenv(p->min_run_env) : NULL;
	idletime_sched_t *fresh = idletime_sched_new();
	int rc = -1, has;
	uint32_t min_run_s = 0;

	p->conf_seen = conf_update_time();
	p->settled = time(NULL) > p->conf_seen;
	if (stat(path, &p->file) != 0)
		memset(&p->file, 0, sizeof(p->file));
	if (fresh)
		rc = idletime_sched_load(fresh, path, min_run, err, sizeof(err));

	slurm_mutex_lock(p->lock);
	if (rc == 0 && idletime_sched_take_config(*p->sched, fresh) != 0) {
		rc = -1;
		snprintf(err, sizeof(err), "%s: out of memory", path);
	}
	has = idletime_sched_has_config(*p->sched);
	min_run_s = idletime_sched_min_run_time(*p->sched);
	slurm_mutex_unlock(p->lock);
	idletime_sched_free(fresh);

	if (rc == 0 && p->min_run_env)
		info("%s: loaded %s (min run time %u s)", p->who, path, min_run_s);
	else if (rc == 0)
		info("%s: loaded %s", p->who, path);
	else if (has)
		error("%s: %s; keeping the last good config", p->who, err);
	else
		error("%s: %s; no config: %s", p->who, err, p->without);
}

/* After `scontrol reconfigure` (last_update moved) reload. last_update has 1 s resolution: a
 * second reconfigure in the second of the last load leaves it unchanged, so once that second is
 * over the file is compared (one stat) with the one loaded and reloaded if it was written by then.
 * A later edit waits for its own reconfigure, as in job_submit/idletime. */
static void check_once(idletime_plugin_t *p)
{
	struct stat now_file;

	if (conf_update_time() != p->conf_seen) {
		load_staged(p);
		return;
	}
	if (p->settled || time(NULL) <= p->conf_seen)
		return;
	p->settled = true;
	if (stat(idletime_config_path(), &now_file) != 0)
		memset(&now_file, 0, sizeof(now_file));
	if (!same_file(&now_file, &p->file) && now_file.st_mtim.tv_sec <= p->conf_seen)
		load_staged(p);
}

static void *watch(void *arg)
{
	idletime_plugin_t *p = arg;

	slurm_mutex_lock(p->lock);
	while (!p->stop) {
		struct timespec until;
		idletime_call_stats_t stats;
		bool log_stats;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		if (!p->kicked)
			pthread_cond_timedwait(&p->wake, p->lock, &until);
		p->kicked = false;
		if (p->stop)
			break;
		log_stats = p->timed_call && idletime_call_stats_take(p, &stats);
		slurm_mutex_unlock(p->lock);
		if (log_stats)
			idletime_call_stats_log(p, &stats);
		check_once(p);
		slurm_mutex_lock(p->lock);
	}
	slurm_mutex_unlock(p->lock);
	return NULL;
}

void idletime_plugin_kick(idletime_plugin_t *p)
{
	slurm_mutex_lock(p->lock);
	p->kicked = true;
	pthread_cond_signal(&p->wake);
	slurm_mutex_unlock(p->lock);
}

int idletime_plugin_init(idletime_plugin_t *p)
{
	slurm_mutex_lock(p->lock);
	if (!*p->sched)
		*p->sched = idletime_sched_new();
	slurm_mutex_unlock(p->lock);
	if (!*p->sched) {
		error("%s: out of memory at init", p->who);
		return SLURM_ERROR;
	}
	load_staged(p);
	if (!p->watching) {
		p->stop = false;
		p->kicked = false;
		pthread_cond_init(&p->wake, NULL);
		if (pthread_create(&p->watcher, NULL, watch, p) == 0)
			p->watching = true;
		else
			error("%s: cannot start the config watcher thread: the config is not reloaded at "
			      "`scontrol reconfigure` (restart slurmctld after a change)", p->who);
	}
	return SLURM_SUCCESS;
}

void idletime_plugin_fini(idletime_plugin_t *p)
{
	if (p->watching) {
		slurm_mutex_lock(p->lock);
		p->stop = true;
		pthread_cond_signal(&p->wake);
		slurm_mutex_unlock(p->lock);
		pthread_join(p->watcher, NULL);
		pthread_cond_destroy(&p->wake);
		p->watching = false;
	}
	slurm_mutex_lock(p->lock);
	idletime_sched_free(*p->sched);
	*p->sched = NULL;
	slurm_mutex_unlock(p->lock);
}
