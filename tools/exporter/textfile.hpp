// idletime-exporter --textfile: one scrape written for node_exporter's textfile collector, with no
// listener at all (security review R13). The file is replaced atomically (temporary file in the
// same directory, then rename), so node_exporter never reads half a scrape, and a symlink at the
// path is replaced rather than followed.
#pragma once

#include <string>

namespace idletime::exporter {

// "" when path can be a textfile-collector file (its name ends in .prom and does not start with a
// dot); else why not, in one line.
std::string textfile_path_error(const std::string &path);

// Writes text to path (mode 0644) through a temporary file and rename. False with err.
bool write_textfile(const std::string &path, const std::string &text, std::string &err);

}  // namespace idletime::exporter
