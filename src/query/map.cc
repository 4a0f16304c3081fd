// `pathwarden map`: rights per path under a directory, as a tree.

#include "src/query/map.h"
#include "src/input/json_text.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "pathwarden/errno.h"

namespace pathwarden::query {
namespace {

using namespace ansi;

constexpr std::array<std::string_view, kNumRights> kRightNames = {
    "read",       "list",       "write",          "execute",     "search",
    "truncate",   "remove",     "rename",         "create_file", "create_dir",
    "create_symlink", "create_fifo", "create_socket"};

constexpr uint32_t Bit(Right r) { return 1u << static_cast<int>(r); }
constexpr uint32_t kCreateRights = Bit(Right::kCreateFile) | Bit(Right::kCreateDir) |
                                   Bit(Right::kCreateSymlink) | Bit(Right::kCreateFifo) |
                                   Bit(Right::kCreateSocket);
constexpr uint32_t kWriteRights = Bit(Right::kWrite) | Bit(Right::kTruncate) | kCreateRights;
constexpr uint32_t kReadRights = Bit(Right::kRead) | Bit(Right::kList);

std::string Child(const std::string& dir, std::string_view name) {
  return dir == "/" ? "/" + std::string(name) : dir + "/" + std::string(name);
}

std::string RightsText(uint32_t bits) {
  std::string out;
  for (int r = 0; r < kNumRights; ++r) {
    if (!(bits & (1u << r))) continue;
    if (!out.empty()) out += ',';
    out += kRightNames[static_cast<size_t>(r)];
  }
  return out.empty() ? "nothing" : out;
}

// Names of directory `path` on the host, sorted; empty when it cannot be
// listed (the decisions say why).
std::vector<std::string> Names(const std::string& path) {
  std::vector<std::string> out;
  DIR* d = opendir(path.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    out.emplace_back(e->d_name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string_view RightName(Right r) { return kRightNames[static_cast<size_t>(r)]; }

std::optional<Query> QueryFor(Right r, const std::string& path, uint32_t mode) {
  const bool dir = S_ISDIR(mode), reg = S_ISREG(mode);
  const std::string fresh = Child(path, "~pw-new");
  Query q;
  q.path = path;
  switch (r) {
    case Right::kRead:
      if (dir) return std::nullopt;
      q.op = "open";
      q.request = Open{.path = path, .flags = O_RDONLY};
      q.read_only = true;
      return q;
    case Right::kList:
      if (!dir) return std::nullopt;
      q.op = "open";
      q.request = Open{.path = path, .flags = O_RDONLY | O_DIRECTORY};
      q.read_only = true;
      return q;
    case Right::kWrite:
      if (!reg) return std::nullopt;
      q.op = "open";
      q.request = Open{.path = path, .flags = O_WRONLY};
      q.read_only = true;
      return q;
    case Right::kExecute:
      if (!reg) return std::nullopt;
      q.op = "exec_check";
      q.request = ExecCheck{.path = path};
      q.read_only = true;
      return q;
    case Right::kSearch:
      if (!dir) return std::nullopt;
      q.op = "chdir";
      q.request = Chdir{.path = path};
      q.read_only = true;
      return q;
    case Right::kTruncate:
      if (!reg) return std::nullopt;
      q.op = "truncate";
      q.request = Truncate{.path = path};
      return q;
    case Right::kRemove:
      if (path == "/") return std::nullopt;
      q.op = dir ? "rmdir" : "unlink";
      if (dir) {
        q.request = Rmdir{.path = path};
      } else {
        q.request = Unlink{.path = path};
      }
      return q;
    case Right::kRename:
      if (path == "/") return std::nullopt;
      q.op = "rename";
      q.path2 = path + "~pw";
      q.request = Rename{.oldpath = path, .newpath = q.path2};
      return q;
    case Right::kCreateFile:
      if (!dir) return std::nullopt;
      q.op = "open";
      q.path = fresh;
      q.request = Open{.path = fresh, .flags = O_WRONLY | O_CREAT | O_EXCL, .mode = 0644};
      return q;
    case Right::kCreateDir:
      if (!dir) return std::nullopt;
      q.op = "mkdir";
      q.path = fresh;
      q.request = Mkdir{.path = fresh};
      return q;
    case Right::kCreateSymlink:
      if (!dir) return std::nullopt;
      q.op = "symlink";
      q.path = fresh;
      q.path2 = "target";
      q.request = Symlink{.target = "target", .path = fresh};
      return q;
    case Right::kCreateFifo:
    case Right::kCreateSocket:
      if (!dir) return std::nullopt;
      q.op = "mknod";
      q.path = fresh;
      q.request = Mknod{.path = fresh,
                        .type = static_cast<uint32_t>(r == Right::kCreateFifo ? S_IFIFO : S_IFSOCK),
                        .mode = 0644};
      return q;
  }
  return std::nullopt;
}

std::string Source(const Session& s, const Decision& d) {
  if (d.unknown()) return "unknown: " + d.reason().unknown_why;
  const Reason& r = d.reason();
  // Landlock decided: the layer that refused, or the rules that granted.
  for (const LayerVerdict& v : r.layers) {
    if (v.missing) {
      const std::string src = static_cast<size_t>(v.layer) <= s.policies().size()
                                  ? s.policies()[static_cast<size_t>(v.layer) - 1].source
                                  : "";
      return fmt::format("Landlock layer {}{}", v.layer, src.empty() ? "" : " (" + src + ")");
    }
  }
  if (d.stage() == Stage::kMount) return "mount: " + r.text;
  if (r.dac && r.dac->decided_by != PermClass::kNone) return DecidedBy(*r.dac, false);
  if (d.stage() != Stage::kNone) return std::string(StageName(d.stage()));
  return "";
}

Result<void, std::string> MapTree(Session& s, const MapOptions& o,
                                  const std::function<void(const PathRights&)>& emit) {
  Model& m = s.model();
  auto top = m.Lookup(o.dir, true);
  if (!top && top.error() == -1) {
    // The model cannot see the directory itself (procfs, a directory
    // pathwarden may not search): every right of it is unknown.
    struct stat st {};
    if (stat(o.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return Unexpected(fmt::format("{}: unknown to the model", o.dir));
    PathRights pr;
    pr.path = o.dir;
    pr.mode = st.st_mode;
    pr.decisions.resize(kNumRights);
    for (int r = 0; r < kNumRights; ++r) {
      auto q = QueryFor(static_cast<Right>(r), o.dir, pr.mode);
      if (!q) continue;
      pr.applies |= 1u << r;
      pr.unknown |= 1u << r;
      pr.decisions[static_cast<size_t>(r)] = s.AskQuiet(*q);
    }
    emit(pr);
    return {};
  }
  if (!top) return Unexpected(fmt::format("{}: {}", o.dir, std::strerror(top.error())));
  if (auto t = m.TypeOf(*top); !t || *t != FileType::kDirectory)
    return Unexpected(fmt::format("{}: not a directory", o.dir));
  // Read everything below at once: one listing per directory.
  (void)m.Preload(o.dir);
  struct Item {
    std::string path;
    int depth;
  };
  std::vector<Item> stack{{o.dir, 0}};
  while (!stack.empty()) {
    Item it = std::move(stack.back());
    stack.pop_back();
    PathRights pr;
    pr.path = it.path;
    pr.depth = it.depth;
    struct stat st {};
    if (lstat(it.path.c_str(), &st) != 0) continue;  // gone since listed
    pr.mode = st.st_mode;
    pr.decisions.resize(kNumRights);
    for (int r = 0; r < kNumRights; ++r) {
      auto q = QueryFor(static_cast<Right>(r), it.path, pr.mode);
      if (!q) continue;
      pr.applies |= 1u << r;
      Decision d = s.AskQuiet(*q);
      if (d.allowed()) pr.allowed |= 1u << r;
      if (d.unknown()) pr.unknown |= 1u << r;
      pr.decisions[static_cast<size_t>(r)] = std::move(d);
    }
    emit(pr);
    if (!S_ISDIR(pr.mode) || (o.depth >= 0 && it.depth >= o.depth)) continue;
    // Not into what the model cannot see.
    if (pr.unknown & Bit(Right::kList)) continue;
    std::vector<std::string> names = Names(it.path);
    for (auto n = names.rbegin(); n != names.rend(); ++n)
      stack.push_back({Child(it.path, *n), it.depth + 1});
  }
  return {};
}

int RunMap(Session& s, Session* diff, Session* unix_alone, const MapOptions& o,
           std::string* out_error) {
  auto paint = [&](const char* code, std::string_view t) {
    return Paint(o.colour, code, t);
  };
  uint64_t paths = 0, readable = 0, writable = 0, writable_exec = 0, unknown = 0, differ = 0;
  uint64_t unix_readable = 0, unix_writable = 0, unix_exec = 0, taken = 0;
  // The rights last shown per depth and kind (directory or not): a path
  // shows its rights only when they change.
  std::vector<std::array<int64_t, 2>> shown;
  bool any_unknown = false;
  auto want = [&](const PathRights& p) {
    if (o.only.empty()) return true;
    if (o.only == "writable") return (p.allowed & kWriteRights) != 0;
    if (o.only == "executable") return (p.allowed & Bit(Right::kExecute)) != 0;
    return (p.allowed & kReadRights) != 0;
  };
  // With a second session, its rights for the same path.
  auto other_rights = [&](const PathRights& p, uint32_t* allowed) {
    *allowed = 0;
    for (int r = 0; r < kNumRights; ++r) {
      if (!(p.applies & (1u << r))) continue;
      auto q = QueryFor(static_cast<Right>(r), p.path, p.mode);
      if (q && diff->AskQuiet(*q).allowed()) *allowed |= 1u << r;
    }
  };
  auto explained = [&](Session& sess, const PathRights& p, int r) {
    auto q = QueryFor(static_cast<Right>(r), p.path, p.mode);
    return Source(sess, sess.model().Evaluate(sess.asker(), q->request));
  };
  auto r = MapTree(s, o, [&](const PathRights& p) {
    ++paths;
    if (p.unknown) {
      ++unknown;
      any_unknown = true;
    }
    if (p.allowed & kReadRights) ++readable;
    if (p.allowed & kWriteRights) ++writable;
    if ((p.allowed & Bit(Right::kWrite)) && (p.allowed & Bit(Right::kExecute))) ++writable_exec;
    if (unix_alone != nullptr) {
      uint32_t u = 0;
      for (int k = 0; k < kNumRights; ++k) {
        if (!(p.applies & (1u << k))) continue;
        auto q = QueryFor(static_cast<Right>(k), p.path, p.mode);
        if (q && unix_alone->AskQuiet(*q).allowed()) u |= 1u << k;
      }
      if (u & kReadRights) ++unix_readable;
      if (u & kWriteRights) ++unix_writable;
      if (u & Bit(Right::kExecute)) ++unix_exec;
      if (u & ~p.allowed) ++taken;
    }
    if (!want(p)) return;
    const std::string name =
        p.depth == 0 ? p.path : p.path.substr(p.path.rfind('/') + 1);
    if (diff != nullptr) {
      uint32_t other = 0;
      other_rights(p, &other);
      if (other == p.allowed) return;
      ++differ;
      const uint32_t gained = other & ~p.allowed, lost = p.allowed & ~other;
      if (o.json) {
        nlohmann::json j{{"path", p.path}, {"gained", nlohmann::json::array()},
                         {"lost", nlohmann::json::array()}};
        for (int k = 0; k < kNumRights; ++k) {
          if (gained & (1u << k)) j["gained"].push_back({{"right", kRightNames[k]}, {"source", explained(*diff, p, k)}});
          if (lost & (1u << k)) j["lost"].push_back({{"right", kRightNames[k]}, {"source", explained(*diff, p, k)}});
        }
        fmt::print("{}\n", input::JsonText(j));
      } else {
        std::string line = p.path;
        if (gained) line += " " + paint(kGreen, "+" + RightsText(gained));
        if (lost) line += " " + paint(kRed, "-" + RightsText(lost));
        const int first = __builtin_ctz(gained | lost);
        line += paint(kDim, "  (" + explained(*diff, p, first) + ")");
        fmt::print("{}\n", line);
      }
      return;
    }
    if (o.json) {
      nlohmann::json rights = nlohmann::json::object(), sources = nlohmann::json::object();
      for (int k = 0; k < kNumRights; ++k) {
        if (!(p.applies & (1u << k))) continue;
        rights[std::string(kRightNames[k])] =
            (p.unknown & (1u << k)) ? nlohmann::json("unknown")
                                    : nlohmann::json((p.allowed & (1u << k)) != 0);
        sources[std::string(kRightNames[k])] = explained(s, p, k);
      }
      fmt::print("{}\n", input::JsonText(nlohmann::json{{"path", p.path},
                                        {"type", S_ISDIR(p.mode)    ? "dir"
                                                 : S_ISREG(p.mode)  ? "file"
                                                 : S_ISLNK(p.mode)  ? "symlink"
                                                                    : "other"},
                                        {"rights", rights},
                                        {"sources", sources}}));
      return;
    }
    if (shown.size() <= static_cast<size_t>(p.depth) + 1) shown.resize(p.depth + 2, {-1, -1});
    const int kind = S_ISDIR(p.mode) ? 0 : 1;
    // What the parent level last showed for this kind.
    const int64_t before = shown[static_cast<size_t>(p.depth)][kind];
    std::string line(static_cast<size_t>(p.depth) * 2, ' ');
    line += S_ISDIR(p.mode) ? paint(kBlue, name) : name;
    const int64_t now = static_cast<int64_t>(p.allowed) | static_cast<int64_t>(p.unknown) << 20;
    if (now != before) {
      shown[static_cast<size_t>(p.depth)][kind] = now;
      std::string rights = paint(p.allowed ? kGreen : kRed, RightsText(p.allowed));
      if (p.unknown) rights += " " + paint(kYellow, "unknown: " + RightsText(p.unknown));
      // The source of the first right that changed (or of the first one).
      const uint32_t changed =
          before < 0 ? p.applies : (static_cast<uint32_t>(before) ^ p.allowed) & p.applies;
      const uint32_t pick = changed ? changed : p.applies;
      std::string src = pick ? explained(s, p, __builtin_ctz(pick)) : "";
      line += "  " + rights + (src.empty() ? "" : paint(kDim, "  (" + src + ")"));
    }
    // A directory's children compare against its own line.
    if (S_ISDIR(p.mode)) shown[static_cast<size_t>(p.depth) + 1] = {now, -1};
    fmt::print("{}\n", line);
  });
  if (!r) {
    *out_error = r.error();
    return 2;
  }
  if (!o.json) {
    fmt::print("\n{} paths: {} readable, {} writable, {} writable and executable{}\n", paths,
               readable, writable, writable_exec,
               unknown ? fmt::format(", {} unknown", unknown) : "");
    if (diff != nullptr) fmt::print("{} paths differ\n", differ);
    if (unix_alone != nullptr)
      fmt::print("Unix alone: {} readable, {} writable, {} executable; the policy takes rights "
                 "from {} paths (Landlock only takes away)\n",
                 unix_readable, unix_writable, unix_exec, taken);
  }
  return any_unknown ? 3 : 0;
}

}  // namespace pathwarden::query
