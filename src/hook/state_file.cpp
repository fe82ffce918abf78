// See state_file.hpp.
#include "hook/state_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace idletime::hook {

int open_state_file(const std::string &path, std::string &err) noexcept {
    try {
        const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            err = path + ": " + (errno == ELOOP ? std::string("a symbolic link") : strerror(errno));
            return -1;
        }
        struct stat st {};
        const char *why = fstat(fd, &st) != 0      ? "cannot stat it"
                          : !S_ISREG(st.st_mode)   ? "not a regular file"
                          : st.st_nlink != 1       ? "a file with more than one link"
                          : st.st_uid != geteuid() ? "owned by another user"
                                                   : nullptr;
        if (!why) return fd;
        close(fd);
        err = path + ": " + why + " (allowed: a regular file with one link owned by uid " +
              std::to_string(geteuid()) + ")";
    } catch (...) {  // out of memory for the message
    }
    return -1;
}

bool lock_state_file(int fd, int how, int max_ms) noexcept {
    for (int waited = 0;; waited += 10) {
        if (flock(fd, how | LOCK_NB) == 0) return true;
        if ((errno != EWOULDBLOCK && errno != EINTR) || waited >= max_ms) return false;
        usleep(10000);
    }
}

}  // namespace idletime::hook
