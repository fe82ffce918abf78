// Quota accounting for `idletime quota`: who uses, lends and borrows what, right now.
// Pure: inputs are the config and the derived job views; units are GPUs and CPUs (counts).
//
// Rules (idletime-quota(1) documents the same text):
//  used(q)     = resources of q's jobs running in quota-<q> (guaranteed runs).
//  borrowed(q) = resources of q's jobs running in any idle-<pool> partition (idle-time runs).
//  free(q)     = max(0, guaranteed(q) - used(q)), q's unused guaranteed share.
//  own(q)      = min(free(q), idle-time usage of q's own jobs on q's own pool P): q using its
//                own unused share through idle-time jobs lends nothing to anybody.
//  lent(q)     = q's part of the rest of P's idle-time usage (others' jobs, and q's own beyond
//                own(q)). That rest is charged first to P's capacity that no quota guarantees
//                (unassigned), then to the shares free(q) - own(q) of P's quotas in proportion
//                (largest remainder, ties in config order); never more than free(q) - own(q).
//  So: idle-time usage on P = unassigned(P) + sum over P's quotas of (own + lent), as long as
//  the idle-time usage fits (it always does on a consistent cluster).
//  pending(q)  = resources requested by q's pending jobs (and their count).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "views/job.hpp"

namespace idletime::views {

struct Amount {
    uint64_t gpus = 0, cpus = 0;
    Amount &operator+=(const Amount &o) {
        gpus += o.gpus;
        cpus += o.cpus;
        return *this;
    }
};

struct QuotaUse {
    const Quota *quota = nullptr;
    std::string pool, tenant;
    Amount guaranteed, used, lent, borrowed, pending;
    Amount own;  // own(q): q's idle-time usage inside its own unused share
    uint32_t running_jobs = 0, idle_jobs = 0, pending_jobs = 0;
};

struct PoolUse {
    const Pool *pool = nullptr;
    Amount capacity;     // all nodes of the pool
    Amount guaranteed;   // sum over its quotas
    Amount used;         // guaranteed runs in its quota partitions
    Amount idle_used;    // idle-time runs on its idle partition (any quota)
    Amount unassigned;   // idle-time usage charged to capacity no quota guarantees
    Amount own, lent, borrowed, pending;  // sums over its quotas
};

struct TenantUse {
    std::string tenant;
    Amount capacity, guaranteed, used, idle_used, lent, borrowed, pending;
};

struct Accounting {
    std::vector<QuotaUse> quotas;   // config order
    std::vector<PoolUse> pools;     // config order
    std::vector<TenantUse> tenants; // config order
};

Accounting account(const Config &cfg, const std::vector<JobView> &jobs);

// Splits total over weights in proportion (largest remainder, ties by index); each part <= its weight.
std::vector<uint64_t> apportion(uint64_t total, const std::vector<uint64_t> &weights);

}  // namespace idletime::views
