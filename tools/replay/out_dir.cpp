#include "out_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <regex>

namespace fs = std::filesystem;

namespace idletime::replay {

namespace {

const char *const kMarker = ".idletime-replay";
const char *const kStagePrefix = ".idletime-replay.stage-";

[[noreturn]] void fail(const std::string &out, const std::string &what)
{
    throw OutDirError("--out '" + out + "': " + what);
}

}  // namespace

bool is_replay_output(const std::string &name, bool is_dir)
{
    static const std::regex dirs("[A-D]|seed-[0-9]+");
    static const std::regex files("(jobs|quotas|summary)\\.csv|(mapping|report)\\.md|idletime\\.json|"
                                  "(sacctmgr|cluster-restore|cluster-start)\\.log|extra\\.conf|"
                                  "(alloc|waits|lost|quota-[A-D])(\\.png|\\.svg|-png\\.gp|-svg\\.gp)");
    return std::regex_match(name, is_dir ? dirs : files);
}

OutDir::OutDir(std::string out, const std::vector<std::string> &inputs) : out_(std::move(out))
{
    std::error_code ec;
    fs::file_status st = fs::status(out_, ec);  // a symbolic link to a directory is that directory
    if (fs::exists(st) && !fs::is_directory(st))
        fail(out_, "exists and is not a directory");
    if (!fs::exists(st)) {
        if (fs::is_symlink(fs::symlink_status(out_, ec)))
            fail(out_, "is a symbolic link to nothing");
        return;
    }
    bool empty = fs::is_empty(out_, ec);
    if (ec)
        fail(out_, "cannot read it: " + ec.message());
    struct stat sb;
    std::string marker = out_ + "/" + kMarker;
    if (lstat(marker.c_str(), &sb) == 0) {
        if (!S_ISREG(sb.st_mode) || sb.st_nlink != 1 || sb.st_uid != geteuid())
            fail(out_, std::string("its ") + kMarker + " is not a regular file of this user's with one link "
                       "(a symbolic link, a directory, a hard link?): not using the directory");
        marked_ = true;
    }
    if (!empty && !marked_)
        fail(out_, "not empty and not written by idletime-replay: name a new or empty directory");
    const fs::path dir = fs::canonical(out_, ec);
    for (const auto &in : inputs) {
        fs::path p = in.empty() ? fs::path() : fs::weakly_canonical(in, ec);
        if (!p.empty() && !ec && p.parent_path() == dir &&
            is_replay_output(p.filename().string(), fs::is_directory(p, ec)))
            fail(out_, "it holds '" + in + "', an input that this run would replace: move that file out of --out");
    }
}

OutDir::~OutDir() { abandon(); }

const std::string &OutDir::stage()
{
    std::error_code ec;
    if (!fs::exists(out_, ec)) {
        fs::create_directories(out_, ec);
        if (ec)
            fail(out_, "cannot create it: " + ec.message());
        created_ = true;
    }
    std::string tmpl = out_ + "/" + kStagePrefix + "XXXXXX";
    if (!mkdtemp(tmpl.data()))
        fail(out_, std::string("cannot write in it: ") + std::strerror(errno));
    stage_ = tmpl;
    return stage_;
}

void OutDir::publish()
{
    std::error_code ec;
    const std::string own = fs::path(stage_).filename().string();
    std::vector<fs::path> old;
    for (const auto &e : fs::directory_iterator(out_, ec)) {
        const std::string name = e.path().filename().string();
        fs::file_status st = e.symlink_status(ec);
        bool link = fs::is_symlink(st), dir = fs::is_directory(st);
        bool stale_stage = marked_ && dir && name != own && name.rfind(kStagePrefix, 0) == 0;
        if (stale_stage || (link ? is_replay_output(name, true) || is_replay_output(name, false)
                                 : is_replay_output(name, dir)))
            old.push_back(e.path());  // a symbolic link is removed, never followed
    }
    for (const auto &e : fs::directory_iterator(stage_, ec)) {  // checked before anything is removed
        fs::path dest = fs::path(out_) / e.path().filename();
        bool listed = std::find(old.begin(), old.end(), dest) != old.end();
        if (!listed && fs::exists(fs::symlink_status(dest, ec)))
            fail(out_, "it holds " + dest.filename().string() + " of another kind (a directory where a file goes?): "
                       "move it away");
    }
    for (const auto &p : old)
        if (fs::remove_all(p, ec), ec)
            fail(out_, "cannot remove the earlier run's " + p.filename().string() + ": " + ec.message());
    for (const auto &e : fs::directory_iterator(stage_, ec))
        if (fs::rename(e.path(), fs::path(out_) / e.path().filename(), ec), ec)
            fail(out_, "cannot move " + e.path().filename().string() + " into place: " + ec.message());
    fs::remove(stage_, ec);
    stage_.clear();
    created_ = false;
    if (marked_)
        return;
    int fd = open((out_ + "/" + kMarker).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    static const char text[] = "Written by idletime-replay: a later run into this directory replaces its outputs.\n";
    bool ok = fd >= 0 && write(fd, text, sizeof(text) - 1) == ssize_t(sizeof(text) - 1);
    if (fd >= 0)
        close(fd);
    if (!ok)
        fail(out_, std::string("cannot write its ") + kMarker);
    marked_ = true;
}

void OutDir::abandon() noexcept
{
    std::error_code ec;
    if (!stage_.empty())
        fs::remove_all(stage_, ec);
    stage_.clear();
    if (created_)
        fs::remove(out_, ec);  // only if empty
    created_ = false;
}

}  // namespace idletime::replay
