// spank/idletime: SPANK hooks only. Each hook catches everything and hands off by context:
// submit_side.cpp (sbatch/srun/salloc) and job_side.cpp (slurmstepd).
#include "src/core/log_text.hpp"
#include "plugins/spank/spank_c.h"

#include <exception>
#include <string>

#include "plugins/spank/hooks.hpp"

extern "C" {
// extern "C" const: SPANK_PLUGIN's const arrays would get internal linkage in C++.
extern const char plugin_name[] = "idletime";
extern const char plugin_type[] = "spank";
extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
}

namespace idletime::spank {

State &state() {
    static State s;
    return s;
}

std::optional<std::string> job_getenv(spank_t sp, const char *name) {
    char buf[4096];
    if (spank_getenv(sp, name, buf, sizeof(buf)) != ESPANK_SUCCESS) return std::nullopt;
    return std::string(buf);
}

}  // namespace idletime::spank

namespace {

using idletime::spank::state;

int option_cb(int val, const char *optarg, int remote) {
    try {
        std::string err = state().options.set_cli(val, optarg);
        if (err.empty()) return 0;
        // Remote copies were validated at submission; say so if they differ anyway.
        slurm_error("idletime/spank: %s%s", idletime::log_text(err).c_str(), remote ? " (in the job)" : "");
        return -1;
    } catch (...) {
        slurm_error("idletime/spank: internal error while parsing an option");
        return -1;
    }
}

struct spank_option make_option(int index) {
    const idletime::spank::OptionSpec &s = idletime::spank::kOptions[index];
    struct spank_option o{};
    o.name = const_cast<char *>(s.name);
    o.arginfo = const_cast<char *>(s.arginfo);
    o.usage = const_cast<char *>(s.usage);
    o.has_arg = s.bare ? 2 : 1;  // 2: optional argument
    o.val = index;
    o.cb = option_cb;
    return o;
}

// Client and job contexts fail on bad plugstack arguments; daemons only log (slurmd would
// otherwise refuse to start and take the node down).
bool strict_context() {
    spank_context_t c = spank_context();
    return c == S_CTX_LOCAL || c == S_CTX_ALLOCATOR || c == S_CTX_REMOTE;
}

int init(spank_t sp, int ac, char **av) {
    std::string err = state().options.parse_plugstack(ac, av);
    if (!err.empty()) {
        slurm_error("idletime/spank: %s", idletime::log_text(err).c_str());
        return strict_context() ? -1 : 0;
    }
    if (spank_context() == S_CTX_SLURMD) idletime::spank::slurmd_node_check(state().options.config_path());
    if (!strict_context()) return 0;
    for (int i = 0; i < idletime::spank::kOptionCount; ++i) {
        struct spank_option o = make_option(i);
        if (spank_option_register(sp, &o) != ESPANK_SUCCESS) {
            slurm_error("idletime/spank: cannot register --%s", o.name);
            return -1;
        }
    }
    return 0;
}

int post_opt(spank_t sp) {
    switch (spank_context()) {
    case S_CTX_LOCAL:
    case S_CTX_ALLOCATOR:
        return idletime::spank::submit_side(sp);
    case S_CTX_REMOTE:
        return idletime::spank::job_side(sp);
    default:
        return 0;
    }
}

template <class F>
int guarded(const char *hook, F &&f) {
    try {
        return f();
    } catch (const std::exception &e) {
        slurm_error("idletime/spank: %s: internal error: %s", hook, e.what());
    } catch (...) {
        slurm_error("idletime/spank: %s: internal error", hook);
    }
    return -1;
}

}  // namespace

extern "C" int slurm_spank_init(spank_t sp, int ac, char **av) {
    return guarded("init", [&] { return init(sp, ac, av); });
}

extern "C" int slurm_spank_init_post_opt(spank_t sp, int, char **) {
    return guarded("init_post_opt", [&] { return post_opt(sp); });
}

extern "C" int slurm_spank_task_init(spank_t sp, int, char **) {
    guarded("task_init", [&] { return idletime::spank::task_side(sp); });
    return 0;  // a missing variable is logged; never fail the user's task for it
}
