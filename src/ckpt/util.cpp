#include "ckpt/util.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace idletime::ckpt {

void throw_errno(const std::string &what)
{
    int e = errno;
    throw Error(-e, what + ": " + std::strerror(e));
}

Fd &Fd::operator=(Fd &&o) noexcept
{
    if (this != &o) {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = o.release();
    }
    return *this;
}

Fd::~Fd()
{
    if (fd_ >= 0)
        ::close(fd_);
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new())
{
    if (!ctx_ || EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1) {
        EVP_MD_CTX_free(ctx_);
        throw Error(-ENOMEM, "cannot initialise SHA-256 (libcrypto)");
    }
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

void Sha256::update(const void *data, size_t len)
{
    if (len && EVP_DigestUpdate(ctx_, data, len) != 1)
        throw Error(-EIO, "SHA-256 update failed (libcrypto)");
}

namespace {

std::string to_hex(const unsigned char *md, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * n);
    for (size_t i = 0; i < n; i++) {
        out.push_back(digits[md[i] >> 4]);
        out.push_back(digits[md[i] & 15]);
    }
    return out;
}

}  // namespace

std::string Sha256::hex()
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (EVP_DigestFinal_ex(ctx_, md, &n) != 1)
        throw Error(-EIO, "SHA-256 final failed (libcrypto)");
    return to_hex(md, n);
}

std::string sha256_hex(std::string_view data)
{
    Sha256 h;
    h.update(data.data(), data.size());
    return h.hex();
}

Xxh128::Xxh128() : st_(XXH3_createState())
{
    if (!st_ || XXH3_128bits_reset(st_) != XXH_OK) {
        XXH3_freeState(st_);
        throw Error(-ENOMEM, "cannot initialise XXH3-128 (libxxhash)");
    }
}

Xxh128::~Xxh128() { XXH3_freeState(st_); }

void Xxh128::update(const void *data, size_t len)
{
    if (len && XXH3_128bits_update(st_, data, len) != XXH_OK)
        throw Error(-EIO, "XXH3-128 update failed (libxxhash)");
}

std::string Xxh128::hex() const
{
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st_));
    return to_hex(c.digest, sizeof c.digest);
}

void write_all(int fd, const void *data, size_t len, const std::string &what)
{
    auto *p = static_cast<const char *>(data);
    while (len > 0) {
        ssize_t n = ::write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw_errno("write " + what);
        }
        p += n;
        len -= static_cast<size_t>(n);
    }
}

std::string read_small(int fd, size_t max, const std::string &what)
{
    std::string out;
    char buf[65536];
    for (;;) {
        ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(out.size()));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw_errno("read " + what);
        }
        if (n == 0)
            return out;
        if (out.size() + static_cast<size_t>(n) > max)
            throw Error(-EFBIG, what + " is larger than " + std::to_string(max) + " bytes");
        out.append(buf, static_cast<size_t>(n));
    }
}

void fsync_or_throw(int fd, const std::string &what)
{
    if (::fsync(fd) != 0)
        throw_errno("fsync " + what);
}

void remove_tree(int dirfd, const std::string &name)
{
    int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return;
        if (errno == ENOTDIR || errno == ELOOP) {  // a file or symlink: just unlink it
            if (::unlinkat(dirfd, name.c_str(), 0) != 0 && errno != ENOENT)
                throw_errno("remove " + name);
            return;
        }
        throw_errno("open " + name + " for removal");
    }
    DIR *d = ::fdopendir(fd);
    if (!d) {
        ::close(fd);
        throw_errno("read directory " + name);
    }
    while (struct dirent *e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n == "." || n == "..")
            continue;
        if (::unlinkat(::dirfd(d), n.c_str(), 0) != 0 && errno == EISDIR)
            ::unlinkat(::dirfd(d), n.c_str(), AT_REMOVEDIR);
    }
    ::closedir(d);
    if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
        throw_errno("remove directory " + name);
}

std::string step_dir_name(uint64_t step)
{
    char buf[40];
    std::snprintf(buf, sizeof buf, "step-%012llu", static_cast<unsigned long long>(step));
    return buf;
}

bool parse_step_dir_name(std::string_view name, uint64_t *step)
{
    if (name.size() < 5 + 12 || name.size() > 5 + 20 || name.substr(0, 5) != "step-")
        return false;
    uint64_t v = 0;
    for (char c : name.substr(5)) {
        if (c < '0' || c > '9')
            return false;
        uint64_t d = static_cast<uint64_t>(c - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (step_dir_name(v) != name)  // exactly one spelling per step
        return false;
    *step = v;
    return true;
}

int64_t now_ns()
{
    struct timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

}  // namespace idletime::ckpt
