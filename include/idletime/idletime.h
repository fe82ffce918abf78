/*
 * idletime.h - C API of the idletime policy core (Slurm-free, no I/O except
 * idletime_config_load reading one file).
 *
 * Every function returns 0 on success and -1 on error; on error a one-line
 * message is written to err (NUL-terminated, truncated to errlen) when err is
 * not NULL. No function throws, aborts or keeps global state, so the API is safe
 * to call from slurmctld, slurmstepd and command-line tools alike.
 */
#ifndef IDLETIME_IDLETIME_H
#define IDLETIME_IDLETIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Immutable, validated site configuration (see idletime.json(5)). */
typedef struct idletime_config idletime_config_t;

/* IN path: JSON file. OUT cfg: owned by the caller, free with idletime_config_free. */
int idletime_config_load(const char *path, idletime_config_t **cfg, char *err, size_t errlen);
/* IN json/len: the JSON text itself (need not be NUL-terminated). */
int idletime_config_parse(const char *json, size_t len, idletime_config_t **cfg, char *err,
                          size_t errlen);
void idletime_config_free(idletime_config_t *cfg);

typedef enum {
	IDLETIME_MODE_NONE = 0,       /* guaranteed only: the quota partition */
	IDLETIME_MODE_ACCEPTABLE = 1, /* quota partition or idle capacity, whichever starts first */
	IDLETIME_MODE_ONLY = 2,       /* idle capacity only, always preemptible */
} idletime_mode_t;

/* Parses "none" | "acceptable" | "only". */
int idletime_mode_parse(const char *text, idletime_mode_t *mode, char *err, size_t errlen);
const char *idletime_mode_name(idletime_mode_t mode);

/* What one submission asks for. NULL strings mean "not given". */
typedef struct {
	const char *quota;    /* --quota=NAME */
	const char *account;  /* the job's Slurm account */
	idletime_mode_t mode; /* --idle-resources */
	const char *gpu_spec; /* GPU type requested in --gres/--gpus (e.g. "a100") */
} idletime_request_t;

/* Where a submission goes (result of idletime_resolve). */
typedef struct idletime_resolution idletime_resolution_t;

/*
 * Resolves a request into partitions. Errors (one line, naming what is allowed):
 * unknown quota, account not allowed to use the quota, no quota for the account,
 * account mapped to quotas in several pools without --quota/GPU spec to choose,
 * GPU spec that no pool of the tenant offers, a spec asked of a general pool.
 */
int idletime_resolve(const idletime_config_t *cfg, const idletime_request_t *req,
                     idletime_resolution_t **res, char *err, size_t errlen);
void idletime_resolution_free(idletime_resolution_t *res);
/* Comma-separated partition list in preference order (quota partition first). */
const char *idletime_resolution_partitions(const idletime_resolution_t *res);
const char *idletime_resolution_quota(const idletime_resolution_t *res);
const char *idletime_resolution_tenant(const idletime_resolution_t *res);
/* 1 when the job must be requeued (not cancelled) when preempted. */
int idletime_resolution_requeue(const idletime_resolution_t *res);

typedef enum {
	IDLETIME_PART_UNKNOWN = 0, /* not managed by idletime */
	IDLETIME_PART_QUOTA = 1,   /* a quota partition: jobs there are guaranteed */
	IDLETIME_PART_IDLE = 2,    /* a pool's idle partition: jobs there are preemptible */
} idletime_part_kind_t;

/* Kind of a Slurm partition name, and the quota (QUOTA) or pool (IDLE) behind it. */
idletime_part_kind_t idletime_partition_kind(const idletime_config_t *cfg, const char *partition,
                                             const char **owner_name);

/* 1 when some quota lists ACCOUNT among its Slurm accounts, else 0 (also for NULL). */
int idletime_account_has_quota(const idletime_config_t *cfg, const char *account);
/* Every Slurm account of some quota, ", "-separated in config order; owned by cfg ("" if none). */
const char *idletime_config_quota_accounts(const idletime_config_t *cfg);

/* Site idle-time settings. */
typedef struct {
	uint32_t grace_time_s;         /* GraceTime of idle partitions, seconds */
	int checkpoint_signal;         /* signal number of the preemption notice */
	const char *checkpoint_signal_name; /* e.g. "USR1" */
	int requeue;                   /* 1: preempted idle-time jobs are requeued */
	const char *checkpoint_root;   /* per-job checkpoint dirs live under it */
} idletime_idle_settings_t;

void idletime_config_idle_settings(const idletime_config_t *cfg, idletime_idle_settings_t *out);

#ifdef __cplusplus
}
#endif
#endif
