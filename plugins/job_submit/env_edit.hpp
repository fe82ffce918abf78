// Adds NAME=value entries to a job_desc string array (spank_job_env, environment) with the
// allocator of the process that will free it: slurmctld frees each entry and the array with
// xfree, so the plugin passes Slurm's exported slurm_xstrdup/slurm_xrecalloc/slurm_xfree and the
// unit test passes libslurm's copies of the same functions.
#pragma once
#include <cstdint>
#include <string>

namespace idletime::jobsubmit {

struct Allocator {
    char *(*strdup)(const char *str);
    // slurm_xrecalloc's shape: (item, count, size, clear, try_only, file, line, func).
    void *(*recalloc)(void **item, size_t count, size_t size, bool clear, bool try_only, const char *file,
                      int line, const char *func);
    void (*free)(void **item);
};

// Sets NAME=value in (*array, *size): replaces the first entry named NAME (or prefix+NAME when
// prefix is given, e.g. "SPANK_"), else appends. Returns false, changing nothing, when memory is
// short.
bool env_set(const Allocator &a, char ***array, uint32_t *size, const std::string &name, const std::string &value,
             const char *also_prefix = nullptr);

}  // namespace idletime::jobsubmit
