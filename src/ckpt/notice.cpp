#include "ckpt/notice.hpp"

#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <mutex>

#include <sys/socket.h>
#include <unistd.h>

#include "ckpt/util.hpp"

namespace idletime::ckpt {
namespace {

// Signal handlers have no context pointer, so this state is necessarily process-wide.
volatile std::sig_atomic_t g_flag = 0;
std::atomic<int64_t> g_time{0};
std::atomic<int64_t> g_grace{0};
std::atomic<int> g_signo{0};
// The notice descriptor (notice_fd()): a socket pair; the handler sends one byte on g_wfd (send
// with MSG_NOSIGNAL: a read end the user closed costs an EPIPE, never a SIGPIPE), in the process
// that made it only (g_pid): a forked child (a DataLoader worker getting SIGTERM) inherits the
// handler and the pair and must not make its parent look notified.
std::atomic<int> g_rfd{-1};
std::atomic<int> g_wfd{-1};
std::atomic<pid_t> g_pid{0};
std::mutex g_install;  // install_notice() from two threads makes one pair
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
    if (fd >= 0 && ::getpid() == g_pid.load()) {  // send() and getpid() are async-signal-safe
        const char one = 1;
        [[maybe_unused]] ssize_t n = ::send(fd, &one, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    errno = saved;
}

// Makes the notice pair once per process (non-blocking, close-on-exec). In a forked child that
// installs again, the pair inherited from the parent is closed first (the handler cannot send on
// it meanwhile: g_wfd is -1 until the new pair is complete).
void open_pair()
{
    const pid_t me = ::getpid();
    if (g_rfd.load() >= 0 && g_pid.load() == me)
        return;
    const int old_r = g_rfd.exchange(-1), old_w = g_wfd.exchange(-1);
    if (old_r >= 0)
        ::close(old_r);
    if (old_w >= 0)
        ::close(old_w);
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0)
        throw_errno("socketpair (notice descriptor)");
    ::shutdown(fds[0], SHUT_WR);
    g_pid.store(me);
    g_rfd.store(fds[0]);
    g_wfd.store(fds[1]);  // last: the handler sends only on a complete pair of this process
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
    std::lock_guard<std::mutex> lock(g_install);
    g_grace.store(parse_grace());
    open_pair();
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_notice;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, signo);  // the notice and SIGTERM never interrupt each other's handler
    sigaddset(&sa.sa_mask, SIGTERM);
    if (::sigaction(signo, &sa, nullptr) != 0 || ::sigaction(SIGTERM, &sa, nullptr) != 0)
        throw_errno("sigaction");
    g_signo.store(signo);
    return signo;
}

bool notice_received() { return g_flag != 0; }

int64_t notice_deadline() { return g_flag ? g_time.load() + g_grace.load() : 0; }

int notice_signal() { return g_signo.load(); }

int notice_fd()
{
    // A forked child that did not install again gets none: the inherited descriptor is its
    // parent's and would wake on the parent's notice, never on the child's.
    return g_signo.load() && g_pid.load() == ::getpid() ? g_rfd.load() : -1;
}

}  // namespace idletime::ckpt
