// The state behind one idletime_ckpt_t: a Store, the save in progress, the one background
// persist thread with its reusable staging memory, and the heartbeat file.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ckpt/group.hpp"
#include "ckpt/store.hpp"

namespace idletime::ckpt {

// "<step> <unix_time> <saving 0|1>\n" into env IDLETIME_HEARTBEAT_FILE (temp + rename).
class Heartbeat {
public:
    Heartbeat();
    void progress(uint64_t step);  // throws Error on I/O failure
    void set_saving(bool saving) noexcept;
    bool enabled() const { return !path_.empty(); }

private:
    void write_locked();
    std::string path_;
    std::mutex mu_;
    uint64_t step_ = 0;
    bool saving_ = false;
};

class Session {
public:
    Session(const std::string &dir, StoreOptions opt, LogFn log);
    ~Session();
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;

    Store &store() { return store_; }
    Heartbeat &heartbeat() { return hb_; }

    void begin(uint64_t step);
    // replicated: in a group, only rank 0's copy is written (stored under name itself); other
    // files of a group member are stored as "rank-<r>.<name>".
    void add(const std::string &name, const void *data, size_t size, bool replicated = false);
    void join(GroupConfig cfg);
    Group *group() { return group_.get(); }
    void commit();
    void commit_async();
    void wait();  // blocks until idle; throws a failed background save's error once
    bool saving() const;
    bool any_saved() const;

private:
    void take_pending();
    void wait_idle();
    void worker();
    void persist_now(uint64_t step, const std::vector<Item> &items,
                     std::vector<std::string> *trash = nullptr, bool background = false);

    Store store_;
    Heartbeat hb_;
    std::optional<uint64_t> open_step_;
    std::vector<Item> items_;
    uint64_t last_ok_ = 0;
    bool any_ok_ = false;

    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool busy_ = false;
    bool stop_ = false;
    std::optional<Error> pending_;
    uint64_t job_step_ = 0;
    std::vector<Item> job_items_;
    std::unique_ptr<char[]> arena_;  // staging copy, reused from save to save
    size_t arena_cap_ = 0;
    std::thread thread_;
    std::unique_ptr<Group> group_;
};

}  // namespace idletime::ckpt
