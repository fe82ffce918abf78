// A small HTTP/1.x server for idletime-exporter: GET and HEAD only, every response closes the
// connection. Enough for a Prometheus scraper; nothing else. Each connection is served by a thread
// of its own, at most kMaxConnections at once (more wait in the listen backlog); a request head
// must arrive whole within 5 s and a response be taken within 30 s, so a slow or stalled client
// holds one of them for at most that long. A handler that throws gets its client a 500.
#pragma once
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

namespace idletime::exporter {

struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
};

// path (without the query string) -> response. Called from several threads at once.
using Handler = std::function<Response(const std::string &path)>;

class HttpServer {
public:
    HttpServer() = default;
    ~HttpServer();
    HttpServer(const HttpServer &) = delete;
    HttpServer &operator=(const HttpServer &) = delete;

    // listen: "PORT", "HOST:PORT" or "[V6ADDR]:PORT" (HOST empty or "*" = every address).
    // False with err naming what is wrong and what is allowed.
    bool bind(const std::string &listen, std::string &err);
    // The port actually bound (useful with port 0).
    int port() const { return port_; }
    // Serves until *stop becomes true (checked after each accept and on EINTR), then waits for
    // the connections still being served. Signals are blocked in the connection threads, so a
    // SIGTERM interrupts accept() here.
    void serve(const Handler &h, const volatile int *stop);

    static constexpr int kMaxConnections = 16;

private:
    void one(int fd, const Handler &h);
    void start(int fd, const Handler &h);
    int fd_ = -1;
    int port_ = 0;
    std::mutex mu_;
    std::condition_variable done_;
    int active_ = 0;  // connection threads running (guarded by mu_)
};

// Splits "HOST:PORT" / "[V6]:PORT" / "PORT". False when the port is not 0-65535.
bool split_listen(const std::string &listen, std::string &host, int &port);

}  // namespace idletime::exporter
