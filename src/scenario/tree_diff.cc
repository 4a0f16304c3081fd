// Final trees, described and compared: what `check --both` and the fuzzer
// report when the engine's tree and the kernel's differ.

#include <fmt/format.h>

#include "pathwarden/executor.h"

namespace pathwarden {

std::string DescribeTreeEntry(const TreeEntry& e) {
  std::string s = fmt::format("{} 0{:o} {}:{} nlink {}", e.type, e.mode, e.uid, e.gid, e.nlink);
  if (e.type == "file") s += fmt::format(" size {}", e.size);
  if (e.type == "symlink") s += fmt::format(" -> \"{}\"", e.target);
  if (e.type == "char" || e.type == "block") s += fmt::format(" {}:{}", e.rdev_major, e.rdev_minor);
  if (!e.acl.empty()) s += " acl " + e.acl;
  if (!e.default_acl.empty()) s += " default " + e.default_acl;
  if (!e.xattrs.empty()) s += " xattrs " + e.xattrs;
  return s;
}

std::vector<std::string> DiffTrees(const std::vector<TreeEntry>& engine,
                                   const std::vector<TreeEntry>& kernel) {
  std::vector<std::string> out;
  size_t i = 0, j = 0;
  while (i < engine.size() || j < kernel.size()) {
    if (j == kernel.size() || (i < engine.size() && engine[i].path < kernel[j].path)) {
      out.push_back(fmt::format("{}: engine {}, kernel: none", engine[i].path,
                                DescribeTreeEntry(engine[i])));
      ++i;
    } else if (i == engine.size() || kernel[j].path < engine[i].path) {
      out.push_back(fmt::format("{}: engine: none, kernel {}", kernel[j].path,
                                DescribeTreeEntry(kernel[j])));
      ++j;
    } else {
      if (!(engine[i] == kernel[j]))
        out.push_back(fmt::format("{}: engine {}, kernel {}", engine[i].path,
                                  DescribeTreeEntry(engine[i]), DescribeTreeEntry(kernel[j])));
      ++i;
      ++j;
    }
  }
  return out;
}

}  // namespace pathwarden
