// Mode resolution over etc/idletime.json (tenants acme/beta, a100/h100/general pools), table-driven.
#include <fstream>
#include <sstream>

#include "check_main.hpp"
#include "core/resolve.hpp"

namespace {

struct Case {
    const char *account, *quota, *mode, *spec;
    const char *partitions;  // expected, or nullptr for an error
    const char *error;       // expected substring
};

const Case kCases[] = {
    {"team-b", "", "none", "", "quota-team-b", nullptr},
    {"team-b", "", "only", "", "idle-a100-east,idle-a100-west", nullptr},
    {"team-b", "", "acceptable", "", "quota-team-b,idle-a100-east,idle-a100-west", nullptr},
    {"team-c", "", "only", "a100", "idle-a100-west,idle-a100-east", nullptr},
    {"team-c", "", "only", "h100", nullptr, "quota \"team-c\" is in a pool of GPU spec \"a100\"; spec \"h100\" needs"},
    {"team-x", "", "only", "", "idle-h100-beta", nullptr},
    {"team-x", "", "acceptable", "h100", "quota-team-x,idle-h100-beta", nullptr},
    {"team-x", "", "only", "a100", nullptr, "GPU spec \"a100\" is not offered in tenant \"beta\" (offered: h100)"},
    {"team-cpu", "", "only", "", "idle-cpu-gen", nullptr},
    {"team-cpu", "", "acceptable", "a100", nullptr, "general pool \"cpu-gen\", which can use only its own pool"},
    {"team-a", "", "none", "", nullptr, "account \"team-a\" maps to several quotas (team-a, team-h)"},
    {"team-a", "", "only", "h100", "idle-h100-main", nullptr},
    {"team-a", "", "only", "a100", "idle-a100-east,idle-a100-west", nullptr},
    {"team-a", "team-a", "only", "", "idle-a100-east,idle-a100-west", nullptr},
    {"team-a", "team-h", "none", "", "quota-team-h", nullptr},
    {"team-a", "", "none", "v100", nullptr, "account \"team-a\" has no quota in a pool of GPU spec \"v100\""},
    {"team-h", "", "none", "v100", nullptr, "GPU spec \"v100\" is not offered in tenant \"acme\" (offered: a100, h100)"},
    {"team-b", "team-a", "none", "", nullptr, "account \"team-b\" may not use quota \"team-a\" (allowed accounts: team-a)"},
    {"team-b", "nope", "none", "", nullptr, "unknown quota \"nope\" (quotas: team-a, team-b, team-c, team-h, team-x, team-cpu)"},
    {"nobody", "", "only", "", nullptr, "account \"nobody\" has no idletime quota"},
    {"", "team-a", "only", "", nullptr, "the job's account is not known"},
};

idletime::Config load_example() {
    std::ifstream in(srcpath("etc/idletime.json"));
    std::stringstream ss;
    ss << in.rdbuf();
    idletime::Config cfg;
    std::vector<std::string> errors;
    ck_assert_msg(idletime::config_parse(ss.str(), cfg, errors), "example config: %s",
                  errors.empty() ? "unreadable" : errors[0].c_str());
    return cfg;
}

}  // namespace

START_TEST(test_table) {
    const Case &c = kCases[_i];
    idletime::Config cfg = load_example();
    idletime::Request req;
    req.account = c.account;
    req.quota = c.quota;
    req.gpu_spec = c.spec;
    ck_assert(idletime::mode_parse(c.mode, req.mode));
    idletime::Resolution res;
    std::string err;
    bool ok = idletime::resolve(cfg, req, res, err);
    if (c.partitions) {
        ck_assert_msg(ok, "case %d: %s", _i, err.c_str());
        std::string got = res.partition_list();
        ck_assert_str_eq(got.c_str(), c.partitions);
        ck_assert(res.requeue == (req.mode != idletime::Mode::None));
        for (const auto &t : res.targets) ck_assert(t.preemptible == (t.partition.rfind("idle-", 0) == 0));
    } else {
        ck_assert_msg(!ok, "case %d resolved to %s", _i, res.partition_list().c_str());
        ck_assert_msg(err.find(c.error) != std::string::npos, "case %d: \"%s\" lacks \"%s\"", _i, err.c_str(), c.error);
    }
}
END_TEST

START_TEST(test_mode_parse) {
    idletime::Mode m;
    ck_assert(idletime::mode_parse("acceptable", m) && m == idletime::Mode::Acceptable);
    ck_assert(!idletime::mode_parse("ONLY", m));
    ck_assert(!idletime::mode_parse("", m));
}
END_TEST

Suite *make_suite() {
    Suite *s = suite_create("resolve");
    TCase *tc = tcase_create("table");
    tcase_add_loop_test(tc, test_table, 0, sizeof kCases / sizeof kCases[0]);
    tcase_add_test(tc, test_mode_parse);
    suite_add_tcase(s, tc);
    return s;
}

IDLETIME_CHECK_MAIN
