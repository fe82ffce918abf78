// Submission schedule, polling (slurm_load_jobs) and the merge with the workers' own logs.
#include "runner.hpp"
#include "replay/tracker.hpp"
#include "core/config.hpp"
#include "slurm_client.hpp"

#include <slurm/slurm.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace fs = std::filesystem;

namespace idletime::replay {

const ConfigPlan &config_plan(char letter)
{
    static const ConfigPlan plans[] = {
        {'A', "no borrowing (quota partitions only)", false, false, false},
        {'B', "plain Slurm scavenger (GraceTime + requeue, no handshake)", false, true, false},
        {'C', "idletime (--idle-resources, checkpoint + fast release)", true, true, true},
        // batch_sched_delay=0 repeated: this SchedulerParameters line replaces start.sh's.
        {'D', "idletime + preempt/idletime (least lost work first) + site_factor/idletime", true, true, true,
         "PreemptType=preempt/idletime\nPriorityType=priority/multifactor\n"
         "PrioritySiteFactorPlugin=site_factor/idletime\nPriorityCalcPeriod=1\n"
         "SchedulerParameters=batch_sched_delay=0,preempt_strict_order\n",
         "preempt_idletime.so", "preempt/idletime", "priority/multifactor"},
    };
    for (const auto &p : plans)
        if (p.letter == letter)
            return p;
    throw std::invalid_argument(std::string("configuration '") + letter + "' unknown, allowed: A, B, C, D");
}

namespace {

double epoch_now()
{
    using namespace std::chrono;
    return duration<double>(system_clock::now().time_since_epoch()).count();
}

struct Track {
    const ReplayJob *job = nullptr;
    uint32_t id = 0;
    bool submitted = false;
    RunTracker runs;
};

std::string quoted(const std::string &s) { return "'" + s + "'"; }

SubmitSpec submit_spec(const ReplayJob &j, const ConfigPlan &plan, const RunSetup &s)
{
    SubmitSpec sp;
    bool idle = j.cls == JobClass::Idle;
    sp.name = j.id;
    sp.account = j.quota;
    sp.tres = "gres:gpu:" + j.spec + ":" + std::to_string(j.gpus / std::max(1, j.nodes));
    sp.nodes = uint32_t(std::max(1, j.nodes));
    sp.workdir = s.out_dir;
    sp.output = s.out_dir + "/out/" + j.id + "-%j.out";
    bool routed = plan.plugins && s.route_by_plugin;
    if (!routed)
        sp.partition = idle && plan.idle_partitions ? "idle-" + j.pool : "quota-" + j.quota;
    if (plan.plugins) {
        std::string mode = idle ? "only" : "none";
        sp.spank_env = {"IDLETIME_MODE=" + mode, "IDLETIME_QUOTA=" + j.quota};
        sp.env = {"SLURM_SPANK_IDLETIME_MODE=" + mode, "SLURM_SPANK_IDLETIME_QUOTA=" + j.quota};
    }
    sp.env.push_back("PATH=/usr/local/bin:/usr/bin:/bin");
    sp.env.push_back("SLURM_CONF=" + s.slurm_conf);
    sp.env.push_back("IDLETIME_MUNGE_SOCKET=" + s.munge_socket);
    sp.env.push_back("IDLETIME_GRACE_TIME=" + std::to_string(s.grace_time_s));
    sp.notice_to_batch = plan.ckpt_worker && idle;
    std::ostringstream cmd;
    cmd << "#!/bin/sh\nexec " << quoted(s.worker) << " --work " << j.duration_s << " --log "
        << quoted(s.out_dir + "/logs/" + j.id + ".log");
    if (plan.ckpt_worker && idle)  // guaranteed jobs do the same work in every configuration
        cmd << " --mode ckpt --ckpt-dir " << quoted(s.out_dir + "/ckpt/" + j.id) << " --ckpt-every "
            << s.ckpt_every_s;
    cmd << "\n";
    sp.script = cmd.str();
    return sp;
}

PollView poll_view(const JobView &v)
{
    PollView p;
    p.state = job_state_running(v)     ? PollState::Running
              : job_state_completed(v) ? PollState::Completed
              : job_state_failed(v)    ? PollState::Failed
              : v.completing           ? PollState::Completing
                                       : PollState::Pending;
    p.restarts = v.restarts;
    p.start = double(v.start);
    p.end = double(v.end);
    p.preempt = double(v.preempt);
    p.partition = v.partition;
    return p;
}

JobRecord finish_record(const Track &tr, const RunSetup &s, bool ckpt, double t0)
{
    std::ifstream in(s.out_dir + "/logs/" + tr.job->id + ".log");
    return build_record(*tr.job, tr.submitted, tr.runs, parse_worker_log(in), ckpt, t0);
}

void make_dirs(const RunSetup &s)
{
    for (const char *d : {"logs", "ckpt", "out"}) {
        fs::remove_all(s.out_dir + "/" + d);
        fs::create_directories(s.out_dir + "/" + d);
    }
    fs::permissions(s.out_dir + "/ckpt", fs::perms::owner_all);
}

Sample take_sample(const std::vector<Track> &tracks, const std::map<uint32_t, size_t> &by_id,
                   const std::vector<JobView> &views, double t)
{
    Sample smp;
    smp.t = t;
    for (const auto &v : views) {
        if (v.base != JOB_RUNNING)  // what the QOS limit counts, with or without COMPLETING
            continue;
        const ReplayJob &j = *tracks[by_id.at(v.id)].job;
        smp.pool_gpus[j.pool] += j.gpus;
        const std::string_view quota = quota_of_partition(v.partition);
        if (!quota.empty()) smp.quota_gpus[std::string(quota)] += j.gpus;
    }
    return smp;
}


struct Loop {
    std::vector<Track> tracks;
    std::map<uint32_t, size_t> by_id;
    std::set<uint32_t> ids;
    std::vector<Sample> samples;
    size_t next = 0;  // next job to submit
};

// Submits the jobs whose offset has come; returns false once a submission failed.
void submit_due(Loop &L, const JobStream &js, const ConfigPlan &plan, const RunSetup &s, double t)
{
    while (L.next < js.jobs.size() && js.jobs[L.next].submit_s <= t) {
        Track &tr = L.tracks[L.next];
        tr.id = submit_job(submit_spec(js.jobs[L.next], plan, s));
        tr.submitted = true;
        L.by_id[tr.id] = L.next;
        L.ids.insert(tr.id);
        L.next++;
    }
}

bool poll_once(Loop &L, double t0)
{
    double now = epoch_now();
    auto views = load_jobs(L.ids);
    double reply = epoch_now();  // every run the reply shows running had started by now
    bool all_done = L.next == L.tracks.size();
    for (const auto &v : views) {
        PollView pv = poll_view(v);
        pv.reply = reply;
        L.tracks[L.by_id.at(v.id)].runs.observe(pv, now);
    }
    for (const auto &tr : L.tracks)
        all_done = all_done && tr.submitted && tr.runs.ended();
    L.samples.push_back(take_sample(L.tracks, L.by_id, views, now - t0));
    return all_done;
}

void print_progress(const Loop &L, double t, std::ostream &out)
{
    int running = 0, done = 0;
    for (const auto &tr : L.tracks) {
        running += tr.runs.running();
        done += tr.runs.ended();
    }
    out << "idletime/replay: t=" << int(t) << " s submitted " << L.next << "/" << L.tracks.size()
        << " running " << running << " ended " << done << std::endl;
}

// Returns right after one of slurmctld's scheduling passes. Slurm 22.05 runs the pass that a
// submission asks for from its background loop, once a second: a burst submitted just after that
// tick waits about a second to be allocated, one submitted just before it about 50 ms. Time 0 of
// every configuration starts right after a tick, so the trace's first burst (the jobs carried over
// into the window) waits the same in each. A held probe job asks for the pass; it never runs and
// is cancelled as soon as the pass is seen (or after 5 s, or on an error).
void align_to_schedule_tick(const JobStream &js, const ConfigPlan &plan, const RunSetup &s, std::ostream &progress)
{
    if (js.jobs.empty())
        return;
    SubmitSpec probe = submit_spec(js.jobs.front(), plan, s);
    probe.name = "idletime-replay-tick";
    probe.script = "#!/bin/sh\ntrue\n";
    probe.output = s.out_dir + "/out/idletime-replay-tick-%j.out";  // a later replay cancels it if this one is killed
    probe.held = true;
    uint32_t before = schedule_cycles();
    uint32_t id = submit_job(probe);
    double t0 = epoch_now();
    bool seen = false;
    try {  // 10 ms: the pass is found within a hundredth of the second it aligns to
        while (!(seen = schedule_cycles() != before) && epoch_now() - t0 < 5)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } catch (...) {
        cancel_job(id);
        throw;
    }
    cancel_job(id);
    if (!seen)
        progress << "idletime/replay: configuration " << plan.letter
                 << ": no scheduling pass within 5 s of a submission; time 0 not aligned with one" << std::endl;
}

}  // namespace

EventLog run_config(const JobStream &js, const ConfigPlan &plan, const RunSetup &s,
                    std::ostream &progress)
{
    make_dirs(s);
    Loop L;
    L.tracks.resize(js.jobs.size());
    for (size_t i = 0; i < js.jobs.size(); i++)
        L.tracks[i].job = &js.jobs[i];
    align_to_schedule_tick(js, plan, s, progress);
    double t0 = epoch_now(), next_poll = 0, next_print = 0;
    bool done = false;
    while (!done) {
        double t = epoch_now() - t0;
        submit_due(L, js, plan, s, t);
        if (t >= next_poll) {
            done = poll_once(L, t0);
            next_poll = t + s.poll_s;
        }
        if (t >= next_print) {
            print_progress(L, t, progress);
            next_print = t + 15;
        }
        if (t > s.timeout_s) {
            progress << "idletime/replay: configuration " << plan.letter << " timed out after "
                     << int(t) << " s: cancelling its remaining jobs" << std::endl;
            for (const auto &tr : L.tracks)
                if (tr.submitted && !tr.runs.ended())
                    cancel_job(tr.id);
            break;
        }
        double wake = next_poll;
        if (L.next < js.jobs.size())
            wake = std::min(wake, js.jobs[L.next].submit_s);
        double nap = std::max(0.0, wake - (epoch_now() - t0));
        std::this_thread::sleep_for(std::chrono::duration<double>(std::min(nap, s.poll_s)));
    }
    EventLog log;
    log.samples = std::move(L.samples);
    log.quotas = js.quotas;
    log.span_s = js.span_s;
    for (const auto &tr : L.tracks)
        log.jobs.push_back(finish_record(tr, s, plan.ckpt_worker, t0));
    return log;
}

}  // namespace idletime::replay
