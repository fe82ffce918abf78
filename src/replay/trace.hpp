// Trace input for `idletime replay`: one record per pod/job of a GPU-cluster trace, in the
// trace's own units (seconds from trace start). Readers: openb (Alibaba pod lists, trace.cpp),
// sacct (`sacct --parsable2`, trace_sacct.cpp), swf (Standard Workload Format, trace_swf.cpp);
// each implements TraceReader and registers in make_trace_reader().
#pragma once
#include <cstdint>
#include <iosfwd>
#include <map>
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
    int nodes = 1;                  // nodes the job ran on (sacct NNodes); num_gpu is the total
    std::string account;            // sacct Account, SWF "g<group>"; empty for openb
    std::string user;               // sacct User, SWF "u<user>"
    std::string partition;          // sacct Partition, SWF "p<partition number>"
    std::string qos_name;           // sacct QOS, SWF "q<queue number>", openb qos (LS, BE, ...)
};

// What a reader saw besides its records: rows skipped on purpose and bad rows by reason.
struct ReadStats {
    int rows = 0;                   // data rows (header, comments and blank lines excluded)
    int steps_skipped = 0;          // sacct job steps (123.batch, 123.extern, 123.0)
    int duplicates_skipped = 0;     // sacct -D: earlier records of a requeued job
    int start_assumed = 0;          // SWF wait time unknown (-1): start taken as the submit time
    int64_t epoch0 = 0;             // sacct: epoch second that trace second 0 stands for
    std::map<std::string, int> bad;                // reason -> rows
    std::map<std::string, std::string> first_bad;  // reason -> "origin:line: detail" of the first
    void add_bad(const std::string &reason, const std::string &where_detail);
    int bad_total() const;
};

// text with every control character (C0, DEL, C1 as a byte or as UTF-8), every byte that is not
// well-formed UTF-8 and the backslash written as \xNN: trace fields and user input go into
// messages and mapping.md, where a raw escape sequence would drive the terminal.
std::string printable(const std::string &text);

// "" when a trace job's name (it names the Slurm job and its files) is printable as it is, else
// the reason, one phrase.
std::string job_name_problem(const std::string &name);

// Thrown for malformed input; what() is one line naming the file position and the problem.
struct TraceError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class TraceReader {
public:
    virtual ~TraceReader() = default;
    virtual std::string_view kind() const = 0;
    // Reads all records of one pod/job list. `origin` names the input in errors. A file that
    // cannot be read as this kind at all (no header, a required column missing) throws
    // TraceError; a bad row is counted in stats by reason (openb: throws, its files are clean).
    virtual std::vector<TraceRecord> read(std::istream &in, const std::string &origin,
                                          ReadStats &stats) const = 0;
    // The same, throwing TraceError for the first bad row.
    std::vector<TraceRecord> read(std::istream &in, const std::string &origin) const;
};

// Known kinds: "openb" (Alibaba cluster-trace-gpu-v2023 pod lists), "sacct" (Slurm
// `sacct --parsable2` output), "swf" (Standard Workload Format; procs_per_gpu SWF processors
// make one GPU). nullptr for others.
std::unique_ptr<TraceReader> make_trace_reader(std::string_view kind, int procs_per_gpu = 1);
// Comma-separated names of the known kinds (for error messages).
std::string trace_reader_kinds();

// The readers of trace_sacct.cpp and trace_swf.cpp.
std::unique_ptr<TraceReader> make_sacct_reader();
std::unique_ptr<TraceReader> make_swf_reader(int procs_per_gpu);

}  // namespace idletime::replay
