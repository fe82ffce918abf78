/*
 * ctld_account.c - DefaultAccount lookup in slurmctld's association cache (--with-slurm-src).
 * Holds assoc_mgr's user read lock only while copying one string; never queries slurmdbd.
 */
#include "plugins/preempt/slurm_internal.h"
#include "plugins/job_submit/ctld_account.h"

#include <string.h>

int idletime_ctld_account_available(void)
{
	return 1;
}

int idletime_ctld_default_account(uint32_t uid, char *buf, size_t len)
{
	assoc_mgr_lock_t locks = { .user = READ_LOCK };
	slurmdb_user_rec_t user;
	int found = 0;

	if (!buf || len == 0)
		return 0;
	memset(&user, 0, sizeof(user));
	user.uid = uid;
	assoc_mgr_lock(&locks);
	/* locked=true: with an empty cache Slurm would otherwise load it from slurmdbd (blocking). */
	if (assoc_mgr_user_list &&
	    assoc_mgr_fill_in_user(NULL, &user, 0, NULL, true) == SLURM_SUCCESS &&
	    user.default_acct && user.default_acct[0] && strlen(user.default_acct) < len) {
		strcpy(buf, user.default_acct);
		found = 1;
	}
	assoc_mgr_unlock(&locks);
	return found;
}
