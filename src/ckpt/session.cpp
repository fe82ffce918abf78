#include "ckpt/session.hpp"
#include "ckpt/publish.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <fcntl.h>
#include <unistd.h>

namespace idletime::ckpt {

Heartbeat::Heartbeat()
{
    const char *p = std::getenv("IDLETIME_HEARTBEAT_FILE");
    if (p && *p)
        path_ = p;
}

void Heartbeat::write_locked()
{
    std::string line = std::to_string(step_) + " " + std::to_string(::time(nullptr)) + " " +
                       (saving_ ? "1" : "0") + "\n";
    std::string tmp = path_ + ".tmp." + std::to_string(::getpid());
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!fd)
        throw_errno("heartbeat file " + tmp);
    write_all(fd.get(), line.data(), line.size(), tmp);
    fd = Fd();
    if (::rename(tmp.c_str(), path_.c_str()) != 0) {
        int e = errno;
        ::unlink(tmp.c_str());
        errno = e;
        throw_errno("rename heartbeat file to " + path_);
    }
}

void Heartbeat::progress(uint64_t step)
{
    if (path_.empty())
        return;
    std::lock_guard<std::mutex> g(mu_);
    step_ = step;
    write_locked();
}

void Heartbeat::set_saving(bool saving) noexcept
{
    if (path_.empty())
        return;
    std::lock_guard<std::mutex> g(mu_);
    saving_ = saving;
    try {
        write_locked();
    } catch (...) {
        // The next progress() reports heartbeat trouble; a save must not fail over it.
    }
}

Session::Session(const std::string &dir, StoreOptions opt, LogFn log)
    : store_(dir, std::move(opt), std::move(log)), thread_([this] { worker(); })
{
}

Session::~Session()
{
    {
        std::unique_lock<std::mutex> g(mu_);
        cv_.wait(g, [this] { return !busy_; });
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

void Session::take_pending()
{
    std::lock_guard<std::mutex> g(mu_);
    if (pending_) {
        Error e = *pending_;
        pending_.reset();
        throw e;
    }
}

void Session::wait_idle()
{
    std::unique_lock<std::mutex> g(mu_);
    cv_.wait(g, [this] { return !busy_; });
}

bool Session::saving() const
{
    std::lock_guard<std::mutex> g(mu_);
    return busy_;
}

void Session::begin(uint64_t step)
{
    take_pending();
    if (open_step_)
        throw Error(-EINVAL, "begin(" + std::to_string(step) + "): step " +
                                 std::to_string(*open_step_) + " was begun and not committed");
    uint64_t floor = 0;
    bool have = false;
    {
        std::lock_guard<std::mutex> g(mu_);
        floor = last_ok_;
        have = any_ok_ || busy_;
        if (busy_)
            floor = std::max(floor, job_step_);
    }
    if (have && step <= floor)
        throw Error(-EINVAL, "begin(" + std::to_string(step) + "): steps must increase; " +
                                 std::to_string(floor) + " was saved already");
    open_step_ = step;
    items_.clear();
}

void Session::join(GroupConfig cfg)
{
    take_pending();
    if (open_step_ || saving() || group_)
        throw Error(-EINVAL, "join(): call it once, after open() and before any save");
    group_ = std::make_unique<Group>(store_, std::move(cfg));
}

void Session::add(const std::string &name, const void *data, size_t size, bool replicated)
{
    if (!open_step_)
        throw Error(-EINVAL, "add(\"" + name + "\") without begin()");
    if (!valid_file_name(name) || (group_ && name.size() > 180))
        throw Error(-EINVAL, "invalid checkpoint file name \"" + name + "\"; allowed: 1-" +
                                 (group_ ? "180" : "200") +
                                 " of [A-Za-z0-9._-], not starting with '.', not MANIFEST.json");
    if (group_ && name.rfind("rank-", 0) == 0)
        throw Error(-EINVAL, "invalid checkpoint file name \"" + name +
                                 "\": names starting with \"rank-\" are the library's in a group");
    if (!data && size > 0)
        throw Error(-EINVAL, "add(\"" + name + "\"): NULL data with size > 0");
    const std::string stored =
        group_ && !replicated ? Group::shard_prefix(group_->rank()) + name : name;
    for (const auto &it : items_)
        if (it.name == stored)
            throw Error(-EEXIST, "add(\"" + name + "\"): name added twice");
    if (replicated && group_ && group_->rank() != 0)
        return;  // rank 0 writes the one copy
    items_.push_back(Item{stored, data, size});
}

void Session::persist_now(uint64_t step, const std::vector<Item> &items,
                          std::vector<std::string> *trash, bool background)
{
    const int64_t taken_at = ::time(nullptr);  // the items hold the state of this moment
    hb_.set_saving(true);
    try {
        if (group_)
            group_->commit(step, items, trash, background);
        else
            store_.persist(step, items, trash);
    } catch (...) {
        hb_.set_saving(false);
        throw;
    }
    hb_.set_saving(false);
    if (!group_ || group_->rank() == 0)
        publish_checkpoint(store_.options().job_id, taken_at);
}

void Session::commit()
{
    take_pending();
    if (!open_step_)
        throw Error(-EINVAL, "commit() without begin()");
    wait_idle();
    take_pending();
    uint64_t step = *open_step_;
    std::vector<Item> items = std::move(items_);
    open_step_.reset();
    items_.clear();
    persist_now(step, items);
    std::lock_guard<std::mutex> g(mu_);
    last_ok_ = step;
    any_ok_ = true;
}

bool Session::any_saved() const
{
    std::lock_guard<std::mutex> g(mu_);
    return any_ok_;
}

void Session::commit_async()
{
    take_pending();
    if (!open_step_)
        throw Error(-EINVAL, "commit_async() without begin()");
    wait_idle();
    take_pending();
    if (group_)  // main thread: the same step everywhere; the persist thread's coordinator
        group_->prepare_background(*open_step_);
    size_t total = 0;
    for (const auto &it : items_)
        total += it.size;
    if (total > arena_cap_) {
        arena_.reset();
        arena_ = std::make_unique_for_overwrite<char[]>(total);
        arena_cap_ = total;
    }
    std::vector<Item> staged;
    size_t off = 0;
    for (const auto &it : items_) {
        if (it.size)
            std::memcpy(arena_.get() + off, it.data, it.size);
        staged.push_back(Item{it.name, arena_.get() + off, it.size});
        off += it.size;
    }
    {
        std::lock_guard<std::mutex> g(mu_);
        job_step_ = *open_step_;
        job_items_ = std::move(staged);
        busy_ = true;
    }
    open_step_.reset();
    items_.clear();
    cv_.notify_all();
}

void Session::wait()
{
    wait_idle();
    take_pending();
}

void Session::worker()
{
    std::unique_lock<std::mutex> g(mu_);
    for (;;) {
        cv_.wait(g, [this] { return stop_ || busy_; });
        if (!busy_)
            return;  // stop_ and nothing queued
        uint64_t step = job_step_;
        g.unlock();
        std::optional<Error> err;
        std::vector<std::string> trash;
        try {
            persist_now(step, job_items_, &trash, true);
        } catch (const Error &e) {
            err = Error(e.code(), "background save of step " + std::to_string(step) +
                                      " failed: " + e.what());
        } catch (const std::exception &e) {
            err = Error(-EIO, "background save of step " + std::to_string(step) +
                                  " failed: " + e.what());
        }
        g.lock();
        if (err)
            pending_ = err;
        else {
            last_ok_ = std::max(last_ok_, step);
            any_ok_ = true;
        }
        job_items_.clear();
        busy_ = false;
        cv_.notify_all();
        if (trash.empty())
            continue;
        // Durable and reported: delete the pruned copies before taking the next job (the
        // destructor's join waits for this too; a killed process leaves .tmp-del-*, removed
        // on the next open).
        g.unlock();
        store_.empty_trash(trash);
        g.lock();
    }
}

}  // namespace idletime::ckpt
