/*
 * ctld_account.h - the submitting user's DefaultAccount from slurmctld's association cache.
 *
 * Slurm fills job_desc->account only after job_submit plugins ran, so a routed job without -A
 * needs the account from somewhere. Built with --with-slurm-src this reads assoc_mgr's user list
 * (internal API: user read lock, no I/O, O(users)); built without it, nothing is found and
 * job_submit/idletime falls back to the hint spank/idletime sends from sbatch (one extra RPC
 * per submission, see spank_idletime(8) account_hint=).
 */
#ifndef IDLETIME_CTLD_ACCOUNT_H
#define IDLETIME_CTLD_ACCOUNT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this build can look accounts up in slurmctld (built with --with-slurm-src), else 0. */
int idletime_ctld_account_available(void);

/* Copies uid's DefaultAccount (NUL-terminated) into buf and returns 1; returns 0 when the user,
 * the account or the association cache is unknown, the name does not fit in len bytes (never
 * routed by a cut-off name), or when unavailable. */
int idletime_ctld_default_account(uint32_t uid, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
