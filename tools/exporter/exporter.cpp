// idletime-exporter: Prometheus/OpenMetrics text of idletime's quota, job and fault-tolerance
// state at /metrics (idletime-exporter(8)). Reads slurmctld through libslurm (the same code
// path as `idletime quota` and `idletime jobs`); the series are src/views/metrics.cpp.
#include <signal.h>
#include <unistd.h>
#include <slurm/slurm.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <ctime>
#include <iostream>
#include <mutex>
#include <stdexcept>

#include "core/cmdline.hpp"
#include "tools/exporter/http_server.hpp"
#include "tools/exporter/textfile.hpp"
#include "tools/views/cli.hpp"
#include "tools/views/slurm_read.hpp"
#include "views/metrics.hpp"

namespace {

using namespace idletime;
using namespace idletime::views;
const char *kProg = "idletime-exporter";
const char *kUsage =
    "Usage: idletime-exporter [--config=PATH] [--listen=[HOST:]PORT] [--once | --textfile=FILE.prom]\n"
    "Serves idletime's quota, job and fault-tolerance metrics at http://HOST:PORT/metrics\n"
    "(Prometheus text format 0.0.4; default --listen=" "127.0.0.1:9863).\n"
    "  --config=PATH   idletime config (default $IDLETIME_CONFIG, else /etc/idletime/idletime.json)\n"
    "  --listen=ADDR   PORT, HOST:PORT or [IPV6]:PORT to listen on (HOST * = every address)\n"
    "  --once          print one scrape on stdout and exit (exit 1 when slurmctld did not answer)\n"
    "  --textfile=FILE write one scrape to FILE (*.prom, replaced atomically) for node_exporter's\n"
    "                  textfile collector and exit; no listener (exit 1: slurmctld or the write failed)\n"
    "See idletime-exporter(8) for every series.\n";
constexpr const char *kDefaultListen = "127.0.0.1:9863";

volatile int g_stop = 0;
void on_signal(int) { g_stop = 1; }

struct Opts {
    std::string config, listen = kDefaultListen, textfile;
    bool once = false;
};

int parse(int argc, char **argv, Opts &o, bool &done) {
    std::vector<std::string> args(argv + 1, argv + argc);
    bool listen_given = false;
    done = false;
    for (size_t i = 0; i < args.size(); i++) {
        std::string v;
        if (args[i] == "--help") return done = true, cmdline::help(kUsage);
        if (args[i] == "--version") return done = true, cmdline::version(kProg);
        if (args[i] == "--once") o.once = true;
        else if (cli::option(args, i, "--config", v)) {
            if (v.empty()) return cli::bad(kProg, "--config needs a path");
            o.config = v;
        } else if (cli::option(args, i, "--textfile", v)) {
            if (const std::string e = exporter::textfile_path_error(v); !e.empty()) return cli::bad(kProg, e);
            o.textfile = v;
            o.once = true;
        } else if (cli::option(args, i, "--listen", v)) {
            if (v.empty()) return cli::bad(kProg, "--listen needs PORT, HOST:PORT or [IPV6]:PORT");
            o.listen = v;
            listen_given = true;
        } else if (args[i].size() > 1 && args[i][0] == '-')
            return cmdline::unknown_option(kProg, args[i], kUsage);
        else
            return cli::bad(kProg, "unexpected argument \"" + args[i] + "\" (allowed: --config, --listen, --once, --textfile)");
    }
    if (listen_given && !o.textfile.empty())
        return cli::bad(kProg, "--textfile writes a file and listens nowhere: drop --listen");
    return 0;
}

// One scrape: the jobs slurmctld holds, derived and accounted as `idletime quota` does.
std::string scrape(const Config &cfg, const Catalog &cat, bool &up) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<JobInfo> jobs;
    std::string err;
    up = slurmread::load_jobs(jobs, err);
    ScrapeInfo info;
    info.slurm_up = up;
    info.version = PACKAGE_VERSION;
    info.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!up) std::cerr << "idletime/exporter: slurm_load_jobs: " << err << "\n";
    int64_t now = time(nullptr);
    std::vector<JobView> views;
    views.reserve(jobs.size());
    for (const JobInfo &j : jobs) views.push_back(derive(cat, j, now, true));
    return metrics_text(account(cfg, views), views, now, info);
}

// Scrapes that arrive while one is loading wait for it and share its text: any number of
// scrapers at once cost slurmctld one job load, and a scrape is never older than that load.
class SharedScrape {
public:
    std::string get(const Config &cfg, const Catalog &cat) {
        std::unique_lock<std::mutex> lk(mu_);
        if (loading_) {
            uint64_t gen = gen_;
            done_.wait(lk, [&] { return gen_ != gen; });
            if (!ok_) throw std::runtime_error("the shared job load failed");
            return text_;
        }
        loading_ = true;
        lk.unlock();
        std::string text;
        try {
            bool up = false;
            text = scrape(cfg, cat, up);
        } catch (...) {  // out of memory: the waiters must not wait for ever (they fail too)
            finish(lk, std::string(), false);
            throw;
        }
        finish(lk, text, true);
        return text;
    }

private:
    void finish(std::unique_lock<std::mutex> &lk, const std::string &text, bool ok) {
        lk.lock();
        text_ = text;
        ok_ = ok;
        loading_ = false;
        gen_++;
        done_.notify_all();
    }

    std::mutex mu_;
    std::condition_variable done_;
    bool loading_ = false, ok_ = true;
    uint64_t gen_ = 0;
    std::string text_;
};

const char *kIndex =
    "<html><head><title>idletime-exporter</title></head><body><h1>idletime-exporter</h1>"
    "<p><a href=\"/metrics\">/metrics</a></p></body></html>\n";

}  // namespace

int main(int argc, char **argv) {
    Opts o;
    bool done = false;
    if (int rc = parse(argc, argv, o, done); rc || done) return rc;
    Config cfg;
    std::string err;
    if (!cli::load_config(o.config, cfg, err)) return cli::bad(kProg, err);
    Catalog cat(cfg);
    slurm_init(nullptr);
    if (const std::string w = slurmread::hidden_jobs_warning(getuid()); !w.empty())
        std::cerr << "idletime/exporter: warning: " << w << "\n";
    if (o.once) {
        bool up = false;
        const std::string text = scrape(cfg, cat, up);
        slurm_fini();
        if (o.textfile.empty()) return std::cout << text && std::cout.flush() && up ? 0 : 1;
        // Written also when slurmctld did not answer: idletime_up 0 reaches Prometheus.
        if (!exporter::write_textfile(o.textfile, text, err)) {
            std::cerr << "idletime/exporter: " << err << "\n";
            return 1;
        }
        return up ? 0 : 1;
    }
    exporter::HttpServer server;
    if (!server.bind(o.listen, err)) return cli::bad(kProg, err);
    struct sigaction sa{};
    sa.sa_handler = on_signal;  // no SA_RESTART: accept() returns EINTR and the loop ends
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
    std::cerr << "idletime/exporter: serving /metrics on " << o.listen << " (port " << server.port() << "), "
              << cfg.quotas.size() << " quotas\n";
    SharedScrape shared;
    server.serve(
        [&](const std::string &path) {
            if (path == "/metrics")
                return exporter::Response{200, "text/plain; version=0.0.4; charset=utf-8", shared.get(cfg, cat)};
            if (path == "/") return exporter::Response{200, "text/html; charset=utf-8", kIndex};
            return exporter::Response{404, "text/plain; charset=utf-8", "not found (try /metrics)\n"};
        },
        &g_stop);
    std::cerr << "idletime/exporter: stopped by signal\n";
    slurm_fini();
    return 0;
}
