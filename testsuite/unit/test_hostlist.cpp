// Hostlist expansion, table-driven.
#include "check_main.hpp"
#include "core/hostlist.hpp"

namespace {
struct Case {
    const char *spec;
    const char *expect;  // names joined by ' ', or nullptr for an error
    const char *error;   // substring of the error
};
const Case kCases[] = {
    {"a100-1", "a100-1", nullptr},
    {"a100-[1-3]", "a100-1 a100-2 a100-3", nullptr},
    {"n[01-03]", "n01 n02 n03", nullptr},
    {"n[1,3-4]x", "n1x n3x n4x", nullptr},
    {"a,b[1-2],c", "a b1 b2 c", nullptr},
    {"", nullptr, "empty hostlist"},
    {"n[1-2", nullptr, "unbalanced"},
    {"n1-2]", nullptr, "unbalanced"},
    {"n[3-1]", nullptr, "bad range"},
    {"n[a-b]", nullptr, "bad range"},
    {"n[1-2][3-4]", nullptr, "only one [range]"},
    {"a,,b", nullptr, "empty or malformed"},
    {"n[0-99999]", nullptr, "more than"},
};
}  // namespace

START_TEST(test_table) {
    const Case &c = kCases[_i];
    std::vector<std::string> out;
    std::string err;
    bool ok = idletime::hostlist_expand(c.spec, out, err, 1000);
    if (c.expect) {
        std::string joined;
        for (auto &n : out) joined += (joined.empty() ? "" : " ") + n;
        ck_assert_msg(ok, "%s: unexpected error %s", c.spec, err.c_str());
        ck_assert_str_eq(joined.c_str(), c.expect);
    } else {
        ck_assert_msg(!ok, "%s: expected an error", c.spec);
        ck_assert_msg(err.find(c.error) != std::string::npos, "%s: error \"%s\" lacks \"%s\"", c.spec, err.c_str(),
                      c.error);
    }
}
END_TEST

Suite *make_suite() {
    Suite *s = suite_create("hostlist");
    TCase *tc = tcase_create("table");
    tcase_add_loop_test(tc, test_table, 0, sizeof kCases / sizeof kCases[0]);
    suite_add_tcase(s, tc);
    return s;
}

IDLETIME_CHECK_MAIN
