// The plain scenario types' own functions (include/pathwarden/scenario.h):
// file type bits, effective modes and capabilities, source locations.
// Apart from the parser, which the adapters that build from a Scenario
// without parsing one (the fuzzer's generator, the kernel executor) need
// not reach for them. The core needs none of them.

#include <sys/stat.h>

#include <fmt/format.h>

#include "pathwarden/cred.h"
#include "pathwarden/scenario.h"

namespace pathwarden {

uint32_t FileTypeBits(NodeType t) {
  switch (t) {
    case NodeType::kFile: return S_IFREG;
    case NodeType::kSymlink: return S_IFLNK;
    case NodeType::kFifo: return S_IFIFO;
    case NodeType::kSocket: return S_IFSOCK;
    case NodeType::kChar: return S_IFCHR;
    case NodeType::kBlock: return S_IFBLK;
    case NodeType::kDir:
    case NodeType::kTmpfs:
    case NodeType::kBind: return S_IFDIR;
  }
  return S_IFREG;
}

NodeType NodeTypeOf(uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR: return NodeType::kDir;
    case S_IFLNK: return NodeType::kSymlink;
    case S_IFIFO: return NodeType::kFifo;
    case S_IFSOCK: return NodeType::kSocket;
    case S_IFCHR: return NodeType::kChar;
    case S_IFBLK: return NodeType::kBlock;
  }
  return NodeType::kFile;
}

uint32_t NodeSpec::EffectiveMode() const {
  if (type == NodeType::kSymlink) return 0777;
  if (mode) return *mode;
  return (type == NodeType::kDir || type == NodeType::kTmpfs) ? 0755 : 0644;
}

uint64_t ProcessSpec::EffectiveCaps() const {
  if (caps) return *caps;
  if (userns_uids.empty()) return uid == 0 ? kCapAll : 0;
  return IdOutside(userns_uids, 0) == uid ? kCapAll : 0;
}

std::shared_ptr<const UserNamespace> ProcessSpec::UserNs() const {
  if (userns_uids.empty()) return nullptr;
  auto ns = std::make_shared<UserNamespace>();
  ns->uid_map = userns_uids;
  ns->gid_map = userns_gids.empty() ? userns_uids : userns_gids;
  ns->reader_inside = false;  // the scenario's ids are the initial namespace's
  ns->owner = uid;            // it made the namespace as itself
  return ns;
}

std::string Scenario::Where(const SourceLoc& loc) const {
  // JSON: the key path too, and since the strict reader (src/input) the
  // position; a location decoded from an older peer may lack it.
  if (!loc.key_path.empty() && loc.line > 0)
    return fmt::format("{}:{}:{}: {}", file, loc.line, loc.col, loc.key_path);
  if (!loc.key_path.empty()) return fmt::format("{}: {}", file, loc.key_path);
  return fmt::format("{}:{}:{}", file, loc.line, loc.col);
}

}  // namespace pathwarden
