// A small blocking HTTP/1.x server for idletime-exporter: one connection at a time, GET and HEAD
// only, every response closes the connection. Enough for a Prometheus scraper; nothing else. A
// request head must arrive whole within 5 s and a response be taken within 30 s, so a slow or
// stalled client holds the server for at most that long.
#pragma once
#include <functional>
#include <string>

namespace idletime::exporter {

struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
};

// path (without the query string) -> response.
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
    // Serves until *stop becomes true (checked after each connection and on EINTR).
    void serve(const Handler &h, const volatile int *stop);

private:
    void one(int fd, const Handler &h);
    int fd_ = -1;
    int port_ = 0;
};

// Splits "HOST:PORT" / "[V6]:PORT" / "PORT". False when the port is not 0-65535.
bool split_listen(const std::string &listen, std::string &host, int &port);

}  // namespace idletime::exporter
