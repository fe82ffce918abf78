// Strict reading of json-c objects: every key must be known, every value of the right type,
// and every problem becomes one error line that starts with its JSON path.
#pragma once
#include <json-c/json.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace idletime {

class JsonReader {
public:
    explicit JsonReader(std::vector<std::string> &errors) : errors_(errors) {}

    void error(const std::string &path, const std::string &msg) { errors_.push_back(path + ": " + msg); }
    // Reports keys of obj not in allowed; false when obj is not an object.
    bool object(json_object *obj, const std::string &path, std::initializer_list<const char *> allowed);
    void str(json_object *obj, const std::string &path, const char *key, std::string &out, bool required);
    void u32(json_object *obj, const std::string &path, const char *key, uint32_t &out, bool required,
             uint32_t max = UINT32_MAX);
    void u64(json_object *obj, const std::string &path, const char *key, uint64_t &out, bool required);
    void boolean(json_object *obj, const std::string &path, const char *key, bool &out);
    void number(json_object *obj, const std::string &path, const char *key, double &out, double lo, double hi);
    void str_list(json_object *obj, const std::string &path, const char *key, std::vector<std::string> &out,
                  bool required);
    void int_list(json_object *obj, const std::string &path, const char *key, std::vector<int> &out,
                  int lo, int hi);
    // Calls each(element, element_path) for every element of the array at key.
    void array(json_object *obj, const std::string &path, const char *key, bool required,
               const std::function<void(json_object *, const std::string &)> &each);

private:
    json_object *member(json_object *obj, const std::string &path, const char *key, json_type type,
                        const char *type_name, bool required);
    std::vector<std::string> &errors_;
};

}  // namespace idletime
