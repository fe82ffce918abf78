// Worker processes of idletime-run: launch, tee, watch, stop, restart.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <fstream>
#include <sstream>

#include "agent/agent.hpp"

namespace idletime::agent {
namespace {

int g_sigpipe[2] = {-1, -1};
const int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT};

void on_signal(int sig) {
    int saved = errno;
    unsigned char b = static_cast<unsigned char>(sig);
    ssize_t r = write(g_sigpipe[1], &b, 1);
    (void)r;
    errno = saved;
}

struct Stream {
    int fd = -1;
    int out = 1;          // where the bytes are copied to
    std::string partial;  // incomplete last line
};

struct Worker {
    uint32_t index = 0;
    pid_t pid = -1;
    Stream s[2];
    int64_t started = 0, last_output = 0, last_hb = 0;
    bool saving = false;
    std::string hb_path, hb_text;
    bool running = false, done = false;
    int status = 0;          // exit status once done
    int64_t relaunch_at = 0; // async: pending restart
    std::vector<std::string> lines;  // matched lines of the current run
};

int64_t now_s() { return int64_t(time(nullptr)); }

void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void msg(const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "idletime/run: %s\n", buf);
    fflush(stderr);
}

int exit_status(int wstatus) {
    if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
    return 1;
}

class Runner {
public:
    Runner(const Options &o, uint32_t base) : o_(o), m_(o.ft), base_failures_(base) {}
    Outcome run();

private:
    bool launch(Worker &w);
    void child_exec(Worker &w, int out[2], int err[2]);
    void pump(Worker &w, int which);
    void feed(Worker &w, const std::string &line);
    void read_heartbeat(Worker &w);
    void reap();
    void handle_signals();
    void stop_all(int sig);
    bool check_hang();
    void after_exit(Worker &w);

    const Options &o_;
    ft::Matcher m_;
    uint32_t base_failures_;
    std::deque<Worker> w_;
    Outcome out_;
    bool stopping_ = false;
    int64_t kill_at_ = 0;
};

bool Runner::launch(Worker &w) {
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
        msg("worker %u: pipe: %s", w.index, strerror(errno));
        return false;
    }
    pid_t pid = fork();
    if (pid < 0) {
        msg("worker %u: fork: %s", w.index, strerror(errno));
        return false;
    }
    if (pid == 0) child_exec(w, out, err);
    close(out[1]);
    close(err[1]);
    w.pid = pid;
    w.s[0] = Stream{out[0], 1, ""};
    w.s[1] = Stream{err[0], 2, ""};
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    w.started = now_s();
    w.last_output = w.last_hb = 0;
    w.running = true;
    w.done = false;
    w.lines.clear();
    unlink(w.hb_path.c_str());
    w.hb_text.clear();
    w.saving = false;
    return true;
}

void Runner::child_exec(Worker &w, int out[2], int err[2]) {
    setpgid(0, 0);  // own group: signals reach the whole worker
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : kForwarded) signal(sig, SIG_DFL);
    dup2(out[1], 1);
    dup2(err[1], 2);
    setenv("IDLETIME_HEARTBEAT_FILE", w.hb_path.c_str(), 1);
    setenv("IDLETIME_WORKER_INDEX", std::to_string(w.index).c_str(), 1);
    setenv("IDLETIME_WORKERS", std::to_string(o_.workers).c_str(), 1);
    std::vector<std::string> args;
    if (o_.srun) args = {"srun", "--ntasks=1", "--nodes=1", "--exact", "--kill-on-bad-exit=1"};
    args.insert(args.end(), o_.cmd.begin(), o_.cmd.end());
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    fprintf(stderr, "idletime/run: cannot run \"%s\": %s\n", argv[0], strerror(errno));
    _exit(kExitLaunch);
}

void Runner::feed(Worker &w, const std::string &line) {
    if (o_.ft.policy != FtPolicy::ExitCodeAndErrorMsg || !m_.any(line)) return;
    w.lines.push_back(line.substr(0, ft::kMaxLine));
    if (w.lines.size() > ft::kMaxLines) w.lines.erase(w.lines.begin());
}

void Runner::pump(Worker &w, int which) {
    Stream &s = w.s[which];
    char buf[65536];
    for (;;) {
        ssize_t n = read(s.fd, buf, sizeof buf);
        if (n > 0) {
            w.last_output = now_s();
            for (ssize_t off = 0; off < n;) {
                ssize_t k = write(s.out, buf + off, size_t(n - off));
                if (k <= 0) break;  // our own output is gone: keep watching anyway
                off += k;
            }
            s.partial.append(buf, size_t(n));
            size_t pos;
            while ((pos = s.partial.find('\n')) != std::string::npos) {
                feed(w, s.partial.substr(0, pos));
                s.partial.erase(0, pos + 1);
            }
            if (s.partial.size() > 8192) s.partial.erase(0, s.partial.size() - 8192);
            continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            if (!s.partial.empty()) feed(w, s.partial);
            s.partial.clear();
            close(s.fd);
            s.fd = -1;
        }
        return;
    }
}

void Runner::read_heartbeat(Worker &w) {
    std::ifstream in(w.hb_path);
    if (!in) return;
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    if (text == w.hb_text) return;
    w.hb_text = text;
    w.last_hb = now_s();
    ft::Heartbeat hb;
    w.saving = ft::parse_heartbeat(text, hb) && hb.saving;
}

void Runner::stop_all(int sig) {
    for (auto &w : w_)
        if (w.running) kill(-w.pid, sig);
    if (sig == SIGTERM && !kill_at_) kill_at_ = now_s() + o_.kill_wait_s;
}

void Runner::handle_signals() {
    unsigned char b;
    while (read(g_sigpipe[0], &b, 1) == 1) {
        msg("forwarding signal %d (%s) to the workers", b, ft::signal_name(b).c_str());
        for (auto &w : w_)
            if (w.running) kill(-w.pid, b);
        if (b == SIGTERM || b == SIGINT) stopping_ = true;  // preempted or cancelled: no restarts
    }
}

void Runner::reap() {
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        for (auto &w : w_) {
            if (w.pid != pid || !w.running) continue;
            for (int i = 0; i < 2; i++)
                if (w.s[i].fd >= 0) pump(w, i);  // drain what is left
            w.running = false;
            w.status = exit_status(st);
            after_exit(w);
        }
    }
}

// Sync: all workers together (any one silent counts only if all are). Async: per worker.
bool Runner::check_hang() {
    if (o_.ft.hang_timeout_s == 0 || stopping_) return false;
    const int64_t now = now_s();
    ft::Activity all{INT64_MAX, 0, 0, false};
    for (auto &w : w_) {
        if (!w.running) continue;
        read_heartbeat(w);
        ft::Activity a{w.started, w.last_output, w.last_hb, w.saving};
        if (o_.ft.run_type == RunType::Async) {
            ft::HangCheck h = ft::hang_check(o_.ft.hang_timeout_s, a, now);
            if (h.hung) {
                msg("worker %u hung: no output or heartbeat for %lld s; stopping it", w.index,
                    (long long)h.silent_s);
                out_.silent_s = uint32_t(h.silent_s);
                w.status = kExitHung;
                w.relaunch_at = -1;  // marks "stopped as hung" for after_exit
                kill(-w.pid, SIGKILL);
            }
            continue;
        }
        all.started = std::min(all.started, a.started);
        all.last_output = std::max(all.last_output, a.last_output);
        all.last_heartbeat = std::max(all.last_heartbeat, a.last_heartbeat);
        all.saving = all.saving || a.saving;
    }
    if (o_.ft.run_type == RunType::Async || all.started == INT64_MAX) return false;
    ft::HangCheck h = ft::hang_check(o_.ft.hang_timeout_s, all, now);
    if (!h.hung) return false;
    msg("hung: no output or heartbeat for %lld s; stopping the workers", (long long)h.silent_s);
    out_.hung = true;
    out_.silent_s = uint32_t(h.silent_s);
    stopping_ = true;
    stop_all(SIGTERM);
    return true;
}

void Runner::after_exit(Worker &w) {
    const bool hung = w.relaunch_at == -1;
    if (hung) w.status = kExitHung;
    w.relaunch_at = 0;
    for (auto &l : w.lines) out_.lines.push_back(l);
    while (out_.lines.size() > ft::kMaxLines) out_.lines.erase(out_.lines.begin());
    if (w.status == 0) {
        w.done = true;
        return;
    }
    msg("worker %u exited with status %d", w.index, w.status);
    if (stopping_ || o_.ft.run_type == RunType::Sync) {
        if (!stopping_) {
            stopping_ = true;
            stop_all(SIGTERM);
        }
        w.done = true;
        if (out_.status == 0) out_.status = out_.hung ? kExitHung : w.status;
        return;
    }
    ft::ExitInfo e;
    e.exit_code = w.status;
    e.hung = hung;
    e.silent_s = out_.silent_s;
    e.output_lines = w.lines;
    ft::Classification cl = ft::classify(o_.ft, m_, e);
    ft::Counters c{0, base_failures_ + out_.worker_restarts};
    ft::Decision d = ft::decide(o_.ft, c, cl);
    if (d.action == ft::Action::Restart) {
        out_.worker_restarts++;
        w.relaunch_at = now_s() + d.delay_s;
        msg("worker %u: %s", w.index, d.reason.c_str());
        return;
    }
    msg("worker %u: %s; stopping the job", w.index, d.reason.c_str());
    out_.hung = hung;
    out_.status = w.status;
    w.done = true;
    stopping_ = true;
    stop_all(SIGTERM);
}

Outcome Runner::run() {
    for (uint32_t i = 0; i < o_.workers; i++) {
        Worker w;
        w.index = i;
        w.hb_path = o_.heartbeat_dir + "/hb." + std::to_string(i);
        w_.push_back(w);
    }
    for (auto &w : w_) {
        if (!launch(w)) {
            out_.status = kExitLaunch;
            stopping_ = true;
            stop_all(SIGTERM);
            break;
        }
    }
    for (;;) {
        std::vector<pollfd> fds{{g_sigpipe[0], POLLIN, 0}};
        std::vector<std::pair<Worker *, int>> who{{nullptr, 0}};
        for (auto &w : w_)
            for (int i = 0; i < 2; i++)
                if (w.s[i].fd >= 0) {
                    fds.push_back({w.s[i].fd, POLLIN, 0});
                    who.push_back({&w, i});
                }
        poll(fds.data(), fds.size(), 500);
        for (size_t k = 1; k < fds.size(); k++)
            if (fds[k].revents) pump(*who[k].first, who[k].second);
        if (fds[0].revents) handle_signals();
        reap();
        check_hang();
        const int64_t now = now_s();
        if (kill_at_ && now >= kill_at_) {
            stop_all(SIGKILL);
            kill_at_ = 0;
        }
        bool active = false;
        for (auto &w : w_) {
            if (!w.running && !w.done && w.relaunch_at > 0 && !stopping_ && now >= w.relaunch_at) {
                msg("restarting worker %u (restart %u inside the allocation)", w.index,
                    out_.worker_restarts);
                if (!launch(w)) w.done = true;
            }
            active = active || w.running || (!w.done && w.relaunch_at > 0 && !stopping_);
        }
        if (!active) break;
    }
    if (out_.status == 0)
        for (auto &w : w_)
            if (w.status != 0) out_.status = w.status;
    if (out_.hung) out_.status = kExitHung;
    return out_;
}

}  // namespace

Outcome run_workers(const Options &o, uint32_t base_failures) {
    if (pipe2(g_sigpipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        Outcome bad;
        bad.status = kExitLaunch;
        return bad;
    }
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int sig : kForwarded) sigaction(sig, &sa, nullptr);
    Runner r(o, base_failures);
    return r.run();
}

}  // namespace idletime::agent
