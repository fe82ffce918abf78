// libFuzzer target: the JSON config parser + validator + renderer must never crash, leak or hang
// on any input.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/render.hpp"
#include "core/resolve.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    idletime::Config cfg;
    std::vector<std::string> errors;
    if (!idletime::config_parse(std::string(reinterpret_cast<const char *>(data), size), cfg, errors)) return 0;
    (void)idletime::render(cfg, idletime::Section::All);
    for (const idletime::Quota &q : cfg.quotas) {
        idletime::Request req;
        req.account = q.accounts.empty() ? "x" : q.accounts[0];
        req.mode = idletime::Mode::Acceptable;
        idletime::Resolution res;
        std::string err;
        (void)idletime::resolve(cfg, req, res, err);
    }
    return 0;
}
