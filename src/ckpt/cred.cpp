#include "ckpt/cred.hpp"

#include <cerrno>
#include <cstdlib>
#include <memory>

#include <munge.h>

#include "ckpt/util.hpp"

namespace idletime::ckpt {
namespace {

struct Ctx {
    munge_ctx_t ctx = munge_ctx_create();
    ~Ctx() { munge_ctx_destroy(ctx); }
};

// A context pointing at IDLETIME_MUNGE_SOCKET when it is set.
void configure(Ctx &c)
{
    if (!c.ctx)
        throw Error(-ENOMEM, "munge: cannot create a context");
    const char *sock = std::getenv("IDLETIME_MUNGE_SOCKET");
    if (sock && *sock && munge_ctx_set(c.ctx, MUNGE_OPT_SOCKET, sock) != EMUNGE_SUCCESS)
        throw Error(-EPROTO, std::string("munge: cannot use socket ") + sock);
}

}  // namespace

std::string munge_sign(const std::string &payload)
{
    Ctx c;
    configure(c);
    char *cred = nullptr;
    munge_err_t e = munge_encode(&cred, c.ctx, payload.data(), static_cast<int>(payload.size()));
    std::unique_ptr<char, decltype(&std::free)> owned(cred, &std::free);
    if (e != EMUNGE_SUCCESS) {
        const char *why = munge_ctx_strerror(c.ctx);
        throw Error(-EPROTO, std::string("munge: cannot sign the manifest: ") +
                                 (why ? why : munge_strerror(e)));
    }
    return cred;
}

void munge_verify(const std::string &cred, const std::string &payload, uid_t uid)
{
    Ctx c;
    configure(c);
    void *buf = nullptr;
    int len = 0;
    uid_t cuid = 0;
    gid_t cgid = 0;
    munge_err_t e = munge_decode(cred.c_str(), c.ctx, &buf, &len, &cuid, &cgid);
    std::unique_ptr<void, decltype(&std::free)> owned(buf, &std::free);
    if (e != EMUNGE_SUCCESS && e != EMUNGE_CRED_EXPIRED && e != EMUNGE_CRED_REPLAYED) {
        const char *why = munge_ctx_strerror(c.ctx);
        throw Error(-EPERM, std::string("munge credential rejected: ") +
                                (why ? why : munge_strerror(e)));
    }
    if (cuid != uid)
        throw Error(-EPERM, "munge credential belongs to uid " + std::to_string(cuid) +
                                ", not to us (uid " + std::to_string(uid) + ")");
    std::string got(static_cast<const char *>(buf), buf ? static_cast<size_t>(len) : 0);
    if (got != payload)
        throw Error(-EPERM, "munge credential does not match this manifest (job, step or "
                            "digest differ)");
}

}  // namespace idletime::ckpt
