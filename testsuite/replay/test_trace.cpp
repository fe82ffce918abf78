// Trace reader and stream CSV: real fixture files, good and bad.
#include "replay/stream.hpp"
#include "replay/trace.hpp"

#include <fstream>
#include <sstream>
// check.h defines fail(): include it after the standard headers.
#include "suites.hpp"
#include "../check_string.hpp"

using namespace idletime::replay;

namespace {

std::vector<TraceRecord> read_fixture(const std::string &file)
{
    std::string path = std::string(REPLAY_TEST_DATA) + "/" + file;
    std::ifstream in(path);
    ck_assert_msg(in.good(), "cannot open %s", path.c_str());
    return make_trace_reader("openb")->read(in, file);
}

struct RecCase {
    const char *name;
    int num_gpu, gpu_milli;
    size_t models;
    TraceQos qos;
    int64_t creation, scheduled, deletion;
};

const RecCase kRecs[] = {
    {"p-ls-a", 1, 1000, 0, TraceQos::LatencySensitive, 0, 0, 1000},
    {"p-be-b", 2, 1000, 2, TraceQos::BestEffort, 100, 100, 400},
    {"p-pend", 1, 1000, 0, TraceQos::LatencySensitive, 200, -1, -1},
    {"p-share", 1, 460, 1, TraceQos::Burstable, 300, 310, 900},
    {"p-big", 8, 1000, 1, TraceQos::Guaranteed, 500, 520, 700},
};

}  // namespace

START_TEST(test_read_records)
{
    auto recs = read_fixture("openb_small.csv");
    ck_assert_uint_eq(recs.size(), 8);
    const RecCase &c = kRecs[_i];
    const TraceRecord *r = nullptr;
    for (const auto &x : recs)
        if (x.name == c.name)
            r = &x;
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->num_gpu, c.num_gpu);
    ck_assert_int_eq(r->gpu_milli, c.gpu_milli);
    ck_assert_uint_eq(r->models.size(), c.models);
    ck_assert_int_eq(int(r->qos), int(c.qos));
    ck_assert_int_eq(r->creation_s, c.creation);
    ck_assert_int_eq(r->scheduled_s, c.scheduled);
    ck_assert_int_eq(r->deletion_s, c.deletion);
}
END_TEST

struct BadCase {
    const char *text;    // file content, or a fixture name when it ends in .csv
    const char *expect;  // substring of the error
};

const BadCase kBad[] = {
    {"openb_badqos.csv", "openb_badqos.csv:3: qos 'XX' unknown, allowed: LS, BE"},
    {"openb_nocol.csv", "column 'gpu_spec' missing"},
    {"", "empty file"},
    {"name,num_gpu,gpu_milli,gpu_spec,qos,creation_time,deletion_time,scheduled_time\n"
     "a,1,1000,,LS,0,10\n", "t:2: 7 fields, header has 8"},
    {"name,num_gpu,gpu_milli,gpu_spec,qos,creation_time,deletion_time,scheduled_time\n"
     "a,one,1000,,LS,0,10,0\n", "'one' is not a non-negative integer"},
    {"name,num_gpu,gpu_milli,gpu_spec,qos,creation_time,deletion_time,scheduled_time\n"
     ",1,1000,,LS,0,10,0\n", "empty pod name"},
};

START_TEST(test_read_bad)
{
    const BadCase &c = kBad[_i];
    std::string text = c.text;
    std::string msg;
    try {
        if (text.size() > 4 && text.ends_with(".csv"))
            read_fixture(text);
        else {
            std::istringstream in(text);
            make_trace_reader("openb")->read(in, "t");
        }
    } catch (const TraceError &e) {
        msg = e.what();
    }
    ck_assert_msg(msg.find(c.expect) != std::string::npos, "got '%s', want '%s'", msg.c_str(),
                  c.expect);
}
END_TEST

START_TEST(test_reader_kinds)
{
    ck_assert_ptr_nonnull(make_trace_reader("openb").get());
    ck_assert_cxx_str_eq(std::string(make_trace_reader("openb")->kind()), "openb");
    ck_assert_ptr_null(make_trace_reader("philly").get());
}
END_TEST

START_TEST(test_stream_roundtrip)
{
    std::vector<ReplayJob> jobs{{"a", 0, 12.5, 2, JobClass::Guaranteed, "a100-t0", "a100", "a100"},
                                {"b", 3.25, 4, 8, JobClass::Idle, "h100-t1", "h100", "h100", 2}};
    std::stringstream ss;
    write_jobs_csv(ss, jobs);
    auto back = read_jobs_csv(ss, "s");
    ck_assert_uint_eq(back.size(), 2);
    ck_assert_cxx_str_eq(back[1].id, "b");
    ck_assert_double_eq_tol(back[1].submit_s, 3.25, 1e-9);
    ck_assert_int_eq(int(back[1].cls), int(JobClass::Idle));
    ck_assert_cxx_str_eq(back[0].quota, "a100-t0");
    ck_assert_int_eq(back[0].nodes, 1);
    ck_assert_int_eq(back[1].nodes, 2);
    ck_assert_int_eq(back[1].gpus, 8);
    std::vector<Quota> qs{{"a100-t0", "a100", 9, 7.5}};
    std::stringstream qq;
    write_quotas_csv(qq, qs);
    auto qb = read_quotas_csv(qq, "q");
    ck_assert_uint_eq(qb.size(), 1);
    ck_assert_int_eq(qb[0].gpus, 9);
}
END_TEST

START_TEST(test_stream_bad)
{
    std::istringstream in("id,submit_s,duration_s,gpus,class,quota,pool,spec,nodes\na,0,1,1,best,q,p,s,1\n");
    std::string msg;
    try {
        read_jobs_csv(in, "s");
    } catch (const TraceError &e) {
        msg = e.what();
    }
    ck_assert_cxx_str_eq(msg, "s:2: class 'best' unknown, allowed: guaranteed, idle");
}
END_TEST

Suite *trace_suite()
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, test_read_records, 0, sizeof kRecs / sizeof kRecs[0]);
    tcase_add_loop_test(tc, test_read_bad, 0, sizeof kBad / sizeof kBad[0]);
    tcase_add_test(tc, test_reader_kinds);
    tcase_add_test(tc, test_stream_roundtrip);
    tcase_add_test(tc, test_stream_bad);
    suite_add_tcase(s, tc);
    return s;
}
