// Small text helpers shared by the trace readers (internal to src/replay).
#pragma once
#include <charconv>
#include <cstdint>
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

inline std::string strip_cr(std::string s)
{
    if (!s.empty() && s.back() == '\r')
        s.pop_back();
    return s;
}

// Whole decimal integer (sign allowed); false when text is anything else.
inline bool to_int(const std::string &text, int64_t &v)
{
    if (text.empty())
        return false;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace idletime::replay::text
