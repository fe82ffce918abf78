#include "tools/exporter/http_server.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace idletime::exporter {
namespace {

constexpr size_t kMaxRequest = 8192;
// A whole request head must arrive within this, however slowly its bytes trickle in (a client that
// sends a byte every few seconds would otherwise hold its connection thread for ever).
constexpr auto kHeadDeadline = std::chrono::seconds(5);
// A whole response must be taken within this.
constexpr auto kSendDeadline = std::chrono::seconds(30);
using Clock = std::chrono::steady_clock;

// SO_RCVTIMEO/SO_SNDTIMEO (opt) to what is left until deadline; false when nothing is left.
bool arm(int fd, int opt, Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    struct timeval tv{time_t(left / 1000000), suseconds_t(left % 1000000)};
    return ::setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof tv) == 0;
}

const char *reason(int status) {
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    }
    return "Error";
}

void send_all(int fd, const std::string &data) {
    size_t off = 0;
    const auto deadline = Clock::now() + kSendDeadline;
    while (off < data.size()) {
        if (!arm(fd, SO_SNDTIMEO, deadline)) return;  // the scraper takes too long: give up
        ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // the scraper went away: nothing to do
        off += size_t(n);
    }
}

// Reads the request head (up to the blank line); false when it is too long, cut off or not whole
// within kHeadDeadline.
bool read_head(int fd, std::string &head) {
    char buf[1024];
    const auto deadline = Clock::now() + kHeadDeadline;
    while (head.find("\r\n\r\n") == std::string::npos && head.find("\n\n") == std::string::npos) {
        if (head.size() > kMaxRequest || !arm(fd, SO_RCVTIMEO, deadline)) return false;
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        head.append(buf, size_t(n));
    }
    return true;
}

// No thread for the connection: say so without waiting for the client (it may not read).
void busy(int fd) {
    static const char k503[] =
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
        "Content-Length: 5\r\nConnection: close\r\nRetry-After: 1\r\n\r\nbusy\n";
    (void)::send(fd, k503, sizeof k503 - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    ::shutdown(fd, SHUT_WR);
    ::close(fd);
}

}  // namespace

bool split_listen(const std::string &listen, std::string &host, int &port) {
    std::string p = listen;
    host.clear();
    if (!listen.empty() && listen[0] == '[') {
        size_t close = listen.find("]:");
        if (close == std::string::npos) return false;
        host = listen.substr(1, close - 1);
        p = listen.substr(close + 2);
    } else if (size_t colon = listen.rfind(':'); colon != std::string::npos) {
        host = listen.substr(0, colon);
        p = listen.substr(colon + 1);
    } else {
        // A bare PORT changes the port only: every address needs an explicit "*:PORT".
        host = "127.0.0.1";
    }
    if (host == "*") host.clear();
    if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) return false;
    port = std::atoi(p.c_str());
    return port <= 65535;
}

HttpServer::~HttpServer() {
    if (fd_ >= 0) ::close(fd_);
}

bool HttpServer::bind(const std::string &listen, std::string &err) {
    std::string host;
    int port = 0;
    if (!split_listen(listen, host, port)) {
        err = "--listen=" + listen + ": not an address (allowed: PORT, HOST:PORT, [IPV6]:PORT; port 0-65535)";
        return false;
    }
    struct addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    std::string ps = std::to_string(port);
    int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), ps.c_str(), &hints, &res);
    if (rc != 0) return err = "--listen=" + listen + ": " + gai_strerror(rc), false;
    std::string last = "no address";
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) continue;
        int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd, 64) == 0) {
            struct sockaddr_storage ss{};
            socklen_t len = sizeof ss;
            ::getsockname(fd, reinterpret_cast<struct sockaddr *>(&ss), &len);
            port_ = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<struct sockaddr_in6 *>(&ss)->sin6_port)
                                             : ntohs(reinterpret_cast<struct sockaddr_in *>(&ss)->sin_port);
            fd_ = fd;
            break;
        }
        last = std::strerror(errno);
        ::close(fd);
    }
    ::freeaddrinfo(res);
    if (fd_ < 0) return err = "--listen=" + listen + ": cannot listen: " + last, false;
    return true;
}

void HttpServer::one(int fd, const Handler &h) {
    std::string head;
    Response r;
    bool head_only = false;
    if (!read_head(fd, head)) {
        r = {400, "text/plain; charset=utf-8", "bad request\n"};
    } else {
        std::string line = head.substr(0, head.find_first_of("\r\n"));
        size_t sp1 = line.find(' '), sp2 = line.find(' ', sp1 == std::string::npos ? sp1 : sp1 + 1);
        std::string method = line.substr(0, sp1);
        std::string target = sp1 == std::string::npos ? "" : line.substr(sp1 + 1, sp2 - sp1 - 1);
        target = target.substr(0, target.find('?'));
        if (sp1 == std::string::npos || sp2 == std::string::npos || line.compare(sp2 + 1, 5, "HTTP/") != 0)
            r = {400, "text/plain; charset=utf-8", "bad request\n"};
        else if (method != "GET" && method != "HEAD")
            r = {405, "text/plain; charset=utf-8", "only GET and HEAD\n"};
        else {
            head_only = method == "HEAD";
            try {
                r = h(target);
            } catch (const std::exception &e) {  // out of memory, a failed scrape: never abort
                r = {500, "text/plain; charset=utf-8", std::string("scrape failed: ") + e.what() + "\n"};
            }
        }
    }
    std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason(r.status) +
                      "\r\nContent-Type: " + r.content_type + "\r\nContent-Length: " + std::to_string(r.body.size()) +
                      "\r\nConnection: close\r\n" + (r.status == 405 ? "Allow: GET, HEAD\r\n" : "") + "\r\n";
    if (!head_only) out += r.body;
    send_all(fd, out);
}

// Serves connection fd on a thread of its own (serve() keeps a slot free), or answers 503 when no
// thread can be made.
void HttpServer::start(int fd, const Handler &h) {
    {
        std::lock_guard<std::mutex> lk(mu_);
        active_++;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);  // the thread inherits it: signals go to serve()
    try {
        std::thread([this, fd, &h] {
            one(fd, h);
            ::shutdown(fd, SHUT_WR);
            ::close(fd);
            std::lock_guard<std::mutex> lk(mu_);  // notify under the lock: serve() may return next
            active_--;
            done_.notify_all();
        }).detach();
    } catch (const std::system_error &) {
        {
            std::lock_guard<std::mutex> lk(mu_);
            active_--;
        }
        busy(fd);
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void HttpServer::serve(const Handler &h, const volatile int *stop) {
    while (!*stop) {
        {
            // All threads busy: accept nothing until one ends, so that new clients wait in the
            // listen backlog (a silent client holds its thread for at most the 5 s head deadline).
            std::unique_lock<std::mutex> lk(mu_);
            if (active_ >= kMaxConnections) {
                done_.wait_for(lk, std::chrono::seconds(1));
                continue;  // look at *stop again
            }
        }
        int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) {
            // EINTR (a signal: look at *stop) or a connection reset before accept: at once. Out of
            // descriptors or memory: wait a little instead of spinning on the same error.
            if (errno != EINTR && errno != ECONNABORTED) ::poll(nullptr, 0, 100);
            continue;
        }
        start(c, h);
    }
    std::unique_lock<std::mutex> lk(mu_);
    done_.wait(lk, [this] { return active_ == 0; });
}

}  // namespace idletime::exporter
