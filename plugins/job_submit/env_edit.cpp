#include "plugins/job_submit/env_edit.hpp"

#include <cstring>

namespace idletime::jobsubmit {
namespace {

bool named(const char *entry, const std::string &name) {
    return entry && std::strncmp(entry, name.c_str(), name.size()) == 0 && entry[name.size()] == '=';
}

}  // namespace

bool env_set(const Allocator &a, char ***array, uint32_t *size, const std::string &name, const std::string &value,
             const char *also_prefix) {
    const std::string entry = name + "=" + value;
    const std::string prefixed = also_prefix ? also_prefix + name : "";
    for (uint32_t i = 0; *array && i < *size; ++i) {
        if (!named((*array)[i], name) && !(also_prefix && named((*array)[i], prefixed))) continue;
        char *copy = a.strdup(entry.c_str());
        if (!copy) return false;
        a.free(reinterpret_cast<void **>(&(*array)[i]));
        (*array)[i] = copy;
        return true;
    }
    char *copy = a.strdup(entry.c_str());
    if (!copy) return false;
    // One spare NULL slot: Slurm's own copies (xduparray, env_array_*) end arrays with NULL.
    void *grown = *array;
    if (!a.recalloc(&grown, *size + 2, sizeof(char *), true, true, __FILE__, __LINE__, __func__)) {
        a.free(reinterpret_cast<void **>(&copy));
        return false;
    }
    *array = static_cast<char **>(grown);
    (*array)[*size] = copy;
    (*array)[*size + 1] = nullptr;
    ++*size;
    return true;
}

}  // namespace idletime::jobsubmit
