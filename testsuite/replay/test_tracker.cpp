// Poll sequences and worker logs -> runs (what the driver records on the live cluster).
#include "replay/tracker.hpp"

#include <sstream>
// check.h defines fail(): include it after the standard headers.
#include "suites.hpp"

using namespace idletime::replay;

namespace {

struct Poll {
    double t;
    PollState state;
    uint32_t restarts;
    double start, end, preempt;
    const char *partition;
    double reply = 0;  // when the poll's reply was in hand (0: not given)
};

struct ExpectRun {
    double start, end, notice;
    bool preempted;
    double done, kept;
};

struct TrackCase {
    const char *name;
    std::vector<Poll> polls;
    const char *log;  // worker log text
    bool ckpt;
    bool completed;
    std::vector<ExpectRun> runs;  // relative to t0 = 100
};

constexpr auto P = PollState::Pending, R = PollState::Running, G = PollState::Completing,
               C = PollState::Completed, F = PollState::Failed;

const TrackCase kCases[] = {
    {"grace expiry, rerun from zero (B)",
     {{100, P, 0, 0, 0, 0, ""}, {101, R, 0, 101, 0, 0, "idle-a100"}, {110, R, 0, 101, 0, 110, "idle-a100"},
      {150, G, 0, 101, 150, 110, "idle-a100"}, {152, P, 1, 0, 150, 0, "idle-a100"},
      {280, R, 1, 280, 0, 0, "idle-a100"}, {291, C, 1, 280, 290, 0, "idle-a100"}},
     "", false, true, {{1, 50, 10, true, 49, 0}, {180, 190, -1, false, 10, 0}}},
    {"fast release between two polls, resume from the checkpoint (C)",
     {{101, R, 0, 101, 0, 0, "idle-h100"}, {102.5, P, 1, 0, 102, 0, "idle-h100"},
      {225.5, R, 1, 225, 0, 0, "quota-h100-t0"}, {231, C, 1, 225, 230, 0, "quota-h100-t0"}},
     "101.2 start restart=0 progress=0.000 saved=0.000\n"
     "101.8 notice restart=0 progress=0.600 saved=0.000\n"
     "101.85 saved restart=0 progress=0.600 saved=0.600\n"
     "101.9 release restart=0 progress=0.600 saved=0.600\n"
     "225.1 start restart=1 progress=0.600 saved=0.600\n"
     "230 done restart=1 progress=5.600 saved=5.600\n",
     true, true, {{1.2, 2, 1.8, true, 0.6, 0.6}, {125.1, 130, -1, false, 5, 5}}},
    {"a run polling never saw, known from the worker log",
     {{101, P, 0, 0, 0, 0, ""}, {105, P, 1, 0, 104, 0, ""}, {300, R, 1, 300, 0, 0, "idle-a100"},
      {310, C, 1, 300, 309, 0, "idle-a100"}},
     "102 start restart=0 progress=0 saved=0\n104 term restart=0 progress=2 saved=0\n"
     "300.2 start restart=1 progress=0 saved=0\n309 done restart=1 progress=8.8 saved=0\n",
     false, true, {{2, 4, -1, true, 2, 0}, {200.2, 209, -1, false, 8.8, 0}}},
    {"an end that was a requeue after all (state seen before the flag)",
     {{101, R, 0, 101, 0, 0, "idle-a100"}, {103, F, 0, 101, 103, 0, "idle-a100"},
      {104, P, 1, 0, 103, 0, "idle-a100"}, {220, R, 1, 220, 0, 0, "idle-a100"},
      {230, C, 1, 220, 229, 0, "idle-a100"}},
     "", false, true, {{1, 3, -1, true, 2, 0}, {120, 129, -1, false, 9, 0}}},
    {"work done inside the grace time, Slurm says TIMEOUT: completed",
     {{101, R, 0, 101, 0, 0, "idle-a100"}, {120, R, 0, 101, 0, 120, "idle-a100"},
      {155, F, 0, 101, 154, 120, "idle-a100"}},
     "101.3 start restart=0 progress=0 saved=0\n154 done restart=0 progress=52.7 saved=0\n",
     false, true, {{1.3, 54, 20, false, 52.7, 0}}},
    {"burst on a loaded node: the poll that saw it running bounds the start (worker logs 2.9 s late)",
     {{100.2, P, 0, 0, 0, 0, "quota-a100-t0", 100.25}, {100.7, R, 0, 100, 0, 0, "quota-a100-t0", 100.75},
      {110, C, 0, 100, 109, 0, "quota-a100-t0", 110.05}},
     "103.6 start restart=0 progress=0 saved=0\n109.5 done restart=0 progress=5.9 saved=0\n",
     false, true, {{0.75, 9.5, -1, false, 5.9, 0}}},
    {"failed job: not completed",
     {{101, R, 0, 101, 0, 0, "quota-a100-t0"}, {120, F, 0, 101, 119, 0, "quota-a100-t0"}},
     "", false, false, {{1, 19, -1, false, 18, 0}}},
};

}  // namespace

START_TEST(test_tracking)
{
    const TrackCase &c = kCases[_i];
    RunTracker tr;
    for (const auto &p : c.polls)
        tr.observe({p.state, p.restarts, p.start, p.end, p.preempt, p.partition, p.reply}, p.t);
    std::istringstream log(c.log);
    ReplayJob job{"j", 0, 10, 2, JobClass::Idle, "a100-t0", "a100", "a100"};
    JobRecord rec = build_record(job, true, tr, parse_worker_log(log), c.ckpt, 100);
    ck_assert_msg(rec.completed == c.completed, "%s: completed", c.name);
    ck_assert_msg(rec.runs.size() == c.runs.size(), "%s: %zu runs", c.name, rec.runs.size());
    for (size_t i = 0; i < c.runs.size(); i++) {
        const JobRun &got = rec.runs[i];
        const ExpectRun &want = c.runs[i];
        ck_assert_msg(std::abs(got.start_s - want.start) < 1e-6 && std::abs(got.end_s - want.end) < 1e-6,
                      "%s run %zu: %f..%f", c.name, i, got.start_s, got.end_s);
        ck_assert_msg(std::abs(got.notice_s - want.notice) < 1e-6, "%s run %zu notice %f", c.name, i, got.notice_s);
        ck_assert_msg(got.preempted == want.preempted, "%s run %zu preempted", c.name, i);
        ck_assert_msg(std::abs(got.work_done_s - want.done) < 1e-6 && std::abs(got.work_kept_s - want.kept) < 1e-6,
                      "%s run %zu work %f kept %f", c.name, i, got.work_done_s, got.work_kept_s);
    }
}
END_TEST

START_TEST(test_in_quota_from_partition)
{
    RunTracker tr;
    tr.observe({PollState::Running, 0, 5, 0, 0, "quota-a100-t1"}, 5);
    tr.observe({PollState::Completed, 0, 5, 9, 0, "quota-a100-t1"}, 9.4);
    std::istringstream none("");
    JobRecord rec = build_record({"g", 0, 4, 1, JobClass::Guaranteed, "a100-t1", "a100", "a100"}, true,
                                 tr, parse_worker_log(none), false, 0);
    ck_assert_uint_eq(rec.runs.size(), 1);
    ck_assert(rec.runs[0].in_quota);
    ck_assert(!rec.runs[0].preempted);
    ck_assert(rec.completed);
    ck_assert(tr.ended());
}
END_TEST

Suite *tracker_suite()
{
    Suite *s = suite_create("tracker");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, test_tracking, 0, sizeof kCases / sizeof kCases[0]);
    tcase_add_test(tc, test_in_quota_from_partition);
    suite_add_tcase(s, tc);
    return s;
}
