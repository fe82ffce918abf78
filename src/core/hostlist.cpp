#include "core/hostlist.hpp"

#include <cctype>

namespace idletime {
namespace {

// Splits at top-level commas (commas inside [] belong to a range).
bool split_top(const std::string &s, std::vector<std::string> &parts, std::string &err) {
    int depth = 0;
    std::string cur;
    for (char c : s) {
        if (c == '[') depth++;
        if (c == ']') depth--;
        if (depth < 0 || depth > 1) {
            err = "unbalanced brackets in hostlist \"" + s + "\"";
            return false;
        }
        if (c == ',' && depth == 0) {
            parts.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (depth != 0) {
        err = "unbalanced brackets in hostlist \"" + s + "\"";
        return false;
    }
    parts.push_back(cur);
    return true;
}

bool all_digits(const std::string &s) {
    if (s.empty() || s.size() > 9) return false;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
}

std::string pad(unsigned long v, size_t width) {
    std::string n = std::to_string(v);
    return n.size() >= width ? n : std::string(width - n.size(), '0') + n;
}

// Expands one "prefix[ranges]suffix" word (one bracket at most, as pools need).
bool expand_word(const std::string &w, std::vector<std::string> &out, std::string &err,
                 size_t max_nodes) {
    size_t lb = w.find('[');
    if (lb == std::string::npos) {
        if (w.empty() || w.find(']') != std::string::npos) {
            err = "empty or malformed host name in hostlist";
            return false;
        }
        out.push_back(w);
        return true;
    }
    size_t rb = w.find(']', lb);
    std::string prefix = w.substr(0, lb), suffix = w.substr(rb + 1);
    if (suffix.find('[') != std::string::npos) {
        err = "only one [range] per host name is supported in \"" + w + "\"";
        return false;
    }
    std::vector<std::string> ranges;
    if (!split_top(w.substr(lb + 1, rb - lb - 1), ranges, err)) return false;
    for (const std::string &r : ranges) {
        size_t dash = r.find('-');
        std::string lo = r.substr(0, dash), hi = dash == std::string::npos ? lo : r.substr(dash + 1);
        if (!all_digits(lo) || !all_digits(hi) || std::stoul(lo) > std::stoul(hi)) {
            err = "bad range \"" + r + "\" in \"" + w + "\" (use N or N-M with N <= M)";
            return false;
        }
        for (unsigned long i = std::stoul(lo); i <= std::stoul(hi); i++) {
            if (out.size() >= max_nodes) {
                err = "hostlist \"" + w + "\" has more than " + std::to_string(max_nodes) + " nodes";
                return false;
            }
            out.push_back(prefix + pad(i, lo.size()) + suffix);
        }
    }
    return true;
}

}  // namespace

bool hostlist_expand(const std::string &spec, std::vector<std::string> &out, std::string &err,
                     size_t max_nodes) {
    out.clear();
    std::vector<std::string> words;
    if (spec.empty()) {
        err = "empty hostlist";
        return false;
    }
    if (!split_top(spec, words, err)) return false;
    for (const std::string &w : words)
        if (!expand_word(w, out, err, max_nodes)) return false;
    return true;
}

}  // namespace idletime
