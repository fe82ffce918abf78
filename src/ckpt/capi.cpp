// extern "C" surface of libidletime-ckpt: the only place exceptions stop.
#include "idletime/ckpt.h"

#include <dlfcn.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <optional>
#include <new>
#include <string>

#include <slurm/slurm.h>
#include "compat/slurm_api.h"
#include <slurm/slurm_errno.h>

#include "ckpt/notice.hpp"
#include "ckpt/publish.hpp"
#include "ckpt/session.hpp"

using idletime::ckpt::Error;

struct idletime_ckpt {
    std::string err;
    idletime_ckpt_group_t group{};  // the caller's callback, kept for the Group's lambda
    std::string name;  // storage for file_info's *name
    std::string dir;
    std::unique_ptr<idletime::ckpt::Session> s;
};

namespace {

template <class F>
int guard(idletime_ckpt_t *h, F &&f) noexcept
{
    if (!h)
        return -EINVAL;
    try {
        if (!h->s)
            throw Error(-EBADF, "checkpoint handle was not opened: " + h->err);
        return f(*h->s);
    } catch (const Error &e) {
        h->err = e.what();
        return e.code() < 0 ? e.code() : -EIO;
    } catch (const std::bad_alloc &) {
        h->err = "out of memory";
        return -ENOMEM;
    } catch (const std::exception &e) {
        try {
            h->err = e.what();
        } catch (...) {
        }
        return -EIO;
    } catch (...) {
        return -EIO;
    }
}

int copy_out(const std::string &s, char *buf, size_t len)
{
    if (!buf)
        return 0;
    if (s.size() + 1 > len)
        throw Error(-ERANGE, "buffer of " + std::to_string(len) + " bytes is too small for " + s);
    std::memcpy(buf, s.c_str(), s.size() + 1);
    return 0;
}

idletime::ckpt::StoreOptions store_options(const idletime_ckpt_options_t &o)
{
    idletime::ckpt::StoreOptions so;
    so.keep_last = o.keep_last ? o.keep_last : 3;
    if (o.job_id) {
        so.job_id = o.job_id;
    } else if (const char *j = std::getenv("SLURM_JOB_ID")) {
        so.job_id = j;
    }
    if (o.require_munge < -1 || o.require_munge > 1)
        throw Error(-EINVAL, "require_munge must be -1 (default), 0 or 1");
    so.require_munge = o.require_munge == -1 ? !so.job_id.empty() : o.require_munge == 1;
    return so;
}

idletime::ckpt::LogFn make_log(const idletime_ckpt_options_t &o)
{
    if (o.log) {
        auto fn = o.log;
        void *arg = o.log_arg;
        return [fn, arg](const std::string &m) { fn(arg, m.c_str()); };
    }
    return [](const std::string &m) { std::fprintf(stderr, "idletime/ckpt: %s\n", m.c_str()); };
}

// In a group, <name> is the replicated file when the checkpoint has one, else this rank's shard
// "rank-<r>.<name>", which exists only for the world size that saved it.
std::string resolve(idletime::ckpt::Session &s, const idletime::ckpt::Manifest &m,
                    const std::string &name)
{
    auto *g = s.group();
    if (!g)
        return name;
    for (const auto &f : m.files)
        if (f.name == name)
            return name;
    if (m.world_size && m.world_size != g->world())
        throw Error(IDLETIME_CKPT_EWORLD,
                    "checkpoint step " + std::to_string(m.step) + " holds \"" + name +
                        "\" sharded over " + std::to_string(m.world_size) + " ranks; this job has " +
                        std::to_string(g->world()) + ": restart it with " +
                        std::to_string(m.world_size) +
                        " ranks (only replicated state resumes on any world size)");
    return idletime::ckpt::Group::shard_prefix(g->rank()) + name;
}

// The C callback as the Group's allreduce.
idletime::ckpt::AllreduceFn callback(const idletime_ckpt_group_t &g)
{
    if (!g.allreduce_max)
        return {};
    auto fn = g.allreduce_max;
    void *arg = g.arg;
    return [fn, arg](uint64_t *v, size_t n) { return fn(arg, v, n); };
}

}  // namespace

extern "C" {

void idletime_ckpt_group_init(idletime_ckpt_group_t *g)
{
    if (!g)
        return;
    std::memset(g, 0, sizeof *g);
    idletime::ckpt::group_from_env(&g->rank, &g->world_size);
}

int idletime_ckpt_join(idletime_ckpt_t *h, const idletime_ckpt_group_t *g)
{
    return guard(h, [&](auto &s) {
        if (!g)
            throw Error(-EINVAL, "join(): group is NULL");
        idletime::ckpt::GroupConfig cfg;
        cfg.rank = g->rank;
        cfg.world = g->world_size;
        cfg.allreduce = callback(*g);
        cfg.run_id = g->run_id ? g->run_id : idletime::ckpt::default_run_id();
        cfg.timeout_s = g->timeout_s ? g->timeout_s : 120;
        s.join(std::move(cfg));
        return 0;
    });
}

int idletime_ckpt_agree(idletime_ckpt_t *h, uint64_t step, int *stop)
{
    return guard(h, [&](auto &s) {
        bool local = idletime::ckpt::notice_received();
        bool all = s.group() ? s.group()->agree_stop(step, local) : local;
        if (stop)
            *stop = all ? 1 : 0;
        return 0;
    });
}

int idletime_ckpt_add_replicated(idletime_ckpt_t *h, const char *name, const void *data,
                                 size_t size)
{
    return guard(h, [&](auto &s) {
        if (!name)
            throw Error(-EINVAL, "add_replicated(): name is NULL");
        s.add(name, data, size, true);
        return 0;
    });
}

unsigned idletime_ckpt_rank(const idletime_ckpt_t *h)
{
    return h && h->s && h->s->group() ? h->s->group()->rank() : 0;
}

unsigned idletime_ckpt_world_size(const idletime_ckpt_t *h)
{
    return h && h->s && h->s->group() ? h->s->group()->world() : 1;
}

void idletime_ckpt_options_init(idletime_ckpt_options_t *opt)
{
    if (!opt)
        return;
    std::memset(opt, 0, sizeof *opt);
    opt->keep_last = 3;
    opt->require_munge = -1;
}

int idletime_ckpt_open(const char *dir, const idletime_ckpt_options_t *opt, idletime_ckpt_t **out)
{
    if (!out)
        return -EINVAL;
    *out = new (std::nothrow) idletime_ckpt;
    idletime_ckpt_t *h = *out;
    if (!h)
        return -ENOMEM;
    try {
        idletime_ckpt_options_t o;
        idletime_ckpt_options_init(&o);
        if (opt)
            o = *opt;
        if (!dir)
            dir = std::getenv("IDLETIME_CKPT_DIR");
        if (!dir || !*dir)
            throw Error(-EINVAL, "no checkpoint directory: pass one or set IDLETIME_CKPT_DIR");
        h->dir = dir;
        h->s = std::make_unique<idletime::ckpt::Session>(h->dir, store_options(o), make_log(o));
        return 0;
    } catch (const Error &e) {
        h->err = e.what();
        return e.code() < 0 ? e.code() : -EIO;
    } catch (const std::bad_alloc &) {
        h->err = "out of memory";
        return -ENOMEM;
    } catch (const std::exception &e) {
        h->err = e.what();
        return -EIO;
    } catch (...) {
        h->err = "unknown error";
        return -EIO;
    }
}

int idletime_ckpt_close(idletime_ckpt_t *h)
{
    if (!h)
        return 0;
    int rc = h->s ? guard(h, [](auto &s) { s.wait(); return 0; }) : 0;
    try {
        h->s.reset();
    } catch (...) {
    }
    delete h;
    return rc;
}

const char *idletime_ckpt_last_error(const idletime_ckpt_t *h)
{
    return h ? h->err.c_str() : "no checkpoint handle";
}

const char *idletime_ckpt_dir(const idletime_ckpt_t *h) { return h ? h->dir.c_str() : ""; }

int idletime_ckpt_latest(idletime_ckpt_t *h, uint64_t *step, char *path, size_t path_len)
{
    return guard(h, [&](auto &s) {
        std::optional<uint64_t> l;
        std::optional<Error> err;
        try {
            l = s.store().latest();
        } catch (const Error &e) {
            if (!s.group())
                throw;
            err = e;  // still take part in the agreement, so the other ranks do not wait
        }
        if (s.group()) {
            uint64_t failed = err ? 1 : 0;
            s.group()->allreduce_max(&failed, 1);
            if (err)
                throw *err;
            if (failed)
                throw Error(-EIO, "latest(): another rank could not read the checkpoints");
            s.group()->agree_latest(l);
        }
        if (!l)
            throw Error(-ENOENT, "no complete checkpoint in " + s.store().dir() +
                                     (s.store().rejected().empty()
                                          ? std::string()
                                          : " (rejected: " + s.store().rejected() + ")"));
        copy_out(s.store().step_path(*l), path, path_len);
        if (step)
            *step = *l;
        return 0;
    });
}

int idletime_ckpt_begin(idletime_ckpt_t *h, uint64_t step)
{
    return guard(h, [&](auto &s) { s.begin(step); return 0; });
}

int idletime_ckpt_add(idletime_ckpt_t *h, const char *name, const void *data, size_t size)
{
    return guard(h, [&](auto &s) {
        if (!name)
            throw Error(-EINVAL, "add(): name is NULL");
        s.add(name, data, size);
        return 0;
    });
}

int idletime_ckpt_commit(idletime_ckpt_t *h)
{
    return guard(h, [](auto &s) { s.commit(); return 0; });
}

int idletime_ckpt_commit_async(idletime_ckpt_t *h)
{
    return guard(h, [](auto &s) { s.commit_async(); return 0; });
}

int idletime_ckpt_wait(idletime_ckpt_t *h)
{
    return guard(h, [](auto &s) { s.wait(); return 0; });
}

int idletime_ckpt_saving(const idletime_ckpt_t *h)
{
    return h && h->s && h->s->saving() ? 1 : 0;
}

int idletime_ckpt_file_count(idletime_ckpt_t *h, uint64_t step, size_t *count)
{
    return guard(h, [&](auto &s) {
        auto m = s.store().complete(step);
        if (count)
            *count = m->files.size();
        return 0;
    });
}

int idletime_ckpt_file_info(idletime_ckpt_t *h, uint64_t step, size_t i, const char **name,
                            uint64_t *size)
{
    return guard(h, [&](auto &s) {
        auto m = s.store().complete(step);
        if (i >= m->files.size())
            throw Error(-ENOENT, "file index " + std::to_string(i) + " out of range (step has " +
                                     std::to_string(m->files.size()) + " files)");
        h->name = m->files[i].name;
        if (name)
            *name = h->name.c_str();
        if (size)
            *size = m->files[i].size;
        return 0;
    });
}

int idletime_ckpt_read(idletime_ckpt_t *h, uint64_t step, const char *name, void *buf, size_t cap,
                       size_t *len)
{
    return guard(h, [&](auto &s) {
        if (!name || (!buf && cap))
            throw Error(-EINVAL, "read(): name or buffer is NULL");
        auto m = s.store().complete(step);
        const std::string real = resolve(s, *m, name);
        for (const auto &f : m->files)
            if (f.name == real && len)
                *len = f.size;
        size_t got = s.store().read(step, real, buf, cap);
        if (len)
            *len = got;
        return 0;
    });
}

int idletime_ckpt_file_path(idletime_ckpt_t *h, uint64_t step, const char *name, char *path,
                            size_t path_len)
{
    return guard(h, [&](auto &s) {
        if (!name || !path)
            throw Error(-EINVAL, "file_path(): name or path is NULL");
        auto m = s.store().complete(step);
        const std::string real = resolve(s, *m, name);
        for (const auto &f : m->files)
            if (f.name == real)
                return copy_out(s.store().step_path(step) + "/" + real, path, path_len);
        throw Error(-ENOENT, "checkpoint step " + std::to_string(step) + " has no file \"" +
                                 std::string(name) + "\"");
    });
}

int idletime_ckpt_install_notice(idletime_ckpt_t *h, int signo)
{
    return guard(h, [&](auto &) { idletime::ckpt::install_notice(signo); return 0; });
}

int idletime_ckpt_preempt_requested(const idletime_ckpt_t *)
{
    return idletime::ckpt::notice_received() ? 1 : 0;
}

int64_t idletime_ckpt_deadline(const idletime_ckpt_t *) { return idletime::ckpt::notice_deadline(); }

int idletime_ckpt_notice_signal(const idletime_ckpt_t *) { return idletime::ckpt::notice_signal(); }

int idletime_ckpt_notice_fd(const idletime_ckpt_t *)
{
    const int fd = idletime::ckpt::notice_fd();
    return fd >= 0 ? fd : -ENOENT;
}

int idletime_ckpt_progress(idletime_ckpt_t *h, uint64_t step)
{
    return guard(h, [&](auto &s) { s.heartbeat().progress(step); return 0; });
}

// libslurm's plugins (auth/munge) take symbols such as slurm_conf from the global scope. Loaded
// with RTLD_LOCAL (Python's ctypes does that), libslurm is not in it and every RPC fails with
// "undefined symbol: slurm_conf": promote the already loaded libslurm to RTLD_GLOBAL.
static void make_libslurm_global()
{
    auto fn = &slurm_requeue;
    void *addr = nullptr;
    std::memcpy(&addr, &fn, sizeof addr);
    Dl_info info{};
    if (dladdr(addr, &info) && info.dli_fname)
        (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);  // kept open on purpose
}

// What slurmctld records for our job: whether it is still RUNNING, when it picked the job as a
// preemption victim (0 = never) and when the run must end.
struct JobNow {
    uint32_t state = 0;
    time_t preempt_time = 0;
    time_t end_time = 0;
};

static JobNow load_job_now(uint32_t id, const std::string &job)
{
    job_info_msg_t *msg = nullptr;
    if (idletime_load_job(&msg, id, SHOW_ALL | SHOW_LOCAL) != SLURM_SUCCESS || !msg || msg->record_count < 1) {
        std::string why = slurm_strerror(idletime_slurm_errno());
        slurm_free_job_info_msg(msg);
        throw Error(-ECANCELED, "release: cannot read job " + job + " from Slurm: " + why);
    }
    JobNow n{msg->job_array[0].job_state, msg->job_array[0].preempt_time,
             msg->job_array[0].end_time};
    slurm_free_job_info_msg(msg);
    return n;
}

// The final save's publish loaded the job a moment ago (publish.hpp): use what it saw when it
// is at most kSeenMaxAgeMs old and already shows the preemption, else load. Its RUNNING is checked
// again by slurmctld (JOB_RUNNING below), and a preempt_time once set stays until the requeue; a
// load from before the preemption (a save that began before the notice) is not used.
constexpr int64_t kSeenMaxAgeMs = 10000;

static JobNow recent_or_load(uint32_t id, const std::string &job)
{
    idletime::ckpt::JobSeen seen;
    if (!idletime::ckpt::recent_job_seen(id, kSeenMaxAgeMs, seen) || !seen.preempt_time)
        return load_job_now(id, job);
    return JobNow{seen.state, time_t(seen.preempt_time), time_t(seen.end_time)};
}

static bool running(const JobNow &n)
{
    return (n.state & JOB_STATE_BASE) == JOB_RUNNING && !(n.state & JOB_COMPLETING);
}

// SIGTERM also comes from scancel, and Slurm requeues even a job being cancelled: requeue only
// a job that is still RUNNING (a preemption notice), so a cancel stays a cancel.
static void check_still_running(const JobNow &n, const std::string &job)
{
    if (!running(n))
        throw Error(-ECANCELED, "release: job " + job + " is no longer running (" +
                                    ((n.state & JOB_STATE_BASE) == JOB_CANCELLED ? "cancelled"
                                     : (n.state & JOB_COMPLETING)               ? "ending"
                                                                                 : "not running") +
                                    "), not requeued");
}

// The notice signal is also Slurm's warning before the time limit (--signal=SIG@GraceTime).
// Slurm records preempt_time when it picks a victim, before it signals: without one the notice
// is the time-limit warning, and a requeue would let the job run past its limit. So wait
// for Slurm to end the job at its limit (state TIMEOUT; --requeue-at-time-limit makes the
// fault-tolerance hook requeue it then), unless Slurm picks it as a victim meanwhile.
static void wait_for_time_limit(uint32_t id, const std::string &job, JobNow n)
{
    const time_t now = ::time(nullptr);
    const int64_t deadline = idletime::ckpt::notice_deadline();
    const int64_t near = deadline > 0 ? deadline + 120 : now + 180;
    if (n.end_time <= 0 || n.end_time > near)
        throw Error(-ECANCELED, "release: Slurm records no preemption of job " + job +
                                    " and its time limit is not near: not requeued");
    std::fprintf(stderr, "idletime/ckpt: release: job %s got its time-limit warning (no preemption "
                         "recorded by Slurm): not requeued; waiting for Slurm to end it at its "
                         "time limit in %lld s\n", job.c_str(), (long long)(n.end_time - now));
    while (running(n) && !n.preempt_time) {
        if (::time(nullptr) > n.end_time + 600)
            throw Error(IDLETIME_CKPT_ETIMELIMIT, "release: job " + job + " still runs 600 s after its time limit");
        struct timespec ts{2, 0};
        ::nanosleep(&ts, nullptr);  // the SIGTERM at the limit only sets the notice flag
        n = load_job_now(id, job);
    }
    if (!n.preempt_time)
        throw Error(IDLETIME_CKPT_ETIMELIMIT, "release: job " + job + " ended at its time limit, not requeued");
}

int idletime_ckpt_release(idletime_ckpt_t *h)
{
    return guard(h, [](auto &s) {
        const std::string &job = s.store().options().job_id;
        char *end = nullptr;
        unsigned long id = job.empty() ? 0 : std::strtoul(job.c_str(), &end, 10);
        if (job.empty() || *end || id == 0 || id > UINT32_MAX)
            throw Error(-EINVAL, "release: no numeric Slurm job id (SLURM_JOB_ID or the job_id "
                                 "option); nothing to requeue");
        s.wait();  // the final save must be durable first
        if (s.group() && s.group()->rank() != 0)
            return 0;  // one release per job: rank 0's (the group's commit is already durable)
        static std::once_flag once;
        std::call_once(once, [] {
            make_libslurm_global();
            slurm_init(nullptr);
        });
        JobNow n = recent_or_load(static_cast<uint32_t>(id), job);
        check_still_running(n, job);
        if (!n.preempt_time) {
            wait_for_time_limit(static_cast<uint32_t>(id), job, n);
            check_still_running(load_job_now(static_cast<uint32_t>(id), job), job);
        }
        // JOB_RUNNING: slurmctld requeues only a job still RUNNING when the request arrives (a
        // scancel after the check above stays a cancel; without it Slurm requeues a job that is
        // completing, a cancelled one included).
        if (idletime_requeue(static_cast<uint32_t>(id), JOB_RUNNING) != SLURM_SUCCESS)
            throw Error(-ECANCELED, "release: slurm_requeue(" + job + ") refused: " +
                                        slurm_strerror(idletime_slurm_errno()));
        return 0;
    });
}

}  // extern "C"

