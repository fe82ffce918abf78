// munge credentials that bind a manifest to its writer's uid (libmunge; socket from
// env IDLETIME_MUNGE_SOCKET when set).
#pragma once

#include <string>
#include <sys/types.h>

namespace idletime::ckpt {

// Encodes payload; throws Error(-EPROTO, "munge: ...") when munged cannot sign.
std::string munge_sign(const std::string &payload);

// Decodes cred and checks it came from uid and carries exactly payload. Expired or replayed
// credentials are authentic and accepted; anything else throws Error(-EPERM, reason).
void munge_verify(const std::string &cred, const std::string &payload, uid_t uid);

}  // namespace idletime::ckpt
