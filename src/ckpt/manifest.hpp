// MANIFEST.json of one checkpoint: model, canonical text (what the munge credential binds) and
// the json-c reader/writer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ckpt/util.hpp"

namespace idletime::ckpt {

// Format 1 ("idletime-ckpt-1"): files carry "sha256". Format 2 (written since): files carry
// "xxh3_128". Both are read; the manifest digest is SHA-256 in both (see ckpt.h, Trust).
inline constexpr int kFormatV1 = 1;
inline constexpr int kFormatV2 = 2;
inline constexpr int kWriteFormat = kFormatV2;
inline constexpr const char *kManifestName = "MANIFEST.json";
inline constexpr size_t kMaxManifestBytes = 16u << 20;

const char *format_name(int format);  // "idletime-ckpt-<format>"
const char *sum_key(int format);      // JSON key of a file's checksum: "sha256" / "xxh3_128"
const char *sum_label(int format);    // for messages: "SHA-256" / "XXH3-128 checksum"

struct FileEntry {
    std::string name;
    uint64_t size = 0;
    std::string sum;  // lower-case hex: SHA-256 (format 1, 64 chars), XXH3-128 (2, 32 chars)
};

// The per-file checksum of a format, computed incrementally.
class FileSum {
public:
    explicit FileSum(int format);
    void update(const void *data, size_t len);
    std::string hex();  // finalizes

private:
    std::unique_ptr<Sha256> sha_;
    std::unique_ptr<Xxh128> xxh_;
};

std::string file_sum_hex(int format, std::string_view data);

struct Manifest {
    int format = kWriteFormat;
    uint64_t step = 0;
    std::string job_id;  // "" = none
    uint32_t uid = 0;
    int64_t saved_at = 0;     // seconds since the epoch
    int64_t saved_at_ns = 0;  // nanoseconds within saved_at
    uint32_t world_size = 0;  // ranks of a multi-rank (group) checkpoint; 0 = one process
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
