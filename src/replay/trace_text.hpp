// Small text helpers shared by the trace readers (internal to src/replay).
#pragma once
#include "replay/trace.hpp"

#include <charconv>
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace idletime::replay::text {

inline std::vector<std::string> split(const std::string &line, char sep)
{
    std::vector<std::string> out;
    size_t from = 0;
    for (;;) {
        size_t at = line.find(sep, from);
        out.push_back(line.substr(from, at == std::string::npos ? std::string::npos : at - from));
        if (at == std::string::npos)
            return out;
        from = at + 1;
    }
}

// Fields separated by runs of blanks (SWF).
inline std::vector<std::string> words(const std::string &line)
{
    std::vector<std::string> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
            i++;
        size_t j = i;
        while (j < line.size() && line[j] != ' ' && line[j] != '\t')
            j++;
        if (j > i)
            out.push_back(line.substr(i, j - i));
        i = j;
    }
    return out;
}

// Whole decimal integer (sign allowed); false when text is anything else.
inline bool to_int(const std::string &text, int64_t &v)
{
    if (text.empty())
        return false;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    return ec == std::errc() && end == text.data() + text.size();
}

// Largest GPU, node or processor count and largest time (trace seconds, 100 years) a trace row
// may give: beyond them a row is corrupt, not history (and would not fit the mapping's ints).
constexpr int64_t kMaxCount = 1'000'000;
constexpr int64_t kMaxTraceSeconds = 3'155'760'000;

// A trace's lines, bounded: a line over kMaxLine bytes or a file over kMaxLines lines (/dev/zero,
// /dev/urandom, a binary or compressed file) ends the read with TraceError instead of filling
// memory or running forever. Strips a trailing CR and, on line 1, a UTF-8 byte order mark.
class Lines {
public:
    static constexpr size_t kMaxLine = 64 * 1024;
    static constexpr size_t kMaxLines = 5'000'000;

    Lines(std::istream &in, std::string origin) : in_(in), origin_(std::move(origin)), buf_(kMaxLine + 1) {}

    bool next(std::string &line)
    {
        in_.getline(buf_.data(), std::streamsize(buf_.size()));
        std::streamsize n = in_.gcount();
        if (in_.fail() && !in_.eof() && n > 0 && !in_.bad())
            throw TraceError(where(lineno_ + 1) + ": line longer than " + std::to_string(kMaxLine / 1024) +
                             " KiB: not a text trace (a compressed or binary file?)");
        if (n == 0 && in_.eof())
            return false;
        if (in_.bad() || (in_.fail() && !in_.eof()))
            throw TraceError(where(lineno_ + 1) + ": read error");
        if (++lineno_ > kMaxLines)
            throw TraceError(origin_ + ": more than " + std::to_string(kMaxLines) +
                             " lines: cut the trace to the time you replay (sacct: -S and -E)");
        line.assign(buf_.data(), size_t(n) - (in_.eof() ? 0 : 1));
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (lineno_ == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0)
            line.erase(0, 3);
        if (line.find('\0') != std::string::npos)
            throw TraceError(where() + ": a NUL byte: not a text trace (a binary file?)");
        in_.clear(in_.rdstate() & std::ios::eofbit);
        return true;
    }
    size_t lineno() const { return lineno_; }
    std::string where() const { return where(lineno_); }

private:
    std::string where(size_t n) const { return origin_ + ":" + std::to_string(n); }

    std::istream &in_;
    std::string origin_;
    std::vector<char> buf_;
    size_t lineno_ = 0;
};

}  // namespace idletime::replay::text
