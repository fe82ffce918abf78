// CSV form of a job stream, so a stream can be inspected, versioned and replayed again.
// jobs:   id,submit_s,duration_s,gpus,class,quota,pool,spec,nodes   (seconds; GPUs in all;
//         class guaranteed|idle; nodes of the gang, GPUs per node = gpus / nodes)
// quotas: quota,pool,gpus,demand_gpus
#pragma once
#include "replay/mapping.hpp"

#include <iosfwd>

namespace idletime::replay {

void write_jobs_csv(std::ostream &out, const std::vector<ReplayJob> &jobs);
void write_quotas_csv(std::ostream &out, const std::vector<Quota> &quotas);
// Throws TraceError naming origin:line for malformed input.
std::vector<ReplayJob> read_jobs_csv(std::istream &in, const std::string &origin);
std::vector<Quota> read_quotas_csv(std::istream &in, const std::string &origin);

}  // namespace idletime::replay
