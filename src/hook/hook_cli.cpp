// idletime-ft-hook's command line (hook_cli.hpp).
#include "hook/hook_cli.hpp"

#include <fcntl.h>
#include <getopt.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "core/cmdline.hpp"

namespace idletime::hook {

namespace {

const char *kUsage =
    "Usage: idletime-ft-hook [--config FILE] [--last-good FILE] [--wake-dir DIR] [--log FILE] [--job ID]\n"
    "       [--foreground]\n"
    "       idletime-ft-hook --recover [--config FILE] [--last-good FILE] [--wake-dir DIR] [--log FILE]\n"
    "  EpilogSlurmctld program; the job id defaults to $SLURM_JOB_ID.\n"
    "  --last-good: copy of the last config that loaded (default " IDLETIME_DEFAULT_LAST_GOOD ";\n"
    "  \"\" = none), used while the config is unreadable or invalid.\n"
    "  --wake-dir: spool of backoff wake-ups, served by one hook process at a time\n"
    "  (default: ft-hook-wake next to --last-good).\n"
    "  --recover: finish the work of hooks that were stopped mid-way (their entries in the\n"
    "  journal DIR.jobs next to --wake-dir; every hook also does it after its own job), then exit.\n"
    "  --help, --version\n"
    "Exit status: 0 done (or detached), 1 failure, 2 bad input.\n";


}  // namespace

bool parse_u32(const char *s, uint32_t &out) {
    char *end = nullptr;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || errno || v == 0 || v > 0xfffffffeUL || s[0] == '-') return false;
    out = uint32_t(v);
    return true;
}

bool parse_args(int argc, char **argv, Options &o) {
    static const option longopts[] = {{"config", required_argument, nullptr, 'c'},
                                      {"log", required_argument, nullptr, 'l'},
                                      {"last-good", required_argument, nullptr, 'g'},
                                      {"wake-dir", required_argument, nullptr, 'w'},
                                      {"job", required_argument, nullptr, 'j'},
                                      {"foreground", no_argument, nullptr, 'f'},
                                      {"recover", no_argument, nullptr, 'r'},
                                      {"help", no_argument, nullptr, 'h'},
                                      {"version", no_argument, nullptr, 'V'},
                                      {nullptr, 0, nullptr, 0}};
    int c;
    const char *job = getenv("SLURM_JOB_ID");
    bool job_given = false;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":c:l:g:w:j:fh", longopts, nullptr)) != -1) {
        switch (c) {
        case 'c': o.config = optarg; break;
        case 'l': o.log = optarg; break;
        case 'g': o.last_good = optarg; break;
        case 'w': o.wake_dir = optarg; break;
        case 'j': job = optarg; job_given = true; break;
        case 'f': o.foreground = true; break;
        case 'r': o.recover = true; break;
        case 'h': exit(cmdline::help(kUsage));
        case 'V': exit(cmdline::version(kProg));
        case ':':
            fprintf(stderr, "%s: option \"%s\" needs a value (usage: %s)\n", kProg, argv[optind - 1],
                    cmdline::synopsis(kUsage).c_str());
            return false;
        default: cmdline::unknown_option(kProg, argv[optind - 1], kUsage); return false;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "%s: unexpected argument \"%s\" (usage: %s)\n", kProg, argv[optind],
                cmdline::synopsis(kUsage).c_str());
        return false;
    }
    if (o.recover && (job_given || o.foreground)) {
        fprintf(stderr, "%s: --recover works on the journal, not on one job: --job and --foreground "
                        "are not allowed with it\n", kProg);
        return false;
    }
    if (o.recover) return true;  // no job of its own
    if (!job || !parse_u32(job, o.job_id)) {
        fprintf(stderr, "idletime/ft-hook: invalid job id \"%s\" (allowed: --job or $SLURM_JOB_ID, "
                        "a positive number)\n", job ? job : "");
        return false;
    }
    return true;
}

// EpilogSlurmctld must return quickly: the requeue can only happen after it has returned.
void detach() {
    pid_t pid = fork();
    if (pid < 0) return;  // run in the foreground then
    if (pid > 0) _exit(0);
    setsid();
    if (fork() > 0) _exit(0);
    int fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
        dup2(fd, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        if (fd > 2) close(fd);
    }
}

}  // namespace idletime::hook
