// idletime-exporter --textfile (see textfile.hpp).
#include "tools/exporter/textfile.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace idletime::exporter {

namespace {

std::string base_name(const std::string &path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool write_all(int fd, const std::string &text) {
    size_t done = 0;
    while (done < text.size()) {
        ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += size_t(n);
    }
    return true;
}

}  // namespace

std::string textfile_path_error(const std::string &path) {
    const std::string base = base_name(path);
    const std::string ext = ".prom";
    if (base.size() <= ext.size() || base.compare(base.size() - ext.size(), ext.size(), ext) != 0)
        return "--textfile=" + path + ": the file name must end in .prom (node_exporter's textfile collector reads only *.prom)";
    if (base[0] == '.') return "--textfile=" + path + ": the file name must not start with a dot";
    return "";
}

bool write_textfile(const std::string &path, const std::string &text, std::string &err) {
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    // An unpredictable name (mkostemp: O_EXCL, 0600): nobody who can write the directory can
    // plant a file or symlink there in advance.
    std::string tmp = dir + "/." + base_name(path) + ".tmp.XXXXXX";
    int fd = mkostemp(tmp.data(), O_CLOEXEC);
    if (fd < 0) return err = "cannot create a temporary file in " + dir + ": " + strerror(errno), false;
    bool ok = fchmod(fd, 0644) == 0 && write_all(fd, text) && fsync(fd) == 0;
    int saved = errno;
    if (close(fd) != 0 && ok) ok = false, saved = errno;
    if (ok && rename(tmp.c_str(), path.c_str()) == 0) return true;
    if (ok) saved = errno;
    err = std::string(ok ? "cannot rename " + tmp + " to " + path : "cannot write " + tmp) + ": " + strerror(saved);
    unlink(tmp.c_str());
    return false;
}

}  // namespace idletime::exporter
