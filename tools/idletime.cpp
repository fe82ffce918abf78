// idletime: the command-line front end. Built-in subcommands work on the config alone;
// others ("jobs", "quota", "check", "replay", ...) are separate programs idletime-<name>
// found in IDLETIME_EXEC_PATH or the install's libexec directory, git-style.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/cmdline.hpp"
#include "core/config.hpp"
#include "core/render.hpp"

namespace {

constexpr int kBadInput = 2;

const char *kUsage =
    "Usage: idletime COMMAND [OPTIONS]\n"
    "Commands:\n"
    "  render [--section=S] CONFIG   print the Slurm side of CONFIG (S: partitions, nodes, gres,\n"
    "                                sacctmgr, all; default all)\n"
    "  validate CONFIG               check CONFIG; print every error, one per line\n"
    "  jobs, quota, check, replay    views and tools (see idletime-COMMAND(1))\n"
    "  help, --help                  this text;  --version  the version\n"
    "Every command answers --help and --version.\n"
    "Exit status: 0 success, 1 failure, 2 bad input (nothing is written).\n";

const char *kRenderUsage =
    "Usage: idletime render [--section=S] CONFIG\n"
    "Prints the Slurm side of CONFIG: partitions, nodes, gres, the sacctmgr script, or all\n"
    "(S, default all). Exit status: 0 success, 2 bad input (nothing is written).\n";
const char *kValidateUsage =
    "Usage: idletime validate CONFIG\n"
    "Checks CONFIG and prints every error, one per line. Exit status: 0 valid, 2 invalid.\n";

int bad(const std::string &msg) {
    std::cerr << "idletime: " << msg << "\n";
    return kBadInput;
}

bool load(const std::string &path, idletime::Config &cfg, std::vector<std::string> &errors) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        errors.push_back(path + ": cannot read: " + std::strerror(errno));
        return false;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    if (idletime::config_parse(ss.str(), cfg, errors)) return true;
    for (std::string &e : errors) e = path + ": " + e;
    return false;
}

int cmd_render(const std::vector<std::string> &args) {
    idletime::Section section = idletime::Section::All;
    std::string path;
    for (const std::string &a : args) {
        if (a == "--help") return idletime::cmdline::help(kRenderUsage);
        if (a == "--version") return idletime::cmdline::version("idletime render");
        if (a.rfind("--section=", 0) == 0) {
            if (!idletime::section_parse(a.substr(10), section))
                return bad("render: unknown section \"" + a.substr(10) + "\" (allowed: " +
                           idletime::section_names() + ")");
        } else if (!a.empty() && a[0] == '-') {
            return idletime::cmdline::unknown_option("idletime render", a, kRenderUsage);
        } else if (path.empty()) {
            path = a;
        } else {
            return bad("render: more than one CONFIG given");
        }
    }
    if (path.empty()) return bad("render: missing CONFIG (usage: idletime render [--section=S] CONFIG)");
    idletime::Config cfg;
    std::vector<std::string> errors;
    if (!load(path, cfg, errors))
        return bad(errors.front() + (errors.size() > 1 ? " (and " + std::to_string(errors.size() - 1) +
                                                             " more; run idletime validate)" : ""));
    std::cout << idletime::render(cfg, section);
    return std::cout.flush() ? 0 : 1;
}

int cmd_validate(const std::vector<std::string> &args) {
    for (const std::string &a : args) {
        if (a == "--help") return idletime::cmdline::help(kValidateUsage);
        if (a == "--version") return idletime::cmdline::version("idletime validate");
        if (a.size() > 1 && a[0] == '-')
            return idletime::cmdline::unknown_option("idletime validate", a, kValidateUsage);
    }
    if (args.size() != 1 || args[0].empty() || args[0][0] == '-')
        return bad("validate: expects exactly one CONFIG (usage: idletime validate CONFIG)");
    idletime::Config cfg;
    std::vector<std::string> errors;
    if (!load(args[0], cfg, errors)) {
        for (const std::string &e : errors) std::cerr << "idletime: " << e << "\n";
        return kBadInput;
    }
    std::cout << args[0] << ": ok (" << cfg.tenants.size() << " tenants, " << cfg.pools.size() << " pools, "
              << cfg.quotas.size() << " quotas)\n";
    return 0;
}

// Runs idletime-<name> from IDLETIME_EXEC_PATH, then the libexec dir, then bindir; returns only
// on failure.
int run_external(const std::string &name, char **argv) {
    std::vector<std::string> dirs;
    if (const char *p = std::getenv("IDLETIME_EXEC_PATH")) dirs.push_back(p);
    dirs.push_back(IDLETIME_LIBEXECDIR);
    dirs.push_back(IDLETIME_BINDIR);  // idletime-replay and other tools installed in bin/
    for (const std::string &d : dirs) {
        std::string prog = d + "/idletime-" + name;
        if (access(prog.c_str(), X_OK) == 0) {
            argv[0] = const_cast<char *>(prog.c_str());
            execv(prog.c_str(), argv);
            return bad(prog + ": cannot run: " + std::strerror(errno));
        }
    }
    return bad("unknown command \"" + name + "\" (run idletime --help for the list)");
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 2) return bad("missing COMMAND (run idletime --help for the list)");
    std::string cmd = argv[1];
    std::vector<std::string> args(argv + 2, argv + argc);
    if (cmd == "help" || cmd == "--help" || cmd == "-h") return idletime::cmdline::help(kUsage);
    if (cmd == "--version") return idletime::cmdline::version("idletime");
    if (cmd == "render") return cmd_render(args);
    if (cmd == "validate") return cmd_validate(args);
    if (!cmd.empty() && cmd[0] == '-') return idletime::cmdline::unknown_option("idletime", cmd, kUsage);
    return run_external(cmd, argv + 1);
}
