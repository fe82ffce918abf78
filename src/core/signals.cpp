#include "core/signals.hpp"

#include <csignal>
#include <cstdlib>

namespace idletime {
namespace {

struct Sig {
    const char *name;
    int signo;
};
// Signals a training process can catch and that Slurm's --signal accepts.
constexpr Sig kSignals[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM}, {"INT", SIGINT},
                            {"HUP", SIGHUP},   {"URG", SIGURG},   {"ALRM", SIGALRM}, {"CONT", SIGCONT}};

}  // namespace

int signal_number(const std::string &name) {
    std::string n = name.rfind("SIG", 0) == 0 ? name.substr(3) : name;
    for (const Sig &s : kSignals)
        if (n == s.name) return s.signo;
    if (!n.empty() && n.find_first_not_of("0123456789") == std::string::npos && n.size() < 4) {
        int v = std::atoi(n.c_str());
        for (const Sig &s : kSignals)
            if (v == s.signo) return v;
    }
    return 0;
}

std::string signal_name(int signo) {
    for (const Sig &s : kSignals)
        if (signo == s.signo) return s.name;
    return "";
}

std::string signal_names() {
    std::string out;
    for (const Sig &s : kSignals) out += (out.empty() ? "" : ", ") + std::string(s.name);
    return out;
}

}  // namespace idletime
