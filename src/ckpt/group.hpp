// Multi-rank (group) checkpoints: the ranks of one job agree on when to stop and commit one
// checkpoint together (rules and call order: doc/design/multi-rank-checkpoints.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ckpt/store.hpp"

namespace idletime::ckpt {

// Element-wise maximum over all ranks, in place; every rank calls it with the same n.
// Returns 0 or a negative errno (a caller's collective failed or timed out).
using AllreduceFn = std::function<int(uint64_t *values, size_t n)>;

struct GroupConfig {
    unsigned rank = 0;
    unsigned world = 1;
    AllreduceFn allreduce;  // empty: the built-in file coordinator below
    std::string run_id;     // built-in coordinator: unique per start of the group
    unsigned timeout_s = 120;
};

// Built-in coordinator without any network: round G of rank R is the file
// "<dir>/.group/<run>.<G>.<R>" (written to a temporary, then renamed); a rank waits until the
// files of every rank for its round exist, up to timeout_s, then fails with -ETIMEDOUT naming
// the ranks that did not arrive. Needs the checkpoint directory on a file system every rank
// sees (it must be one anyway: every rank writes its shard there).
class FileCoordinator {
public:
    // clean: remove this rank's files of other runs (false for the background coordinator of
    // a group whose main coordinator is also a FileCoordinator: its live files end alike).
    FileCoordinator(int ckpt_dirfd, const std::string &dir, const GroupConfig &cfg,
                    bool clean = true);
    int allreduce_max(uint64_t *values, size_t n, std::string *err);

private:
    std::string file(uint64_t gen, unsigned rank) const;
    void write_round(uint64_t gen, const uint64_t *values, size_t n);
    bool read_round(uint64_t gen, unsigned rank, uint64_t *acc, size_t n);
    void remove_foreign_runs();

    Fd cd_;
    std::string dir_;
    unsigned rank_, world_;
    std::string run_;
    unsigned timeout_s_;
    uint64_t gen_ = 0;
};

class Group {
public:
    Group(Store &store, GroupConfig cfg);
    unsigned rank() const { return cfg_.rank; }
    unsigned world() const { return cfg_.world; }

    // Throws Error on a failed or timed-out collective.
    void allreduce_max(uint64_t *values, size_t n) { collective(values, n, false); }
    // background: through the persist thread's file coordinator (prepare_background).
    void collective(uint64_t *values, size_t n, bool background);
    // true on every rank when any rank saw the notice; all ranks must pass the same step.
    bool agree_stop(uint64_t step, bool local_notice);
    // The same newest step on every rank (nullopt everywhere when none), else Error(-EPROTO).
    void agree_latest(const std::optional<uint64_t> &mine);
    // Collective commit of step: every rank writes its items (names already rank-prefixed),
    // rank 0 publishes once every shard is durable. Throws on any rank's failure, on every rank.
    // background: called from the persist thread of commit_async(); its collectives then use
    // the background coordinator (prepare_background), never the caller's allreduce.
    void commit(uint64_t step, const std::vector<Item> &items,
                std::vector<std::string> *trash, bool background = false);
    // Main thread, collective, before each commit_async(): checks that every rank saves step
    // and creates (once) the background file coordinator, run id "<run>.bg" (built-in) or
    // "bg-<nonce agreed through the caller's allreduce>".
    void prepare_background(uint64_t step);

    // "rank-<r>." prefix of a rank's sharded file names.
    static std::string shard_prefix(unsigned rank);

private:
    void write_shard(Staged &s, const std::vector<Item> &items);
    void gather(Staged &s0, uint64_t step);
    void adopt(Staged &s0, unsigned r, const std::string &tmp);
    std::string find_shard(uint64_t step, unsigned r);

    Store &store_;
    GroupConfig cfg_;
    std::unique_ptr<FileCoordinator> files_;
    std::unique_ptr<FileCoordinator> bg_;  // the persist thread's coordinator
};

// Default rank and world size from the environment: RANK/WORLD_SIZE (torchrun's), else
// SLURM_PROCID/SLURM_NTASKS (srun's), else 0/1.
void group_from_env(unsigned *rank, unsigned *world);
// Default run id of the built-in coordinator: env IDLETIME_GROUP_RUN_ID, else
// "<SLURM_JOB_ID>.<SLURM_RESTART_COUNT or 0>.<SLURM_STEP_ID or batch>", else "".
std::string default_run_id();

}  // namespace idletime::ckpt
