// Encoded xattr sets (xattr.h).

#include "src/vfs/xattr.h"

#include <cstdint>
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace pathwarden::vfs {
namespace {

void PutLen(std::string* out, size_t n) {
  const uint32_t v = static_cast<uint32_t>(n);
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Reads one length-prefixed field at *pos; false when malformed.
bool GetField(std::string_view s, size_t* pos, std::string_view* out) {
  uint32_t n = 0;
  if (s.size() - *pos < sizeof n) return false;
  std::memcpy(&n, s.data() + *pos, sizeof n);
  *pos += sizeof n;
  if (s.size() - *pos < n) return false;
  *out = s.substr(*pos, n);
  *pos += n;
  return true;
}

// Calls fn(name, value) per entry until it returns false.
template <typename Fn>
void ForEach(std::string_view s, Fn&& fn) {
  size_t pos = 0;
  while (pos < s.size()) {
    std::string_view name, value;
    if (!GetField(s, &pos, &name) || !GetField(s, &pos, &value)) return;
    if (!fn(name, value)) return;
  }
}

constexpr std::string_view kPrefixes[] = {"security.", "system.", "trusted.", "user.", ""};

}  // namespace

XattrNs NamespaceOf(std::string_view name) {
  for (int ns = 0; ns < 4; ++ns)
    if (name.starts_with(kPrefixes[ns])) return static_cast<XattrNs>(ns);
  return XattrNs::kOther;
}

std::string_view PrefixOf(XattrNs ns) { return kPrefixes[static_cast<int>(ns)]; }

std::string EncodeXattrs(const XattrMap& m) {
  std::string out;
  for (const auto& [name, value] : m) {
    PutLen(&out, name.size());
    out += name;
    PutLen(&out, value.size());
    out += value;
  }
  return out;
}

XattrMap DecodeXattrs(std::string_view encoded) {
  XattrMap m;
  ForEach(encoded, [&](std::string_view name, std::string_view value) {
    m.emplace(std::string(name), std::string(value));
    return true;
  });
  return m;
}

std::optional<std::string_view> FindXattr(std::string_view encoded, std::string_view name) {
  std::optional<std::string_view> found;
  ForEach(encoded, [&](std::string_view n, std::string_view value) {
    if (n != name) return true;
    found = value;
    return false;
  });
  return found;
}

std::string XattrsText(std::vector<XattrRead> reads) {
  std::sort(reads.begin(), reads.end(),
            [](const XattrRead& a, const XattrRead& b) { return a.name < b.name; });
  std::string out;
  for (const XattrRead& r : reads) {
    if (!out.empty()) out += ", ";
    out += r.name;
    if (!r.err.empty()) {
      out += "=<" + r.err + ">";
      continue;
    }
    out += "=\"";
    for (unsigned char c : r.value) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20 || c > 0x7e) {
        out += fmt::format("\\x{:02x}", c);
      } else {
        out += static_cast<char>(c);
      }
    }
    out += '"';
  }
  return out;
}

std::string SnapshotXattrs(std::string_view encoded) {
  if (encoded.empty()) return {};
  std::vector<XattrRead> reads;
  for (auto& [name, value] : DecodeXattrs(encoded)) {
    XattrRead r{name, value, {}};
    uint32_t root = 0;
    if (name == kXattrNameCaps && !ValidFileCaps(value, &root)) {
      r.value.clear();
      r.err = "EINVAL";
    }
    reads.push_back(std::move(r));
  }
  return XattrsText(std::move(reads));
}

bool ValidFileCaps(std::string_view v, uint32_t* v3_root) {
  *v3_root = 0;
  auto le32 = [&](size_t at) {
    uint32_t x = 0;
    for (size_t k = 4; k-- > 0;) x = x << 8 | static_cast<unsigned char>(v[at + k]);
    return x;
  };
  if (v.size() != 20 && v.size() != 24) return false;
  const uint32_t rev = le32(0) & ~1u;  // without VFS_CAP_FLAGS_EFFECTIVE
  if (v.size() == 20) return rev == 0x02000000u;
  if (rev != 0x03000000u) return false;
  *v3_root = le32(20);
  return true;
}

}  // namespace pathwarden::vfs
