#include "ckpt/notice.hpp"

#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <fcntl.h>
#include <unistd.h>

#include "ckpt/util.hpp"

namespace idletime::ckpt {
namespace {

// Signal handlers have no context pointer, so this state is necessarily process-wide.
volatile std::sig_atomic_t g_flag = 0;
std::atomic<int64_t> g_time{0};
std::atomic<int64_t> g_grace{0};
std::atomic<int> g_signo{0};
// The notice pipe (notice_fd()): the handler writes one byte to g_wfd, in the process that
// installed it only (g_pid): a forked child (a DataLoader worker getting SIGTERM) shares the pipe
// and must not make its parent look notified.
std::atomic<int> g_rfd{-1};
std::atomic<int> g_wfd{-1};
std::atomic<pid_t> g_pid{0};
static_assert(std::atomic<int64_t>::is_always_lock_free, "handler needs lock-free atomics");
static_assert(std::atomic<int>::is_always_lock_free, "handler needs lock-free atomics");
static_assert(std::atomic<pid_t>::is_always_lock_free, "handler needs lock-free atomics");

extern "C" void on_notice(int)
{
    if (g_flag)
        return;
    const int saved = errno;
    struct timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);  // async-signal-safe
    g_time.store(ts.tv_sec);
    g_flag = 1;
    const int fd = g_wfd.load();
    if (fd >= 0 && ::getpid() == g_pid.load()) {  // write() and getpid() are async-signal-safe
        const char one = 1;
        [[maybe_unused]] ssize_t n = ::write(fd, &one, 1);  // a full pipe is readable anyway
    }
    errno = saved;
}

// Creates the notice pipe once per process (non-blocking, close-on-exec).
void open_pipe()
{
    if (g_rfd.load() >= 0 && g_pid.load() == ::getpid())
        return;
    int fds[2];
    if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0)
        throw_errno("pipe2 (notice descriptor)");
    g_pid.store(::getpid());
    g_wfd.store(fds[1]);
    g_rfd.store(fds[0]);
}

int64_t parse_grace()
{
    const char *g = std::getenv("IDLETIME_GRACE_TIME");
    if (!g || !*g)
        return 0;
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(g, &end, 10);
    if (errno || *end || v < 0 || v > 86400 * 365)
        throw Error(-EINVAL, std::string("IDLETIME_GRACE_TIME=\"") + g +
                                 "\" is not a number of seconds >= 0");
    return v;
}

}  // namespace

int parse_signal(const std::string &s)
{
    if (s.empty())
        return -1;
    if (std::isdigit(static_cast<unsigned char>(s[0]))) {
        char *end = nullptr;
        long v = std::strtol(s.c_str(), &end, 10);
        return (*end || v <= 0 || v > SIGRTMAX) ? -1 : static_cast<int>(v);
    }
    std::string up;
    for (char c : s)
        up.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    if (up.rfind("SIG", 0) == 0)
        up = up.substr(3);
    for (int sig = 1; sig < SIGRTMIN; sig++) {
        const char *abbrev = ::sigabbrev_np(sig);
        if (abbrev && up == abbrev)
            return sig;
    }
    return -1;
}

int install_notice(int signo)
{
    if (signo == 0) {
        const char *env = std::getenv("IDLETIME_CKPT_SIGNAL");
        signo = SIGUSR1;
        if (env && *env && (signo = parse_signal(env)) < 0)
            throw Error(-EINVAL, std::string("IDLETIME_CKPT_SIGNAL=\"") + env +
                                     "\" is not a signal; allowed: a name like USR1/SIGUSR2 or "
                                     "a number");
    }
    if (signo <= 0 || signo > SIGRTMAX || signo == SIGKILL || signo == SIGSTOP)
        throw Error(-EINVAL, "signal " + std::to_string(signo) + " cannot carry the notice");
    g_grace.store(parse_grace());
    open_pipe();
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_notice;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (::sigaction(signo, &sa, nullptr) != 0 || ::sigaction(SIGTERM, &sa, nullptr) != 0)
        throw_errno("sigaction");
    g_signo.store(signo);
    return signo;
}

bool notice_received() { return g_flag != 0; }

int64_t notice_deadline() { return g_flag ? g_time.load() + g_grace.load() : 0; }

int notice_signal() { return g_signo.load(); }

int notice_fd() { return g_signo.load() ? g_rfd.load() : -1; }

}  // namespace idletime::ckpt
