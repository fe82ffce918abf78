// Check suite: the hook's in-flight journal (security.md R5): an entry held by a live process is
// left alone, the entry of a process that died is handed over once, with its snapshot and options,
// and removed (kept when the caller says Later); a finished entry is gone, a newer entry of the
// same job survives the end of an older one and a sweep of an older one; stale, malformed,
// misnamed, oversized, symlinked and non-file entries are removed, never followed or handed over;
// a symlinked or open journal directory is refused.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hook/journal.hpp"

#include <check.h>  // last: it defines a fail() macro

using namespace idletime::hook;

namespace {

std::string g_root;  // made before the tests fork, removed at exit

std::string fresh_dir() {
    std::string tmpl = g_root + "/XXXXXX";
    const char *d = mkdtemp(tmpl.data());
    ck_assert_ptr_nonnull(d);
    return std::string(d) + "/jobs";
}

InFlight entry(uint32_t job, uint32_t run = 2) {
    InFlight e;
    e.job = job;
    e.restart_cnt = run;
    e.written = time(nullptr);
    e.overrides = {{"max_restarts", "1"}, {"ft_policy", "never"}};
    e.snapshot = true;
    e.submit_time = 1700000000;
    e.nodes = {"a100-1", "a100-2"};
    e.failed_nodes = {"a100-2"};
    return e;
}

struct Seen {
    std::vector<InFlight> handed;
    std::vector<std::string> dropped;
};

size_t sweep(const std::string &dir, Seen &seen, size_t max = 100, Orphan answer = Orphan::Done) {
    return journal_orphans(
        dir, max, 86400, time(nullptr),
        [&](const InFlight &e) {
            seen.handed.push_back(e);
            return answer;
        },
        [&](const std::string &name, const std::string &why) { seen.dropped.push_back(name + ": " + why); });
}

bool exists(const std::string &p) {
    struct stat st{};
    return lstat(p.c_str(), &st) == 0;
}

START_TEST(live_left_dead_handed_once) {
    const std::string dir = fresh_dir();
    std::string err;
    JournalEntry mine;
    ck_assert_msg(journal_begin(dir, entry(11), mine, err), "%s", err.c_str());
    // A hook that dies with its entry (killed by a restart of slurmctld's unit).
    pid_t pid = fork();
    if (pid == 0) {
        JournalEntry e;
        _exit(journal_begin(dir, entry(12, 5), e, err) ? 0 : 1);  // no journal_end
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    Seen seen;
    ck_assert_uint_eq(sweep(dir, seen), 1);
    ck_assert_uint_eq(seen.handed.size(), 1);
    ck_assert_uint_eq(seen.handed[0].job, 12);
    ck_assert_uint_eq(seen.handed[0].restart_cnt, 5);
    ck_assert_str_eq(seen.handed[0].overrides.at("ft_policy").c_str(), "never");
    ck_assert(seen.handed[0].failed_nodes == std::vector<std::string>{"a100-2"});
    ck_assert_uint_eq(seen.dropped.size(), 0);
    ck_assert(!exists(dir + "/12"));
    ck_assert(exists(dir + "/11"));  // this process still holds it
    Seen again;
    ck_assert_uint_eq(sweep(dir, again), 0);
    journal_end(mine);
    ck_assert(!exists(dir + "/11"));
    ck_assert_uint_eq(sweep(dir, again), 0);
    ck_assert_uint_eq(again.dropped.size(), 0);
}
END_TEST

// The lock passes to a forked child (the hook detaches after writing its entry).
START_TEST(lock_survives_fork) {
    const std::string dir = fresh_dir();
    std::string err;
    JournalEntry e;
    ck_assert(journal_begin(dir, entry(21), e, err));
    int go[2];
    ck_assert_int_eq(pipe(go), 0);
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        close(go[1]);
        (void)!read(go[0], &c, 1);  // holds the inherited lock until told
        journal_end(e);
        _exit(0);
    }
    close(go[0]);
    close(e.fd);  // the parent lets go, as detach()'s parent exits
    e.fd = -1;
    Seen seen;
    ck_assert_uint_eq(sweep(dir, seen), 0);  // the child still holds it
    ck_assert(exists(dir + "/21"));
    (void)!write(go[1], "x", 1);
    int status = 0;
    waitpid(pid, &status, 0);
    ck_assert(!exists(dir + "/21"));
}
END_TEST

START_TEST(bad_entries_removed) {
    const std::string dir = fresh_dir();
    std::string err;
    JournalEntry e;
    ck_assert(journal_begin(dir, entry(31), e, err));
    journal_end(e);
    auto put = [&](const std::string &name, const std::string &text) { std::ofstream(dir + "/" + name) << text; };
    InFlight old = entry(41);
    old.written = time(nullptr) - 90000;
    put("41", journal_encode(old));
    put("42", "not json");
    put("43", journal_encode(entry(44)));
    const std::string ok44 = journal_encode(entry(44));
    put("44", ok44.substr(0, ok44.find("\"options\":")) + "\"options\":{\"x\":1}}");
    put("45", journal_encode(entry(45)) + " trailing");
    put("46", std::string(20000, ' '));
    put("name", "{}");
    ck_assert_int_eq(symlink("/etc/passwd", (dir + "/47").c_str()), 0);
    ck_assert_int_eq(mkfifo((dir + "/48").c_str(), 0600), 0);
    Seen seen;
    ck_assert_uint_eq(sweep(dir, seen), 0);
    ck_assert_uint_eq(seen.dropped.size(), 9);
    auto dropped = [&](const std::string &prefix) {
        for (const auto &d : seen.dropped)
            if (d.rfind(prefix, 0) == 0) return true;
        return false;
    };
    ck_assert(dropped("41: older than"));
    ck_assert(dropped("42: not a journal entry"));
    ck_assert(dropped("43: names job 44"));
    ck_assert(dropped("44: not a journal entry"));
    ck_assert(dropped("45: not a journal entry"));
    ck_assert(dropped("46: larger than"));
    ck_assert(dropped("47: not a regular file"));
    ck_assert(dropped("48: not a regular file"));
    for (const char *n : {"41", "42", "43", "44", "45", "46", "name", "47", "48"})
        ck_assert_msg(!exists(dir + "/" + n), "%s left", n);
    ck_assert(exists("/etc/passwd"));
}
END_TEST

START_TEST(max_and_order) {
    const std::string dir = fresh_dir();
    std::string err;
    for (uint32_t id = 51; id <= 55; id++) {
        pid_t pid = fork();
        if (pid == 0) {
            JournalEntry e;
            _exit(journal_begin(dir, entry(id), e, err) ? 0 : 1);
        }
        waitpid(pid, nullptr, 0);
    }
    Seen seen;
    ck_assert_uint_eq(sweep(dir, seen, 2), 2);
    ck_assert_uint_eq(sweep(dir, seen, 10), 3);
    ck_assert_uint_eq(seen.handed.size(), 5);
    for (uint32_t i = 0; i < 5; i++) ck_assert_uint_eq(seen.handed[i].job, 51 + i);  // oldest first
}
END_TEST

// Later keeps the entry for the next sweep; Drop removes it without counting it as recovered.
START_TEST(later_and_drop) {
    const std::string dir = fresh_dir();
    std::string err;
    pid_t pid = fork();
    if (pid == 0) {
        JournalEntry e;
        _exit(journal_begin(dir, entry(61), e, err) ? 0 : 1);
    }
    waitpid(pid, nullptr, 0);
    Seen seen;
    ck_assert_uint_eq(sweep(dir, seen, 10, Orphan::Later), 0);
    ck_assert(exists(dir + "/61"));
    ck_assert_uint_eq(sweep(dir, seen, 10, Orphan::Drop), 0);
    ck_assert(!exists(dir + "/61"));
    ck_assert_uint_eq(seen.handed.size(), 2);
}
END_TEST

// A newer hook of the same job replaces the entry: neither the end of the older hook nor a
// sweep that took the older (dead) entry removes the newer one.
START_TEST(newer_entry_survives) {
    const std::string dir = fresh_dir();
    std::string err;
    JournalEntry older, newer;
    ck_assert(journal_begin(dir, entry(71, 0), older, err));
    ck_assert(journal_begin(dir, entry(71, 1), newer, err));
    journal_end(older);
    ck_assert(exists(dir + "/71"));
    // A sweeper holds a dead hook's entry while a new hook of that job replaces it.
    pid_t pid = fork();
    if (pid == 0) {
        JournalEntry e;
        _exit(journal_begin(dir, entry(72, 0), e, err) ? 0 : 1);
    }
    waitpid(pid, nullptr, 0);
    JournalEntry replacing;
    Seen seen;
    journal_orphans(
        dir, 10, 86400, time(nullptr),
        [&](const InFlight &e) {
            if (e.job == 72) ck_assert(journal_begin(dir, entry(72, 1), replacing, err));
            seen.handed.push_back(e);
            return Orphan::Done;
        },
        [](const std::string &, const std::string &) {});
    ck_assert_uint_eq(seen.handed.size(), 1);
    ck_assert(exists(dir + "/72"));  // the replacing hook's entry
    journal_end(replacing);
    journal_end(newer);
    ck_assert(!exists(dir + "/71") && !exists(dir + "/72"));
}
END_TEST

START_TEST(directory_checked) {
    const std::string dir = fresh_dir();
    std::string err;
    JournalEntry e;
    ck_assert(journal_begin(dir, entry(81), e, err));
    journal_end(e);
    ck_assert_int_eq(chmod(dir.c_str(), 0755), 0);
    ck_assert(!journal_begin(dir, entry(82), e, err));
    ck_assert_msg(err.find("mode 0700") != std::string::npos, "%s", err.c_str());
    const std::string link = dir + ".link";
    ck_assert_int_eq(chmod(dir.c_str(), 0700), 0);
    ck_assert_int_eq(symlink(dir.c_str(), link.c_str()), 0);
    ck_assert(!journal_begin(link, entry(83), e, err));
    ck_assert_msg(err.find("symlinks are refused") != std::string::npos, "%s", err.c_str());
    Seen seen;
    journal_orphans(link, 10, 86400, time(nullptr), [](const InFlight &) { return Orphan::Done; },
                    [&](const std::string &n, const std::string &why) { seen.dropped.push_back(n + why); });
    ck_assert_uint_eq(seen.dropped.size(), 1);
}
END_TEST

START_TEST(encode_round_trip) {
    InFlight e = entry(4294967294u, 4294967295u);
    e.overrides["run_type"] = "a \"quoted\"\nvalue";
    InFlight back;
    std::string err;
    ck_assert_msg(journal_decode(journal_encode(e), back, err), "%s", err.c_str());
    ck_assert_uint_eq(back.job, e.job);
    ck_assert_uint_eq(back.restart_cnt, e.restart_cnt);
    ck_assert(back.overrides == e.overrides);
    ck_assert(back.nodes == e.nodes && back.failed_nodes == e.failed_nodes);
    ck_assert(back.snapshot && !back.requeued && back.submit_time == e.submit_time);
    ck_assert(!journal_decode("{\"job\":0,\"run\":0,\"written\":1,\"options\":{}}", back, err));
    ck_assert(!journal_decode("[]", back, err));
}
END_TEST

START_TEST(unwritable_dir) {
    JournalEntry e;
    std::string err;
    ck_assert(!journal_begin("/proc/idletime-no/jobs", entry(1), e, err));
    ck_assert_msg(err.find("cannot create") != std::string::npos, "%s", err.c_str());
    journal_end(e);  // nothing to do, no crash
}
END_TEST

// Which stopped hooks' jobs are judged again. A reused job id (slurmctld lost its state and gave
// the id to a new job) is left alone, with or without a snapshot; so is a run that moved on.
START_TEST(recover_only_same_job_and_run) {
    InFlight e = entry(7, 2);
    JobNow now;
    now.ended = true;
    now.restart_cnt = 2;
    now.submit_time = e.submit_time;
    ck_assert(not_recoverable(e, now).empty());  // (a temporary's c_str() outlives nothing in ck_assert_str_eq)
    JobNow reused = now;
    reused.submit_time = e.written + 5;
    reused.restart_cnt = 2;  // a forged match of the run count changes nothing
    ck_assert_msg(not_recoverable(e, reused).find("its id now names a job submitted at") == 0, "%s",
                  not_recoverable(e, reused).c_str());
    InFlight blind = e;  // the hook had no snapshot: no submit time of its own
    blind.snapshot = false;
    blind.submit_time = 0;
    ck_assert(not_recoverable(blind, now).empty());  // submitted before the entry
    ck_assert_msg(not_recoverable(blind, reused).find("after the entry was written") != std::string::npos, "%s",
                  not_recoverable(blind, reused).c_str());
    JobNow again = now;
    again.restart_cnt = 3;
    again.pending = true;
    again.ended = false;
    ck_assert_msg(not_recoverable(e, again).find("the job has moved on (pending, restart count 3)") == 0, "%s",
                  not_recoverable(e, again).c_str());
    JobNow by_hook = again;  // the stopped hook had requeued it: new submit time, run 3
    by_hook.submit_time = e.written + 1;
    ck_assert_msg(not_recoverable(e, by_hook).find("the job has moved on") == 0, "%s", not_recoverable(e, by_hook).c_str());
    JobNow same_second = now;  // submitted in the second the entry was written: the same job
    same_second.submit_time = blind.written;
    ck_assert(not_recoverable(blind, same_second).empty());
    InFlight requeued = e;
    requeued.requeued = true;
    ck_assert_msg(not_recoverable(requeued, now).find("Slurm had requeued it") == 0, "requeued");
}
END_TEST

}  // namespace

int main() {
    char root[] = "/tmp/idletime-journal-XXXXXX";
    if (!mkdtemp(root)) return EXIT_FAILURE;
    g_root = root;

    Suite *s = suite_create("hook-journal");
    TCase *t = tcase_create("journal");
    tcase_set_timeout(t, 30);
    tcase_add_test(t, live_left_dead_handed_once);
    tcase_add_test(t, lock_survives_fork);
    tcase_add_test(t, bad_entries_removed);
    tcase_add_test(t, max_and_order);
    tcase_add_test(t, later_and_drop);
    tcase_add_test(t, newer_entry_survives);
    tcase_add_test(t, directory_checked);
    tcase_add_test(t, encode_round_trip);
    tcase_add_test(t, unwritable_dir);
    tcase_add_test(t, recover_only_same_job_and_run);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    std::filesystem::remove_all(g_root);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
