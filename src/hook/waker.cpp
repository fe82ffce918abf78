// The shared backoff waker (waker.hpp). Entries are files named by job id holding the begin
// time, written to a temp name and renamed into place, so a reader sees whole entries only.
#include "hook/waker.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

namespace idletime::hook {
namespace {

bool parse_u64(const char *s, unsigned long long max, unsigned long long &out) {
    if (!s || *s < '0' || *s > '9') return false;
    char *end = nullptr;
    errno = 0;
    out = strtoull(s, &end, 10);
    return !errno && (*end == 0 || *end == '\n') && out <= max;
}

// The begin time in one entry file; false when unreadable or malformed.
bool read_entry(const std::string &path, time_t &begin) {
    char buf[32] = "";
    int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0) close(fd);
    unsigned long long v = 0;
    if (n <= 0) return false;
    buf[n] = 0;
    if (!parse_u64(buf, LLONG_MAX, v)) return false;
    begin = time_t(v);
    return true;
}

// Whole entries: job id -> begin. Unreadable or malformed files are removed.
std::map<uint32_t, time_t> scan(const std::string &dir) {
    std::map<uint32_t, time_t> out;
    DIR *d = opendir(dir.c_str());
    if (!d) return out;
    while (dirent *e = readdir(d)) {
        unsigned long long id = 0;
        time_t begin = 0;
        if (e->d_name[0] == '.' || !parse_u64(e->d_name, 0xfffffffeULL, id) || id == 0) continue;
        const std::string path = dir + "/" + e->d_name;
        if (!read_entry(path, begin)) {
            unlink(path.c_str());
            continue;
        }
        out[uint32_t(id)] = begin;
    }
    closedir(d);
    return out;
}

// Removes the entry of job if it still says begin (a newer requeue may have replaced it).
void remove_if(const std::string &dir, uint32_t job, time_t begin) {
    const std::string path = dir + "/" + std::to_string(job);
    time_t now_begin = 0;
    if (read_entry(path, now_begin) && now_begin == begin) unlink(path.c_str());
}

}  // namespace

bool wake_enqueue(const std::string &dir, uint32_t job, time_t begin, std::string &err) {
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        err = "cannot create " + dir + ": " + strerror(errno);
        return false;
    }
    const std::string path = dir + "/" + std::to_string(job);
    const std::string tmp = dir + "/.tmp." + std::to_string(job) + "." + std::to_string(getpid());
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        err = "cannot write " + tmp + ": " + strerror(errno);
        return false;
    }
    const std::string text = std::to_string((long long)begin) + "\n";
    bool ok = write(fd, text.data(), text.size()) == ssize_t(text.size());
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
        err = "cannot write " + path + ": " + strerror(errno);
        unlink(tmp.c_str());
        return false;
    }
    return true;
}

size_t wake_pending(const std::string &dir) { return scan(dir).size(); }

bool wake_serve(const std::string &dir, const WakeFn &wake, const SleepFn &sleep_s) {
    const std::string lock_path = dir + "/.lock";
    bool served = false;
    for (;;) {
        int lock = open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (lock < 0) return served;
        if (flock(lock, LOCK_EX | LOCK_NB) != 0) {
            close(lock);
            return served;  // another process serves the directory
        }
        served = true;
        for (;;) {
            auto entries = scan(dir);
            if (entries.empty()) break;
            const time_t now = time(nullptr);
            for (const auto &[job, begin] : entries) {
                if (begin > now) continue;
                wake(job, begin);
                remove_if(dir, job, begin);
            }
            // One look a second: a new entry may be due sooner than the earliest seen here.
            if (sleep_s) sleep_s(1);
            else std::this_thread::sleep_for(std::chrono::seconds(1));
        }
        close(lock);  // releases the lock
        // An entry written after the last scan, whose writer found the lock still held, would
        // be left alone: look once more after releasing, and serve again if there is one.
        if (scan(dir).empty()) return served;
    }
}

}  // namespace idletime::hook
