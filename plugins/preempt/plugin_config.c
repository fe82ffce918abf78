/*
 * plugin_config.c - config lifecycle shared by preempt/idletime and site_factor/idletime: create
 * the policy state once, (re)load the config keeping the last good one, free it at fini. The
 * file is read only here, at init and after `scontrol reconfigure` (plus one stat after a
 * reconfigure in the second of the last load), never per scheduling call.
 */
#include "plugins/preempt/slurm_internal.h"

#include <stdlib.h>
#include <string.h>

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

void idletime_plugin_load(idletime_plugin_t *p)
{
	char err[512];
	const char *path = idletime_config_path();
	const char *min_run = p->min_run_env ? getenv(p->min_run_env) : NULL;

	p->conf_seen = slurm_conf.last_update;
	p->settled = time(NULL) > p->conf_seen;
	if (stat(path, &p->file) != 0)
		memset(&p->file, 0, sizeof(p->file));

	if (idletime_sched_load(*p->sched, path, min_run, err, sizeof(err)) == 0) {
		if (p->min_run_env)
			info("%s: loaded %s (min run time %u s)", p->who, path,
			     idletime_sched_min_run_time(*p->sched));
		else
			info("%s: loaded %s", p->who, path);
	} else if (idletime_sched_has_config(*p->sched)) {
		error("%s: %s; keeping the last good config", p->who, err);
	} else {
		error("%s: %s; no config: %s", p->who, err, p->without);
	}
}

void idletime_plugin_refresh(idletime_plugin_t *p)
{
	struct stat now_file;

	if (slurm_conf.last_update != p->conf_seen) {
		idletime_plugin_load(p);
		return;
	}
	if (p->settled || time(NULL) <= p->conf_seen)
		return;
	p->settled = true;
	if (stat(idletime_config_path(), &now_file) != 0)
		memset(&now_file, 0, sizeof(now_file));
	/* Written by that second at the latest: a reconfigure may have been meant for it. A later
	 * edit waits for its own reconfigure, as in job_submit/idletime. */
	if (!same_file(&now_file, &p->file) && now_file.st_mtim.tv_sec <= p->conf_seen)
		idletime_plugin_load(p);
}

int idletime_plugin_init(idletime_plugin_t *p, void (*load)(void))
{
	slurm_mutex_lock(p->lock);
	if (!*p->sched)
		*p->sched = idletime_sched_new();
	if (*p->sched)
		load();
	slurm_mutex_unlock(p->lock);
	if (!*p->sched) {
		error("%s: out of memory at init", p->who);
		return SLURM_ERROR;
	}
	return SLURM_SUCCESS;
}

void idletime_plugin_fini(idletime_plugin_t *p)
{
	slurm_mutex_lock(p->lock);
	idletime_sched_free(*p->sched);
	*p->sched = NULL;
	slurm_mutex_unlock(p->lock);
}
