// Small POSIX helpers for the checkpoint library: errors with errno codes, owned fds, SHA-256,
// XXH3-128.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <openssl/evp.h>
#include <xxhash.h>

namespace idletime::ckpt {

// Every failure inside the library: a negative errno and a one-line message.
class Error : public std::runtime_error {
public:
    Error(int code, const std::string &msg) : std::runtime_error(msg), code_(code) {}
    int code() const noexcept { return code_; }

private:
    int code_;
};

// Throws Error(-errno, "<what>: <strerror>") for the current errno.
[[noreturn]] void throw_errno(const std::string &what);

class Fd {
public:
    explicit Fd(int fd = -1) noexcept : fd_(fd) {}
    Fd(Fd &&o) noexcept : fd_(o.release()) {}
    Fd &operator=(Fd &&o) noexcept;
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    ~Fd();
    int get() const noexcept { return fd_; }
    int release() noexcept { int f = fd_; fd_ = -1; return f; }
    explicit operator bool() const noexcept { return fd_ >= 0; }

private:
    int fd_;
};

class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256 &) = delete;
    Sha256 &operator=(const Sha256 &) = delete;
    void update(const void *data, size_t len);
    std::string hex();  // finalizes; lower-case, 64 chars

private:
    EVP_MD_CTX *ctx_;
};

std::string sha256_hex(std::string_view data);

// Streaming XXH3-128 (libxxhash); hex() gives its canonical big-endian form, 32 lower-case hex
// chars, as `xxhsum -H2` prints it.
class Xxh128 {
public:
    Xxh128();
    ~Xxh128();
    Xxh128(const Xxh128 &) = delete;
    Xxh128 &operator=(const Xxh128 &) = delete;
    void update(const void *data, size_t len);
    std::string hex() const;

private:
    XXH3_state_t *st_;
};

void write_all(int fd, const void *data, size_t len, const std::string &what);
// Reads at most max bytes of fd from its start; throws if the file is larger.
std::string read_small(int fd, size_t max, const std::string &what);
void fsync_or_throw(int fd, const std::string &what);

// Removes dir/name and its entries (one level: checkpoint directories hold only files).
void remove_tree(int dirfd, const std::string &name);

std::string step_dir_name(uint64_t step);  // "step-000000000042"
bool parse_step_dir_name(std::string_view name, uint64_t *step);

int64_t now_ns();  // CLOCK_REALTIME

}  // namespace idletime::ckpt
