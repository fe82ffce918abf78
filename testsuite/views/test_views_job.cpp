// Job view: status, real-time resources, quota/mode inference, restart split, node hiding.

#include "ft/ft.hpp"
#include "views/job.hpp"
#include "views_fixture.hpp"
#include "../check_string.hpp"

using namespace idletime;
using namespace idletime::views;

namespace {

constexpr int64_t kNow = 1700000000;

std::string ft_record(uint32_t p, uint32_t f, const std::string &last_kind, const std::string &last_action,
                      const std::string &final_reason = "", int64_t begin_at = 0) {
    ft::JobState st;
    st.counters = {p, f};
    st.final_reason = final_reason;
    st.begin_at = begin_at;
    if (!last_kind.empty()) st.history.push_back(ft::RunRecord{0, last_kind, "cause: " + last_kind, last_action, kNow - 50});
    return ft::state_serialize(st);
}

JobInfo job(SlurmState s, const std::string &account, std::vector<std::string> parts) {
    JobInfo j;
    j.job_id = 42;
    j.name = "train";
    j.user = "alice";
    j.account = account;
    j.state = s;
    j.partitions = std::move(parts);
    j.submit_time = kNow - 250;
    if (s == SlurmState::Running) j.nodes = "a100-[1-2]", j.start_time = kNow - 100;
    j.gpus = 4;
    return j;
}

struct Case {
    const char *name;
    JobInfo j;
    bool op;
    Status status;
    Resources res;
    const char *quota, *mode, *nodes, *reason;
    uint32_t p, f;
};

std::vector<Case> cases() {
    std::vector<Case> c;
    c.push_back({"queuing none", job(SlurmState::Pending, "team-a", {"quota-team-a"}), false, Status::Queuing,
                 Resources::None, "team-a", "none", "", nullptr, 0, 0});
    c.push_back({"in quota acceptable",
                 job(SlurmState::Running, "team-a", {"quota-team-a", "idle-a100-east", "idle-a100-west"}), false,
                 Status::Running, Resources::InQuota, "team-a", "acceptable", "a100-[1-2]", nullptr, 0, 0});
    c.push_back({"not in quota hidden", job(SlurmState::Running, "team-a", {"idle-a100-west", "idle-a100-east"}),
                 false, Status::Running, Resources::NotInQuota, "team-a", "only", kHiddenNodes, nullptr, 0, 0});
    c.push_back({"not in quota operator", job(SlurmState::Running, "team-b", {"idle-a100-east", "idle-a100-west"}),
                 true, Status::Running, Resources::NotInQuota, "team-b", "only", "a100-[1-2]", nullptr, 0, 0});
    Case pre{"resource preempted", job(SlurmState::Pending, "team-a", {"idle-a100-east", "idle-a100-west"}), false,
             Status::ResourcePreempted, Resources::None, "team-a", "only", "", "cause: preempt", 2, 0};
    pre.j.admin_comment = ft_record(2, 0, "preempt", "restart");
    pre.j.restart_cnt = 2;
    c.push_back(pre);
    Case rs{"restarting in backoff", job(SlurmState::Pending, "team-c", {"quota-team-c"}), false, Status::Restarting,
            Resources::None, "team-c", "none", "", "cause: exit; restarts in 40s", 0, 1};
    rs.j.admin_comment = ft_record(0, 1, "exit", "restart");
    rs.j.eligible_time = kNow + 40;
    c.push_back(rs);
    Case rq = rs;
    rq.name = "backoff over: queuing";
    rq.j.eligible_time = kNow - 1;
    rq.j.state_reason = "Resources";
    rq.status = Status::Queuing;
    rq.reason = "Resources";
    c.push_back(rq);
    Case fl{"failed after retries", job(SlurmState::Failed, "team-c", {"quota-team-c"}), false, Status::Failed,
            Resources::None, "team-c", "none", "", "max restarts exceeded (last cause: exit code 137 (SIGKILL))", 1, 3};
    fl.j.admin_comment = ft_record(1, 3, "sig", "fail", "max restarts exceeded (last cause: exit code 137 (SIGKILL))");
    c.push_back(fl);
    Case ca{"cancelled by hook is failed", job(SlurmState::Cancelled, "team-c", {"quota-team-c"}), false,
            Status::Failed, Resources::None, "team-c", "none", "", "max preemptions exceeded (2)", 3, 0};
    ca.j.admin_comment = ft_record(3, 0, "preempt", "fail", "max preemptions exceeded (2)");
    c.push_back(ca);
    c.push_back({"cancelled by user", job(SlurmState::Cancelled, "team-a", {"quota-team-a"}), false, Status::Stopped,
                 Resources::None, "team-a", "none", "", "cancelled", 0, 0});
    c.push_back({"completed", job(SlurmState::Complete, "team-a", {"quota-team-a"}), false, Status::Succeeded,
                 Resources::None, "team-a", "none", "", nullptr, 0, 0});
    Case ex{"failed exit code no record", job(SlurmState::Failed, "team-b", {"quota-team-b"}), false, Status::Failed,
            Resources::None, "team-b", "none", "", "exit code 2", 0, 0};
    ex.j.wait_status = 2 << 8;
    c.push_back(ex);
    c.push_back({"timeout", job(SlurmState::Timeout, "team-b", {"quota-team-b"}), false, Status::Failed,
                 Resources::None, "team-b", "none", "", "time limit reached", 0, 0});
    c.push_back({"node fail", job(SlurmState::NodeFail, "team-b", {"quota-team-b"}), false, Status::Failed,
                 Resources::None, "team-b", "none", "", "node failure", 0, 0});
    c.push_back({"second quota of an account", job(SlurmState::Running, "team-a", {"idle-h100-main"}), false,
                 Status::Running, Resources::NotInQuota, "team-h", "only", kHiddenNodes, nullptr, 0, 0});
    c.push_back({"not an idletime partition", job(SlurmState::Running, "team-a", {"debug"}), false, Status::Running,
                 Resources::Other, "", "", "a100-[1-2]", nullptr, 0, 0});
    Case pt{"preempted terminal, pruned list", job(SlurmState::Preempted, "team-a", {"idle-a100-east"}), false,
            Status::ResourcePreempted, Resources::None, "team-a", "only", "", "preempted, not requeued", 0, 0};
    c.push_back({"pruned list of another pool's quota", job(SlurmState::Running, "team-c", {"idle-a100-east"}), false,
                 Status::Running, Resources::NotInQuota, "team-c", "only", kHiddenNodes, nullptr, 0, 0});
    c.push_back({"account of two quotas, ambiguous none", job(SlurmState::Running, "team-x", {"idle-a100-east"}),
                 false, Status::Running, Resources::NotInQuota, "", "", kHiddenNodes, nullptr, 0, 0});
    c.push_back(pt);
    // Started In Quota: Slurm narrowed the partitions to the quota one; job_submit's stamp keeps
    // the requested mode (and is no restart record: the counters stay Slurm's).
    Case st{"acceptable started in quota, stamped", job(SlurmState::Running, "team-a", {"quota-team-a"}), false,
            Status::Running, Resources::InQuota, "team-a", "acceptable", "a100-[1-2]", nullptr, 0, 0};
    st.j.admin_comment = "idletime-ft:{\"v\":1,\"m\":\"acceptable\"}";
    c.push_back(st);
    Case un = st;
    un.name = "unstamped in quota derives none";
    un.j.admin_comment.clear();
    un.mode = "none";
    c.push_back(un);
    return c;
}

}  // namespace

START_TEST(test_derive_table) {
    Catalog cat(example_config());
    for (const Case &c : cases()) {
        JobView v = derive(cat, c.j, kNow, c.op);
        ck_assert_msg(v.status == c.status, "%s: status %s, want %s", c.name, status_name(v.status),
                      status_name(c.status));
        ck_assert_msg(v.resources == c.res, "%s: resources %s", c.name, resources_key(v.resources));
        ck_assert_msg(v.quota == c.quota, "%s: quota '%s'", c.name, v.quota.c_str());
        ck_assert_msg(v.mode == c.mode, "%s: mode '%s'", c.name, v.mode.c_str());
        ck_assert_msg(v.nodes == c.nodes, "%s: nodes '%s'", c.name, v.nodes.c_str());
        if (c.reason) ck_assert_msg(v.reason == c.reason, "%s: reason '%s'", c.name, v.reason.c_str());
        ck_assert_msg(v.preemptions == c.p && v.failures == c.f, "%s: restarts %u/%u", c.name, v.preemptions,
                      v.failures);
        ck_assert_int_eq(v.age_s, 250);
    }
}
END_TEST

START_TEST(test_tenant_and_pool) {
    Catalog cat(example_config());
    JobInfo j = job(SlurmState::Running, "team-x", {"idle-h100-beta"});
    JobView v = derive(cat, j, kNow, false);
    ck_assert_cxx_str_eq(v.tenant, "beta");
    ck_assert_cxx_str_eq(v.pool, "h100-beta");
}
END_TEST

START_TEST(test_garbage_record_ignored) {
    Catalog cat(example_config());
    JobInfo j = job(SlurmState::Pending, "team-a", {"quota-team-a"});
    j.admin_comment = "idletime-ft:{not json";
    j.restart_cnt = 3;
    JobView v = derive(cat, j, kNow, false);
    ck_assert(!v.ft_record);
    ck_assert_uint_eq(v.failures, 3);  // Slurm's unsplit count, reported as failures
    ck_assert(v.status == Status::Queuing);
}
END_TEST

START_TEST(test_tres) {
    ck_assert_uint_eq(tres_gpus("cpu=8,mem=16G,node=1,billing=8,gres/gpu=4,gres/gpu:a100=4"), 4);
    ck_assert_uint_eq(tres_gpus("cpu=8,gres/gpu:a100=2,gres/gpu:h100=1"), 3);
    ck_assert_uint_eq(tres_gpus("cpu=8,mem=1000M"), 0);
    ck_assert_uint_eq(tres_gpus(""), 0);
    ck_assert_uint_eq(tres_count("cpu=8,mem=16G", "cpu"), 8);
    ck_assert_uint_eq(tres_count("cpus=8", "cpu"), 0);
}
END_TEST

START_TEST(test_age_and_names) {
    ck_assert_cxx_str_eq(format_age(12), "12s");
    ck_assert_cxx_str_eq(format_age(250), "4m10s");
    ck_assert_cxx_str_eq(format_age(7500), "2h05m");
    ck_assert_cxx_str_eq(format_age(3 * 86400 + 4 * 3600), "3d04h");
    ck_assert_cxx_str_eq(format_age(-5), "0s");
    Status s;
    ck_assert(status_parse("Resource Preempted", s) && s == Status::ResourcePreempted);
    ck_assert(status_parse("restarting", s) && s == Status::Restarting);
    ck_assert(!status_parse("pending", s));
    ck_assert_str_eq(resources_name(Resources::NotInQuota), "Not in Quota");
    ck_assert_str_eq(resources_name(Resources::None), "");
}
END_TEST

// The final record only accounting holds wins when it judged a later run; garbage never wins.
START_TEST(test_newest_record) {
    ft::JobState st;
    st.judged_start = kNow - 100;
    std::string live = ft::state_serialize(st);
    st.judged_start = kNow - 10;
    st.final_reason = "max restarts exceeded";
    std::string acct = ft::state_serialize(st);
    ck_assert_cxx_str_eq(newest_record(live, acct), acct.c_str());
    ck_assert_cxx_str_eq(newest_record(acct, live), acct.c_str());
    ck_assert_cxx_str_eq(newest_record(live, live), live.c_str());
    ck_assert_cxx_str_eq(newest_record(live, ""), live.c_str());
    ck_assert_cxx_str_eq(newest_record(live, "idletime-ft:{bad"), live.c_str());
    ck_assert_cxx_str_eq(newest_record("", acct), acct.c_str());
    ck_assert_cxx_str_eq(newest_record("user text", acct), acct.c_str());
}
END_TEST

// The checkpoint token of the Comment, as libidletime-ckpt writes it (alone or after user text).
START_TEST(test_published_checkpoint) {
    const std::pair<const char *, int64_t> rows[] = {
        {"idletime:ckpt=1700000123", 1700000123}, {"notes idletime:ckpt=1700000124", 1700000124},
        {"idletime:ckpt=1700000125;x", 1700000125}, {"aidletime:ckpt=1700000126", 0},
        {"idletime:ckpt=17x", 0}, {"idletime:ckpt=", 0}, {"", 0}, {"idletime-run:{}", 0},
    };
    for (const auto &[text, want] : rows) ck_assert_msg(published_checkpoint(text) == want, "%s", text);
}
END_TEST

Suite *make_suite() {
    Suite *s = suite_create("views_job");
    TCase *t = tcase_create("job");
    tcase_add_test(t, test_derive_table);
    tcase_add_test(t, test_tenant_and_pool);
    tcase_add_test(t, test_garbage_record_ignored);
    tcase_add_test(t, test_tres);
    tcase_add_test(t, test_age_and_names);
    tcase_add_test(t, test_newest_record);
    tcase_add_test(t, test_published_checkpoint);
    suite_add_tcase(s, t);
    return s;
}

VIEWS_CHECK_MAIN
