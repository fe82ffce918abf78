// Per-submission nonce that names a job's checkpoint directory (<jobid>-<key>): job_submit/idletime
// stamps it into the job (spank_job_env and the batch environment, which a requeue keeps), the
// client makes one for interactive jobs. Random (getrandom, never blocks: GRND_NONBLOCK), else the
// clock, pid and a counter mixed; uniqueness, not secrecy, is what matters (see ckpt_dir.hpp).
#pragma once
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace idletime::spank {

inline std::string new_job_key() {
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof v)) {
        static uint64_t counter = 0;
        timespec ts{};
        clock_gettime(CLOCK_REALTIME, &ts);
        v = uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec) + (uint64_t(getpid()) << 40) + ++counter;
        v ^= v >> 30;  // splitmix64 finaliser
        v *= 0xbf58476d1ce4e5b9ull;
        v ^= v >> 27;
        v *= 0x94d049bb133111ebull;
        v ^= v >> 31;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

}  // namespace idletime::spank
