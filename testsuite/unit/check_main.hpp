// Shared main() for the Check test programs: each program defines make_suite().
#pragma once
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include <cstdlib>
#include <string>

#include <check.h>

Suite *make_suite();

// Path of a file in the source tree (tests run from the build dir; srcdir comes from make check).
inline std::string srcpath(const std::string &rel) {
    const char *top = std::getenv("top_srcdir");
    return std::string(top ? top : ".") + "/" + rel;
}

// One scratch root per test program, made before Check forks the tests and removed when the
// program ends, pass or fail: a forked test cannot clean up after a failed assertion.
inline std::string &unit_scratch_root() {
    static std::string root;
    return root;
}

inline void unit_scratch_begin() {
    std::string tmpl = "/tmp/idletime-unit-XXXXXX";
    if (mkdtemp(tmpl.data())) unit_scratch_root() = tmpl;
}

// C's nftw, not std::filesystem: <filesystem> after <check.h> meets its fail() macro, and
// several tests include <check.h> first.
inline int unit_scratch_unlink(const char *path, const struct stat *, int, struct FTW *) {
    remove(path);  // best effort: a test may have left an unremovable file behind
    return 0;
}

inline void unit_scratch_end() {
    if (!unit_scratch_root().empty())
        nftw(unit_scratch_root().c_str(), unit_scratch_unlink, 16, FTW_DEPTH | FTW_PHYS);
}

// A fresh directory "<name>-XXXXXX" under the program's scratch root.
inline std::string unit_scratch_dir(const char *name) {
    if (unit_scratch_root().empty()) unit_scratch_begin();
    std::string tmpl = unit_scratch_root() + "/" + name + "-XXXXXX";
    const char *d = mkdtemp(tmpl.data());
    ck_assert_ptr_nonnull(d);
    return tmpl;
}

// Runs the suite with a scratch root; the exit status make check expects.
inline int unit_run_suite(Suite *s) {
    unit_scratch_begin();
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    unit_scratch_end();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#define IDLETIME_CHECK_MAIN \
    int main() { return unit_run_suite(make_suite()); }
