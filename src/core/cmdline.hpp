// --help, --version and unknown options, the same way in every installed command:
// --help prints the usage on stdout (exit 0), --version "PROG (idletime) VERSION" (exit 0), an
// unknown option one line on stderr naming it, with the usage's first line (exit 2).
#pragma once
#include <cstdio>
#include <cstring>
#include <string>

#ifndef PACKAGE_VERSION
#error "PACKAGE_VERSION comes from configure (AC_INIT)"
#endif

namespace idletime::cmdline {

constexpr int kExitUsage = 2;

inline int help(const char *usage) {
    std::fputs(usage, stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
}

inline int version(const char *prog) {
    if (std::strcmp(prog, "idletime") == 0) std::printf("idletime %s\n", PACKAGE_VERSION);
    else std::printf("%s (idletime) %s\n", prog, PACKAGE_VERSION);
    return std::fflush(stdout) == 0 ? 0 : 1;
}

// The usage's first line without "Usage: ", for one-line errors.
inline std::string synopsis(const char *usage) {
    std::string s(usage);
    s = s.substr(0, s.find('\n'));
    return s.rfind("Usage: ", 0) == 0 ? s.substr(7) : s;
}

// unknown option "OPT" (usage: SYNOPSIS)
inline std::string unknown_option_text(const std::string &opt, const char *usage) {
    return "unknown option \"" + opt + "\" (usage: " + synopsis(usage) + ")";
}

// "PROG: unknown option "OPT" (usage: SYNOPSIS)" on stderr; returns kExitUsage.
inline int unknown_option(const char *prog, const std::string &opt, const char *usage) {
    std::fprintf(stderr, "%s: %s\n", prog, unknown_option_text(opt, usage).c_str());
    return kExitUsage;
}

// --help / --version as the first argument: true with the exit status in rc.
inline bool help_or_version(int argc, char **argv, const char *prog, const char *usage, int &rc) {
    if (argc < 2) return false;
    if (std::strcmp(argv[1], "--help") == 0) return rc = help(usage), true;
    if (std::strcmp(argv[1], "--version") == 0) return rc = version(prog), true;
    return false;
}

}  // namespace idletime::cmdline
