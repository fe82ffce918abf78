// munge credentials that bind a manifest to its writer's uid (libmunge; socket from
// env IDLETIME_MUNGE_SOCKET when set).
#pragma once

#include <cerrno>
#include <string>
#include <sys/types.h>

namespace idletime::ckpt {

// Encodes payload; throws Error(-EPROTO, "munge: ...") when munged cannot sign.
std::string munge_sign(const std::string &payload);

// Codes of verification failures that say nothing about the checkpoint (ckpt.h: public names).
constexpr int kErrMungeUnavailable = -ENOTCONN;  // munged not reachable / failing
constexpr int kErrClockSkew = -ETIME;            // credential from the future (EMUNGE_CRED_REWOUND)

// True for the codes above: latest() stops instead of skipping the checkpoint.
inline bool infrastructure_error(int code)
{
    return code == kErrMungeUnavailable || code == kErrClockSkew;
}

// Decodes cred and checks it came from uid and carries exactly payload. Expired or replayed
// credentials are authentic and accepted; munged unreachable throws kErrMungeUnavailable, a
// credential from the future kErrClockSkew; anything else (forged, other uid/key/job/digest)
// throws Error(-EPERM, reason).
void munge_verify(const std::string &cred, const std::string &payload, uid_t uid);

}  // namespace idletime::ckpt
