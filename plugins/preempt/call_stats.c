/*
 * call_stats.c - how long the plugin's hot call takes inside slurmctld, for the administrator and
 * bench/reclaim/scale.sh. The call adds its time under the plugin's mutex (it holds it anyway);
 * the config watcher (plugin_config.c, once a second, no slurmctld lock) takes a summary when the
 * calls have paused for IDLE_S or every PERIOD_S while they keep coming, and logs it one line:
 *   idletime/preempt: preemptable() calls=N mean_us=M max_us=X over S s; off_hold=K
 * calls counts the decisions made on the two jobs' views (pairs whose partitions rule out any
 * preemption are answered before, uncounted); off_hold the jobs the partitions allow but refused
 * because they run off the held nodes of an owner that waits for its victims (reclaim_hold.c).
 */
#include "plugins/preempt/slurm_internal.h"

#include <string.h>

#define IDLE_S 5
#define PERIOD_S 60

void idletime_call_begin(struct timespec *t0)
{
	clock_gettime(CLOCK_MONOTONIC, t0);
}

void idletime_call_end(idletime_plugin_t *p, const struct timespec *t0)
{
	struct timespec t1;
	uint64_t ns;
	idletime_call_stats_t *s = &p->stats;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!s->first)
		s->first = t1.tv_sec;
	ns = (uint64_t)(t1.tv_sec - t0->tv_sec) * 1000000000u + (uint64_t)t1.tv_nsec - (uint64_t)t0->tv_nsec;
	s->last = t1.tv_sec;
	s->calls++;
	s->ns += ns;
	if (ns > s->max_ns)
		s->max_ns = ns;
}

bool idletime_call_stats_take(idletime_plugin_t *p, idletime_call_stats_t *out)
{
	struct timespec now;
	idletime_call_stats_t *s = &p->stats;

	if (!s->calls && !s->off_hold)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (s->off_hold != s->off_hold_seen) { /* refusals since the watcher's last look (1 s ago) */
		s->off_hold_seen = s->off_hold;
		if (!s->first)
			s->first = now.tv_sec;
		if (s->last < now.tv_sec)
			s->last = now.tv_sec;
	}
	if (now.tv_sec - s->last < IDLE_S && now.tv_sec - s->first < PERIOD_S)
		return false;
	*out = *s;
	memset(s, 0, sizeof(*s));
	return true;
}

/* No clock here (~2,000 such refusals per owner and pass at 2,048 running): the watcher's once-a-
 * second look (idletime_call_stats_take) dates them, so a period of refusals alone is logged too. */
void idletime_call_off_hold(idletime_plugin_t *p)
{
	p->stats.off_hold++;
}

void idletime_call_stats_log(const idletime_plugin_t *p, const idletime_call_stats_t *s)
{
	double mean_us = s->calls ? (double)s->ns / (double)s->calls / 1000.0 : 0.0;

	info("%s: %s calls=%" PRIu64 " mean_us=%.1f max_us=%.1f over %ld s; off_hold=%" PRIu64, p->who,
	     p->timed_call, s->calls, mean_us, (double)s->max_ns / 1000.0, (long)(s->last - s->first + 1),
	     s->off_hold);
}
