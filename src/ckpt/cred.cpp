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

std::string socket_name()
{
    const char *sock = std::getenv("IDLETIME_MUNGE_SOCKET");
    return sock && *sock ? std::string(sock) : std::string("munge's default socket");
}

// munged did not answer (down, wrong socket, overloaded): says nothing about the credential.
bool unavailable(munge_err_t e)
{
    return e == EMUNGE_SOCKET || e == EMUNGE_TIMEOUT || e == EMUNGE_SNAFU ||
           e == EMUNGE_NO_MEMORY || e == EMUNGE_OVERFLOW;
}

std::string reason(const Ctx &c, munge_err_t e)
{
    const char *why = munge_ctx_strerror(c.ctx);
    return why ? why : munge_strerror(e);
}

}  // namespace

std::string munge_sign(const std::string &payload)
{
    Ctx c;
    configure(c);
    char *cred = nullptr;
    munge_err_t e = munge_encode(&cred, c.ctx, payload.data(), static_cast<int>(payload.size()));
    std::unique_ptr<char, decltype(&std::free)> owned(cred, &std::free);
    if (e != EMUNGE_SUCCESS)
        throw Error(-EPROTO, "munge: cannot sign the manifest: " + reason(c, e) +
                                 (unavailable(e) ? " (munged unreachable at " + socket_name() +
                                                       "; start munged or fix "
                                                       "IDLETIME_MUNGE_SOCKET)"
                                                 : std::string()));
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
    if (unavailable(e))
        throw Error(kErrMungeUnavailable,
                    "munge unavailable, checkpoints not checked: cannot decode with munged at " +
                        socket_name() + " (" + reason(c, e) +
                        "); start munged or point IDLETIME_MUNGE_SOCKET at its socket, then retry");
    if (e == EMUNGE_CRED_REWOUND)
        throw Error(kErrClockSkew,
                    "munge credential was made in the future (clock skew between the saving "
                    "and this host: " + reason(c, e) +
                        "); sync the clocks (chrony/ntpd), then retry");
    if (e != EMUNGE_SUCCESS && e != EMUNGE_CRED_EXPIRED && e != EMUNGE_CRED_REPLAYED)
        throw Error(-EPERM, "munge credential rejected: " + reason(c, e));
    if (cuid != uid)
        throw Error(-EPERM, "munge credential belongs to uid " + std::to_string(cuid) +
                                ", not to us (uid " + std::to_string(uid) + ")");
    std::string got(static_cast<const char *>(buf), buf ? static_cast<size_t>(len) : 0);
    if (got != payload)
        throw Error(-EPERM, "munge credential does not match this manifest (job, step or "
                            "digest differ)");
}

}  // namespace idletime::ckpt
