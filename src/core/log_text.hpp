// One log line from text a user may have chosen (options, Comment, account names): control
// characters and backslashes are escaped (\n, \t, \r, \\, \xNN), so a value can never start a
// new log line or fake one. Pure; used by every plugin and hook that quotes user text in a log.
#pragma once
#include <cstdio>
#include <string>
#include <string_view>

namespace idletime {

inline std::string log_text(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (unsigned char c : s) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(c));
            out += buf;
        } else {
            out += char(c);
        }
    }
    return out;
}

}  // namespace idletime
