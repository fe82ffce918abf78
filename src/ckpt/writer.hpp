// Writer liveness for temporaries in a checkpoint directory (rules: doc/security.md (part 3)).
// Every save holds an OFD write lock on "<temp>.lock" for its whole duration, and "<temp>.lock"
// exists before "<temp>" is created and after it is gone. So a temporary is stale exactly when
// its lock file is missing or its lock can be taken; where the file system has no byte-range
// locks, a same-host writer is judged by pid + start time and a writer on another host is
// presumed alive.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ckpt/util.hpp"

namespace idletime::ckpt {

// "@<host>@<pid>@<start ticks>@<seq>": unique per save across hosts and pid reuse.
std::string writer_tag();

// The lock a save holds while its temporary exists.
class WriterLock {
public:
    // Creates "<temp>.lock" in dirfd (as ".lk-<temp>", locked, then renamed, so the lock file
    // never appears unlocked under its final name). Throws Error on I/O failure; a file system
    // without locks is not an error (locked() is then false).
    // dir: the directory's path, for messages.
    WriterLock(int dirfd, const std::string &dir, const std::string &temp);
    ~WriterLock();
    WriterLock(const WriterLock &) = delete;
    WriterLock &operator=(const WriterLock &) = delete;
    bool locked() const { return locked_; }
    // Removes the lock file, then drops the lock. Call after the temporary is gone.
    void release() noexcept;

private:
    int dirfd_;
    std::string name_;
    Fd fd_;
    bool locked_ = false;
};

enum class Owner { Live, Gone, Unknown };

// Judges the writer of temporary `temp` in dirfd. Gone: *held (if the lock file exists) keeps
// its lock until the caller has removed temp and then the lock file. why gets a short reason.
Owner temp_owner(int dirfd, const std::string &temp, Fd *held, std::string *why);

// Removes stale temporaries of dirfd (named dir in messages): ".tmp-del-*" (pruned copies),
// ".tmp-*" whose writer is gone, their ".lock" files, and ".lk-*" older than an hour.
void clean_temporaries(int dirfd, const std::string &dir, const std::vector<std::string> &names,
                       const std::function<void(const std::string &)> &log);

}  // namespace idletime::ckpt
