// The hook's in-flight journal (journal.hpp). Entries are named by job id; each is written to a
// temporary name, locked, then renamed into place, so a visible entry is whole and, while its
// writer lives, locked.
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
#include <vector>

namespace idletime::hook {
namespace {

constexpr size_t kMaxEntryBytes = 16384;

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

// The entry behind an open descriptor: a regular file of at most kMaxEntryBytes.
bool read_fd(int fd, std::string &text, std::string &why) {
    struct stat st{};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        why = "not a regular file";
        return false;
    }
    if (st.st_size > off_t(kMaxEntryBytes)) {
        why = "larger than " + std::to_string(kMaxEntryBytes) + " bytes";
        return false;
    }
    text.assign(size_t(st.st_size), '\0');
    ssize_t n = pread(fd, text.data(), text.size(), 0);
    if (n != ssize_t(text.size())) {
        why = "unreadable";
        return false;
    }
    return true;
}

struct Candidate {
    std::string name;
    time_t mtime = 0;
};

std::vector<Candidate> list_entries(const std::string &dir) {
    std::vector<Candidate> out;
    DIR *d = opendir(dir.c_str());
    if (!d) return out;
    while (dirent *e = readdir(d)) {
        if (e->d_name[0] == '.') continue;  // ., .., temporaries
        struct stat st{};
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        out.push_back({e->d_name, st.st_mtime});
    }
    closedir(d);
    std::sort(out.begin(), out.end(), [](const Candidate &a, const Candidate &b) {
        return a.mtime != b.mtime ? a.mtime < b.mtime : a.name < b.name;
    });
    return out;
}

}  // namespace

namespace {

// "" when the entry is one to recover (e filled), else why it is dropped.
std::string check_entry(int fd, const std::string &name, time_t now, int64_t max_age_s, InFlight &e) {
    uint32_t id = 0;
    std::string text, why;
    if (!parse_job_name(name.c_str(), id)) return "not named by a job id";
    if (!read_fd(fd, text, why) || !journal_decode(text, e, why)) return why;
    if (e.job != id) return "names job " + std::to_string(e.job);
    if (now - e.written > max_age_s)
        return "older than " + std::to_string(max_age_s) + " s (job " + std::to_string(id) + ")";
    return "";
}

}  // namespace

std::string journal_encode(const InFlight &e) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "job", json_object_new_int64(e.job));
    json_object_object_add(o, "run", json_object_new_int64(e.restart_cnt));
    json_object_object_add(o, "written", json_object_new_int64(e.written));
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
    int64_t job = 0, run = 0, written = 0;
    json_object *opts = nullptr;
    bool ok = whole && json_object_is_type(o, json_type_object) &&
              get_int(o, "job", 1, 0xfffffffeLL, job) && get_int(o, "run", 0, 0xffffffffLL, run) &&
              get_int(o, "written", 0, INT64_MAX, written) && json_object_object_get_ex(o, "options", &opts) &&
              json_object_is_type(opts, json_type_object);
    InFlight out;
    if (ok) {
        json_object_object_foreach(opts, k, v) {
            if (!json_object_is_type(v, json_type_string)) {
                ok = false;
                break;
            }
            out.overrides[k] = json_object_get_string(v);
        }
    }
    if (o) json_object_put(o);
    if (!ok) {
        err = "not a journal entry (JSON object with job, run, written and string options)";
        return false;
    }
    out.job = uint32_t(job);
    out.restart_cnt = uint32_t(run);
    out.written = written;
    e = out;
    return true;
}

bool journal_begin(const std::string &dir, const InFlight &e, JournalEntry &out, std::string &err) {
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        err = "cannot create " + dir + ": " + strerror(errno);
        return false;
    }
    const std::string path = dir + "/" + std::to_string(e.job);
    const std::string tmp = dir + "/.tmp." + std::to_string(e.job) + "." + std::to_string(getpid());
    int fd = open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        err = "cannot write " + tmp + ": " + strerror(errno);
        return false;
    }
    const std::string text = journal_encode(e);
    bool ok = flock(fd, LOCK_EX) == 0 && write(fd, text.data(), text.size()) == ssize_t(text.size()) &&
              fsync(fd) == 0;
    if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
        err = "cannot write " + path + ": " + strerror(errno);
        unlink(tmp.c_str());
        close(fd);
        return false;
    }
    out.path = path;
    out.fd = fd;
    return true;
}

void journal_end(JournalEntry &e) {
    if (e.fd < 0) return;
    // Only if the name still leads to this entry (a later hook of the same job may have
    // replaced it: that one is still at work).
    struct stat mine{}, now{};
    if (fstat(e.fd, &mine) == 0 && lstat(e.path.c_str(), &now) == 0 && mine.st_ino == now.st_ino &&
        mine.st_dev == now.st_dev)
        unlink(e.path.c_str());
    close(e.fd);
    e.fd = -1;
}

size_t journal_orphans(const std::string &dir, size_t max, int64_t max_age_s, time_t now,
                       const std::function<void(const InFlight &)> &fn, const DropFn &drop) {
    size_t handed = 0;
    for (const auto &c : list_entries(dir)) {
        if (handed >= max) break;
        const std::string path = dir + "/" + c.name;
        int fd = open(path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
            if (errno != ENOENT && unlink(path.c_str()) == 0) drop(c.name, "cannot be opened as a file: removed");
            continue;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {  // its hook is still at work
            close(fd);
            continue;
        }
        struct stat st{};
        if (fstat(fd, &st) != 0 || st.st_nlink == 0) {  // removed while we opened it: done
            close(fd);
            continue;
        }
        InFlight e;
        const std::string why = check_entry(fd, c.name, now, max_age_s, e);
        if (why.empty()) {
            fn(e);
            handed++;
        } else {
            drop(c.name, why + ": removed");
        }
        unlink(path.c_str());
        close(fd);
    }
    return handed;
}

}  // namespace idletime::hook
