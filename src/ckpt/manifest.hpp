// MANIFEST.json of one checkpoint: model, canonical text (what the munge credential binds) and
// the json-c reader/writer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace idletime::ckpt {

inline constexpr const char *kFormat = "idletime-ckpt-1";
inline constexpr const char *kManifestName = "MANIFEST.json";
inline constexpr size_t kMaxManifestBytes = 16u << 20;

struct FileEntry {
    std::string name;
    uint64_t size = 0;
    std::string sha256;  // 64 lower-case hex chars
};

struct Manifest {
    uint64_t step = 0;
    std::string job_id;  // "" = none
    uint32_t uid = 0;
    int64_t saved_at = 0;     // seconds since the epoch
    int64_t saved_at_ns = 0;  // nanoseconds within saved_at
    std::vector<FileEntry> files;
    std::string munge;  // credential, "" when not required
};

// 1-200 of [A-Za-z0-9._-], no leading '.', not the manifest's own name.
bool valid_file_name(std::string_view name);

// Unambiguous text over every field but the credential (names cannot hold spaces/newlines).
std::string canonical_text(const Manifest &m);
std::string manifest_digest(const Manifest &m);  // SHA-256 hex of canonical_text
// The payload the munge credential carries.
std::string credential_payload(const Manifest &m);

std::string manifest_to_json(const Manifest &m);
// Throws Error(-EBADMSG, "<what is wrong>") on any malformed or missing field.
Manifest manifest_from_json(std::string_view text);

}  // namespace idletime::ckpt
