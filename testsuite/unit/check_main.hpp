// Shared main() for the Check test programs: each program defines make_suite().
#pragma once
#include <check.h>

#include <cstdlib>
#include <string>

Suite *make_suite();

// Path of a file in the source tree (tests run from the build dir; srcdir comes from make check).
inline std::string srcpath(const std::string &rel) {
    const char *top = std::getenv("top_srcdir");
    return std::string(top ? top : ".") + "/" + rel;
}

#define IDLETIME_CHECK_MAIN                                              \
    int main() {                                                         \
        SRunner *sr = srunner_create(make_suite());                      \
        srunner_run_all(sr, CK_NORMAL);                                  \
        int failed = srunner_ntests_failed(sr);                          \
        srunner_free(sr);                                                \
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;                \
    }
