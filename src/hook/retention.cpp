#include "hook/retention.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <slurm/slurm.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/config.hpp"
#include "plugins/spank/ckpt_dir.hpp"

namespace idletime::retention {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr const char *kStamp = ".idletime-retention";
constexpr const char *kExpired = ".idletime-expired-";  // a job directory being removed
constexpr int kMaxDepth = 64;

struct Fd {
    int fd;
    explicit Fd(int f = -1) : fd(f) {}
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    ~Fd() {
        if (fd >= 0) close(fd);
    }
};

struct Budget {
    unsigned entries, unlinks;
};

// Names in the directory fd (not "." or ".."), at most budget.entries of them.
std::vector<std::string> list(int fd, Budget &b) {
    std::vector<std::string> out;
    int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup_fd < 0) return out;
    DIR *d = fdopendir(dup_fd);
    if (!d) {
        close(dup_fd);
        return out;
    }
    while (b.entries > 0) {
        dirent *e = readdir(d);
        if (!e) break;
        if (!std::strcmp(e->d_name, ".") || !std::strcmp(e->d_name, "..")) continue;
        --b.entries;
        out.emplace_back(e->d_name);
    }
    closedir(d);
    return out;
}

// Opens parent/name as a directory owned by uid on filesystem dev; -1 otherwise (a symlink, a
// foreign or root-owned directory, another filesystem: never entered).
int open_owned(int parent, const std::string &name, uid_t uid, dev_t dev) {
    int fd = openat(parent, name.c_str(), kDirFlags);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_uid != uid || st.st_dev != dev)) {
        close(fd);
        return -1;
    }
    return fd;
}

// Removes parent/name and everything below it that uid owns; never follows a symlink (those are
// unlinked as names). False when something was left (budget, a foreign directory).
bool remove_tree(int parent, const std::string &name, uid_t uid, dev_t dev, Budget &b, int depth) {
    if (depth > kMaxDepth) return false;
    Fd fd(open_owned(parent, name, uid, dev));
    if (fd.fd < 0) return false;
    bool all = true;
    for (const std::string &e : list(fd.fd, b)) {
        if (b.unlinks == 0) return false;
        struct stat st;
        if (fstatat(fd.fd, e.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            all = remove_tree(fd.fd, e, uid, dev, b, depth + 1) && all;
        } else if (unlinkat(fd.fd, e.c_str(), 0) == 0) {
            --b.unlinks;
        } else {
            all = false;
        }
    }
    if (!all || b.unlinks == 0) return false;
    --b.unlinks;
    return unlinkat(parent, name.c_str(), AT_REMOVEDIR) == 0;
}

std::string user_name(uid_t uid) {
    std::vector<char> buf(16384);
    struct passwd pw, *res = nullptr;
    if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &res) != 0 || !res) return "";
    return pw.pw_name;
}

// Step 1: mtime = now on <root>/<user of uid>/<job_id>-*.
void touch_ended(int rootfd, dev_t dev, uint32_t job_id, uid_t uid, Budget &b, Stats &s) {
    const std::string user = user_name(uid);
    if (user.empty() || user[0] == '.') return;
    Fd userfd(open_owned(rootfd, user, 0, dev));  // <root>/<user> is root's
    if (userfd.fd < 0) userfd.fd = open_owned(rootfd, user, uid, dev);  // or the user's (earlier versions)
    if (userfd.fd < 0) return;
    for (const std::string &name : list(userfd.fd, b)) {
        unsigned long id = 0;
        if (!spank::ckpt_dir_name_parse(name, &id) || id != job_id) continue;
        Fd jobfd(open_owned(userfd.fd, name, uid, dev));
        if (jobfd.fd >= 0 && futimens(jobfd.fd, nullptr) == 0) ++s.touched;
    }
}

// True when a sweep is due; the stamp (root-owned, in the root) records the last one.
bool sweep_due(int rootfd, uint32_t retention_s, const Limits &lim) {
    Fd fd(openat(rootfd, kStamp, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    struct stat st;
    if (fd.fd < 0 || fstat(fd.fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != 0) return false;
    const time_t interval = std::min<time_t>(lim.min_interval_s, retention_s / 2);
    if (st.st_size > 0 && st.st_mtime + interval > time(nullptr)) return false;
    // Non-empty marks "swept once"; the mtime is the time of the last sweep.
    if (st.st_size == 0 && write(fd.fd, "1", 1) != 1) return false;
    return futimens(fd.fd, nullptr) == 0;
}

struct Candidate {
    int user;  // index into the users' descriptors
    std::string name;
    unsigned long job_id;
    uid_t owner;   // the job's user: only what they own below is removed
    bool expired;  // already renamed to .idletime-expired-*
};

// Job directories of one user that are old enough (or already being removed).
// user_owner: the owner of the user directory; when not root (earlier versions' layout) the job
// directories must be that user's too.
void collect(int userfd, int index, uid_t user_owner, dev_t dev, time_t cutoff, Budget &b,
             std::vector<Candidate> &out, Stats &s) {
    for (const std::string &name : list(userfd, b)) {
        struct stat st;
        if (fstatat(userfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid == 0 || st.st_dev != dev || (user_owner != 0 && st.st_uid != user_owner))
            continue;
        unsigned long id = 0;
        const bool expired = name.rfind(kExpired, 0) == 0;
        if (!expired && !spank::ckpt_dir_name_parse(name, &id)) continue;
        if (!expired && st.st_mtime > cutoff) {
            ++s.kept_recent;
            continue;
        }
        out.push_back({index, name, id, st.st_uid, expired});
    }
}

void remove_candidates(const std::vector<Candidate> &cands, const std::vector<int> &userfds, dev_t dev,
                       const std::set<uint32_t> &active,
                       const Limits &lim, Budget &b, const Log &log, Stats &s) {
    for (const Candidate &c : cands) {
        if (s.removed >= lim.max_dirs || b.unlinks == 0) break;
        if (!c.expired && active.count(uint32_t(c.job_id))) {
            ++s.kept_active;
            continue;
        }
        const int ufd = userfds[size_t(c.user)];
        std::string name = c.name;
        // Renamed first: a removal cut short by the budget is finished by a later sweep even
        // though unlinking changed the directory's mtime.
        if (!c.expired) {
            std::string to = kExpired + name;
            if (renameat(ufd, name.c_str(), ufd, to.c_str()) != 0) continue;
            name = to;
        }
        if (remove_tree(ufd, name, c.owner, dev, b, 0)) {
            ++s.removed;
        } else {
            ++s.left;
            log("checkpoint retention: could not remove all of " + name + " (uid " +
                std::to_string(c.owner) + "; foreign or root-owned entries, or the per-call limit)");
        }
    }
}

void sweep(int rootfd, dev_t dev, uint32_t retention_s, const Log &log, const ActiveJobs &active,
           const Limits &lim, Budget &b, Stats &s) {
    s.swept = true;
    std::vector<int> userfds;
    std::vector<Candidate> cands;
    const time_t cutoff = time(nullptr) - time_t(retention_s);
    for (const std::string &user : list(rootfd, b)) {
        if (user[0] == '.') continue;
        int fd = openat(rootfd, user.c_str(), kDirFlags);
        struct stat st;
        if (fd < 0) continue;
        // <root>/<user> is root's (or, from earlier versions, the user's) and writable by its owner
        // alone, as the SPANK plugin accepts it.
        if (fstat(fd, &st) != 0 || st.st_dev != dev || (st.st_mode & (S_IWGRP | S_IWOTH))) {
            close(fd);
            continue;
        }
        userfds.push_back(fd);
        collect(fd, int(userfds.size() - 1), st.st_uid, dev, cutoff, b, cands, s);
    }
    std::set<uint32_t> ids;
    if (!cands.empty() && !active(ids)) {
        log("checkpoint retention: slurmctld's job list is unavailable; nothing removed");
    } else if (!cands.empty()) {
        remove_candidates(cands, userfds, dev, ids, lim, b, log, s);
    }
    for (int fd : userfds) close(fd);
}

bool slurmctld_active_jobs(std::set<uint32_t> &out) {
    job_info_msg_t *msg = nullptr;
    if (slurm_load_jobs(0, &msg, SHOW_ALL) != SLURM_SUCCESS || !msg) return false;
    for (uint32_t i = 0; i < msg->record_count; ++i) {
        const slurm_job_info_t &j = msg->job_array[i];
        const uint32_t base = j.job_state & JOB_STATE_BASE;
        if (base == JOB_PENDING || base == JOB_RUNNING || base == JOB_SUSPENDED ||
            (j.job_state & (JOB_COMPLETING | JOB_REQUEUE)))
            out.insert(j.job_id);
    }
    slurm_free_job_info_msg(msg);
    return true;
}

}  // namespace

Stats on_job_end(const std::string &root, uint32_t retention_s, uint32_t job_id, uid_t uid, const Log &log,
                 const ActiveJobs &active, const Limits &limits) noexcept {
    Stats s;
    try {
        spank::CkptResult err;
        Fd rootfd(spank::ckpt_root_open(root, false, err));
        if (rootfd.fd < 0) {
            if (err.message.find("No such file") == std::string::npos) log("checkpoint retention: " + err.message);
            return s;
        }
        struct stat st;
        if (fstat(rootfd.fd, &st) != 0) return s;
        Budget b{limits.max_entries, limits.max_unlinks};
        touch_ended(rootfd.fd, st.st_dev, job_id, uid, b, s);
        if (retention_s > 0 && sweep_due(rootfd.fd, retention_s, limits))
            sweep(rootfd.fd, st.st_dev, retention_s, log, active, limits, b, s);
    } catch (const std::exception &e) {
        log(std::string("checkpoint retention: internal error: ") + e.what());
    } catch (...) {
        log("checkpoint retention: internal error");
    }
    return s;
}

void run_for_job(const std::string &config_path, uint32_t job_id, uid_t uid, const Log &log) noexcept {
    try {
        std::ifstream in(config_path);
        std::stringstream text;
        text << in.rdbuf();
        Config cfg;
        std::vector<std::string> errors;
        if (!in || !config_parse(text.str(), cfg, errors)) {
            log("checkpoint retention: config " + config_path + " unusable" +
                (errors.empty() ? std::string() : ": " + errors[0]) + "; nothing removed");
            return;
        }
        if (cfg.idle.checkpoint_root.empty()) return;
        Stats s = on_job_end(cfg.idle.checkpoint_root, cfg.idle.checkpoint_retention_s, job_id, uid, log,
                             slurmctld_active_jobs);
        if (s.removed || s.left)
            log("checkpoint retention: removed " + std::to_string(s.removed) + " expired job directories, " +
                std::to_string(s.left) + " left, " + std::to_string(s.kept_active) + " kept (job not finished)");
    } catch (...) {
        log("checkpoint retention: internal error");
    }
}

}  // namespace idletime::retention
