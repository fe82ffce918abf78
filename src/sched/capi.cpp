// extern "C" shims over the scheduling policy: the only place C meets C++ here; no exception
// leaves. Functions that cannot report errors fall back to the answer that changes nothing.
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>

#include "idletime/sched.h"
#include "core/victim_note.hpp"
#include "sched/policy.hpp"

using idletime::sched::JobView;
using idletime::sched::Policy;

struct idletime_sched {
    std::shared_ptr<const Policy> policy;
    idletime::sched::VictimBatch victims;
    idletime::sched::Borrowing borrowing;
    idletime::sched::Holds holds;
    idletime::sched::PassRequests passes;
    bool batch_guaranteed = false;  // the noted candidates' preemptor runs in a quota partition
    // The last preemptable() gave a guaranteed job the first candidate of a batch: its id, submit time.
    uint32_t pass_job = 0;
    int64_t pass_submit = 0;
};

namespace {

int fail(char *err, size_t errlen, const std::string &msg) {
    if (err && errlen) std::snprintf(err, errlen, "%s", msg.c_str());
    return -1;
}

std::string_view sv(const char *s) { return s ? std::string_view(s) : std::string_view(); }

JobView view(const idletime_sched_job_t &j) {
    JobView v;
    v.job_id = j.job_id;
    v.partition = sv(j.partition);
    v.partitions = sv(j.partitions);
    v.priority_tier = j.priority_tier;
    v.preempt_off = j.preempt_off != 0;
    v.gpus = j.gpus;
    v.start_time = j.start_time;
    v.submit_time = j.submit_time;
    v.preempt_time = j.preempt_time;
    v.preempt_start = j.preempt_start;
    v.comment = sv(j.comment);
    v.account = sv(j.account);
    v.quota_hint = sv(j.quota_hint);
    return v;
}

bool parse_seconds(const char *text, uint32_t &out, std::string &err) {
    out = 0;
    if (!text || !*text) return true;
    char *end = nullptr;
    errno = 0;
    unsigned long v = std::strtoul(text, &end, 10);
    if (errno || *end || *text < '0' || *text > '9' || v > 604800) {
        err = std::string("min run time '") + text + "' is not a number of seconds between 0 and 604800";
        return false;
    }
    out = uint32_t(v);
    return true;
}

int load(idletime_sched_t *s, const char *path, const char *min_run, char *err, size_t errlen) {
    idletime::sched::Settings settings;
    std::string msg;
    if (!parse_seconds(min_run, settings.min_run_time_s, msg)) return fail(err, errlen, msg);
    std::ifstream in(path, std::ios::binary);
    if (!in) return fail(err, errlen, std::string(path) + ": cannot read: " + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    auto cfg = std::make_shared<idletime::Config>();
    std::vector<std::string> errors;
    if (!idletime::config_parse(text.str(), *cfg, errors)) {
        msg = std::string(path) + ": " + (errors.empty() ? "invalid config" : errors.front());
        if (errors.size() > 1) msg += " (and " + std::to_string(errors.size() - 1) + " more errors)";
        return fail(err, errlen, msg);
    }
    // idle.min_run_time of the config unless the environment overrides it.
    if (!min_run || !*min_run) settings.min_run_time_s = cfg->idle.min_run_time_s;
    s->policy = std::make_shared<const Policy>(std::move(cfg), settings);
    s->borrowing.reset(-1);  // the snapshot pointed at the old config's quotas
    return 0;
}

}  // namespace

extern "C" {

idletime_sched_t *idletime_sched_new(void) {
    try {
        auto s = std::make_unique<idletime_sched>();
        s->policy = std::make_shared<const Policy>(nullptr, idletime::sched::Settings{});
        return s.release();
    } catch (...) {
        return nullptr;
    }
}

void idletime_sched_free(idletime_sched_t *s) { delete s; }

int idletime_sched_load(idletime_sched_t *s, const char *config_path, const char *min_run_time, char *err,
                        size_t errlen) {
    if (!s || !config_path) return fail(err, errlen, "idletime_sched_load: NULL argument");
    try {
        return load(s, config_path, min_run_time, err, errlen);
    } catch (const std::bad_alloc &) {
        return fail(err, errlen, "out of memory");
    } catch (const std::exception &e) {
        return fail(err, errlen, std::string("internal error: ") + e.what());
    } catch (...) {
        return fail(err, errlen, "internal error");
    }
}

int idletime_sched_take_config(idletime_sched_t *dst, const idletime_sched_t *src) {
    if (!dst || !src) return -1;
    try {
        dst->policy = src->policy;  // shared, immutable: no copy
        dst->borrowing.reset(-1);   // the snapshot pointed at the old config's quotas
        return 0;
    } catch (...) {
        return -1;
    }
}

int idletime_sched_has_config(const idletime_sched_t *s) { return s && s->policy->config() ? 1 : 0; }

uint32_t idletime_sched_min_run_time(const idletime_sched_t *s) {
    return s ? s->policy->settings().min_run_time_s : 0;
}

int idletime_sched_partitions_may_preempt(const idletime_sched_t *s, const char *a, uint32_t ta, const char *b,
                                          uint32_t tb, int b_off) {
    if (!s) return 0;
    try {
        return s->policy->partitions_may_preempt(sv(a), ta, sv(b), tb, b_off != 0) ? 1 : 0;
    } catch (...) {
        return 0;  // cannot happen today (lookups only); never let it reach slurmctld
    }
}

int idletime_sched_preemptable(idletime_sched_t *s, const idletime_sched_job_t *preemptor,
                               const idletime_sched_job_t *preemptee, int64_t now) {
    if (!s || !preemptor || !preemptee) return 0;
    s->pass_job = 0;
    try {
        const JobView a = view(*preemptor), b = view(*preemptee);
        if (!s->policy->may_preempt(a, b, now)) return 0;
        s->victims.note(a.job_id, a.gpus, b, now);
        s->batch_guaranteed = s->policy->part(a.partition).kind == idletime::sched::Kind::Guaranteed;
        // The first candidate of a batch only: one lookup per candidate search, not per candidate.
        if (s->batch_guaranteed && s->victims.size() == 1) {
            s->pass_job = a.job_id;
            s->pass_submit = a.submit_time;
        }
        return 1;
    } catch (...) {
        return 0;  // out of memory while noting: not a candidate this time
    }
}

int idletime_sched_pass_wanted(idletime_sched_t *s, uint32_t gap_s, int64_t now) {
    if (!s || !s->pass_job) return 0;
    const uint32_t job = s->pass_job;
    s->pass_job = 0;
    try {
        return s->passes.first(job, s->pass_submit, now, gap_s) ? 1 : 0;
    } catch (...) {
        return 0;  // out of memory: Slurm's own loop
    }
}

uint32_t idletime_sched_victim_rank(idletime_sched_t *s, uint32_t job_id) {
    if (!s) return UINT32_MAX;
    try {
        return s->victims.rank(job_id);
    } catch (...) {
        return UINT32_MAX;  // out of memory while ranking: Slurm keeps its list order
    }
}

uint32_t idletime_sched_victim_picked(const idletime_sched_t *s, uint32_t victim_id) {
    if (!s || !s->batch_guaranteed) return 0;
    return s->victims.preemptor_of(victim_id);
}

size_t idletime_sched_victim_note(const char *old, uint32_t owner, int64_t at, char *buf, size_t len) {
    try {
        std::string note;
        if (!buf || !idletime::victim_note_replace(old ? old : "", owner, at, note) || note.size() >= len)
            return 0;
        std::memcpy(buf, note.c_str(), note.size() + 1);
        return note.size();
    } catch (...) {
        return 0;  // out of memory: no note, the hook names the preemptor from the node it took
    }
}

int idletime_sched_hold_begin(idletime_sched_t *s, uint32_t job_id, uint32_t restarts, int64_t until,
                              uint32_t victim_id) {
    if (!s || !job_id) return -1;
    try {
        return s->holds.begin(job_id, restarts, until, victim_id);
    } catch (...) {
        return -1;  // out of memory: no hold, Slurm decides alone
    }
}

size_t idletime_sched_hold_ids(const idletime_sched_t *s, uint32_t *ids, size_t max) {
    if (!s || !ids) return 0;
    try {
        const auto all = s->holds.ids();
        size_t n = 0;
        for (; n < all.size() && n < max; ++n) ids[n] = all[n];
        return n;
    } catch (...) {
        return 0;  // out of memory: looked at again at the next sweep
    }
}

size_t idletime_sched_hold_victims(const idletime_sched_t *s, uint32_t job_id, uint32_t *ids, size_t max) {
    if (!s || !ids) return 0;
    try {
        const auto all = s->holds.victims(job_id);
        size_t n = 0;
        for (; n < all.size() && n < max; ++n) ids[n] = all[n];
        return n;
    } catch (...) {
        return 0;  // out of memory: no victim counts as leaving
    }
}

int idletime_sched_hold_keep(idletime_sched_t *s, uint32_t job_id, int pending, uint32_t restarts,
                             int victims_leaving, int64_t now) {
    if (!s) return 0;
    return s->holds.keep(job_id, pending != 0, restarts, victims_leaving != 0, now) ? 1 : 0;
}

void idletime_sched_borrow_reset(idletime_sched_t *s, int64_t now) {
    if (!s) return;
    try {
        s->borrowing.reset(now);
    } catch (...) {
    }
}

void idletime_sched_borrow_add(idletime_sched_t *s, const idletime_sched_job_t *running) {
    if (!s || !running) return;
    try {
        s->borrowing.add_running(*s->policy, view(*running));
    } catch (...) {
        // out of memory: this job is not counted until the next snapshot
    }
}

int64_t idletime_sched_borrow_taken_at(const idletime_sched_t *s) { return s ? s->borrowing.taken_at() : -1; }

int idletime_sched_site_factor(const idletime_sched_t *s, const idletime_sched_job_t *pending, int64_t now,
                               uint32_t *factor) {
    if (!s || !pending || !factor) return 0;
    try {
        return idletime::sched::site_factor(*s->policy, s->borrowing, view(*pending), now, *factor) ? 1 : 0;
    } catch (...) {
        return 0;  // Slurm's neutral factor stays
    }
}

int64_t idletime_ckpt_comment_time(const char *comment, int64_t start, int64_t now) {
    try {
        return idletime::sched::last_checkpoint(sv(comment), start, now);
    } catch (...) {
        return now;
    }
}

}  // extern "C"
