// See preemptor.hpp.
#include "hook/preemptor.hpp"
#include "hook/state_file.hpp"
#include "core/config.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>
#include <string_view>

namespace idletime::hook {
namespace {

bool valid_word(const std::string &w) {
    if (w.empty() || w.size() > 256) return false;
    for (char c : w)
        if (c <= ' ' || c == ',' || c == 0x7f) return false;
    return true;
}

bool parse_num(const std::string &w, uint64_t max, uint64_t &out) {
    if (w.empty() || w.size() > 20) return false;
    out = 0;
    for (char c : w) {
        if (c < '0' || c > '9') return false;
        out = out * 10 + uint64_t(c - '0');
    }
    return out <= max;
}

int64_t now_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// The file's content after its first line (the stamp), if the stamp is within max_age_ms of now.
bool read_fresh(int fd, int64_t max_age_ms, std::string &text) {
    std::string all;
    char buf[65536];
    ssize_t n;
    off_t off = 0;
    while ((n = pread(fd, buf, sizeof buf, off)) > 0) {
        all.append(buf, size_t(n));
        off += n;
        if (all.size() > (64u << 20)) return false;  // not ours: reload
    }
    const size_t nl = all.find('\n');
    uint64_t stamp = 0;
    if (n < 0 || nl == std::string::npos || !parse_num(all.substr(0, nl), INT64_MAX, stamp)) return false;
    const int64_t age = now_ms() - int64_t(stamp);
    if (age < 0 || age > max_age_ms) return false;
    text = all.substr(nl + 1);
    return true;
}

}  // namespace

std::string started_jobs_encode(const std::vector<slurmjob::StartedJob> &jobs) {
    std::string out;
    for (const auto &j : jobs) {
        if (!valid_word(j.quota) || j.nodes.empty()) continue;
        std::string nodes;
        bool ok = true;
        for (const auto &n : j.nodes) {
            ok = ok && valid_word(n);
            nodes += (nodes.empty() ? "" : ",") + n;
        }
        if (!ok || j.start_time < 0) continue;
        out += std::to_string(j.job_id) + " " + std::to_string(j.start_time) + " " + j.quota + " " + nodes + "\n";
    }
    return out;
}

bool started_jobs_decode(const std::string &text, std::vector<slurmjob::StartedJob> &out) {
    out.clear();
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string id, start, quota, nodes, extra;
        uint64_t v_id = 0, v_start = 0;
        if (!(f >> id >> start >> quota >> nodes) || (f >> extra) || !parse_num(id, UINT32_MAX, v_id) ||
            !parse_num(start, INT64_MAX, v_start) || !valid_word(quota))
            return false;
        slurmjob::StartedJob j{uint32_t(v_id), int64_t(v_start), quota, {}};
        std::istringstream ns(nodes);
        std::string n;
        while (std::getline(ns, n, ','))
            if (!valid_word(n)) return false; else j.nodes.push_back(n);
        if (j.nodes.empty()) return false;
        out.push_back(std::move(j));
    }
    return true;
}

bool as_started_quota_job(const slurmjob::Job &job, int64_t since, slurmjob::StartedJob &out) {
    const int64_t start = job.snap.start_time;
    const std::string_view part = std::string_view(job.partition).substr(0, job.partition.find(','));  // its own comes first
    const std::string_view quota = quota_of_partition(part);
    if (job.pending || start <= 0 || start < since || quota.empty()) return false;
    out = {job.snap.job_id, start, std::string(quota), job.snap.nodes};
    return true;
}

bool pick_preemptor(const std::vector<slurmjob::StartedJob> &jobs, uint32_t victim,
                    const std::vector<std::string> &nodes, int64_t preempt_time, uint32_t noted,
                    slurmjob::StartedJob &out) {
    const slurmjob::StartedJob *best = nullptr;
    for (const auto &j : jobs) {
        if (noted && j.job_id == noted && noted != victim) {
            out = j;
            return true;
        }
        if (noted || j.job_id == victim || j.start_time + 1 < preempt_time) continue;
        if (best && j.start_time >= best->start_time) continue;
        bool shares = false;
        for (const auto &h : j.nodes)
            for (const auto &n : nodes) shares = shares || h == n;
        if (shares) best = &j;
    }
    if (best) out = *best;
    return best != nullptr;
}

bool snapshot_shared(const std::string &path, int64_t max_age_ms, const ProduceFn &produce,
                     std::string &text, std::string &err) {
    int fd = open_state_file(path, err);
    if (fd >= 0 && !lock_state_file(fd, LOCK_EX, kStateLockMs)) {
        err = path + ": still locked after " + std::to_string(kStateLockMs) + " ms";
        close(fd);
        fd = -1;
    }
    if (fd < 0) {
        err += " (not shared: this hook loads the job table itself)";
        std::string e2;
        return produce(text, e2) || (err += "; " + e2, false);
    }
    bool ok = read_fresh(fd, max_age_ms, text);
    if (!ok && (ok = produce(text, err))) {
        const std::string all = std::to_string(now_ms()) + "\n" + text;
        if (ftruncate(fd, 0) != 0 || pwrite(fd, all.data(), all.size(), 0) != ssize_t(all.size()))
            err = path + ": cannot write: " + strerror(errno);
    }
    close(fd);
    return ok;
}

}  // namespace idletime::hook
