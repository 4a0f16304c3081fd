#include "src/base/dir_names.h"

namespace pathwarden::internal {

Result<std::vector<std::string>, int> ReadDirNames(int fd) {
  std::vector<std::string> names;
  if (const int err = ForEachDirEntry(
          fd, [&](std::string_view name, ino_t, unsigned char) { names.emplace_back(name); }))
    return Unexpected(err);
  return names;
}

}  // namespace pathwarden::internal
