/*
 * idletime_env.h - names of the environment variables the idletime plugins exchange.
 *
 * Submission side (SPANK, local/allocator context -> slurmctld): set with
 * spank_job_control_setenv, read by job_submit/idletime from job_desc->spank_job_env
 * (entries "NAME=value"; Slurm may prefix them with "SPANK_").
 * In the job (SPANK, remote context): exported into every step's environment.
 */
#ifndef IDLETIME_PLUGINS_ENV_H
#define IDLETIME_PLUGINS_ENV_H

/* User-facing fallbacks read by the SPANK plugin when an option is not on the command line. */
#define IDLETIME_ENV_IDLE_RESOURCES "IDLETIME_IDLE_RESOURCES" /* none|acceptable|only */
#define IDLETIME_ENV_QUOTA_OPT "IDLETIME_QUOTA"               /* NAME (same name in the job) */

/* Job control environment (SPANK -> job_submit) and job environment (both). */
#define IDLETIME_ENV_MODE "IDLETIME_MODE"       /* none|acceptable|only */
#define IDLETIME_ENV_QUOTA "IDLETIME_QUOTA"     /* quota name */
#define IDLETIME_ENV_ACCOUNT "IDLETIME_ACCOUNT" /* account when job_desc->account is NULL */
/* Per-submission nonce (16 hex digits): job_submit/idletime overwrites the client's; names the
 * checkpoint directory <jobid>-<key> so a reused job id never finds another job's checkpoints. */
#define IDLETIME_ENV_JOB_KEY "IDLETIME_JOB_KEY"

/* Job environment only (SPANK remote context). */
#define IDLETIME_ENV_PREEMPTIBLE "IDLETIME_PREEMPTIBLE"     /* "1" in an idle partition, else "0" */
#define IDLETIME_ENV_CKPT_DIR "IDLETIME_CKPT_DIR"           /* <checkpoint_root>/<user>/<jobid>-<key> */
#define IDLETIME_ENV_CKPT_DIR_ERROR "IDLETIME_CKPT_DIR_ERROR" /* why IDLETIME_CKPT_DIR is unset */
#define IDLETIME_ENV_RESTART_COUNT "IDLETIME_RESTART_COUNT" /* times the job was requeued (S_SLURM_RESTART_COUNT) */
#define IDLETIME_ENV_CKPT_SIGNAL "IDLETIME_CKPT_SIGNAL"     /* signal name without SIG, e.g. USR1 */
#define IDLETIME_ENV_GRACE_TIME "IDLETIME_GRACE_TIME"       /* seconds */
#define IDLETIME_ENV_MUNGE_SOCKET "IDLETIME_MUNGE_SOCKET" /* plugstack munge_socket=, when given */
#define IDLETIME_ENV_PARTITION_KIND "IDLETIME_PARTITION_KIND" /* quota|idle|unknown */

/* Config path of job_submit/idletime (slurmctld's environment) and the default path. */
#define IDLETIME_ENV_CONFIG "IDLETIME_CONFIG"
#define IDLETIME_DEFAULT_CONFIG "/etc/idletime/idletime.json"

#endif
