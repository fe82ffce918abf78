// See victim_note.hpp.
#include "core/victim_note.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace idletime {

namespace {

constexpr int64_t kNoteSkewS = 2;

// text without its lines that are notes (one "\n" between the lines kept).
std::string without_notes(std::string_view text) {
    std::string kept;
    while (!text.empty()) {
        const size_t nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        if (line.rfind(kVictimNotePrefix, 0) != 0 && !line.empty()) {
            if (!kept.empty()) kept += '\n';
            kept.append(line);
        }
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
    }
    return kept;
}

// A decimal number of digits only, ending at *end_out.
bool parse_num(const char *s, long long max, long long &v, const char **end_out) {
    if (*s < '0' || *s > '9') return false;
    char *end = nullptr;
    errno = 0;
    v = std::strtoll(s, &end, 10);
    if (errno || v > max) return false;
    *end_out = end;
    return true;
}

}  // namespace

bool victim_note_replace(const std::string &old, uint32_t owner, int64_t at, std::string &out) {
    if (!owner) return false;
    std::string text = without_notes(old);
    if (text.size() > kVictimNoteMaxOld) return false;
    if (!text.empty()) text += '\n';
    out = text + kVictimNotePrefix + std::to_string(at) + " for job " + std::to_string(owner);
    return true;
}

uint32_t victim_note_owner(const std::string &system_comment, int64_t preempt_time, int64_t grace_s) {
    const size_t at = system_comment.find(kVictimNotePrefix);
    if (at == std::string::npos || (at > 0 && system_comment[at - 1] != '\n')) return 0;
    if (system_comment.find(std::string("\n") + kVictimNotePrefix, at + 1) != std::string::npos) return 0;
    const char *p = system_comment.c_str() + at + std::char_traits<char>::length(kVictimNotePrefix);
    long long when = 0, job = 0;
    static constexpr std::string_view kFor = " for job ";
    if (!parse_num(p, INT64_MAX, when, &p) || std::string_view(p).substr(0, kFor.size()) != kFor ||
        !parse_num(p + kFor.size(), UINT32_MAX, job, &p) || (*p != '\0' && *p != '\n'))
        return 0;
    if (preempt_time <= 0 || grace_s < 0 || when < preempt_time - grace_s - kNoteSkewS ||
        when > preempt_time + kNoteSkewS)
        return 0;
    return uint32_t(job);
}

}  // namespace idletime
