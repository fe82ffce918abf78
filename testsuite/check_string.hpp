// Check's ck_assert_str_eq keeps a pointer past the end of the full-expression, so a c_str() of a
// temporary std::string dangles (AddressSanitizer: stack-use-after-scope). Compare copies instead.
#pragma once
#include <check.h>

#include <string>

#define ck_assert_cxx_str_eq(a, b)                                 \
    do {                                                           \
        const std::string ck_cxx_a_(a), ck_cxx_b_(b);              \
        ck_assert_str_eq(ck_cxx_a_.c_str(), ck_cxx_b_.c_str());    \
    } while (0)
