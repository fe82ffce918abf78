// job_submit/idletime's own time per call: the exact code slurmctld runs per submission
// (view_of + decide, which calls idletime_resolve), minus the two slurm_xstrdup calls of apply().
// Usage: bench_decide CONFIG [CALLS]
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "plugins/job_submit/decide.hpp"

using namespace idletime::jobsubmit;

static double now_ns() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static double per_call_ns(const idletime_config_t *cfg, job_desc_msg_t *desc, long calls, size_t *sink) {
    double t0 = now_ns();
    for (long i = 0; i < calls; ++i) *sink += decide(cfg, view_of(desc)).partitions.size();
    return (now_ns() - t0) / calls;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_decide CONFIG [CALLS]\n");
        return 2;
    }
    long calls = argc > 2 ? std::atol(argv[2]) : 200000;
    idletime_config_t *cfg = nullptr;
    char err[512];
    if (idletime_config_load(argv[1], &cfg, err, sizeof(err)) != 0) {
        std::fprintf(stderr, "bench_decide: %s\n", err);
        return 2;
    }
    const char *env[] = {"SLURM_SPANK_X=1", "IDLETIME_MODE=only", "IDLETIME_ACCOUNT=team-a"};
    job_desc_msg_t desc;
    std::memset(&desc, 0, sizeof(desc));
    desc.spank_job_env = const_cast<char **>(env);
    desc.spank_job_env_size = 3;
    desc.tres_per_node = const_cast<char *>("gres:gpu:a100:4");
    size_t sink = 0;
    double idle = per_call_ns(cfg, &desc, calls, &sink);
    desc.spank_job_env_size = 1;  // no idletime option: the pass-through path
    double plain = per_call_ns(cfg, &desc, calls, &sink);
    std::printf("job_submit/idletime per call: idletime job %.2f us, plain job %.3f us (%ld calls each)\n",
                idle / 1e3, plain / 1e3, calls);
    idletime_config_free(cfg);
    return sink == 0 ? 1 : 0;
}
