// Victim order and the checkpoint channel: tables of (candidates, need, now) -> expected order.
#include <climits>
#include <vector>

#include "sched_fixture.hpp"

using idletime::sched::IdMap;
using idletime::sched::JobView;
using idletime::sched::VictimBatch;

namespace {

const int64_t NOW = 1700000000;

struct CkptCase {
    const char *name, *comment;
    int64_t start, want;
};

// No valid claim (none, garbage, before the start, in the future) reads as "checkpointed now":
// nothing to lose, the least protected position (doc/design/scheduling-plugins.md).
const CkptCase ckpt_cases[] = {
    {"no comment", "", NOW - 100, NOW},
    {"token alone", "idletime:ckpt=1699999990", NOW - 100, NOW - 10},
    {"other text kept around", "owner note; idletime:ckpt=1699999950 ft:restarts=2", NOW - 100, NOW - 50},
    {"claim at the start counts", "idletime:ckpt=1699999900", NOW - 100, NOW - 100},
    {"claim at now counts", "idletime:ckpt=1700000000", NOW - 100, NOW},
    {"claim before start is invalid", "idletime:ckpt=1600000000", NOW - 100, NOW},
    {"claim one second before start is invalid", "idletime:ckpt=1699999899", NOW - 100, NOW},
    {"claim in the future is invalid", "idletime:ckpt=1800000000", NOW - 100, NOW},
    {"claim one second in the future is invalid", "idletime:ckpt=1700000001", NOW - 100, NOW},
    {"garbage value ignored", "idletime:ckpt=12x", NOW - 100, NOW},
    {"negative ignored", "idletime:ckpt=-5", NOW - 100, NOW},
    {"plus sign ignored", "idletime:ckpt=+1699999990", NOW - 100, NOW},
    {"overflowing value ignored", "idletime:ckpt=99999999999999999999999", NOW - 100, NOW},
    {"token must start a word", "xidletime:ckpt=1699999990", NOW - 100, NOW},
    {"empty value", "idletime:ckpt=", NOW - 100, NOW},
    {"user's own text only", "my experiment 42", NOW - 100, NOW},
    {"first token counts, later one ignored", "idletime:ckpt=1800000000 idletime:ckpt=1699999990", NOW - 100, NOW},
};

START_TEST(ckpt_parse) {
    const CkptCase &c = ckpt_cases[_i];
    ck_assert_msg(idletime::sched::last_checkpoint(c.comment, c.start, NOW) == c.want, "%s", c.name);
}
END_TEST

struct WriteCase {
    const char *before;
    int64_t t;
    const char *after;
};

const WriteCase write_cases[] = {
    {"", 5, "idletime:ckpt=5"},
    {"hello", 5, "hello idletime:ckpt=5"},
    {"hello ", 5, "hello idletime:ckpt=5"},
    {"a idletime:ckpt=1 b", 7, "a idletime:ckpt=7 b"},
    {"idletime:ckpt=123;rest", 9, "idletime:ckpt=9;rest"},
};

START_TEST(ckpt_write) {
    const WriteCase &c = write_cases[_i];
    const std::string got = idletime::sched::with_checkpoint(c.before, c.t);
    ck_assert_str_eq(got.c_str(), c.after);
    // round trip through the reader
    ck_assert_int_eq(idletime::sched::last_checkpoint(c.after, 0, 1000), c.t);
}
END_TEST

struct Cand {
    uint32_t id, gpus;
    int64_t start_ago;
    int64_t ckpt_ago;  // -1 = none
    bool notified;
    const char *comment = nullptr;  // set: the Comment as is (ckpt_ago unused)
};

struct OrderCase {
    const char *name;
    uint32_t need;
    std::vector<Cand> cands;
    std::vector<uint32_t> want;  // ids, first victim first
};

const std::vector<OrderCase> &order_cases() {
    static const std::vector<OrderCase> cases = {
        {"freshest checkpoint first", 4,
         {{1, 4, 3600, 1200, false}, {2, 4, 3600, 10, false}, {3, 4, 3600, 300, false}},
         {2, 3, 1}},
        {"loss counts GPUs", 1, {{1, 8, 3600, 100, false}, {2, 1, 3600, 500, false}}, {2, 1}},
        {"no checkpoint: no loss, goes first", 1, {{1, 1, 50, -1, false}, {2, 1, 3600, 100, false}}, {1, 2}},
        // Issue 11 item 6: withholding or forging the claim never protects a job.
        {"withheld (old job) before a fresh publisher", 1,
         {{1, 1, 7200, -1, false}, {2, 1, 3600, 5, false}}, {1, 2}},
        {"withheld 8-GPU job before a 1-GPU publisher", 1,
         {{1, 8, 7200, -1, false}, {2, 1, 3600, 1, false}}, {1, 2}},
        {"Comment overwritten with own text", 1,
         {{1, 1, 7200, 0, false, "do not preempt me"}, {2, 1, 3600, 60, false}}, {1, 2}},
        {"claim before the start", 1,
         {{1, 1, 600, 0, false, "idletime:ckpt=1600000000"}, {2, 1, 3600, 60, false}}, {1, 2}},
        {"claim in the future", 1,
         {{1, 1, 600, 0, false, "idletime:ckpt=1800000000"}, {2, 1, 3600, 60, false}}, {1, 2}},
        {"garbled claim", 1,
         {{1, 1, 600, 0, false, "idletime:ckpt=soon"}, {2, 1, 3600, 60, false}}, {1, 2}},
        {"equal loss: fewest GPUs beyond need", 4,
         {{1, 8, 3600, 60, false}, {2, 4, 3600, 120, false}}, {2, 1}},
        {"equal loss, no excess, same start: newer job id", 4,
         {{1, 2, 3600, 60, false}, {2, 4, 3600, 30, false}}, {2, 1}},
        {"equal loss and excess: youngest", 1,
         {{1, 1, 1000, 100, false}, {2, 1, 500, 100, false}}, {2, 1}},
        {"already notified first (sunk)", 1,
         {{1, 1, 3600, 10, false}, {2, 8, 3600, 3000, true}}, {2, 1}},
        {"1,2,4,8 same age: small first", 4,
         {{11, 8, 900, 600, false}, {12, 4, 900, 600, false}, {13, 2, 900, 600, false}, {14, 1, 900, 600, false}},
         {14, 13, 12, 11}},
    };
    return cases;
}

JobView cand_view(const Cand &c, std::vector<std::string> &store) {
    store.push_back(c.comment ? c.comment : c.ckpt_ago < 0 ? "" : "idletime:ckpt=" + std::to_string(NOW - c.ckpt_ago));
    JobView v = fx::job(c.id, "idle-a100-east", c.gpus, NOW - c.start_ago);
    v.comment = store.back();
    v.preempt_time = c.notified ? NOW - 1 : 0;
    return v;
}

START_TEST(order) {
    const OrderCase &c = order_cases()[_i];
    VictimBatch b;
    std::vector<std::string> store;
    store.reserve(c.cands.size());
    for (const Cand &x : c.cands) b.note(99, c.need, cand_view(x, store), NOW);
    ck_assert_uint_eq(b.size(), c.cands.size());
    for (size_t i = 0; i < c.want.size(); ++i)
        ck_assert_msg(b.rank(c.want[i]) == i, "%s: job %u rank %u, want %zu", c.name, c.want[i], b.rank(c.want[i]), i);
    ck_assert_uint_eq(b.rank(12345), UINT32_MAX);
}
END_TEST

START_TEST(batch_boundaries) {
    VictimBatch b;
    std::vector<std::string> store;
    store.reserve(16);
    const Cand a{1, 1, 100, -1, false}, c{2, 1, 50, -1, false};
    b.note(7, 1, cand_view(a, store), NOW);
    b.note(7, 1, cand_view(c, store), NOW);
    ck_assert_uint_eq(b.size(), 2);
    ck_assert_uint_eq(b.rank(2), 0);
    // after ranks were handed out, the next note starts a new search
    b.note(7, 1, cand_view(a, store), NOW);
    ck_assert_uint_eq(b.size(), 1);
    // a repeated job (single-candidate search never ranked) also starts a new one
    b.note(7, 1, cand_view(a, store), NOW);
    ck_assert_uint_eq(b.size(), 1);
    // another preemptor starts a new one
    b.note(7, 1, cand_view(c, store), NOW);
    ck_assert_uint_eq(b.size(), 2);
    b.note(8, 1, cand_view(c, store), NOW);
    ck_assert_uint_eq(b.size(), 1);
    ck_assert_uint_eq(b.rank(1), UINT32_MAX);
}
END_TEST

// IdMap (the batch's job ids and ranks): ids that collide in the table, overwrite, growth past
// many sizes, and clear() forgetting everything without freeing the table.
START_TEST(id_map) {
    IdMap m;
    ck_assert(!m.contains(0) && m.find(7) == nullptr);
    for (uint32_t round = 0; round < 3; ++round) {
        const uint32_t n = 5000 + round * 1000;
        for (uint32_t i = 0; i < n; ++i) m.put(i * 64 + round, i);  // multiples of 64: same low bits
        ck_assert_uint_eq(m.size(), n);
        for (uint32_t i = 0; i < n; ++i) {
            const uint32_t *v = m.find(i * 64 + round);
            ck_assert_msg(v && *v == i, "round %u: id %u lost", round, i * 64 + round);
        }
        ck_assert(!m.contains(n * 64 + round) && !m.contains(1 + round + 64 * 3));
        m.put(round, 99);  // overwrite: same size
        ck_assert_uint_eq(m.size(), n);
        ck_assert_uint_eq(*m.find(round), 99);
        m.clear();
        ck_assert_uint_eq(m.size(), 0);
        ck_assert(!m.contains(round) && !m.contains(64 + round));
    }
    m.put(UINT32_MAX, 1);
    m.put(0, 2);
    ck_assert(*m.find(UINT32_MAX) == 1 && *m.find(0) == 2 && m.size() == 2);
}
END_TEST

// The generation stamp wraps after 2^32 clears: no id of an older generation may come back.
START_TEST(id_map_generation_wrap) {
    IdMap m(UINT32_MAX - 1);
    for (uint32_t i = 1; i <= 100; ++i) m.put(i, i);
    m.clear();  // generation UINT32_MAX
    for (uint32_t i = 101; i <= 200; ++i) m.put(i, i);
    ck_assert(!m.contains(1) && m.contains(150));
    m.clear();  // wraps to 0: every slot forgotten, generation 1
    ck_assert_uint_eq(m.size(), 0);
    for (uint32_t i = 1; i <= 200; ++i) ck_assert_msg(!m.contains(i), "id %u came back after the wrap", i);
    m.put(7, 70);
    ck_assert(*m.find(7) == 70 && m.size() == 1);
}
END_TEST

START_TEST(large_batch_sorted_once) {
    VictimBatch b;
    std::vector<std::string> store;
    const uint32_t n = 20000;
    store.reserve(n);
    for (uint32_t i = 1; i <= n; ++i) b.note(1, 1, cand_view({i, 1 + i % 8, 4000, int64_t(i % 3000), false}, store), NOW);
    ck_assert_uint_eq(b.size(), n);
    uint32_t seen = 0;
    std::vector<bool> used(n, false);
    for (uint32_t i = 1; i <= n; ++i) {
        uint32_t r = b.rank(i);
        ck_assert(r < n && !used[r]);
        used[r] = true;
        ++seen;
    }
    ck_assert_uint_eq(seen, n);
    // jobs 3000, 6000, ..., 18000 checkpointed right now (loss 0, 1 GPU): ranks 0-5, newest first
    ck_assert_uint_eq(b.rank(18000), 0);
    ck_assert_uint_eq(b.rank(3000), 5);
}
END_TEST

}  // namespace

Suite *victims_suite() {
    Suite *s = suite_create("sched-victims");
    TCase *t = tcase_create("order");
    tcase_add_loop_test(t, ckpt_parse, 0, sizeof(ckpt_cases) / sizeof(ckpt_cases[0]));
    tcase_add_loop_test(t, ckpt_write, 0, sizeof(write_cases) / sizeof(write_cases[0]));
    tcase_add_loop_test(t, order, 0, int(order_cases().size()));
    tcase_add_test(t, batch_boundaries);
    tcase_add_test(t, large_batch_sorted_once);
    tcase_add_test(t, id_map);
    tcase_add_test(t, id_map_generation_wrap);
    suite_add_tcase(s, t);
    return s;
}
