// log_text: user text quoted in root's and slurmctld's logs stays on one line and cannot fake one.
#include <check.h>

#include <string>

#include "src/core/log_text.hpp"
#include "testsuite/check_string.hpp"
#include "testsuite/unit/check_main.hpp"

START_TEST(test_plain_text_unchanged) {
    ck_assert_cxx_str_eq(idletime::log_text("mode \"only\" of job 42 (team-a)"), "mode \"only\" of job 42 (team-a)");
    ck_assert_cxx_str_eq(idletime::log_text(""), "");
    ck_assert_cxx_str_eq(idletime::log_text("h\xc3\xa9"), "h\xc3\xa9");  // UTF-8 kept
}
END_TEST

START_TEST(test_forged_line_escaped) {
    // A value that tries to end the line and write a fake one of its own.
    const std::string forged = "only\n[2026-12-02T10:00:00] idletime/job_submit: accepted job of uid 0\r";
    const std::string out = idletime::log_text(forged);
    ck_assert(out.find('\n') == std::string::npos && out.find('\r') == std::string::npos);
    ck_assert_cxx_str_eq(out, "only\\n[2026-12-02T10:00:00] idletime/job_submit: accepted job of uid 0\\r");
    ck_assert_cxx_str_eq(idletime::log_text(std::string("a\0b\x1b[31m\x7f\t", 10)), "a\\x00b\\x1b[31m\\x7f\\t");
    // A literal backslash-n typed by the user stays distinguishable from an escaped newline.
    ck_assert_cxx_str_eq(idletime::log_text("a\\nb"), "a\\\\nb");
}
END_TEST

Suite *make_suite() {
    Suite *s = suite_create("log_text");
    TCase *tc = tcase_create("escape");
    tcase_add_test(tc, test_plain_text_unchanged);
    tcase_add_test(tc, test_forged_line_escaped);
    suite_add_tcase(s, tc);
    return s;
}

IDLETIME_CHECK_MAIN
