// Trace input for `idletime replay`: one record per pod/job of a public GPU-cluster trace,
// in the trace's own units (seconds from trace start). Readers for other traces implement
// TraceReader and register in make_trace_reader().
#pragma once
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace idletime::replay {

// Service class a trace gives a pod (openb's `qos` column).
enum class TraceQos { LatencySensitive, BestEffort, Burstable, Guaranteed };

const char *trace_qos_name(TraceQos q);

struct TraceRecord {
    std::string name;               // unique within the trace
    int num_gpu = 0;                // whole GPUs asked for
    int gpu_milli = 1000;           // share of one GPU x1000 when num_gpu == 1 (< 1000 = shared)
    std::vector<std::string> models;  // allowed GPU models; empty = any
    TraceQos qos = TraceQos::LatencySensitive;
    int64_t creation_s = 0;         // submit time
    int64_t scheduled_s = -1;       // start time; -1 = never scheduled
    int64_t deletion_s = -1;        // end time; -1 = still running at trace end
};

// Thrown for malformed input; what() is one line naming the file position and the problem.
struct TraceError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class TraceReader {
public:
    virtual ~TraceReader() = default;
    virtual std::string_view kind() const = 0;
    // Reads all records of one pod/job list. `origin` names the input in errors.
    virtual std::vector<TraceRecord> read(std::istream &in, const std::string &origin) const = 0;
};

// Known kinds: "openb" (Alibaba cluster-trace-gpu-v2023 pod lists). nullptr for others.
std::unique_ptr<TraceReader> make_trace_reader(std::string_view kind);
// Comma-separated names of the known kinds (for error messages).
std::string trace_reader_kinds();

}  // namespace idletime::replay
