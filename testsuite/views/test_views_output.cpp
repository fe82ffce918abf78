// Output: --format parsing, table cells, JSON schema fields (parsed back with json-c).
#include <json-c/json.h>

#include "views/output.hpp"
#include "views_fixture.hpp"

using namespace idletime;
using namespace idletime::views;

namespace {

JobInfo running_idle() {
    JobInfo j;
    j.job_id = 7;
    j.name = "bert";
    j.user = "bob";
    j.account = "team-b";
    j.state = SlurmState::Running;
    j.partitions = {"idle-a100-west", "idle-a100-east"};
    j.nodes = "a100-3";
    j.gpus = 2;
    j.cpus = 4;
    j.submit_time = 1000;
    j.start_time = 1100;
    return j;
}

json_object *get(json_object *o, const char *k) {
    json_object *v = nullptr;
    ck_assert_msg(json_object_object_get_ex(o, k, &v), "no key %s", k);
    return v;
}

}  // namespace

START_TEST(test_format_parse) {
    std::vector<FormatItem> f;
    std::string err;
    ck_assert(format_parse("%i %.6j|%-4u%%", f, err));
    ck_assert_uint_eq(f.size(), 4);
    ck_assert_int_eq(f[1].field, 'j');
    ck_assert(f[1].right);
    ck_assert_uint_eq(f[1].width, 6);
    ck_assert_str_eq(f[3].literal.c_str(), "%");
    ck_assert(!format_parse("%i %Z", f, err));
    ck_assert(err.find("%Z") != std::string::npos && err.find("allowed") != std::string::npos);
    ck_assert(!format_parse("%", f, err));
}
END_TEST

START_TEST(test_cells) {
    Catalog cat(example_config());
    JobInfo j = running_idle();
    JobView v = derive(cat, j, 1250, false);
    std::vector<FormatItem> f;
    std::string err;
    ck_assert(format_parse("%i|%.6j|%q|%m|%T|%R|%b|%r|%M|%N|%p", f, err));
    std::string line = jobs_formatted({v}, f, false);
    ck_assert_str_eq(line.c_str(),
                     "7|  bert|team-b|only|Running|Not in Quota|2|0/0|4m10s|(shared)|a100-west\n");
    std::string table = jobs_table({v}, true);
    ck_assert_msg(table.rfind("JOBID  NAME  USER  QUOTA   MODE  STATUS   RESOURCES     GPUS  RESTARTS(P/F)  AGE    NODES\n", 0) == 0,
                  "header: %s", table.c_str());
}
END_TEST

START_TEST(test_jobs_json) {
    Catalog cat(example_config());
    JobInfo j = running_idle();
    JobView v = derive(cat, j, 1250, true);
    json_object *o = json_tokener_parse(jobs_json({v}, 1250).c_str());
    ck_assert(o != nullptr);
    ck_assert_int_eq(json_object_get_int(get(o, "schema_version")), 1);
    json_object *job = json_object_array_get_idx(get(o, "jobs"), 0);
    ck_assert_int_eq(json_object_get_int(get(job, "job_id")), 7);
    ck_assert_str_eq(json_object_get_string(get(job, "status")), "running");
    ck_assert_str_eq(json_object_get_string(get(job, "resources")), "not-in-quota");
    ck_assert_str_eq(json_object_get_string(get(job, "resources_text")), "Not in Quota");
    ck_assert_str_eq(json_object_get_string(get(job, "nodes")), "a100-3");
    ck_assert(!json_object_get_boolean(get(job, "nodes_hidden")));
    ck_assert_int_eq(json_object_get_int(get(get(job, "restarts"), "preemptions")), 0);
    ck_assert_str_eq(json_object_get_string(get(get(job, "restarts"), "source")), "slurm");
    ck_assert(json_object_is_type(get(job, "reason"), json_type_null));
    json_object_put(o);
}
END_TEST

START_TEST(test_quota_json_and_table) {
    Catalog cat(example_config());
    JobInfo j = running_idle();
    std::vector<JobView> vs{derive(cat, j, 1250, true)};
    Accounting a = account(example_config(), vs);
    json_object *o = json_tokener_parse(quota_json(a, 1250).c_str());
    ck_assert(o != nullptr);
    ck_assert_int_eq(json_object_get_int(get(o, "schema_version")), 1);
    json_object *qs = get(o, "quotas");
    ck_assert_uint_eq(json_object_array_length(qs), example_config().quotas.size());
    json_object *b = json_object_array_get_idx(qs, 1);
    ck_assert_str_eq(json_object_get_string(get(b, "name")), "team-b");
    ck_assert_int_eq(json_object_get_int(get(get(b, "borrowed"), "gpus")), 2);
    json_object *west = json_object_array_get_idx(get(o, "pools"), 1);
    ck_assert_int_eq(json_object_get_int(get(get(west, "idle_used"), "gpus")), 2);
    ck_assert_int_eq(json_object_get_int(get(get(json_object_array_get_idx(qs, 2), "lent"), "gpus")), 2);
    json_object_put(o);
    std::string table = quota_table(a);
    ck_assert_msg(table.find("team-c    a100-west  acme    8/16        0/0   2/4") != std::string::npos, "%s",
                  table.c_str());
}
END_TEST

START_TEST(test_findings) {
    std::vector<Finding> f{{Severity::KnownBad, "JobRequeue", "0", "1", "set JobRequeue=1"}};
    std::string text = findings_text(f);
    ck_assert_str_eq(text.c_str(),
                     "known-bad: JobRequeue: cluster has 0, config wants 1\n    fix: set JobRequeue=1\n");
    json_object *o = json_tokener_parse(findings_json(f).c_str());
    ck_assert(!json_object_get_boolean(get(o, "ok")));
    json_object_put(o);
    o = json_tokener_parse(findings_json({}).c_str());
    ck_assert(json_object_get_boolean(get(o, "ok")));
    json_object_put(o);
}
END_TEST

Suite *make_suite() {
    Suite *s = suite_create("views_output");
    TCase *t = tcase_create("output");
    tcase_add_test(t, test_format_parse);
    tcase_add_test(t, test_cells);
    tcase_add_test(t, test_jobs_json);
    tcase_add_test(t, test_quota_json_and_table);
    tcase_add_test(t, test_findings);
    suite_add_tcase(s, t);
    return s;
}

VIEWS_CHECK_MAIN
