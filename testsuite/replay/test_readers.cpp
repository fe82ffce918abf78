// sacct --parsable2 and Standard Workload Format readers on hand-written fixtures
// (data/sacct_*.txt, data/swf_small.swf): records, skipped steps, bad rows by reason.
#include "replay/trace.hpp"

#include <fstream>
#include <sstream>
// check.h defines fail(): include it after the standard headers.
#include "suites.hpp"
#include "../check_string.hpp"

using namespace idletime::replay;

namespace {

std::vector<TraceRecord> read_file(const char *kind, const std::string &file, ReadStats &st, int ppg = 1)
{
    std::string path = std::string(REPLAY_TEST_DATA) + "/" + file;
    std::ifstream in(path);
    ck_assert_msg(in.good(), "cannot open %s", path.c_str());
    return make_trace_reader(kind, ppg)->read(in, file, st);
}

const TraceRecord *by_name(const std::vector<TraceRecord> &rs, const std::string &name)
{
    for (const auto &r : rs)
        if (r.name == name)
            return &r;
    return nullptr;
}

struct SacctCase {
    const char *id, *account, *qos;
    int gpus, nodes;
    size_t models;
    int64_t creation, scheduled, deletion;
};

// Trace second 0 = 2026-11-30T10:00:00, the earliest Submit of a good row.
const SacctCase kSacct[] = {
    {"100", "physics", "normal", 2, 1, 1, 0, 5, 605},
    {"101", "Chem", "scavenger", 8, 2, 1, 60, 120, 3720},   // CANCELLED by 0, two nodes
    {"102", "physics", "normal", 1, 1, 0, 180, -1, -1},     // PENDING: ReqTRES, never started
    {"103", "Chem", "normal", 4, 1, 0, 240, 270, -1},       // RUNNING: no end
    {"104", "bio", "normal", 0, 1, 0, 300, 300, 360},       // CPU only
    {"111_3", "physics", "normal", 1, 1, 0, 660, 660, 1860},  // array task
    {"112", "bio", "normal", 2, 1, 0, 720, 845, 1445},      // sacct -D: the later run counts
};

}  // namespace

START_TEST(test_sacct_records)
{
    ReadStats st;
    auto recs = read_file("sacct", "sacct_small.txt", st);
    ck_assert_uint_eq(recs.size(), 7);
    const SacctCase &c = kSacct[_i];
    const TraceRecord *r = by_name(recs, c.id);
    ck_assert_msg(r != nullptr, "job %s not read", c.id);
    ck_assert_cxx_str_eq(r->account, c.account);
    ck_assert_cxx_str_eq(r->qos_name, c.qos);
    ck_assert_int_eq(r->num_gpu, c.gpus);
    ck_assert_int_eq(r->nodes, c.nodes);
    ck_assert_uint_eq(r->models.size(), c.models);
    ck_assert_int_eq(r->creation_s, c.creation);
    ck_assert_int_eq(r->scheduled_s, c.scheduled);
    ck_assert_int_eq(r->deletion_s, c.deletion);
}
END_TEST

struct ReasonCase {
    const char *reason;
    const char *first;  // substring of the first row's message
};

const ReasonCase kSacctBad[] = {
    {"bad time", "sacct_small.txt:10: Submit '2026-11-30 10:06:00' is not a date YYYY-MM-DDTHH:MM:SS from 2000 to 2099"},
    {"unknown State", "sacct_small.txt:11: State 'WEIRD' unknown"},
    {"field count", "sacct_small.txt:12: 8 fields, header has 12"},
    {"End before Start", "job 108 ends before it starts"},
    {"empty Account", "job 109 has no Account"},
    {"bad TRES", "TRES 'gres/gpu=x' is not a list"},
    {"bad NNodes", "NNodes '0' is not a count from 1 to 1000000"},
};

START_TEST(test_sacct_stats)
{
    ReadStats st;
    auto recs = read_file("sacct", "sacct_small.txt", st);
    ck_assert_int_eq(st.rows, 18);
    ck_assert_int_eq(st.steps_skipped, 3);
    ck_assert_int_eq(st.duplicates_skipped, 1);
    ck_assert_int_eq(st.bad_total(), 7);
    ck_assert_uint_eq(st.bad.size(), 7);
    const ReasonCase &c = kSacctBad[_i];
    ck_assert_int_eq(st.bad.count(c.reason), 1);
    ck_assert_int_eq(st.bad.at(c.reason), 1);
    const std::string &first = st.first_bad.at(c.reason);
    ck_assert_msg(first.find(c.first) != std::string::npos, "got '%s'", first.c_str());
    // Every row is accounted for: records + steps + duplicates + bad.
    ck_assert_int_eq(int(recs.size()) + st.steps_skipped + st.duplicates_skipped + st.bad_total(), st.rows);
}
END_TEST

// Columns are found by name: another order, ReqTRES only, an extra column, typed GPUs only.
START_TEST(test_sacct_header_order)
{
    ReadStats st;
    auto recs = read_file("sacct", "sacct_reqtres.txt", st);
    ck_assert_uint_eq(recs.size(), 2);
    ck_assert_int_eq(st.bad_total(), 0);
    ck_assert_cxx_str_eq(recs[1].account, "team-b");
    ck_assert_int_eq(recs[1].num_gpu, 8);  // gres/gpu:a100=4 + gres/gpu:h100=4
    ck_assert_uint_eq(recs[1].models.size(), 2);
    ck_assert_int_eq(recs[1].nodes, 2);
    ck_assert_int_eq(recs[1].creation_s, 1800);
    ck_assert_cxx_str_eq(recs[0].user, "");
}
END_TEST

const ReasonCase kHeaderBad[] = {
    {"sacct_notres.txt", "sacct_notres.txt:1: column 'AllocTRES' or 'ReqTRES' missing"},
    {"JobID|Submit|Start|End|State|AllocTRES\n", "t:1: column 'Account' missing"},
    {"", "t: empty file, expected a sacct --parsable2 header line"},
};

START_TEST(test_sacct_header_bad)
{
    const ReasonCase &c = kHeaderBad[_i];
    std::string msg, text = c.reason;
    try {
        ReadStats st;
        if (text.ends_with(".txt"))
            read_file("sacct", text, st);
        else {
            std::istringstream in(text);
            make_trace_reader("sacct")->read(in, "t", st);
        }
    } catch (const TraceError &e) {
        msg = e.what();
    }
    ck_assert_msg(msg.find(c.first) != std::string::npos, "got '%s', want '%s'", msg.c_str(), c.first);
}
END_TEST

// The two-argument read() refuses a file with bad rows, naming the first.
START_TEST(test_sacct_strict)
{
    std::ifstream in(std::string(REPLAY_TEST_DATA) + "/sacct_small.txt");
    std::string msg;
    try {
        make_trace_reader("sacct")->read(in, "s");
    } catch (const TraceError &e) {
        msg = e.what();
    }
    ck_assert_msg(msg.find("(7 bad rows)") != std::string::npos, "got '%s'", msg.c_str());
}
END_TEST

START_TEST(test_swf_records)
{
    ReadStats st;
    auto recs = read_file("swf", "swf_small.swf", st);
    ck_assert_int_eq(st.rows, 10);
    ck_assert_uint_eq(recs.size(), 6);  // 1 2 3 4 5 10
    ck_assert_int_eq(st.bad_total(), 4);
    ck_assert_int_eq(st.bad.at("not a number"), 1);
    ck_assert_int_eq(st.bad.at("field count"), 1);
    ck_assert_int_eq(st.bad.at("no processor count"), 1);
    ck_assert_int_eq(st.bad.at("bad status"), 1);
    ck_assert_int_eq(st.start_assumed, 1);
    const TraceRecord *r1 = by_name(recs, "swf-1");
    ck_assert_int_eq(r1->num_gpu, 4);
    ck_assert_int_eq(r1->scheduled_s, 10);
    ck_assert_int_eq(r1->deletion_s, 110);
    ck_assert_cxx_str_eq(r1->account, "g1");
    ck_assert_cxx_str_eq(r1->user, "u1");
    ck_assert_cxx_str_eq(r1->qos_name, "q1");
    ck_assert_cxx_str_eq(r1->partition, "p1");
    const TraceRecord *r2 = by_name(recs, "swf-2");  // wait -1: start = submit
    ck_assert_int_eq(r2->scheduled_s, 5);
    ck_assert_int_eq(r2->deletion_s, 55);
    ck_assert_int_eq(by_name(recs, "swf-3")->scheduled_s, -1);  // run time -1: never ran
    ck_assert_int_eq(by_name(recs, "swf-5")->num_gpu, 2);       // requested processors
    const TraceRecord *r10 = by_name(recs, "swf-10");           // "60.0", "10.00"
    ck_assert_int_eq(r10->creation_s, 60);
    ck_assert_int_eq(r10->deletion_s, 70);
    ck_assert_cxx_str_eq(r10->account, "g3");
}
END_TEST

START_TEST(test_swf_procs_per_gpu)
{
    ReadStats st;
    auto recs = read_file("swf", "swf_small.swf", st, 4);
    ck_assert_int_eq(by_name(recs, "swf-4")->num_gpu, 4);  // 16 processors / 4
    ck_assert_int_eq(by_name(recs, "swf-2")->num_gpu, 1);  // 2 processors round up to 1 GPU
}
END_TEST

// What a reader throws for text, or "" when it reads it.
std::string read_error(const char *kind, const std::string &text, ReadStats &st)
{
    std::istringstream in(text);
    try {
        make_trace_reader(kind, 1)->read(in, "t", st);
    } catch (const TraceError &e) {
        return e.what();
    }
    return "";
}

const char *const kSacctHead = "JobID|Account|Submit|Start|End|State|AllocTRES\n";

// A line longer than 64 KiB (no newline in /dev/zero) ends the read, whatever the kind; a line
// just under the limit is read.
START_TEST(test_line_limit)
{
    static const char *const kinds[] = {"openb", "sacct", "swf"};
    ReadStats st;
    std::string endless(70 * 1024, '\0');
    std::string err = read_error(kinds[_i], endless, st);
    ck_assert_msg(err.find("t:1: line longer than 64 KiB") != std::string::npos, "%s: got '%s'", kinds[_i], err.c_str());
    std::string near = std::string(kSacctHead) + "1|a|2026-11-30T10:00:00|||PENDING|gres/gpu=1|" +
                       std::string(60 * 1024, 'x') + "\n";
    ReadStats st2;
    ck_assert_cxx_str_eq(read_error("sacct", near, st2), "");
    ck_assert_int_eq(st2.rows, 1);
}
END_TEST

// A UTF-8 byte order mark before the header is read past; CRLF line ends too.
START_TEST(test_bom_crlf)
{
    ReadStats st;
    std::string t = "\xEF\xBB\xBFJobID|Account|Submit|Start|End|State|AllocTRES\r\n"
                    "7|phys|2026-11-30T10:00:00|2026-11-30T10:00:01|2026-11-30T10:01:01|COMPLETED|gres/gpu=2\r\n";
    std::istringstream in(t);
    auto recs = make_trace_reader("sacct", 1)->read(in, "t", st);
    ck_assert_uint_eq(recs.size(), 1);
    ck_assert_int_eq(recs[0].num_gpu, 2);
    ck_assert_int_eq(recs[0].deletion_s, 61);
}
END_TEST

// Days that do not exist and years outside 2000-2099 are bad times, counted, never normalized.
START_TEST(test_sacct_impossible_dates)
{
    static const char *const dates[] = {"2026-02-30T10:00:00", "2025-02-29T10:00:00", "2026-04-31T00:00:00",
                                        "9999-11-30T10:00:00", "1970-01-01T00:00:00"};
    ReadStats st;
    std::string t = std::string(kSacctHead) + "1|a|" + dates[_i] + "|||PENDING|gres/gpu=1\n" +
                    "2|a|2024-02-29T10:00:00|||PENDING|gres/gpu=1\n";  // a leap day is a day
    ck_assert_cxx_str_eq(read_error("sacct", t, st), "");
    ck_assert_int_eq(st.bad_total(), 1);
    ck_assert_int_eq(st.bad.at("bad time"), 1);
}
END_TEST

// A repeated SWF job number is a bad row; a repeated openb pod, or one deleted before it was
// created, stops the read (openb files are clean: such a row is a corrupt file).
START_TEST(test_duplicates_and_order)
{
    ReadStats st;
    std::string swf = "1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 1 -1 -1\n1 5 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 1 -1 -1\n";
    ck_assert_cxx_str_eq(read_error("swf", swf, st), "");
    ck_assert_int_eq(st.bad.at("duplicate job number"), 1);
    const std::string head = "name,num_gpu,gpu_milli,gpu_spec,qos,creation_time,deletion_time,scheduled_time\n";
    ReadStats s2;
    std::string err = read_error("openb", head + "p,1,1000,,LS,0,10,0\np,1,1000,,LS,5,10,5\n", s2);
    ck_assert_msg(err.find("t:3: pod 'p' is also on line 2") != std::string::npos, "got '%s'", err.c_str());
    err = read_error("openb", head + "p,1,1000,,LS,50,40,50\n", s2);
    ck_assert_msg(err.find("t:2: deletion_time 40 is before") != std::string::npos, "got '%s'", err.c_str());
    err = read_error("openb", head + "p,1,1000,,LS,50,80,20\n", s2);
    ck_assert_msg(err.find("t:2: scheduled_time 20 is before creation_time 50") != std::string::npos, "got '%s'", err.c_str());
}
END_TEST

// printable(): C0, DEL, backslash, C1 (a lone byte or UTF-8 C2 80-9F) and bytes that are not
// UTF-8 become \xNN; other UTF-8 passes unchanged.
START_TEST(test_printable)
{
    ck_assert_cxx_str_eq(printable("plain text"), "plain text");
    ck_assert_cxx_str_eq(printable("a\033[2Jb\x7f"), "a\\x1b[2Jb\\x7f");
    ck_assert_cxx_str_eq(printable("back\\slash"), "back\\x5cslash");
    ck_assert_cxx_str_eq(printable("csi \x9b and \xc2\x9b"), "csi \\x9b and \\xc2\\x9b");
    ck_assert_cxx_str_eq(printable("caf\xc3\xa9 \xc4\x80 \xe2\x82\xac \xf0\x9f\x98\x80"),
                         "caf\xc3\xa9 \xc4\x80 \xe2\x82\xac \xf0\x9f\x98\x80");
    ck_assert_cxx_str_eq(printable("cut \xe2\x82"), "cut \\xe2\\x82");
    // A pod name that printable() would change stops the openb read: it names the Slurm job.
    ReadStats st;
    std::string err = read_error("openb", "name,num_gpu,gpu_milli,gpu_spec,qos,creation_time,deletion_time,"
                                          "scheduled_time\np\033x,1,1000,,LS,0,10,0\n", st);
    ck_assert_msg(err.find("holds a control character") != std::string::npos, "got '%s'", err.c_str());
}
END_TEST

Suite *readers_suite()
{
    Suite *s = suite_create("readers");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, test_sacct_records, 0, sizeof kSacct / sizeof kSacct[0]);
    tcase_add_loop_test(tc, test_sacct_stats, 0, sizeof kSacctBad / sizeof kSacctBad[0]);
    tcase_add_test(tc, test_sacct_header_order);
    tcase_add_test(tc, test_printable);
    tcase_add_loop_test(tc, test_sacct_header_bad, 0, sizeof kHeaderBad / sizeof kHeaderBad[0]);
    tcase_add_test(tc, test_sacct_strict);
    tcase_add_test(tc, test_swf_records);
    tcase_add_test(tc, test_swf_procs_per_gpu);
    tcase_add_loop_test(tc, test_line_limit, 0, 3);
    tcase_add_test(tc, test_bom_crlf);
    tcase_add_loop_test(tc, test_sacct_impossible_dates, 0, 5);
    tcase_add_test(tc, test_duplicates_and_order);
    suite_add_tcase(s, tc);
    return s;
}
