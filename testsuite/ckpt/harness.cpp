#include "harness.hpp"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ckpt_test {

std::string make_temp_dir(const std::string &tag)
{
    std::string tmpl = "/tmp/idletime-ckpt-" + tag + ".XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    ck_assert_msg(mkdtemp(buf.data()) != nullptr, "mkdtemp: %s", strerror(errno));
    return buf.data();
}

void remove_all(const std::string &path)
{
    if (!path.empty() && path.rfind("/tmp/idletime-ckpt-", 0) == 0)
        run("rm -rf '" + path + "'");
}

std::string read_file(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write_file(const std::string &path, const std::string &data)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << data;
    ck_assert_msg(out.good(), "cannot write %s", path.c_str());
}

bool exists(const std::string &path)
{
    struct stat st;
    return lstat(path.c_str(), &st) == 0;
}

std::vector<std::string> list_dir(const std::string &path)
{
    std::vector<std::string> out;
    DIR *d = opendir(path.c_str());
    if (!d)
        return out;
    while (struct dirent *e = readdir(d))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            out.emplace_back(e->d_name);
    closedir(d);
    return out;
}

int run(const std::string &cmd)
{
    int st = system(cmd.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void Munged::start(const std::string &tag, const char *extra_arg, const Munged *key_from,
                   long clock_offset)
{
    dir = make_temp_dir("munge-" + tag);
    chmod(dir.c_str(), 0755);  // munged refuses a 0700 socket directory
    socket = dir + "/socket";
    if (key_from)
        ck_assert_int_eq(run("cp '" + key_from->dir + "/key' '" + dir + "/key'"), 0);
    else
        ck_assert_int_eq(run("dd if=/dev/urandom of='" + dir + "/key' bs=1024 count=1 "
                             "2>/dev/null && chmod 600 '" + dir + "/key'"), 0);
    std::string shim;
    if (clock_offset) {
        char *p = realpath("testsuite/ckpt/.libs/libtimeshift.so", nullptr);
        ck_assert_msg(p, "testsuite/ckpt/.libs/libtimeshift.so not built (run from the build dir)");
        shim = p;
        free(p);
    }
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (clock_offset) {
            setenv("LD_PRELOAD", shim.c_str(), 1);
            setenv("IDLETIME_TEST_TIME_OFFSET", std::to_string(clock_offset).c_str(), 1);
        }
        std::string s = "--socket=" + socket, k = "--key-file=" + dir + "/key",
                    p = "--pid-file=" + dir + "/pid", l = "--log-file=" + dir + "/log",
                    seed = "--seed-file=" + dir + "/seed";
        int null = open("/dev/null", O_WRONLY);  // it logs to its --log-file as well
        dup2(null, 1);
        dup2(null, 2);
        execl("/usr/sbin/munged", "munged", "-F", s.c_str(), k.c_str(), p.c_str(), l.c_str(),
              seed.c_str(), extra_arg, (char *)nullptr);
        _exit(127);
    }
    for (int i = 0; i < 500 && !exists(socket); i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ck_assert_msg(exists(socket), "munged did not create %s: %s", socket.c_str(),
                  read_file(dir + "/log").c_str());
}

void Munged::stop()
{
    if (pid > 0) {
        kill(pid, SIGTERM);
        waitpid(pid, nullptr, 0);
        pid = -1;
    }
    remove_all(dir);
}

void LogSink::fn(void *arg, const char *msg)
{
    static_cast<LogSink *>(arg)->lines.emplace_back(msg);
}

bool LogSink::contains(const std::string &needle) const
{
    for (const auto &l : lines)
        if (l.find(needle) != std::string::npos)
            return true;
    return false;
}

std::string LogSink::joined() const
{
    std::string out;
    for (const auto &l : lines)
        out += l + "\n";
    return out;
}

idletime_ckpt_options_t opts(const char *job, int munge, LogSink *log, unsigned keep)
{
    idletime_ckpt_options_t o;
    idletime_ckpt_options_init(&o);
    o.job_id = job;
    o.require_munge = munge;
    o.keep_last = keep;
    if (log) {
        o.log = &LogSink::fn;
        o.log_arg = log;
    }
    return o;
}

idletime_ckpt_t *open_ok(const std::string &dir, const idletime_ckpt_options_t &o)
{
    idletime_ckpt_t *h = nullptr;
    int rc = idletime_ckpt_open(dir.c_str(), &o, &h);
    ck_assert_msg(rc == 0, "open %s: %d %s", dir.c_str(), rc, idletime_ckpt_last_error(h));
    return h;
}

std::string pattern(uint64_t step, size_t size)
{
    std::string s(size, '\0');
    uint64_t x = step * 0x9E3779B97F4A7C15ULL + 1;
    for (size_t i = 0; i < size; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s[i] = static_cast<char>(x);
    }
    return s;
}

int save_step(idletime_ckpt_t *h, uint64_t step, size_t size_a, bool async)
{
    static thread_local std::string a, b;
    a = pattern(step, size_a);
    b = "step " + std::to_string(step);
    int rc = idletime_ckpt_begin(h, step);
    if (rc)
        return rc;
    if ((rc = idletime_ckpt_add(h, "a", a.data(), a.size())) ||
        (rc = idletime_ckpt_add(h, "b.txt", b.data(), b.size())))
        return rc;
    return async ? idletime_ckpt_commit_async(h) : idletime_ckpt_commit(h);
}

uint64_t latest_step(idletime_ckpt_t *h)
{
    uint64_t s = 0;
    return idletime_ckpt_latest(h, &s, nullptr, 0) == 0 ? s : UINT64_MAX;
}

}  // namespace ckpt_test
