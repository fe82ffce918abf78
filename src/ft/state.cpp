// Durable per-job state (AdminComment) and the agent's report (Comment), as compact JSON.
#include <json-c/json.h>

#include <cstring>
#include <memory>

#include "ft/ft.hpp"

namespace idletime::ft {
namespace {

using Json = std::unique_ptr<json_object, decltype(&json_object_put)>;

std::string cut(const std::string &s, size_t n) {
    if (s.size() <= n) return s;
    size_t k = n;
    while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) k--;  // keep UTF-8 whole
    return s.substr(0, k);
}

void put_int(json_object *o, const char *k, int64_t v) {
    json_object_object_add(o, k, json_object_new_int64(v));
}
void put_str(json_object *o, const char *k, const std::string &v) {
    json_object_object_add(o, k, json_object_new_string_len(v.data(), int(v.size())));
}

std::string dump(json_object *o, const char *prefix) {
    std::string s = prefix;
    s += json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    json_object_put(o);
    return s;
}

// Strict getters: a present field of the wrong type or range is an error.
bool get_u32(json_object *o, const char *k, uint32_t &out, std::string &err) {
    json_object *v = nullptr;
    if (!json_object_object_get_ex(o, k, &v)) return true;
    if (!json_object_is_type(v, json_type_int)) {
        err = std::string("field \"") + k + "\" is not an integer";
        return false;
    }
    int64_t n = json_object_get_int64(v);
    if (n < 0 || n > 0xffffffffLL) {
        err = std::string("field \"") + k + "\" is out of range";
        return false;
    }
    out = uint32_t(n);
    return true;
}
bool get_i64(json_object *o, const char *k, int64_t &out, std::string &err) {
    json_object *v = nullptr;
    if (!json_object_object_get_ex(o, k, &v)) return true;
    if (!json_object_is_type(v, json_type_int)) {
        err = std::string("field \"") + k + "\" is not an integer";
        return false;
    }
    out = json_object_get_int64(v);
    return true;
}
bool get_str(json_object *o, const char *k, std::string &out, std::string &err) {
    json_object *v = nullptr;
    if (!json_object_object_get_ex(o, k, &v)) return true;
    if (!json_object_is_type(v, json_type_string)) {
        err = std::string("field \"") + k + "\" is not a string";
        return false;
    }
    out.assign(json_object_get_string(v), size_t(json_object_get_string_len(v)));
    return true;
}

// Parses "<prefix>{...}" into an object; nullptr with err on anything else.
Json load(const std::string &text, const char *prefix, std::string &err) {
    Json none(nullptr, json_object_put);
    size_t pl = strlen(prefix);
    if (text.compare(0, pl, prefix) != 0) {
        err = std::string("does not start with \"") + prefix + "\"";
        return none;
    }
    json_tokener *tok = json_tokener_new_ex(8);
    if (!tok) {
        err = "out of memory";
        return none;
    }
    json_object *o = json_tokener_parse_ex(tok, text.data() + pl, int(text.size() - pl));
    json_tokener_error je = json_tokener_get_error(tok);
    size_t used = size_t(json_tokener_get_parse_end(tok));
    json_tokener_free(tok);
    Json j(o, json_object_put);
    if (!o || je != json_tokener_success) {
        err = std::string("invalid JSON: ") + json_tokener_error_desc(je);
        return none;
    }
    if (used != text.size() - pl) {
        err = "trailing characters after the JSON object";
        return none;
    }
    if (!json_object_is_type(o, json_type_object)) {
        err = "JSON is not an object";
        return none;
    }
    return j;
}

bool parse_history(json_object *o, JobState &st, std::string &err) {
    json_object *h = nullptr;
    if (!json_object_object_get_ex(o, "h", &h)) return true;
    if (!json_object_is_type(h, json_type_array)) {
        err = "field \"h\" is not an array";
        return false;
    }
    for (size_t i = 0; i < json_object_array_length(h) && i < kMaxHistory; i++) {
        json_object *e = json_object_array_get_idx(h, i);
        if (!json_object_is_type(e, json_type_object)) {
            err = "history entry is not an object";
            return false;
        }
        RunRecord r;
        if (!get_u32(e, "r", r.run, err) || !get_str(e, "k", r.kind, err) ||
            !get_str(e, "w", r.reason, err) || !get_str(e, "a", r.action, err) ||
            !get_i64(e, "t", r.ended, err) || !get_i64(e, "c", r.ckpt, err) ||
            !get_u32(e, "o", r.by, err) || !get_str(e, "y", r.quota, err))
            return false;
        st.history.push_back(std::move(r));
    }
    return true;
}

}  // namespace

std::string state_serialize(const JobState &st) {
    json_object *o = json_object_new_object();
    put_int(o, "v", 1);
    if (!st.mode.empty()) put_str(o, "m", cut(st.mode, 16));
    put_int(o, "p", st.counters.preemptions);
    put_int(o, "f", st.counters.failures);
    if (st.counters.node_failures) put_int(o, "n", st.counters.node_failures);
    if (st.counters.time_limits) put_int(o, "l", st.counters.time_limits);
    put_int(o, "j", st.judged_start);
    if (!st.pending.empty()) put_str(o, "q", st.pending);
    if (st.begin_at) put_int(o, "b", st.begin_at);
    if (!st.final_reason.empty()) put_str(o, "x", cut(st.final_reason, 2 * kMaxReason));
    json_object *h = json_object_new_array();
    size_t from = st.history.size() > kMaxHistory ? st.history.size() - kMaxHistory : 0;
    for (size_t i = from; i < st.history.size(); i++) {
        const RunRecord &r = st.history[i];
        json_object *e = json_object_new_object();
        put_int(e, "r", r.run);
        put_str(e, "k", r.kind);
        put_str(e, "w", cut(r.reason, kMaxReason));
        put_str(e, "a", r.action);
        put_int(e, "t", r.ended);
        if (r.ckpt) put_int(e, "c", r.ckpt);
        if (r.by) put_int(e, "o", r.by);
        if (!r.quota.empty()) put_str(e, "y", cut(r.quota, 64));
        json_object_array_add(h, e);
    }
    json_object_object_add(o, "h", h);
    return dump(o, kStatePrefix);
}

bool state_parse(const std::string &text, JobState &out, std::string &err) {
    out = JobState{};
    if (text.empty()) return true;
    Json o = load(text, kStatePrefix, err);
    JobState st;
    bool ok = o && get_u32(o.get(), "p", st.counters.preemptions, err) &&
              get_u32(o.get(), "f", st.counters.failures, err) &&
              get_u32(o.get(), "n", st.counters.node_failures, err) &&
              get_u32(o.get(), "l", st.counters.time_limits, err) &&
              get_str(o.get(), "m", st.mode, err) &&
              get_i64(o.get(), "j", st.judged_start, err) && get_str(o.get(), "q", st.pending, err) &&
              get_i64(o.get(), "b", st.begin_at, err) &&
              get_str(o.get(), "x", st.final_reason, err) && parse_history(o.get(), st, err);
    if (!ok) return false;
    out = std::move(st);
    return true;
}

void state_record(JobState &st, uint32_t run, int64_t start, const Classification &cl,
                  const Decision &d, int64_t now) {
    st.counters = d.after;
    st.judged_start = start;
    st.history.push_back(RunRecord{run, cl.kind, cut(cl.reason, kMaxReason), action_str(d.action),
                                   now});
    if (st.history.size() > kMaxHistory)
        st.history.erase(st.history.begin(), st.history.end() - kMaxHistory);
    st.final_reason = d.action == Action::Fail ? d.reason : "";
}

std::string report_serialize(const AgentReport &r) {
    json_object *o = json_object_new_object();
    put_int(o, "r", r.run);
    if (r.hung) put_int(o, "h", r.silent_s);
    put_int(o, "x", r.exit_code);
    if (r.worker_restarts) put_int(o, "w", r.worker_restarts);
    json_object *l = json_object_new_array();
    for (size_t i = 0; i < r.lines.size() && i < kMaxLines; i++) {
        std::string s = cut(r.lines[i], kMaxLine);
        json_object_array_add(l, json_object_new_string_len(s.data(), int(s.size())));
    }
    json_object_object_add(o, "l", l);
    json_object *s = json_object_new_object();
    for (const auto &[k, v] : r.overrides) put_str(s, k.c_str(), cut(v, 40));
    json_object_object_add(o, "s", s);
    return dump(o, kReportPrefix);
}

static bool parse_overrides(json_object *o, AgentReport &r, std::string &err) {
    json_object *s = nullptr;
    if (!json_object_object_get_ex(o, "s", &s)) return true;
    if (!json_object_is_type(s, json_type_object)) {
        err = "field \"s\" is not an object";
        return false;
    }
    json_object_object_foreach(s, k, v) {
        if (!json_object_is_type(v, json_type_string)) {
            err = "setting \"" + std::string(k) + "\" is not a string";
            return false;
        }
        r.overrides[k] = json_object_get_string(v);
    }
    return true;
}

bool report_parse(const std::string &text, AgentReport &out, std::string &err) {
    out = AgentReport{};
    Json o = load(text, kReportPrefix, err);
    if (!o) return false;
    AgentReport r;
    int64_t x = 0;
    json_object *h = nullptr;
    r.hung = json_object_object_get_ex(o.get(), "h", &h);
    if (!get_u32(o.get(), "r", r.run, err) || !get_u32(o.get(), "h", r.silent_s, err) ||
        !get_i64(o.get(), "x", x, err) || !get_u32(o.get(), "w", r.worker_restarts, err) ||
        !parse_overrides(o.get(), r, err))
        return false;
    if (x < 0 || x > 255) {
        err = "field \"x\" is not an exit status 0-255";
        return false;
    }
    r.exit_code = int(x);
    json_object *l = nullptr;
    if (json_object_object_get_ex(o.get(), "l", &l)) {
        if (!json_object_is_type(l, json_type_array)) {
            err = "field \"l\" is not an array";
            return false;
        }
        for (size_t i = 0; i < json_object_array_length(l) && i < kMaxLines; i++) {
            json_object *e = json_object_array_get_idx(l, i);
            if (!json_object_is_type(e, json_type_string)) {
                err = "field \"l\" holds a non-string";
                return false;
            }
            r.lines.push_back(cut(json_object_get_string(e), kMaxLine));
        }
    }
    out = std::move(r);
    return true;
}

}  // namespace idletime::ft
