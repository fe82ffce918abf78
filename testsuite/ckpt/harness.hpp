// Shared helpers for the checkpoint tests: temp dirs, a private munged, file mutation, logs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <sys/types.h>

#include "idletime/ckpt.h"

namespace ckpt_test {

std::string make_temp_dir(const std::string &tag);  // mode 0700, under /tmp
void remove_all(const std::string &path);
std::string read_file(const std::string &path);
void write_file(const std::string &path, const std::string &data);
bool exists(const std::string &path);
std::vector<std::string> list_dir(const std::string &path);
int run(const std::string &cmd);  // system(), returns exit status

// A munged of our own: fresh key, socket in its own 0755 directory, foreground, stopped by PID.
struct Munged {
    std::string dir, socket;
    pid_t pid = -1;
    // key_from: use that munged's key (same cluster); clock_offset: run it with its clock
    // shifted by that many seconds (LD_PRELOAD of testsuite/ckpt/.libs/libtimeshift.so).
    void start(const std::string &tag, const char *extra_arg = nullptr,
               const Munged *key_from = nullptr, long clock_offset = 0);
    void stop();
};

// Collects log lines of a handle (idletime_ckpt_options_t.log).
struct LogSink {
    std::vector<std::string> lines;
    static void fn(void *arg, const char *msg);
    bool contains(const std::string &needle) const;
    std::string joined() const;
};

idletime_ckpt_options_t opts(const char *job, int munge, LogSink *log, unsigned keep = 3);

// Opens dir; on failure fails the test with the handle's message.
idletime_ckpt_t *open_ok(const std::string &dir, const idletime_ckpt_options_t &o);
// Saves step with files "a" (size_a bytes of pattern step) and "b" (short text).
int save_step(idletime_ckpt_t *h, uint64_t step, size_t size_a = 4096, bool async = false);
std::string pattern(uint64_t step, size_t size);
// Latest step or UINT64_MAX when none.
uint64_t latest_step(idletime_ckpt_t *h);

}  // namespace ckpt_test
