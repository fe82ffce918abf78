// One trusted checkpoint directory: trust checks, the commit protocol, verification, pruning.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "ckpt/manifest.hpp"
#include "ckpt/util.hpp"
#include "ckpt/writer.hpp"

namespace idletime::ckpt {

struct StoreOptions {
    unsigned keep_last = 3;
    std::string job_id;  // "" = none
    bool require_munge = false;
};

using LogFn = std::function<void(const std::string &)>;

// One buffer to persist; data stays owned by the caller until persist() returns.
struct Item {
    std::string name;
    const void *data = nullptr;
    size_t size = 0;
};

// A save being assembled in a temporary directory of a Store, under its writer lock.
struct Staged {
    std::string tmp;                    // ".tmp-step-N<label>@<writer tag>"
    std::unique_ptr<WriterLock> lock;
    Fd td;                              // the temporary directory
    Manifest m;                         // files written so far
};

class Store {
public:
    // Creates dir (0700) if missing; throws Error(-EPERM, ...) if it is not trustworthy.
    Store(const std::string &dir, StoreOptions opt, LogFn log);

    const std::string &dir() const { return dir_; }
    const StoreOptions &options() const { return opt_; }
    std::string step_path(uint64_t step) const;

    // Newest complete checkpoint; rejected ones are logged and skipped (rejected() lists them).
    // munged unreachable or clock skew: throws (cred.hpp codes) instead of skipping.
    std::optional<uint64_t> latest();
    const std::string &rejected() const { return rejected_; }
    // Verified manifest of step (cached after the first verification); throws Error(-ENOENT).
    std::shared_ptr<const Manifest> complete(uint64_t step);
    // Commit protocol; throws Error on any failure and leaves no trace of the attempt. Old
    // checkpoints beyond keep_last are renamed aside (no longer checkpoints) and removed; with
    // trash, their names are appended to it instead and the caller removes them later with
    // empty_trash (deleting big files can take longer than writing them: not on the durable path).
    void persist(uint64_t step, const std::vector<Item> &items,
                 std::vector<std::string> *trash = nullptr);
    void empty_trash(const std::vector<std::string> &trash);
    // The steps of persist(), for savers that assemble one checkpoint from several writers
    // (group.cpp): stage() creates the locked temporary, write_items() writes and fsyncs the
    // files, seal() writes the manifest last (signed), publishes and prunes; discard() removes
    // the temporary (never throws). seal() or discard() must end every stage().
    Staged stage(uint64_t step, const std::string &label = "");
    void write_items(Staged &s, const std::vector<Item> &items) const;
    void seal(Staged &s, std::vector<std::string> *trash);
    void discard(Staged &s) noexcept;
    int dirfd() const { return fd_.get(); }
    // Throws Error(-EPERM) unless owned by us and not group/world writable.
    void check_trusted(const std::string &what, uid_t uid, mode_t mode) const;
    // Reads one file of a complete checkpoint, checking size and checksum again.
    size_t read(uint64_t step, const std::string &name, void *buf, size_t cap);

private:
    Manifest verify(uint64_t step) const;
    void verify_file(int sd, int format, const FileEntry &f) const;
    FileEntry write_file(int td, const Item &it) const;
    void write_manifest(int td, Manifest &m) const;
    void publish(const std::string &tmp, uint64_t step);
    void prune(uint64_t newest, std::vector<std::string> &trash);
    void clean_stale();
    std::vector<std::string> entries() const;
    std::vector<uint64_t> steps_desc() const;

    std::string dir_;
    Fd fd_;
    StoreOptions opt_;
    LogFn log_;
    uid_t uid_;
    std::mutex mu_;  // guards cache_ (persist runs in the background thread)
    std::map<uint64_t, std::shared_ptr<const Manifest>> cache_;
    std::string rejected_;  // of the last latest(): "step-N: reason; ..."
};

}  // namespace idletime::ckpt
