#include "core/json_reader.hpp"

#include <cmath>
#include <cstring>

namespace idletime {

bool JsonReader::object(json_object *obj, const std::string &path,
                        std::initializer_list<const char *> allowed) {
    if (!json_object_is_type(obj, json_type_object)) {
        error(path, "must be an object");
        return false;
    }
    json_object_object_foreach(obj, key, val) {
        (void)val;
        bool known = false;
        std::string list;
        for (const char *a : allowed) {
            known = known || std::strcmp(a, key) == 0;
            list += (list.empty() ? "" : ", ") + std::string(a);
        }
        if (!known) error(path, "unknown key \"" + std::string(key) + "\" (allowed: " + list + ")");
    }
    return true;
}

json_object *JsonReader::member(json_object *obj, const std::string &path, const char *key,
                                json_type type, const char *type_name, bool required) {
    json_object *v = nullptr;
    if (!json_object_object_get_ex(obj, key, &v) || v == nullptr) {
        if (required) error(path + "." + key, "is required");
        return nullptr;
    }
    if (!json_object_is_type(v, type)) {
        error(path + "." + key, std::string("must be ") + type_name);
        return nullptr;
    }
    return v;
}

void JsonReader::str(json_object *obj, const std::string &path, const char *key, std::string &out,
                     bool required) {
    json_object *v = member(obj, path, key, json_type_string, "a string", required);
    if (!v) return;
    out.assign(json_object_get_string(v), json_object_get_string_len(v));
    if (out.empty() || out.find('\0') != std::string::npos) {
        error(path + "." + key, "must be a non-empty string");
        out.clear();
    }
}

void JsonReader::u64(json_object *obj, const std::string &path, const char *key, uint64_t &out,
                     bool required) {
    json_object *v = member(obj, path, key, json_type_int, "a non-negative integer", required);
    if (!v) return;
    int64_t n = json_object_get_int64(v);
    if (n < 0 || n == INT64_MAX) {
        error(path + "." + key, "must be a non-negative integer below 2^63, not " +
                                    std::string(json_object_get_string(v)));
        return;
    }
    out = uint64_t(n);
}

void JsonReader::u32(json_object *obj, const std::string &path, const char *key, uint32_t &out,
                     bool required, uint32_t max) {
    uint64_t n = out;
    size_t before = errors_.size();
    u64(obj, path, key, n, required);
    if (errors_.size() != before) return;
    if (n > max) {
        error(path + "." + key, "must be at most " + std::to_string(max) + ", not " + std::to_string(n));
        return;
    }
    out = uint32_t(n);
}

void JsonReader::boolean(json_object *obj, const std::string &path, const char *key, bool &out) {
    json_object *v = member(obj, path, key, json_type_boolean, "true or false", false);
    if (v) out = json_object_get_boolean(v);
}

void JsonReader::number(json_object *obj, const std::string &path, const char *key, double &out,
                        double lo, double hi) {
    json_object *v = nullptr;
    if (!json_object_object_get_ex(obj, key, &v) || v == nullptr) return;
    if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int)) {
        error(path + "." + key, "must be a number");
        return;
    }
    double d = json_object_get_double(v);
    if (!std::isfinite(d) || d < lo || d > hi) {
        error(path + "." + key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
        return;
    }
    out = d;
}

void JsonReader::array(json_object *obj, const std::string &path, const char *key, bool required,
                       const std::function<void(json_object *, const std::string &)> &each) {
    json_object *v = member(obj, path, key, json_type_array, "an array", required);
    if (!v) return;
    size_t n = json_object_array_length(v);
    for (size_t i = 0; i < n; i++)
        each(json_object_array_get_idx(v, i), path + "." + key + "[" + std::to_string(i) + "]");
}

void JsonReader::str_list(json_object *obj, const std::string &path, const char *key,
                          std::vector<std::string> &out, bool required) {
    bool present = json_object_object_get_ex(obj, key, nullptr);
    if (present) out.clear();
    array(obj, path, key, required, [&](json_object *e, const std::string &p) {
        if (!json_object_is_type(e, json_type_string) || json_object_get_string_len(e) == 0) {
            error(p, "must be a non-empty string");
            return;
        }
        out.emplace_back(json_object_get_string(e), json_object_get_string_len(e));
    });
}

void JsonReader::int_list(json_object *obj, const std::string &path, const char *key,
                          std::vector<int> &out, int lo, int hi) {
    bool present = json_object_object_get_ex(obj, key, nullptr);
    if (present) out.clear();
    array(obj, path, key, false, [&](json_object *e, const std::string &p) {
        int64_t n = json_object_get_int64(e);
        if (!json_object_is_type(e, json_type_int) || n < lo || n > hi) {
            error(p, "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
            return;
        }
        out.push_back(int(n));
    });
}

}  // namespace idletime
