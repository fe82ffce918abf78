# doc: man pages (installed) and the admin guide (distributed).
dist_man_MANS += doc/man/idletime.1 doc/man/idletime-jobs.1 doc/man/idletime-quota.1 \
	doc/man/idletime-check.8 doc/man/idletime.json.5 doc/man/idletime-run.1 \
	doc/man/idletime-ft-hook.8 doc/man/idletime-exporter.8 doc/man/idletime-replay-job.1
EXTRA_DIST += doc/admin-guide.md doc/security.md doc/scripting.md
