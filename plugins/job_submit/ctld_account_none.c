/*
 * ctld_account_none.c - built without --with-slurm-src: slurmctld's association cache is out of
 * reach with public headers, so routed jobs without -A rely on spank/idletime's account hint.
 */
#include "plugins/job_submit/ctld_account.h"

int idletime_ctld_account_available(void)
{
	return 0;
}

int idletime_ctld_default_account(uint32_t uid, char *buf, size_t len)
{
	(void)uid;
	if (buf && len)
		buf[0] = '\0';
	return 0;
}
