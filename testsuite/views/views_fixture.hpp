// Shared by the views Check suites: main(), paths into the source tree, the example config.
#pragma once
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <check.h>  // after the C++ headers: it defines a fail() macro

#include "core/config.hpp"

Suite *make_suite();

// Tests run from the build dir; make check exports top_srcdir.
inline std::string srcpath(const std::string &rel) {
    const char *top = std::getenv("top_srcdir");
    return std::string(top ? top : ".") + "/" + rel;
}

// etc/idletime.json: tenants acme/beta, pools a100-east/-west, h100-main, h100-beta, cpu-gen.
inline const idletime::Config &example_config() {
    static idletime::Config cfg;
    static bool loaded = false;
    if (!loaded) {
        std::ifstream in(srcpath("etc/idletime.json"));
        std::stringstream ss;
        ss << in.rdbuf();
        std::vector<std::string> errors;
        if (!idletime::config_parse(ss.str(), cfg, errors)) {
            fprintf(stderr, "cannot load etc/idletime.json: %s\n", errors.empty() ? "?" : errors[0].c_str());
            std::abort();
        }
        loaded = true;
    }
    return cfg;
}

#define VIEWS_CHECK_MAIN                                  \
    int main() {                                          \
        SRunner *sr = srunner_create(make_suite());       \
        srunner_run_all(sr, CK_NORMAL);                   \
        int failed = srunner_ntests_failed(sr);           \
        srunner_free(sr);                                 \
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE; \
    }
