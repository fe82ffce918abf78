// The checkpoint token in a job's Comment: written by the job (libidletime-ckpt, through
// slurm_update_job, which Slurm allows only to the job's owner or an admin), read by
// preempt/idletime without I/O. Only a claim inside [start, now] counts; a job without one
// (nothing published, IDLETIME_CKPT_PUBLISH=0, Comment overwritten, a time in the future or
// before its start) counts as checkpointed right now: no work to lose, so it is the preferred
// victim. Withholding or garbling the claim therefore never shields a job.
#include <charconv>

#include "sched/policy.hpp"

namespace idletime::sched {

namespace {

bool is_sep(char c) { return c == ' ' || c == '\t' || c == ',' || c == ';' || c == '\n'; }

// [begin, end) of the token including its value, or npos begin.
std::pair<size_t, size_t> find_token(std::string_view s) {
    size_t pos = 0;
    while ((pos = s.find(kCkptToken, pos)) != std::string_view::npos) {
        if (pos == 0 || is_sep(s[pos - 1])) {
            size_t end = pos + kCkptToken.size();
            while (end < s.size() && !is_sep(s[end])) ++end;
            return {pos, end};
        }
        pos += kCkptToken.size();
    }
    return {std::string_view::npos, 0};
}

}  // namespace

bool claimed_checkpoint(std::string_view comment, int64_t &t) {
    auto [b, e] = find_token(comment);
    if (b == std::string_view::npos) return false;
    std::string_view v = comment.substr(b + kCkptToken.size(), e - b - kCkptToken.size());
    if (v.empty() || v[0] < '0' || v[0] > '9') return false;
    auto r = std::from_chars(v.data(), v.data() + v.size(), t);
    return r.ec == std::errc{} && r.ptr == v.data() + v.size();
}

int64_t last_checkpoint(std::string_view comment, int64_t start, int64_t now) {
    int64_t t = 0;
    if (!claimed_checkpoint(comment, t) || t < start || t > now) return now;
    return t;
}

std::string with_checkpoint(std::string_view comment, int64_t t) {
    std::string token = std::string(kCkptToken) + std::to_string(t);
    auto [b, e] = find_token(comment);
    if (b != std::string_view::npos)
        return std::string(comment.substr(0, b)) + token + std::string(comment.substr(e));
    if (comment.empty()) return token;
    return std::string(comment) + (is_sep(comment.back()) ? "" : " ") + token;
}

}  // namespace idletime::sched
