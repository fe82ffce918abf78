// Benchmark of libidletime-ckpt: training-loop stall per async save vs a plain memcpy of the
// same bytes, and persist throughput of an async save, commit_async() call to durable (printed;
// bench/ckpt/run.sh compares it with dd). sync_commit_MBps: commit() from unaligned buffers.
// Usage: ckpt_bench DIR MIB ROUNDS   (4 buffers of MIB/4 MiB each; no munge)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <dirent.h>

#include "idletime/ckpt.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int fail(idletime_ckpt_t *h, const char *what)
{
    std::fprintf(stderr, "idletime/ckpt-bench: %s: %s\n", what, idletime_ckpt_last_error(h));
    return 1;
}

int add_all(idletime_ckpt_t *h, uint64_t step, std::vector<std::vector<char>> &bufs)
{
    int rc = idletime_ckpt_begin(h, step);
    for (size_t i = 0; rc == 0 && i < bufs.size(); i++)
        rc = idletime_ckpt_add(h, ("shard" + std::to_string(i)).c_str(), bufs[i].data(),
                               bufs[i].size());
    return rc;
}

// Waits (up to 10 s) until the background thread has deleted the checkpoints an async save
// pruned (.tmp-del-* entries), so the memcpy and commit() timings run on a quiet machine.
void wait_pruned(const char *dir)
{
    for (int i = 0; i < 10000; i++) {
        bool busy = false;
        if (DIR *d = opendir(dir)) {
            while (struct dirent *e = readdir(d))
                busy = busy || std::strncmp(e->d_name, ".tmp-del-", 9) == 0;
            closedir(d);
        }
        if (!busy)
            return;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: ckpt_bench DIR MIB ROUNDS\n");
        return 2;
    }
    size_t mib = std::strtoul(argv[2], nullptr, 10);
    int rounds = std::atoi(argv[3]);
    if (mib < 4 || rounds < 1) {
        std::fprintf(stderr, "idletime/ckpt-bench: MIB must be >= 4 and ROUNDS >= 1\n");
        return 2;
    }
    size_t shard = mib / 4 << 20;
    std::vector<std::vector<char>> bufs(4, std::vector<char>(shard));
    for (size_t i = 0; i < bufs.size(); i++)
        for (size_t j = 0; j < shard; j += 64)
            bufs[i][j] = static_cast<char>(i * 31 + j / 64);
    std::vector<char> dst(shard * 4, 1);  // memcpy target, touched like the library's arena

    idletime_ckpt_options_t o;
    idletime_ckpt_options_init(&o);
    o.job_id = "";
    o.require_munge = 0;
    o.keep_last = 1;
    idletime_ckpt_t *h = nullptr;
    if (idletime_ckpt_open(argv[1], &o, &h))
        return fail(h, "open");
    uint64_t step = 1;
    std::vector<double> stall, copy, persist, sync;
    double first_stall = 0;
    for (int r = 0; r <= rounds; r++) {  // round 0 warms the staging memory
        if (add_all(h, step++, bufs))
            return fail(h, "add");
        auto t = Clock::now();
        if (idletime_ckpt_commit_async(h))
            return fail(h, "commit_async");
        double s = ms_since(t);
        if (idletime_ckpt_wait(h))
            return fail(h, "wait");
        double a = ms_since(t);  // commit_async call to durable
        wait_pruned(argv[1]);
        t = Clock::now();
        for (size_t i = 0; i < bufs.size(); i++)
            std::memcpy(dst.data() + i * shard, bufs[i].data(), shard);
        double c = ms_since(t);
        if (add_all(h, step++, bufs))
            return fail(h, "add");
        t = Clock::now();
        if (idletime_ckpt_commit(h))
            return fail(h, "commit");
        double p = ms_since(t);
        if (r == 0) {
            first_stall = s;
            continue;
        }
        stall.push_back(s);
        copy.push_back(c);
        persist.push_back(a);
        sync.push_back(p);
    }
    volatile char sink = dst[shard];  // keep the copy observable
    (void)sink;
    double mb = static_cast<double>(shard * 4) / 1e6;
    std::printf("bytes %zu\nfirst_stall_ms %.2f\nstall_ms %.2f\nmemcpy_ms %.2f\n"
                "persist_ms %.1f\npersist_MBps %.1f\nsync_commit_MBps %.1f\n",
                shard * 4, first_stall, median(stall), median(copy), median(persist),
                mb / (median(persist) / 1000.0), mb / (median(sync) / 1000.0));
    return idletime_ckpt_close(h) ? fail(nullptr, "close") : 0;
}
