#include "ckpt/group.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <ctime>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace idletime::ckpt {
namespace {

constexpr const char *kCoordDir = ".group";
constexpr const char *kShardList = ".shard.json";  // in a rank's temporary; not a data file

bool valid_run_id(const std::string &s)
{
    if (s.empty() || s.size() > 100)
        return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
            return false;
    return true;
}

unsigned env_uint(const char *name, unsigned dflt, bool *found)
{
    const char *v = std::getenv(name);
    if (!v || !*v)
        return dflt;
    char *end = nullptr;
    unsigned long n = std::strtoul(v, &end, 10);
    if (*end || n > 1000000)
        return dflt;
    *found = true;
    return static_cast<unsigned>(n);
}

void nap(unsigned *us)
{
    struct timespec ts{0, static_cast<long>(*us) * 1000};
    ::nanosleep(&ts, nullptr);
    *us = std::min(*us * 2, 20000u);  // 1 ms, doubling, at most 20 ms
}

std::vector<std::string> names_in(int dirfd)
{
    int fd = ::dup(dirfd);
    if (fd < 0)
        throw_errno("dup");
    DIR *d = ::fdopendir(fd);
    if (!d) {
        ::close(fd);
        throw_errno("read directory");
    }
    ::rewinddir(d);
    std::vector<std::string> out;
    while (struct dirent *e = ::readdir(d))
        out.emplace_back(e->d_name);
    ::closedir(d);
    return out;
}

}  // namespace

void group_from_env(unsigned *rank, unsigned *world)
{
    bool r = false, w = false;
    *rank = env_uint("RANK", 0, &r);
    *world = env_uint("WORLD_SIZE", 1, &w);
    if (!r && !w) {
        *rank = env_uint("SLURM_PROCID", 0, &r);
        *world = env_uint("SLURM_NTASKS", 1, &w);
    }
}

std::string default_run_id()
{
    const char *run = std::getenv("IDLETIME_GROUP_RUN_ID");
    if (run && *run)
        return run;
    const char *job = std::getenv("SLURM_JOB_ID");
    if (!job || !*job)
        return "";
    const char *rc = std::getenv("SLURM_RESTART_COUNT");
    const char *st = std::getenv("SLURM_STEP_ID");
    return std::string(job) + "." + (rc && *rc ? rc : "0") + "." + (st && *st ? st : "batch");
}

// ---- FileCoordinator ----

FileCoordinator::FileCoordinator(int ckpt_dirfd, const std::string &dir, const GroupConfig &cfg,
                                 bool clean)
    : dir_(dir + "/" + kCoordDir), rank_(cfg.rank), world_(cfg.world), run_(cfg.run_id),
      timeout_s_(cfg.timeout_s ? cfg.timeout_s : 120)
{
    if (!valid_run_id(run_))
        throw Error(-EINVAL, "group run id \"" + run_ + "\" is invalid or missing (allowed: 1-100 "
                             "of [A-Za-z0-9._-], unique per start of the group; set run_id or "
                             "IDLETIME_GROUP_RUN_ID, or run inside a Slurm job)");
    if (::mkdirat(ckpt_dirfd, kCoordDir, 0700) != 0 && errno != EEXIST)
        throw_errno("create " + dir_);
    cd_ = Fd(::openat(ckpt_dirfd, kCoordDir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!cd_)
        throw_errno("open " + dir_);
    struct stat st;
    if (::fstat(cd_.get(), &st) != 0)
        throw_errno("stat " + dir_);
    if (st.st_uid != ::geteuid() || (st.st_mode & 022))
        throw Error(-EPERM, dir_ + " is not owned by us or is group/world writable; refusing it");
    if (clean)
        remove_foreign_runs();
}

std::string FileCoordinator::file(uint64_t gen, unsigned rank) const
{
    return run_ + "." + std::to_string(gen) + "." + std::to_string(rank);
}

// Files of this rank left by earlier runs (no other rank ever writes a name ending in ours).
void FileCoordinator::remove_foreign_runs()
{
    const std::string mine = "." + std::to_string(rank_);
    for (const auto &n : names_in(cd_.get()))
        if (n.size() > mine.size() && n.compare(n.size() - mine.size(), mine.size(), mine) == 0)
            ::unlinkat(cd_.get(), n.c_str(), 0);
}

void FileCoordinator::write_round(uint64_t gen, const uint64_t *values, size_t n)
{
    std::string text;
    for (size_t i = 0; i < n; i++)
        text += std::to_string(values[i]) + (i + 1 < n ? " " : "\n");
    const std::string name = file(gen, rank_), tmp = "tmp." + name;
    Fd fd(::openat(cd_.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                   0600));
    if (!fd)
        throw_errno("create " + dir_ + "/" + tmp);
    write_all(fd.get(), text.data(), text.size(), tmp);
    fd = Fd();
    if (::renameat(cd_.get(), tmp.c_str(), cd_.get(), name.c_str()) != 0)
        throw_errno("rename " + dir_ + "/" + tmp);
    if (gen >= 2)  // every rank has read round gen-2 once it wrote round gen-1
        ::unlinkat(cd_.get(), file(gen - 2, rank_).c_str(), 0);
}

bool FileCoordinator::read_round(uint64_t gen, unsigned rank, uint64_t *acc, size_t n)
{
    Fd fd(::openat(cd_.get(), file(gen, rank).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT)
            return false;
        throw_errno("open " + dir_ + "/" + file(gen, rank));
    }
    std::string text = read_small(fd.get(), 64 * 1024, file(gen, rank));
    const char *p = text.c_str();
    for (size_t i = 0; i < n; i++) {
        char *end = nullptr;
        errno = 0;
        unsigned long long v = std::strtoull(p, &end, 10);
        if (end == p || errno)
            throw Error(-EPROTO, "group agreement round " + std::to_string(gen) + ": rank " +
                                     std::to_string(rank) + " sent fewer values than we "
                                     "(the ranks called different collectives)");
        acc[i] = std::max<uint64_t>(acc[i], v);
        p = end;
    }
    return true;
}

int FileCoordinator::allreduce_max(uint64_t *values, size_t n, std::string *err)
{
    try {
        const uint64_t gen = ++gen_;
        write_round(gen, values, n);
        std::vector<bool> seen(world_, false);
        seen[rank_] = true;
        const time_t deadline = ::time(nullptr) + timeout_s_;
        unsigned us = 1000;
        for (;;) {
            size_t left = 0;
            for (unsigned r = 0; r < world_; r++)
                if (!seen[r] && !(seen[r] = read_round(gen, r, values, n)))
                    left++;
            if (!left)
                return 0;
            if (::time(nullptr) > deadline) {
                std::string missing;
                for (unsigned r = 0; r < world_; r++)
                    if (!seen[r])
                        missing += (missing.empty() ? "" : ", ") + std::to_string(r);
                throw Error(-ETIMEDOUT, "group agreement round " + std::to_string(gen) +
                                            " (run " + run_ + "): no answer from rank(s) " +
                                            missing + " within " + std::to_string(timeout_s_) +
                                            " s (exited, killed or stuck); giving up");
            }
            nap(&us);
        }
    } catch (const Error &e) {
        *err = e.what();
        return e.code();
    }
}

// ---- Group ----

Group::Group(Store &store, GroupConfig cfg) : store_(store), cfg_(std::move(cfg))
{
    if (cfg_.world < 1 || cfg_.rank >= cfg_.world)
        throw Error(-EINVAL, "group: rank " + std::to_string(cfg_.rank) + " of world size " +
                                 std::to_string(cfg_.world) +
                                 " (allowed: world size >= 1, 0 <= rank < world size)");
    if (!cfg_.allreduce)
        files_ = std::make_unique<FileCoordinator>(store_.dirfd(), store_.dir(), cfg_);
}

std::string Group::shard_prefix(unsigned rank) { return "rank-" + std::to_string(rank) + "."; }

void Group::collective(uint64_t *values, size_t n, bool background)
{
    if (cfg_.world == 1)
        return;
    std::string err;
    int rc = background ? bg_->allreduce_max(values, n, &err)
             : files_ ? files_->allreduce_max(values, n, &err)
                      : cfg_.allreduce(values, n);
    if (rc != 0)
        throw Error(rc < 0 ? rc : -EIO,
                    err.empty() ? "group collective (the caller's allreduce) failed: " +
                                      std::string(std::strerror(rc < 0 ? -rc : rc))
                                : err);
}

bool Group::agree_stop(uint64_t step, bool local_notice)
{
    uint64_t v[3] = {local_notice ? 1u : 0u, step, UINT64_MAX - step};
    allreduce_max(v, 3);
    if (v[1] != step || UINT64_MAX - v[2] != step)
        throw Error(-EPROTO, "agree(): ranks are at different steps (" +
                                 std::to_string(UINT64_MAX - v[2]) + " to " +
                                 std::to_string(v[1]) + "); call it at the same point of every step");
    return v[0] != 0;
}

void Group::agree_latest(const std::optional<uint64_t> &mine)
{
    const uint64_t x = mine ? *mine + 1 : 0;  // 0 = none
    uint64_t v[2] = {x, UINT64_MAX - x};
    allreduce_max(v, 2);
    if (v[0] != x || UINT64_MAX - v[1] != x)
        throw Error(-EPROTO, "latest(): the ranks see different newest checkpoints (" +
                                 (v[1] == UINT64_MAX ? std::string("none")
                                                     : "step " + std::to_string(UINT64_MAX - v[1] - 1)) +
                                 " and step " + std::to_string(v[0] - 1) +
                                 "); is the checkpoint directory the same on every node?");
}

// ---- collective commit ----

// Writes this rank's files and the list of them (with sizes and checksums), all fsynced.
void Group::write_shard(Staged &s, const std::vector<Item> &items)
{
    store_.write_items(s, items);
    const std::string text = manifest_to_json(s.m);
    Fd fd(::openat(s.td.get(), kShardList, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                   0600));
    if (!fd)
        throw_errno(std::string("create ") + kShardList);
    write_all(fd.get(), text.data(), text.size(), kShardList);
    fsync_or_throw(fd.get(), kShardList);
    fsync_or_throw(s.td.get(), s.tmp);
}

// The temporary of rank r's shard of step: its writer must be alive (holds its lock; on a file
// system without locks, not known to be gone): a dead writer's leftover of an earlier attempt at
// the same step is not it.
std::string Group::find_shard(uint64_t step, unsigned r)
{
    const std::string prefix = ".tmp-" + step_dir_name(step) + ".rank-" + std::to_string(r) + "@";
    std::string found;
    for (const auto &n : names_in(store_.dirfd())) {
        if (n.rfind(prefix, 0) != 0 || (n.size() > 5 && n.compare(n.size() - 5, 5, ".lock") == 0))
            continue;
        Fd held;
        std::string why;
        if (temp_owner(store_.dirfd(), n, &held, &why) == Owner::Gone)
            continue;
        if (!found.empty())
            throw Error(-EPROTO, "two live writers of rank " + std::to_string(r) + "'s shard of step " +
                                     std::to_string(step) + ": " + found + ", " + n +
                                     " (two jobs share the checkpoint directory?)");
        found = n;
    }
    if (found.empty())
        throw Error(-EIO, "rank " + std::to_string(r) + "'s shard of step " + std::to_string(step) +
                              " is missing from " + store_.dir() + " (is the directory shared by "
                              "every node?)");
    return found;
}

// Moves rank r's verified files into rank 0's temporary and lists them in its manifest.
void Group::adopt(Staged &s0, unsigned r, const std::string &tmp)
{
    Fd td(::openat(store_.dirfd(), tmp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!td)
        throw_errno("open " + store_.dir() + "/" + tmp);
    struct stat st;
    if (::fstat(td.get(), &st) != 0)
        throw_errno("stat " + tmp);
    store_.check_trusted(tmp, st.st_uid, st.st_mode);
    Fd lf(::openat(td.get(), kShardList, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!lf)
        throw_errno("open " + tmp + "/" + kShardList);
    Manifest shard = manifest_from_json(read_small(lf.get(), kMaxManifestBytes, kShardList));
    if (shard.step != s0.m.step || shard.job_id != s0.m.job_id)
        throw Error(-EPROTO, tmp + " holds step " + std::to_string(shard.step) + " of job \"" +
                                 shard.job_id + "\"; expected step " + std::to_string(s0.m.step));
    for (const auto &f : shard.files) {
        if (f.name.rfind(shard_prefix(r), 0) != 0)
            throw Error(-EPROTO, "rank " + std::to_string(r) + " wrote file " + f.name +
                                     " outside its own names (" + shard_prefix(r) + "*)");
        if (::fstatat(td.get(), f.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            throw_errno("rank " + std::to_string(r) + "'s file " + f.name);
        if (!S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) != f.size)
            throw Error(-EIO, "rank " + std::to_string(r) + "'s file " + f.name + " is not a regular "
                                  "file of " + std::to_string(f.size) + " bytes");
        store_.check_trusted(f.name, st.st_uid, st.st_mode);
        if (::renameat2(td.get(), f.name.c_str(), s0.td.get(), f.name.c_str(), RENAME_NOREPLACE) != 0)
            throw_errno("move " + tmp + "/" + f.name + " into " + s0.tmp);
        s0.m.files.push_back(f);
    }
}

void Group::gather(Staged &s0, uint64_t step)
{
    if (::unlinkat(s0.td.get(), kShardList, 0) != 0)  // rank 0's own list: not part of the step
        throw_errno(s0.tmp + "/" + kShardList);
    for (unsigned r = 1; r < cfg_.world; r++)
        adopt(s0, r, find_shard(step, r));
    s0.m.world_size = cfg_.world;
}

void Group::prepare_background(uint64_t step)
{
    uint64_t nonce = 0;
    if (!bg_ && !files_) {
        std::random_device rd;
        nonce = (uint64_t(rd()) << 32 | rd()) >> 1;
    }
    uint64_t v[3] = {nonce, step, UINT64_MAX - step};
    allreduce_max(v, 3);
    if (v[1] != step || UINT64_MAX - v[2] != step)
        throw Error(-EPROTO, "commit_async(): ranks save different steps (" +
                                 std::to_string(UINT64_MAX - v[2]) + " to " +
                                 std::to_string(v[1]) + "); nothing saved");
    if (bg_ || cfg_.world == 1)
        return;
    GroupConfig c = cfg_;
    c.run_id = files_ ? cfg_.run_id + ".bg" : "bg-" + std::to_string(v[0]);
    bg_ = std::make_unique<FileCoordinator>(store_.dirfd(), store_.dir(), c, !files_);
}

void Group::commit(uint64_t step, const std::vector<Item> &items, std::vector<std::string> *trash,
                   bool background)
{
    if (background && !bg_ && cfg_.world > 1)
        throw Error(-EINVAL, "background group commit without prepare_background()");

    // Phase 1: every rank writes and fsyncs its shard in its own locked temporary.
    Staged s;
    std::optional<Error> err;
    try {
        s = store_.stage(step, ".rank-" + std::to_string(cfg_.rank));
        write_shard(s, items);
    } catch (const Error &e) {
        err = e;
    }
    uint64_t v[3] = {err ? 1u : 0u, step, UINT64_MAX - step};
    try {
        collective(v, 3, background);
    } catch (...) {
        store_.discard(s);
        throw;
    }
    if (err || v[0] || v[1] != step || UINT64_MAX - v[2] != step) {
        store_.discard(s);
        if (err)
            throw *err;
        throw Error(v[0] ? -EIO : -EPROTO,
                    v[0] ? "step " + std::to_string(step) + " not saved: another rank failed to write its shard"
                         : "commit(): the ranks saved different steps; step " + std::to_string(step) +
                               " not saved");
    }
    // Phase 2: rank 0 moves every shard into its temporary, writes the manifest last, publishes.
    if (cfg_.rank == 0) {
        try {
            gather(s, step);
            store_.seal(s, trash);
        } catch (const Error &e) {
            err = Error(e.code(), "step " + std::to_string(step) + " not published: " + e.what());
        }
    }
    uint64_t failed = err ? 1 : 0;
    try {
        collective(&failed, 1, background);
    } catch (const Error &e) {
        store_.discard(s);
        throw Error(e.code(), std::string(e.what()) + " (after every shard of step " +
                                  std::to_string(step) + " was written; rank 0 may have published it)");
    }
    store_.discard(s);  // ranks > 0: their emptied temporary (rank 0's is gone after seal)
    if (err)
        throw *err;
    if (failed)
        throw Error(-EIO, "step " + std::to_string(step) + " not published: rank 0 failed to commit it");
}

}  // namespace idletime::ckpt
