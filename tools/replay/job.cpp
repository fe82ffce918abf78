// idletime-replay-job: the work of one replayed trace job. It "computes" by sleeping until
// --work seconds of progress are done, and appends its life to --log (one line per event:
// "<epoch s> <event> restart=<n> progress=<s> saved=<s>") so the driver can measure lost work.
//   --mode plain: no checkpoints; a rerun starts from zero; SIGTERM ends it (logged).
//   --mode ckpt:  libidletime-ckpt checkpoints every --ckpt-every s of progress; on the
//                 preemption notice it saves, then releases the GPUs at once (idletime_ckpt_release).
#include "idletime/ckpt.h"

#include "core/cmdline.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <poll.h>
#include <time.h>

namespace {

using namespace idletime;
constexpr const char *kProg = "idletime-replay-job";
const char *kUsage =
    "Usage: idletime-replay-job --work SECONDS --log FILE [--mode plain|ckpt] [--ckpt-dir DIR] "
    "[--ckpt-every SECONDS]\n"
    "The work of one job replayed by idletime-replay(1); --mode ckpt needs --ckpt-dir.\n"
    "  --help, --version\n"
    "Exit status: 0 done or released, 143 ended by SIGTERM (plain), 1 failure, 2 bad input.\n";

struct Args {
    double work = 0, ckpt_every = 10;
    std::string log, mode = "plain", dir;
};

volatile sig_atomic_t g_term = 0;
void on_term(int) { g_term = 1; }

double now_epoch()
{
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

double now_mono()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

int restart_count()
{
    const char *r = std::getenv("SLURM_RESTART_COUNT");
    return r ? std::atoi(r) : 0;
}

void log_event(const Args &a, const char *event, double progress, double saved, const char *extra = "")
{
    FILE *f = std::fopen(a.log.c_str(), "a");
    if (!f)
        return;
    std::fprintf(f, "%.3f %s restart=%d progress=%.3f saved=%.3f%s\n", now_epoch(), event,
                 restart_count(), progress, saved, extra);
    std::fclose(f);
}

// False with a one-line message on stderr.
bool parse(int argc, char **argv, Args &a)
{
    for (int i = 1; i < argc; i += 2) {
        std::string k = argv[i];
        if (k != "--work" && k != "--log" && k != "--mode" && k != "--ckpt-dir" && k != "--ckpt-every")
            return cmdline::unknown_option(kProg, k, kUsage), false;
        if (i + 1 >= argc) {
            std::fprintf(stderr, "%s: option \"%s\" needs a value (usage: %s)\n", kProg, k.c_str(),
                         cmdline::synopsis(kUsage).c_str());
            return false;
        }
        std::string v = argv[i + 1];
        if (k == "--work") a.work = std::atof(v.c_str());
        else if (k == "--log") a.log = v;
        else if (k == "--mode") a.mode = v;
        else if (k == "--ckpt-dir") a.dir = v;
        else a.ckpt_every = std::atof(v.c_str());
    }
    if (a.work > 0 && !a.log.empty() && (a.mode == "plain" || a.mode == "ckpt") &&
        (a.mode == "plain" || !a.dir.empty()) && a.ckpt_every > 0)
        return true;
    std::fprintf(stderr, "%s: needs --work > 0, --log, --mode plain|ckpt (ckpt: --ckpt-dir), --ckpt-every > 0 "
                 "(usage: %s)\n", kProg, cmdline::synopsis(kUsage).c_str());
    return false;
}

// Sleeps up to `seconds` (at most 1 s: the heartbeat's pace), less when fd (the notice's
// descriptor, -1 for none) turns readable or a signal arrives; with `mask`, the signal mask
// during the wait (signals blocked outside it cannot slip in between a check and the wait).
// One wake-up a second, not ten: thousands of idle victims on one node must leave its cores to
// slurmctld (issue 14).
void pause_for(double seconds, int fd = -1, const sigset_t *mask = nullptr)
{
    const long ms = long(std::clamp(seconds, 0.001, 1.0) * 1000);
    const struct timespec ts{ms / 1000, (ms % 1000) * 1000000L};
    struct pollfd p{fd, POLLIN, 0};
    ppoll(&p, fd >= 0 ? 1 : 0, &ts, mask);
}

int run_plain(const Args &a)
{
    std::signal(SIGTERM, on_term);
    sigset_t term, wait_mask;  // SIGTERM only during the wait: none is missed between test and wait
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, &wait_mask);
    log_event(a, "start", 0, 0);
    double t0 = now_mono(), p = 0;
    while (p < a.work && !g_term) {
        pause_for(a.work - p, -1, &wait_mask);
        p = now_mono() - t0;
    }
    log_event(a, g_term ? "term" : "done", std::min(p, a.work), 0);
    return g_term ? 143 : 0;
}

// Saves progress (milliseconds = step, so steps only grow). Returns the saved progress.
double save(idletime_ckpt_t *h, double progress, double saved, bool sync)
{
    uint64_t step = uint64_t(progress * 1000);
    if (step <= uint64_t(saved * 1000))
        return saved;
    if (idletime_ckpt_begin(h, step) != 0 || idletime_ckpt_add(h, "progress", &step, sizeof step) != 0 ||
        (sync ? idletime_ckpt_commit(h) : idletime_ckpt_commit_async(h)) != 0) {
        std::fprintf(stderr, "idletime/replay-job: save failed: %s\n", idletime_ckpt_last_error(h));
        return saved;
    }
    return progress;
}

int run_ckpt(const Args &a)
{
    idletime_ckpt_t *h = nullptr;
    if (idletime_ckpt_open(a.dir.c_str(), nullptr, &h) != 0) {
        std::fprintf(stderr, "idletime/replay-job: %s\n", h ? idletime_ckpt_last_error(h) : "out of memory");
        return 1;
    }
    uint64_t step = 0;
    double p0 = idletime_ckpt_latest(h, &step, nullptr, 0) == 0 ? double(step) / 1000 : 0;
    idletime_ckpt_install_notice(h, 0);
    log_event(a, "start", p0, p0);
    double t0 = now_mono(), p = p0, saved = p0;
    int fd = idletime_ckpt_notice_fd(h);
    while (p < a.work && !idletime_ckpt_preempt_requested(h)) {
        pause_for(std::min(a.work - p, std::max(0.1, a.ckpt_every - (p - saved))), fd);
        p = std::min(a.work, p0 + now_mono() - t0);
        idletime_ckpt_progress(h, uint64_t(p * 1000));
        if (p - saved >= a.ckpt_every && !idletime_ckpt_saving(h))
            saved = save(h, p, saved, false);
    }
    if (p >= a.work) {
        idletime_ckpt_close(h);
        log_event(a, "done", p, p);
        return 0;
    }
    log_event(a, "notice", p, saved);
    idletime_ckpt_wait(h);
    saved = save(h, p, saved, true);
    log_event(a, "saved", p, saved);
    int rc = idletime_ckpt_release(h);
    log_event(a, rc == 0 ? "release" : "release-failed", p, saved);
    if (rc != 0)  // wait for Slurm to end the run at the grace time; exiting would "complete" it
        for (;;)
            pause_for(1);
    idletime_ckpt_close(h);  // the requeue is recorded by now: exiting cannot "complete" the job
    return 0;
}

}  // namespace

int main(int argc, char **argv)
{
    Args a;
    int rc = 0;
    if (cmdline::help_or_version(argc, argv, kProg, kUsage, rc)) return rc;
    if (!parse(argc, argv, a)) return cmdline::kExitUsage;
    return a.mode == "plain" ? run_plain(a) : run_ckpt(a);
}
