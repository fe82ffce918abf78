# plugins/job_submit: part of the top Makefile.am
