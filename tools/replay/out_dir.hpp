// The --out directory of idletime-replay: new, empty, or one an earlier idletime-replay wrote (its
// marker .idletime-replay, a regular file with one link, not a symlink). Everything is checked
// before anything changes. The job stream of every seed is written to a staging directory inside
// --out and moved into place only when all of it is whole: a failure leaves --out as it was. Of an
// earlier run only the names idletime-replay writes are replaced (is_replay_output); other files
// in the directory are left alone.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace idletime::replay {

// --out cannot be used (bad input: exit 2).
struct OutDirError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Whether name (an entry directly in --out) is one idletime-replay writes: the stream and report
// files, the plots and their gnuplot scripts, the logs, configuration directories A-D, seed-N.
bool is_replay_output(const std::string &name, bool is_dir);

class OutDir {
public:
    // Checks out and that no input (the trace, the site config) is an output it would replace.
    OutDir(std::string out, const std::vector<std::string> &inputs);
    ~OutDir();
    OutDir(const OutDir &) = delete;
    OutDir &operator=(const OutDir &) = delete;

    // Creates --out if needed and a fresh staging directory in it; returns the staging path.
    const std::string &stage();
    // Removes the earlier run's outputs, moves every staged entry into --out, writes the marker.
    void publish();
    // Removes the staging directory, and --out itself if this run created it and it is empty.
    void abandon() noexcept;

private:
    std::string out_, stage_;
    bool created_ = false, marked_ = false;
};

}  // namespace idletime::replay
