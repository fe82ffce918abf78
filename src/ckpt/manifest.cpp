#include "ckpt/manifest.hpp"

#include <cerrno>
#include <memory>
#include <set>

#include <json-c/json.h>

#include "ckpt/util.hpp"

namespace idletime::ckpt {
namespace {

using JsonPtr = std::unique_ptr<json_object, decltype(&json_object_put)>;

[[noreturn]] void bad(const std::string &what)
{
    throw Error(-EBADMSG, "manifest: " + what);
}

json_object *field(json_object *o, const char *key, json_type type, const char *type_name)
{
    json_object *v = nullptr;
    if (!json_object_object_get_ex(o, key, &v))
        bad(std::string("missing \"") + key + "\"");
    if (!json_object_is_type(v, type))
        bad(std::string("\"") + key + "\" must be " + type_name);
    return v;
}

int64_t int_field(json_object *o, const char *key, int64_t min)
{
    json_object *v = field(o, key, json_type_int, "an integer");
    errno = 0;
    int64_t n = json_object_get_int64(v);
    if (errno != 0 || n < min)
        bad(std::string("\"") + key + "\" is out of range");
    return n;
}

uint64_t uint_field(json_object *o, const char *key)
{
    json_object *v = field(o, key, json_type_int, "an integer");
    errno = 0;
    if (json_object_get_int64(v) < 0)
        bad(std::string("\"") + key + "\" must not be negative");
    uint64_t n = json_object_get_uint64(v);
    if (errno != 0)
        bad(std::string("\"") + key + "\" is out of range");
    return n;
}

bool is_hex(const std::string &s, size_t len)
{
    if (s.size() != len)
        return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    return true;
}

FileEntry file_from_json(json_object *f, int format, std::set<std::string> &seen)
{
    if (!json_object_is_type(f, json_type_object))
        bad("every \"files\" entry must be an object");
    FileEntry e;
    e.name = json_object_get_string(field(f, "name", json_type_string, "a string"));
    e.size = uint_field(f, "size");
    const char *key = sum_key(format);
    e.sum = json_object_get_string(field(f, key, json_type_string, "a string"));
    if (!valid_file_name(e.name))
        bad("invalid file name \"" + e.name + "\"");
    const size_t len = format == kFormatV1 ? 64 : 32;
    if (!is_hex(e.sum, len))
        bad(std::string(key) + " of \"" + e.name + "\" is not " + std::to_string(len) +
            " lower-case hex digits");
    if (!seen.insert(e.name).second)
        bad("file \"" + e.name + "\" listed twice");
    return e;
}

}  // namespace

const char *format_name(int format)
{
    return format == kFormatV1 ? "idletime-ckpt-1" : "idletime-ckpt-2";
}

const char *sum_key(int format) { return format == kFormatV1 ? "sha256" : "xxh3_128"; }

const char *sum_label(int format)
{
    return format == kFormatV1 ? "SHA-256" : "XXH3-128 checksum";
}

FileSum::FileSum(int format)
{
    if (format == kFormatV1)
        sha_ = std::make_unique<Sha256>();
    else
        xxh_ = std::make_unique<Xxh128>();
}

void FileSum::update(const void *data, size_t len)
{
    if (sha_)
        sha_->update(data, len);
    else
        xxh_->update(data, len);
}

std::string FileSum::hex() { return sha_ ? sha_->hex() : xxh_->hex(); }

std::string file_sum_hex(int format, std::string_view data)
{
    FileSum h(format);
    h.update(data.data(), data.size());
    return h.hex();
}

bool valid_file_name(std::string_view name)
{
    if (name.empty() || name.size() > 200 || name[0] == '.' || name == kManifestName)
        return false;
    for (char c : name) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        if (!ok)
            return false;
    }
    return true;
}

std::string canonical_text(const Manifest &m)
{
    std::string t = std::string(format_name(m.format)) + "\nstep " + std::to_string(m.step) + "\njob " +
                    m.job_id + "\nuid " + std::to_string(m.uid) + "\nsaved " +
                    std::to_string(m.saved_at) + "." + std::to_string(m.saved_at_ns) + "\n";
    if (m.world_size)  // absent for one process: single-process digests are unchanged
        t += "world " + std::to_string(m.world_size) + "\n";
    for (const auto &f : m.files)
        t += "file " + f.name + " " + std::to_string(f.size) + " " + f.sum + "\n";
    return t;
}

std::string manifest_digest(const Manifest &m) { return sha256_hex(canonical_text(m)); }

std::string credential_payload(const Manifest &m)
{
    return std::string(format_name(m.format)) + " job=" + m.job_id + " step=" + std::to_string(m.step) +
           " digest=" + manifest_digest(m);
}

std::string manifest_to_json(const Manifest &m)
{
    JsonPtr o(json_object_new_object(), &json_object_put);
    json_object *obj = o.get();
    json_object_object_add(obj, "format", json_object_new_string(format_name(m.format)));
    json_object_object_add(obj, "step", json_object_new_uint64(m.step));
    json_object_object_add(obj, "job_id", json_object_new_string(m.job_id.c_str()));
    json_object_object_add(obj, "uid", json_object_new_int64(m.uid));
    json_object_object_add(obj, "saved_at", json_object_new_int64(m.saved_at));
    json_object_object_add(obj, "saved_at_ns", json_object_new_int64(m.saved_at_ns));
    if (m.world_size)
        json_object_object_add(obj, "world_size", json_object_new_int64(m.world_size));
    json_object *files = json_object_new_array();
    json_object_object_add(obj, "files", files);
    for (const auto &f : m.files) {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "name", json_object_new_string(f.name.c_str()));
        json_object_object_add(e, "size", json_object_new_uint64(f.size));
        json_object_object_add(e, sum_key(m.format), json_object_new_string(f.sum.c_str()));
        json_object_array_add(files, e);
    }
    if (!m.munge.empty())
        json_object_object_add(obj, "munge", json_object_new_string(m.munge.c_str()));
    return std::string(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY)) + "\n";
}

Manifest manifest_from_json(std::string_view text)
{
    json_tokener *tok = json_tokener_new();
    if (!tok)
        throw Error(-ENOMEM, "manifest: out of memory");
    json_object *raw = json_tokener_parse_ex(tok, text.data(), static_cast<int>(text.size()));
    bool complete = json_tokener_get_error(tok) == json_tokener_success &&
                    json_tokener_get_parse_end(tok) <= text.size();
    json_tokener_free(tok);
    JsonPtr root(raw, &json_object_put);
    if (!raw || !complete)
        bad("not valid JSON");
    if (!json_object_is_type(raw, json_type_object))
        bad("top level must be an object");
    std::string fmt = json_object_get_string(field(raw, "format", json_type_string, "a string"));
    Manifest m;
    if (fmt == format_name(kFormatV1))
        m.format = kFormatV1;
    else if (fmt == format_name(kFormatV2))
        m.format = kFormatV2;
    else
        bad("format \"" + fmt + "\" is not idletime-ckpt-1 or idletime-ckpt-2");
    m.step = uint_field(raw, "step");
    m.job_id = json_object_get_string(field(raw, "job_id", json_type_string, "a string"));
    int64_t uid = int_field(raw, "uid", 0);
    if (uid > UINT32_MAX)
        bad("\"uid\" is out of range");
    m.uid = static_cast<uint32_t>(uid);
    m.saved_at = int_field(raw, "saved_at", 0);
    m.saved_at_ns = int_field(raw, "saved_at_ns", 0);
    json_object *ws = nullptr;
    if (json_object_object_get_ex(raw, "world_size", &ws)) {
        int64_t w = int_field(raw, "world_size", 1);
        if (w > 1000000)
            bad("\"world_size\" is out of range (1-1000000)");
        m.world_size = static_cast<uint32_t>(w);
    }
    json_object *files = field(raw, "files", json_type_array, "an array");
    std::set<std::string> seen;
    for (size_t i = 0; i < json_object_array_length(files); i++)
        m.files.push_back(file_from_json(json_object_array_get_idx(files, i), m.format, seen));
    json_object *cred = nullptr;
    if (json_object_object_get_ex(raw, "munge", &cred)) {
        if (!json_object_is_type(cred, json_type_string))
            bad("\"munge\" must be a string");
        m.munge = json_object_get_string(cred);
    }
    return m;
}

}  // namespace idletime::ckpt
