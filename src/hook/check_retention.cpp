// Unit test of the checkpoint retention (retention.cpp) on a real directory tree, with slurmctld's
// job list faked: old directories of finished jobs go, active/recent ones stay, symlinks planted in
// a job directory are removed as names and never followed. Needs root (the root's components must
// be root-owned); reports SKIP (77) otherwise.
#include <filesystem>  // before check.h, whose macros break libstdc++ headers

#include <check.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "hook/retention.hpp"

namespace {

using namespace idletime::retention;
namespace fs = std::filesystem;

const uid_t kUid = 1000;

// <root>/<name of kUid>: the hook finds the ended job's directories through the name.
std::string user_of_uid() {
    const passwd *pw = getpwuid(kUid);
    return pw ? pw->pw_name : "nouser1000";
}

// Below /var/lib/idletime-tests (or $IDLETIME_TEST_SCRATCH): root-owned 0755 all the way up,
// wherever the build tree is (one below /tmp would be refused as a checkpoint root).
std::string make_base() {
    const char *env = getenv("IDLETIME_TEST_SCRATCH");
    std::string dir = env && *env ? env : "/var/lib/idletime-tests";
    mkdir(dir.c_str(), 0755);
    std::string tmpl = dir + "/check_retention.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl.data()));
    ck_assert_int_eq(chmod(tmpl.c_str(), 0755), 0);
    return tmpl;
}

void age(const std::string &d, int age_s) {
    timespec t[2] = {{time(nullptr) - age_s, 0}, {time(nullptr) - age_s, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, d.c_str(), t, 0), 0);
}

void job_dir(const std::string &root, const std::string &name, int age_s) {
    const std::string d = root + "/" + user_of_uid() + "/" + name;
    fs::create_directories(d + "/sub");
    std::ofstream(d + "/sub/f") << "x";
    ck_assert_int_eq(chown((d + "/sub/f").c_str(), kUid, kUid), 0);
    ck_assert_int_eq(chown((d + "/sub").c_str(), kUid, kUid), 0);
    ck_assert_int_eq(chown(d.c_str(), kUid, kUid), 0);
    age(d, age_s);
}

START_TEST(test_sweep) {
    const std::string base = make_base(), root = base + "/ckpt", keep = base + "/keep";
    fs::create_directories(root + "/" + user_of_uid());
    fs::create_directories(keep);
    std::ofstream(keep + "/precious") << "p";
    job_dir(root, "11-0123456789abcdef", 3600);  // finished, old: removed
    ck_assert_int_eq(symlink(keep.c_str(), (root + "/" + user_of_uid() + "/11-0123456789abcdef/link").c_str()), 0);
    ck_assert_int_eq(symlink((keep + "/precious").c_str(), (root + "/" + user_of_uid() + "/11-0123456789abcdef/sub/fl").c_str()), 0);
    age(root + "/" + user_of_uid() + "/11-0123456789abcdef", 3600);
    job_dir(root, "12-0123456789abcdef", 3600);  // active (pending/running): kept
    job_dir(root, "13-0123456789abcdef", 5);     // finished a moment ago: kept
    job_dir(root, "14-0123456789abcdef", 3600);  // ends now (the hook's job): touched, kept
    job_dir(root, "not-a-job", 3600);            // not ours: kept
    std::string logged;
    auto log = [&](const std::string &m) { logged += m + "\n"; };
    auto active = [](std::set<uint32_t> &ids) {
        ids.insert(12);
        return true;
    };
    Stats s = on_job_end(root, 600, 14, kUid, log, active);
    const unsigned touched = getpwuid(kUid) ? 1 : 0;
    ck_assert_msg(s.swept && s.removed == 1 && s.touched == touched && s.kept_active == 1, "swept %d removed %u touched %u "
                  "active %u log %s", s.swept, s.removed, s.touched, s.kept_active, logged.c_str());
    ck_assert(!fs::exists(root + "/" + user_of_uid() + "/11-0123456789abcdef"));
    for (const char *n : {"12-0123456789abcdef", "13-0123456789abcdef", "14-0123456789abcdef", "not-a-job"})
        ck_assert_msg(fs::exists(root + "/" + user_of_uid() + "/" + n), "%s removed", n);
    ck_assert(fs::exists(keep + "/precious"));
    // Within the minimum interval: no second sweep.
    ck_assert(!on_job_end(root, 600, 14, kUid, log, active).swept);
    // slurmctld unavailable: nothing removed.
    fs::remove(root + "/.idletime-retention");
    job_dir(root, "15-0123456789abcdef", 3600);
    s = on_job_end(root, 600, 99, kUid, log, [](std::set<uint32_t> &) { return false; });
    ck_assert(s.swept && s.removed == 0 && fs::exists(root + "/" + user_of_uid() + "/15-0123456789abcdef"));
    fs::remove_all(base);
}
END_TEST

START_TEST(test_unsafe_root) {
    const std::string base = make_base(), root = base + "/ckpt";
    fs::create_directories(root + "/" + user_of_uid());
    job_dir(root, "11-0123456789abcdef", 3600);
    ck_assert_int_eq(chmod(base.c_str(), 01777), 0);  // world-writable component: refused, nothing done
    std::string logged;
    Stats s = on_job_end(root, 600, 1, kUid, [&](const std::string &m) { logged += m; },
                         [](std::set<uint32_t> &) { return true; });
    ck_assert(!s.swept && fs::exists(root + "/" + user_of_uid() + "/11-0123456789abcdef"));
    ck_assert_msg(logged.find("writable by group or others") != std::string::npos, "%s", logged.c_str());
    fs::remove_all(base);
}
END_TEST

}  // namespace

int main() {
    if (geteuid() != 0) {
        std::fprintf(stderr, "check_retention: needs root (root-owned checkpoint root); reporting SKIP\n");
        return 77;
    }
    Suite *s = suite_create("retention");
    TCase *tc = tcase_create("sweep");
    tcase_add_test(tc, test_sweep);
    tcase_add_test(tc, test_unsafe_root);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
