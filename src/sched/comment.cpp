// The checkpoint token in a job's Comment: written by the job (libidletime-ckpt, through
// slurm_update_job, which Slurm allows only to the job's owner or an admin), read by
// preempt/idletime without I/O. A claim is clamped to [start, now]: a job can only make itself
// look fresher (cheaper to preempt), never older than its own run, so a lie cannot shield it.
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

int64_t last_checkpoint(std::string_view comment, int64_t start, int64_t now) {
    auto [b, e] = find_token(comment);
    if (b == std::string_view::npos) return start;
    std::string_view v = comment.substr(b + kCkptToken.size(), e - b - kCkptToken.size());
    int64_t t = 0;
    auto r = std::from_chars(v.data(), v.data() + v.size(), t);
    if (r.ec != std::errc{} || r.ptr != v.data() + v.size()) return start;
    if (t < start) return start;
    return t > now ? now : t;
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
