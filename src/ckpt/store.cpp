#include "ckpt/store.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt/cred.hpp"
#include "ckpt/writer.hpp"

namespace idletime::ckpt {
namespace {

constexpr size_t kChunk = 8u << 20;  // hash + write unit; writeback is started per chunk

std::string mode_str(mode_t m)
{
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
    return buf;
}

Fd open_trusted_dir(const std::string &dir, struct stat *st)
{
    if (::lstat(dir.c_str(), st) != 0) {
        if (errno != ENOENT)
            throw_errno("checkpoint directory " + dir);
        if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
            throw_errno("cannot create checkpoint directory " + dir);
        if (::lstat(dir.c_str(), st) != 0)
            throw_errno("checkpoint directory " + dir);
    }
    if (S_ISLNK(st->st_mode))
        throw Error(-EPERM, "checkpoint directory " + dir +
                                " is a symlink; refusing it (allowed: a real directory)");
    if (!S_ISDIR(st->st_mode))
        throw Error(-EPERM, "checkpoint directory " + dir + " is not a directory");
    // Before open(): another user's 0700 directory would only say "Permission denied".
    if (st->st_uid != ::geteuid())
        throw Error(-EPERM, "checkpoint directory " + dir + " is owned by uid " +
                                std::to_string(st->st_uid) + ", not by us (uid " +
                                std::to_string(::geteuid()) + "); refusing to use it");
    Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd)
        throw_errno("open checkpoint directory " + dir);
    struct stat now;
    if (::fstat(fd.get(), &now) != 0 || now.st_ino != st->st_ino || now.st_dev != st->st_dev)
        throw Error(-EPERM, "checkpoint directory " + dir + " changed while being opened");
    return fd;
}

}  // namespace

Store::Store(const std::string &dir, StoreOptions opt, LogFn log)
    : dir_(dir), opt_(std::move(opt)), log_(std::move(log)), uid_(::geteuid())
{
    if (opt_.keep_last < 1)
        throw Error(-EINVAL, "keep_last must be at least 1");
    struct stat st;
    fd_ = open_trusted_dir(dir_, &st);
    check_trusted("checkpoint directory " + dir_, st.st_uid, st.st_mode);
    clean_stale();
}

void Store::check_trusted(const std::string &what, uid_t uid, mode_t mode) const
{
    if (uid != uid_)
        throw Error(-EPERM, what + " is owned by uid " + std::to_string(uid) +
                                ", not by us (uid " + std::to_string(uid_) +
                                "); refusing to use it");
    if (mode & 022)
        throw Error(-EPERM, what + " has mode " + mode_str(mode) +
                                " (group/world writable); allowed: no write access for "
                                "group or others, e.g. 0700");
}

std::string Store::step_path(uint64_t step) const { return dir_ + "/" + step_dir_name(step); }

std::vector<std::string> Store::entries() const
{
    int fd = ::dup(fd_.get());
    if (fd < 0)
        throw_errno("dup");
    DIR *d = ::fdopendir(fd);
    if (!d) {
        ::close(fd);
        throw_errno("read " + dir_);
    }
    ::rewinddir(d);
    std::vector<std::string> out;
    while (struct dirent *e = ::readdir(d))
        out.emplace_back(e->d_name);
    ::closedir(d);
    return out;
}

std::vector<uint64_t> Store::steps_desc() const
{
    std::vector<uint64_t> steps;
    for (const auto &n : entries()) {
        uint64_t s;
        if (parse_step_dir_name(n, &s))
            steps.push_back(s);
    }
    std::sort(steps.rbegin(), steps.rend());
    return steps;
}

void Store::clean_stale() { clean_temporaries(fd_.get(), dir_, entries(), log_); }

void Store::verify_file(int sd, int format, const FileEntry &f) const
{
    Fd fd(::openat(sd, f.name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd)
        throw Error(-EBADMSG, "file " + f.name + " listed in the manifest: " +
                                  std::strerror(errno));
    struct stat st;
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        throw Error(-EBADMSG, "file " + f.name + " is not a regular file");
    if (static_cast<uint64_t>(st.st_size) != f.size)
        throw Error(-EBADMSG, "file " + f.name + " has " + std::to_string(st.st_size) +
                                  " bytes, the manifest says " + std::to_string(f.size));
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
    FileSum h(format);
    std::vector<char> buf(1u << 20);
    uint64_t total = 0;
    for (;;) {
        ssize_t n = ::read(fd.get(), buf.data(), buf.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw_errno("read " + f.name);
        if (n == 0)
            break;
        h.update(buf.data(), static_cast<size_t>(n));
        total += static_cast<uint64_t>(n);
    }
    if (total != f.size || h.hex() != f.sum)
        throw Error(-EBADMSG, "file " + f.name + " does not match its " + sum_label(format) +
                                  " in the manifest");
}

Manifest Store::verify(uint64_t step) const
{
    const std::string name = step_dir_name(step);
    struct stat st;
    if (::fstatat(fd_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        throw_errno(name);
    if (!S_ISDIR(st.st_mode))
        throw Error(-EBADMSG, name + " is not a directory");
    check_trusted(name, st.st_uid, st.st_mode);
    Fd sd(::openat(fd_.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sd)
        throw_errno("open " + name);
    Fd mf(::openat(sd.get(), kManifestName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!mf) {
        if (errno == ENOENT)
            throw Error(-EBADMSG, "no MANIFEST.json (incomplete checkpoint)");
        throw_errno(std::string("open ") + kManifestName);
    }
    if (::fstat(mf.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != uid_)
        throw Error(-EBADMSG, "MANIFEST.json is not a regular file owned by us");
    Manifest m = manifest_from_json(read_small(mf.get(), kMaxManifestBytes, kManifestName));
    if (m.step != step)
        throw Error(-EBADMSG, "manifest is for step " + std::to_string(m.step));
    if (m.job_id != opt_.job_id)
        throw Error(-EPERM, "manifest was written by job \"" + m.job_id + "\", we are job \"" +
                                opt_.job_id + "\"");
    if (opt_.require_munge) {
        if (m.munge.empty())
            throw Error(-EPERM, "manifest carries no munge credential (required)");
        munge_verify(m.munge, credential_payload(m), uid_);
    }
    for (const auto &f : m.files)
        verify_file(sd.get(), m.format, f);
    return m;
}

std::optional<uint64_t> Store::latest()
{
    rejected_.clear();
    for (uint64_t step : steps_desc()) {
        try {
            auto m = std::make_shared<const Manifest>(verify(step));
            std::lock_guard<std::mutex> g(mu_);
            cache_[step] = std::move(m);
            return step;
        } catch (const Error &e) {
            {
                std::lock_guard<std::mutex> g(mu_);
                cache_.erase(step);
            }
            if (infrastructure_error(e.code()))  // not a verdict on the checkpoint: stop
                throw Error(e.code(), "checkpoint " + step_path(step) + ": " + e.what());
            log_("skipping checkpoint " + step_path(step) + ": " + e.what());
            rejected_ += (rejected_.empty() ? "" : "; ") + step_dir_name(step) + ": " + e.what();
        }
    }
    return std::nullopt;
}

std::shared_ptr<const Manifest> Store::complete(uint64_t step)
{
    {
        std::lock_guard<std::mutex> g(mu_);
        auto it = cache_.find(step);
        if (it != cache_.end())
            return it->second;
    }
    std::shared_ptr<const Manifest> m;
    try {
        m = std::make_shared<const Manifest>(verify(step));
    } catch (const Error &e) {
        if (infrastructure_error(e.code()))
            throw Error(e.code(), "checkpoint " + step_path(step) + ": " + e.what());
        throw Error(-ENOENT, "checkpoint " + step_path(step) + " is not complete: " + e.what());
    }
    std::lock_guard<std::mutex> g(mu_);
    cache_[step] = m;
    return m;
}

size_t Store::read(uint64_t step, const std::string &name, void *buf, size_t cap)
{
    auto m = complete(step);
    auto it = std::find_if(m->files.begin(), m->files.end(),
                           [&](const FileEntry &f) { return f.name == name; });
    if (it == m->files.end())
        throw Error(-ENOENT, "checkpoint step " + std::to_string(step) + " has no file \"" +
                                 name + "\"");
    if (it->size > cap)
        throw Error(-ERANGE, "buffer of " + std::to_string(cap) + " bytes is too small for " +
                                 name + " (" + std::to_string(it->size) + " bytes)");
    Fd fd(::openat(fd_.get(), (step_dir_name(step) + "/" + name).c_str(),
                   O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd)
        throw_errno("open " + step_path(step) + "/" + name);
    size_t got = 0;
    auto *p = static_cast<char *>(buf);
    while (got < it->size) {
        ssize_t n = ::read(fd.get(), p + got, std::min(it->size - got, size_t{8} << 20));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw_errno("read " + name);
        if (n == 0)
            break;
        got += static_cast<size_t>(n);
    }
    if (got != it->size || file_sum_hex(m->format, std::string_view(p, got)) != it->sum)
        throw Error(-EIO, "file " + name + " of step " + std::to_string(step) +
                              " changed on disk since it was verified");
    return got;
}

FileEntry Store::write_file(int td, const Item &it) const
{
    Fd fd(::openat(td, it.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                   0600));
    if (!fd)
        throw_errno("create " + it.name);
    FileSum h(kWriteFormat);
    auto *p = static_cast<const char *>(it.data);
    for (size_t off = 0; off < it.size; off += kChunk) {
        size_t n = std::min(kChunk, it.size - off);
        write_all(fd.get(), p + off, n, it.name);
        // Start writeback now so the disk works while we checksum and copy the next chunk.
        ::sync_file_range(fd.get(), static_cast<off_t>(off), static_cast<off_t>(n),
                          SYNC_FILE_RANGE_WRITE);
        h.update(p + off, n);
    }
    fsync_or_throw(fd.get(), it.name);
    return FileEntry{it.name, it.size, h.hex()};
}

void Store::write_manifest(int td, Manifest &m) const
{
    if (opt_.require_munge)
        m.munge = munge_sign(credential_payload(m));
    std::string text = manifest_to_json(m);
    Fd fd(::openat(td, kManifestName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                   0600));
    if (!fd)
        throw_errno(std::string("create ") + kManifestName);
    write_all(fd.get(), text.data(), text.size(), kManifestName);
    fsync_or_throw(fd.get(), kManifestName);
}

void Store::publish(const std::string &tmp, uint64_t step)
{
    const std::string name = step_dir_name(step);
    if (::renameat2(fd_.get(), tmp.c_str(), fd_.get(), name.c_str(), RENAME_NOREPLACE) == 0)
        return;
    if (errno != EEXIST)
        throw_errno("rename " + tmp + " to " + name);
    // A rejected or older copy of this step: swap atomically, then drop the old one.
    if (::renameat2(fd_.get(), tmp.c_str(), fd_.get(), name.c_str(), RENAME_EXCHANGE) != 0)
        throw_errno("exchange " + tmp + " with " + name);
    log_("replaced an earlier " + step_path(step));
}

Staged Store::stage(uint64_t step, const std::string &label)
{
    // The lock file exists, locked, before the temporary and until after it is gone: an open()
    // elsewhere (another rank, a monitor, a restarted worker) never takes it for stale.
    Staged s;
    s.tmp = ".tmp-" + step_dir_name(step) + label + writer_tag();
    s.lock = std::make_unique<WriterLock>(fd_.get(), dir_, s.tmp);
    if (::mkdirat(fd_.get(), s.tmp.c_str(), 0700) != 0)
        throw_errno("create " + dir_ + "/" + s.tmp);
    try {
        s.td = Fd(::openat(fd_.get(), s.tmp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!s.td)
            throw_errno("open " + s.tmp);
    } catch (...) {
        discard(s);
        throw;
    }
    int64_t ns = now_ns();
    s.m.step = step;
    s.m.job_id = opt_.job_id;
    s.m.uid = uid_;
    s.m.saved_at = ns / 1000000000LL;
    s.m.saved_at_ns = ns % 1000000000LL;
    return s;
}

void Store::write_items(Staged &s, const std::vector<Item> &items) const
{
    for (const auto &it : items)
        s.m.files.push_back(write_file(s.td.get(), it));
}

void Store::discard(Staged &s) noexcept
{
    if (!s.lock)
        return;
    s.td = Fd();
    try {
        remove_tree(fd_.get(), s.tmp);
    } catch (...) {
    }
    s.lock->release();
    s.lock.reset();
}

void Store::seal(Staged &s, std::vector<std::string> *trash)
{
    const uint64_t step = s.m.step;
    write_manifest(s.td.get(), s.m);
    fsync_or_throw(s.td.get(), s.tmp);
    publish(s.tmp, step);
    fsync_or_throw(fd_.get(), dir_);
    s.td = Fd();
    try {
        remove_tree(fd_.get(), s.tmp);  // the old copy after an exchange
    } catch (const Error &e) {
        log_(std::string("cannot remove replaced copy: ") + e.what());
    }
    s.lock->release();
    s.lock.reset();
    {
        std::lock_guard<std::mutex> g(mu_);
        cache_[step] = std::make_shared<const Manifest>(s.m);
    }
    std::vector<std::string> doomed;
    prune(step, doomed);
    if (trash)
        trash->insert(trash->end(), doomed.begin(), doomed.end());
    else
        empty_trash(doomed);
}

void Store::persist(uint64_t step, const std::vector<Item> &items,
                    std::vector<std::string> *trash)
{
    Staged s = stage(step);
    try {
        write_items(s, items);
        seal(s, trash);
    } catch (...) {
        discard(s);
        throw;
    }
}

void Store::empty_trash(const std::vector<std::string> &trash)
{
    for (const auto &del : trash) {
        try {
            remove_tree(fd_.get(), del);
        } catch (const Error &e) {
            log_(std::string("cannot delete old checkpoint: ") + e.what());
        }
    }
}

void Store::prune(uint64_t newest, std::vector<std::string> &trash)
{
    unsigned kept = 1;  // newest itself
    for (uint64_t s : steps_desc()) {
        if (s >= newest)
            continue;  // newer ones (rejected leftovers) are not ours to judge here
        if (kept < opt_.keep_last) {
            kept++;
            continue;
        }
        const std::string name = step_dir_name(s);
        const std::string del = ".tmp-del-" + name + writer_tag();
        try {
            if (::renameat(fd_.get(), name.c_str(), fd_.get(), del.c_str()) != 0)
                throw_errno("rename " + name);
            trash.push_back(del);
        } catch (const Error &e) {
            log_(std::string("cannot delete old checkpoint: ") + e.what());
        }
        std::lock_guard<std::mutex> g(mu_);
        cache_.erase(s);
    }
}

}  // namespace idletime::ckpt
