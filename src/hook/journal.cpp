// The hook's in-flight journal (journal.hpp). Entries are named by job id; each is written to a
// temporary name, locked, then renamed into place, so a visible entry is whole and, while its
// writer lives, locked. Every file operation is relative to the directory's descriptor, opened
// without following a symlink.
#include "hook/journal.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace idletime::hook {
namespace {

constexpr size_t kMaxEntryBytes = 16384;
constexpr const char *kTmpPrefix = ".tmp.";

bool parse_job_name(const char *s, uint32_t &out) {
    if (!s || *s < '1' || *s > '9') return false;
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        v = v * 10 + uint64_t(*p - '0');
        if (v > 0xfffffffeULL) return false;
    }
    out = uint32_t(v);
    return true;
}

bool get_int(json_object *o, const char *key, int64_t lo, int64_t hi, int64_t &out) {
    json_object *v = nullptr;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int)) return false;
    errno = 0;
    out = json_object_get_int64(v);
    return errno == 0 && out >= lo && out <= hi;
}

bool get_bool(json_object *o, const char *key, bool &out) {
    json_object *v = nullptr;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_boolean)) return false;
    out = json_object_get_boolean(v);
    return true;
}

json_object *string_array(const std::vector<std::string> &v) {
    json_object *a = json_object_new_array();
    for (const auto &s : v) json_object_array_add(a, json_object_new_string(s.c_str()));
    return a;
}

bool get_strings(json_object *o, const char *key, std::vector<std::string> &out) {
    json_object *a = nullptr;
    if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array)) return false;
    for (size_t i = 0; i < json_object_array_length(a); i++) {
        json_object *s = json_object_array_get_idx(a, i);
        if (!json_object_is_type(s, json_type_string)) return false;
        out.push_back(json_object_get_string(s));
    }
    return true;
}

bool get_options(json_object *o, std::map<std::string, std::string> &out) {
    json_object *opts = nullptr;
    if (!json_object_object_get_ex(o, "options", &opts) || !json_object_is_type(opts, json_type_object))
        return false;
    json_object_object_foreach(opts, k, v) {
        if (!json_object_is_type(v, json_type_string)) return false;
        out[k] = json_object_get_string(v);
    }
    return true;
}

// Unlinks name in dirfd only while it still leads to the file open as fd.
void unlink_if_same(int dirfd, const std::string &name, int fd) {
    struct stat mine{}, now{};
    if (fstat(fd, &mine) == 0 && fstatat(dirfd, name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
        mine.st_ino == now.st_ino && mine.st_dev == now.st_dev)
        unlinkat(dirfd, name.c_str(), 0);
}

}  // namespace

std::string journal_encode(const InFlight &e) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "job", json_object_new_int64(e.job));
    json_object_object_add(o, "run", json_object_new_int64(e.restart_cnt));
    json_object_object_add(o, "written", json_object_new_int64(e.written));
    json_object_object_add(o, "snapshot", json_object_new_boolean(e.snapshot));
    json_object_object_add(o, "requeued", json_object_new_boolean(e.requeued));
    json_object_object_add(o, "submit", json_object_new_int64(e.submit_time));
    json_object_object_add(o, "nodes", string_array(e.nodes));
    json_object_object_add(o, "failed_nodes", string_array(e.failed_nodes));
    json_object *opts = json_object_new_object();
    for (const auto &[k, v] : e.overrides) json_object_object_add(opts, k.c_str(), json_object_new_string(v.c_str()));
    json_object_object_add(o, "options", opts);
    std::string text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    json_object_put(o);
    return text + "\n";
}

bool journal_decode(const std::string &text, InFlight &e, std::string &err) {
    json_tokener *tok = json_tokener_new();
    json_object *o = json_tokener_parse_ex(tok, text.c_str(), int(text.size()));
    const bool whole = o && json_tokener_get_error(tok) == json_tokener_success &&
                       text.find_first_not_of(" \t\r\n", size_t(json_tokener_get_parse_end(tok))) == std::string::npos;
    json_tokener_free(tok);
    int64_t job = 0, run = 0, written = 0, submit = 0;
    InFlight out;
    const bool ok = whole && json_object_is_type(o, json_type_object) && get_int(o, "job", 1, 0xfffffffeLL, job) &&
                    get_int(o, "run", 0, 0xffffffffLL, run) && get_int(o, "written", 0, INT64_MAX, written) &&
                    get_int(o, "submit", 0, INT64_MAX, submit) && get_bool(o, "snapshot", out.snapshot) &&
                    get_bool(o, "requeued", out.requeued) && get_strings(o, "nodes", out.nodes) &&
                    get_strings(o, "failed_nodes", out.failed_nodes) && get_options(o, out.overrides);
    if (o) json_object_put(o);
    if (!ok) {
        err = "not a journal entry (one JSON object: job, run, written, snapshot, requeued, submit, "
              "nodes, failed_nodes, options)";
        return false;
    }
    out.job = uint32_t(job);
    out.restart_cnt = uint32_t(run);
    out.written = written;
    out.submit_time = submit;
    e = out;
    return true;
}

int journal_dir_open(const std::string &dir, std::string &err) {
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        err = "cannot create " + dir + ": " + strerror(errno);
        return -1;
    }
    int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st{};
    if (fd < 0 || fstat(fd, &st) != 0) {
        err = "cannot open " + dir + " as a directory (symlinks are refused): " + strerror(errno);
    } else if (st.st_uid != geteuid()) {
        err = dir + " belongs to uid " + std::to_string(st.st_uid) + ", not to this process's uid " +
              std::to_string(geteuid()) + " (run as the user that runs the hook, SlurmUser)";
    } else if ((st.st_mode & 077) != 0) {
        err = dir + " is open to other users (mode 0700 expected)";
    } else {
        return fd;
    }
    if (fd >= 0) close(fd);
    return -1;
}

bool journal_begin(const std::string &dir, const InFlight &e, JournalEntry &out, std::string &err) {
    const int dfd = journal_dir_open(dir, err);
    if (dfd < 0) return false;
    const std::string name = std::to_string(e.job);
    const std::string tmp = kTmpPrefix + name + "." + std::to_string(getpid());
    unlinkat(dfd, tmp.c_str(), 0);  // a dead writer's, whose pid this process now has
    int fd = openat(dfd, tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    const std::string text = journal_encode(e);
    bool ok = fd >= 0 && flock(fd, LOCK_EX) == 0 && write(fd, text.data(), text.size()) == ssize_t(text.size()) &&
              renameat(dfd, tmp.c_str(), dfd, name.c_str()) == 0;
    if (!ok) {
        err = "cannot write " + dir + "/" + name + ": " + strerror(errno);
        unlinkat(dfd, tmp.c_str(), 0);
        if (fd >= 0) close(fd);
        close(dfd);
        return false;
    }
    close(dfd);
    out.path = dir + "/" + name;
    out.fd = fd;
    return true;
}

void journal_end(JournalEntry &e) {
    if (e.fd < 0) return;
    // Only if the name still leads to this entry (a later hook of the same job may have
    // replaced it: that one is still at work).
    const auto slash = e.path.rfind('/');
    int dfd = open(e.path.substr(0, slash).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd >= 0) {
        unlink_if_same(dfd, e.path.substr(slash + 1), e.fd);
        close(dfd);
    }
    close(e.fd);
    e.fd = -1;
}

namespace {

struct Candidate {
    std::string name;
    time_t mtime = 0;
    bool regular = false;
};

// Names in the directory, oldest first; directories and "." ".." skipped. Temporary files of
// dead writers (lock free) older than max_age_s are removed on the way.
std::vector<Candidate> list_entries(int dfd, time_t now, int64_t max_age_s) {
    std::vector<Candidate> out;
    int dup_fd = dup(dfd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : nullptr;
    if (!d) {
        if (dup_fd >= 0) close(dup_fd);
        return out;
    }
    rewinddir(d);
    while (dirent *e = readdir(d)) {
        const std::string name = e->d_name;
        struct stat st{};
        if (name == "." || name == ".." || fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            S_ISDIR(st.st_mode))
            continue;
        if (name.rfind(kTmpPrefix, 0) == 0) {
            if (now - st.st_mtime > max_age_s) unlinkat(dfd, e->d_name, 0);
            continue;
        }
        out.push_back({name, st.st_mtime, S_ISREG(st.st_mode)});
    }
    closedir(d);
    std::sort(out.begin(), out.end(), [](const Candidate &a, const Candidate &b) {
        return a.mtime != b.mtime ? a.mtime < b.mtime : a.name < b.name;
    });
    return out;
}

// "" when the entry is one to hand over (e filled), else why it is dropped.
std::string check_entry(int fd, const std::string &name, time_t now, int64_t max_age_s, InFlight &e) {
    uint32_t id = 0;
    struct stat st{};
    if (!parse_job_name(name.c_str(), id)) return "not named by a job id";
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return "not a regular file";
    if (st.st_size > off_t(kMaxEntryBytes)) return "larger than " + std::to_string(kMaxEntryBytes) + " bytes";
    std::string text(size_t(st.st_size), '\0'), why;
    if (pread(fd, text.data(), text.size(), 0) != ssize_t(text.size())) return "unreadable";
    if (!journal_decode(text, e, why)) return why;
    if (e.job != id) return "names job " + std::to_string(e.job);
    if (now - e.written > max_age_s)
        return "older than " + std::to_string(max_age_s) + " s (job " + std::to_string(id) + ")";
    return "";
}

}  // namespace

size_t journal_orphans(const std::string &dir, size_t max, int64_t max_age_s, time_t now,
                       const std::function<Orphan(const InFlight &)> &fn, const DropFn &drop) {
    std::string err;
    const int dfd = journal_dir_open(dir, err);
    if (dfd < 0) {
        drop(".", err);
        return 0;
    }
    size_t handed = 0, done = 0;
    for (const auto &c : list_entries(dfd, now, max_age_s)) {
        if (handed >= max) break;
        if (!c.regular) {  // a symlink, FIFO, socket or device: never opened
            if (unlinkat(dfd, c.name.c_str(), 0) == 0) drop(c.name, "not a regular file: removed");
            continue;
        }
        int fd = openat(dfd, c.name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) continue;  // gone meanwhile
        struct stat st{};
        if (flock(fd, LOCK_EX | LOCK_NB) != 0 || fstat(fd, &st) != 0 || st.st_nlink == 0) {
            close(fd);  // its hook is still at work, or it has just finished
            continue;
        }
        InFlight e;
        const std::string why = check_entry(fd, c.name, now, max_age_s, e);
        Orphan r = Orphan::Drop;
        if (why.empty()) {
            handed++;
            r = fn(e);
            done += r == Orphan::Done;
        } else {
            drop(c.name, why + ": removed");
        }
        if (r != Orphan::Later) unlink_if_same(dfd, c.name, fd);
        close(fd);
    }
    close(dfd);
    return done;
}

std::string not_recoverable(const InFlight &e, const JobNow &now)
{
    if (e.snapshot && e.requeued)
        return "Slurm had requeued it (preemption or node failure): that run's record is not stored; the job runs again anyway";
    // A requeue (by the stopped hook itself, just before it was killed) moves the submit time
    // too: "moved on" is said before "another job".
    if (!now.ended || now.restart_cnt != e.restart_cnt)
        return std::string("the job has moved on (") + (now.pending ? "pending" : now.ended ? "ended" : "running") +
               ", restart count " + std::to_string(now.restart_cnt) + "): run " + std::to_string(e.restart_cnt) +
               "'s record is not stored";
    if (e.snapshot && e.submit_time != now.submit_time)
        return "its id now names a job submitted at " + std::to_string(now.submit_time) + ", not " +
               std::to_string(e.submit_time) + ": left alone";
    // No snapshot, so no submit time to compare: a job submitted after the entry was written is
    // not the one whose end wrote it (slurmctld lost its state and handed the id out again).
    if (!e.snapshot && now.submit_time > e.written)
        return "its id now names a job submitted at " + std::to_string(now.submit_time) +
               ", after the entry was written (" + std::to_string(e.written) + "): left alone";
    return "";
}

}  // namespace idletime::hook
