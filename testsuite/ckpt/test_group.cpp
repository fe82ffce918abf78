// Check suite "ckpt-group": multi-rank checkpoints with the built-in file coordinator (ranks are
// forked processes): one stop decision, one atomic step from every rank's shard, resume per rank
// and on another world size, dead ranks time out, SIGKILL of one rank never publishes a partial
// step (munge-signed, as for one process).
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <check.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.hpp"

using namespace ckpt_test;

namespace {

Munged md;
std::string base;
const char *kJob = "7100";

void start_daemons() { md.start("group"); }
void stop_daemons() { md.stop(); }
void setup()
{
    base = make_temp_dir("group");
    setenv("IDLETIME_MUNGE_SOCKET", md.socket.c_str(), 1);
}
void teardown()
{
    remove_all(base);
    unsetenv("IDLETIME_MUNGE_SOCKET");
}

void quiet(void *, const char *) {}

// Opens dir and joins rank/world with the built-in coordinator; _exit(90) on failure.
idletime_ckpt_t *member(const std::string &dir, unsigned rank, unsigned world,
                        const std::string &run, unsigned timeout_s = 20)
{
    idletime_ckpt_options_t o = opts(kJob, 1, nullptr, 2);
    o.log = quiet;
    idletime_ckpt_t *h = nullptr;
    if (idletime_ckpt_open(dir.c_str(), &o, &h))
        _exit(90);
    idletime_ckpt_group_t g;
    idletime_ckpt_group_init(&g);
    g.rank = rank;
    g.world_size = world;
    g.run_id = run.c_str();
    g.timeout_s = timeout_s;
    if (idletime_ckpt_join(h, &g)) {
        fprintf(stderr, "join: %s\n", idletime_ckpt_last_error(h));
        _exit(91);
    }
    return h;
}

std::string shard_data(unsigned rank, uint64_t step) { return pattern(step * 100 + rank, 3000 + rank); }

int save_group_step(idletime_ckpt_t *h, unsigned rank, uint64_t step, bool async = false)
{
    std::string shard = shard_data(rank, step), model = pattern(step, 5000);
    int rc = idletime_ckpt_begin(h, step);
    if (!rc)
        rc = idletime_ckpt_add(h, "opt", shard.data(), shard.size());
    if (!rc)
        rc = idletime_ckpt_add_replicated(h, "model", model.data(), model.size());
    if (rc)
        return rc;
    // async: the buffers die with this frame: commit_async() must have copied them.
    return async ? idletime_ckpt_commit_async(h) : idletime_ckpt_commit(h);
}

// Runs fn(rank) in world forked processes; returns their exit statuses.
std::vector<int> run_ranks(unsigned world, const std::function<int(unsigned)> &fn)
{
    std::vector<pid_t> pids;
    for (unsigned r = 0; r < world; r++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(fn(r));
        pids.push_back(pid);
    }
    std::vector<int> out;
    for (pid_t p : pids) {
        int st = 0;
        waitpid(p, &st, 0);
        out.push_back(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    }
    return out;
}

START_TEST(commit_then_resume_per_rank)
{
    const std::string dir = base + "/ck";
    auto rc = run_ranks(3, [&](unsigned r) {
        idletime_ckpt_t *h = member(dir, r, 3, "save");
        for (uint64_t s = 1; s <= 3; s++)
            if (save_group_step(h, r, s)) {
                fprintf(stderr, "rank %u: %s\n", r, idletime_ckpt_last_error(h));
                return 1;
            }
        return idletime_ckpt_close(h) ? 2 : 0;
    });
    for (int x : rc)
        ck_assert_int_eq(x, 0);
    // One step, every rank's shard plus one replicated copy, verified by a plain handle.
    idletime_ckpt_t *h = open_ok(dir, opts(kJob, 1, nullptr, 2));
    ck_assert_uint_eq(latest_step(h), 3);
    size_t n = 0;
    ck_assert_int_eq(idletime_ckpt_file_count(h, 3, &n), 0);
    ck_assert_uint_eq(n, 4);
    std::string man = read_file(dir + "/step-000000000003/MANIFEST.json");
    ck_assert_msg(man.find("\"world_size\":3") != std::string::npos, "%s", man.c_str());
    ck_assert(man.find("\"munge\":\"MUNGE:") != std::string::npos);
    for (const auto &e : list_dir(dir))
        ck_assert_msg(e.rfind(".tmp", 0) != 0, "leftover %s", e.c_str());
    idletime_ckpt_close(h);
    // Same world size: each rank reads its own shard.
    rc = run_ranks(3, [&](unsigned r) {
        idletime_ckpt_t *g = member(dir, r, 3, "resume3");
        uint64_t step = 0;
        if (idletime_ckpt_latest(g, &step, nullptr, 0) || step != 3)
            return 1;
        std::string buf(8192, '\0');
        size_t len = 0;
        if (idletime_ckpt_read(g, 3, "opt", buf.data(), buf.size(), &len) ||
            buf.substr(0, len) != shard_data(r, 3))
            return 2;
        return 0;
    });
    for (int x : rc)
        ck_assert_int_eq(x, 0);
    // Other world size: replicated state reads, the sharded one fails with one clear line.
    rc = run_ranks(2, [&](unsigned r) {
        idletime_ckpt_t *g = member(dir, r, 2, "resume2");
        uint64_t step = 0;
        if (idletime_ckpt_latest(g, &step, nullptr, 0) || step != 3)
            return 1;
        std::string buf(8192, '\0');
        size_t len = 0;
        if (idletime_ckpt_read(g, 3, "model", buf.data(), buf.size(), &len) ||
            buf.substr(0, len) != pattern(3, 5000))
            return 2;
        if (idletime_ckpt_read(g, 3, "opt", buf.data(), buf.size(), &len) != IDLETIME_CKPT_EWORLD)
            return 3;
        std::string msg = idletime_ckpt_last_error(g);
        if (msg.find("sharded over 3 ranks; this job has 2") == std::string::npos ||
            msg.find('\n') != std::string::npos)
            return 4;
        return 0;
    });
    for (int x : rc)
        ck_assert_int_eq(x, 0);
}
END_TEST

START_TEST(notice_on_one_rank_stops_all_at_same_step)
{
    const std::string dir = base + "/ck";
    auto rc = run_ranks(4, [&](unsigned r) {
        idletime_ckpt_t *h = member(dir, r, 4, "stop");
        if (idletime_ckpt_install_notice(h, SIGUSR2))
            return 100;
        for (uint64_t step = 1; step < 60; step++) {
            if (r == 2 && step == 17)
                raise(SIGUSR2);  // only rank 2 gets the notice
            int stop = 0;
            if (idletime_ckpt_agree(h, step, &stop))
                return 101;
            if (stop)
                return save_group_step(h, r, step) ? 102 : static_cast<int>(step);
        }
        return 103;
    });
    for (int x : rc)
        ck_assert_int_eq(x, 17);
    idletime_ckpt_t *h = open_ok(dir, opts(kJob, 1, nullptr, 2));
    ck_assert_uint_eq(latest_step(h), 17);
    idletime_ckpt_close(h);
}
END_TEST

START_TEST(dead_rank_times_out_with_its_number)
{
    const std::string dir = base + "/ck";
    auto rc = run_ranks(3, [&](unsigned r) {
        idletime_ckpt_t *h = member(dir, r, 3, "dead", 2);
        if (r == 1)
            _exit(0);  // gone without a word
        int stop = 0;
        int e = idletime_ckpt_agree(h, 1, &stop);
        std::string msg = idletime_ckpt_last_error(h);
        if (e != -ETIMEDOUT || msg.find("no answer from rank(s) 1 within 2 s") == std::string::npos)
            return 1;
        e = save_group_step(h, r, 2);  // and a save fails too, publishing nothing
        return e == -ETIMEDOUT ? 0 : 2;
    });
    ck_assert_int_eq(rc[0], 0);
    ck_assert_int_eq(rc[2], 0);
    idletime_ckpt_t *h = open_ok(dir, opts(kJob, 1, nullptr, 2));
    ck_assert_uint_eq(latest_step(h), UINT64_MAX);
    idletime_ckpt_close(h);
}
END_TEST

// Every step-* directory verifies and holds all 3 shards plus the replicated file.
uint64_t check_after_kill(const std::string &dir)
{
    LogSink log;
    idletime_ckpt_t *h = open_ok(dir, opts(kJob, 1, &log, 2));
    uint64_t l = latest_step(h);
    for (const auto &n : list_dir(dir)) {
        if (n.rfind("step-", 0) != 0)
            continue;
        size_t c = 0;
        uint64_t s = strtoull(n.c_str() + 5, nullptr, 10);
        ck_assert_msg(idletime_ckpt_file_count(h, s, &c) == 0 && c == 4, "partial %s: %s",
                      n.c_str(), idletime_ckpt_last_error(h));
    }
    ck_assert_msg(!log.contains("skipping"), "rejections after kill: %s", log.joined().c_str());
    idletime_ckpt_close(h);
    return l;
}

// async: every rank saves with commit_async(); rank 0 acks step-1 once commit_async(step)
// returned (it waited for step-1 to be durable), so latest() may be up to 2 ahead of the ack.
void sigkill_trials(const std::string &dir, int trials, bool async)
{
    std::mt19937 rng(1717);
    uint64_t newest = 0;
    int advanced = 0;
    uint32_t window_us = 30000;
    for (int t = 0; t < trials; t++) {
        int p[2];
        ck_assert_int_eq(pipe(p), 0);
        const std::string run = (async ? "atrial" : "trial") + std::to_string(t);
        std::vector<pid_t> pids;
        for (unsigned r = 0; r < 3; r++) {
            pid_t pid = fork();
            if (pid == 0) {
                close(p[0]);
                idletime_ckpt_t *h = member(dir, r, 3, run, 30);
                uint64_t step = latest_step(h), zero = 0;
                step = step == UINT64_MAX ? 1 : step + 1;
                if (write(p[1], &zero, sizeof zero) != sizeof zero)  // ready
                    _exit(3);
                for (;; step++) {
                    if (save_group_step(h, r, step, async))
                        _exit(4);
                    uint64_t done = async ? step - 1 : step;
                    if (r == 0 && done && write(p[1], &done, sizeof done) != sizeof done)
                        _exit(5);
                }
            }
            pids.push_back(pid);
        }
        close(p[1]);
        uint64_t v = 0, acked = 0;
        for (int ready = 0; ready < 3;) {  // every rank opened, joined and read latest()
            ck_assert_int_eq(read(p[0], &v, sizeof v), (ssize_t)sizeof v);
            if (v == 0)
                ready++;
            else
                acked = v;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % window_us));
        unsigned victim = rng() % 3;
        kill(pids[victim], SIGKILL);  // one rank dies anywhere in its save ...
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 5000));
        for (pid_t pid : pids)  // ... the others while they wait for it (or publish)
            kill(pid, SIGKILL);
        for (pid_t pid : pids)
            waitpid(pid, nullptr, 0);
        while (read(p[0], &v, sizeof v) == (ssize_t)sizeof v)
            acked = v ? v : acked;
        close(p[0]);
        uint64_t l = check_after_kill(dir);
        if (acked)
            ck_assert_msg(l != UINT64_MAX && l >= acked && l <= acked + (async ? 2 : 1),
                          "trial %d: latest %llu, rank 0 acked %llu", t, (unsigned long long)l,
                          (unsigned long long)acked);
        if (l != UINT64_MAX && l > newest) {
            newest = l;
            advanced++;
        } else {  // no new step: the kill came too early on this (loaded) machine; widen
            window_us = std::min<uint32_t>(window_us * 3 / 2, 300000);
        }
    }
    ck_assert_msg(advanced > 10, "too few trials saved a step: %d", advanced);
    fprintf(stderr, "idletime/ckpt test: %d group %s SIGKILL trials, newest step %llu\n", trials,
            async ? "async" : "sync",
            (unsigned long long)newest);
}

START_TEST(sigkill_one_rank_never_publishes_partial_step)
{
    sigkill_trials(base + "/crash", 100, false);
}
END_TEST

START_TEST(sigkill_during_async_saves_keeps_previous_step)
{
    sigkill_trials(base + "/crash-async", 100, true);
}
END_TEST

}  // namespace

int main()
{
    Suite *s = suite_create("ckpt-group");
    TCase *t = tcase_create("group");
    tcase_add_unchecked_fixture(t, start_daemons, stop_daemons);
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, commit_then_resume_per_rank);
    tcase_add_test(t, notice_on_one_rank_stops_all_at_same_step);
    tcase_add_test(t, dead_rank_times_out_with_its_number);
    tcase_add_test(t, sigkill_one_rank_never_publishes_partial_step);
    tcase_add_test(t, sigkill_during_async_saves_keeps_previous_step);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
