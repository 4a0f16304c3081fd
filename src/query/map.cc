// `pathwarden map`: rights per path under a directory, as a tree.

#include "src/query/map.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "pathwarden/errno.h"
#include "pathwarden/scenario.h"
#include "src/explain/explain.h"
#include "src/input/json_text.h"
#include "src/input/text_quote.h"
#include "src/query/dir_walk.h"

namespace pathwarden::query {
namespace {

using namespace ansi;

constexpr std::array<std::string_view, kNumRights> kRightNames = {
    "read",        "list",       "write",          "execute",     "search",
    "truncate",    "remove",     "rename",         "link",        "create_file",
    "create_dir",  "create_symlink", "create_fifo", "create_socket"};

constexpr uint32_t Bit(Right r) { return 1u << static_cast<int>(r); }
constexpr uint32_t kCreateRights = Bit(Right::kCreateFile) | Bit(Right::kCreateDir) |
                                   Bit(Right::kCreateSymlink) | Bit(Right::kCreateFifo) |
                                   Bit(Right::kCreateSocket);
constexpr uint32_t kWriteRights = Bit(Right::kWrite) | Bit(Right::kTruncate) | kCreateRights;
constexpr uint32_t kReadRights = Bit(Right::kRead) | Bit(Right::kList);

std::string Child(const std::string& dir, std::string_view name) {
  return dir == "/" ? "/" + std::string(name) : dir + "/" + std::string(name);
}

std::string Parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
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

const char* TypeWord(uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR: return "dir";
    case S_IFREG: return "file";
    case S_IFLNK: return "symlink";
    case 0: return "unknown";
  }
  return "other";
}

// The rights of `mode` decided at `path` into `pr`.
void DecideAll(Session& s, PathRights* pr) {
  for (int r = 0; r < kNumRights; ++r) {
    const auto v = Decide(s, static_cast<Right>(r), pr->path, pr->mode);
    if (!v) continue;
    const uint32_t b = 1u << r;
    pr->applies |= b;
    if (v->allowed) pr->allowed |= b;
    if (v->unknown) pr->unknown |= b;
    if (v->unasked) pr->unasked |= b;
    if (v->once_empty) pr->once_empty |= b;
  }
}

// " on the parent", " on /x", or "" when `checked` is the entry itself.
std::string Where(const std::string& checked, const std::string& entry) {
  if (checked.empty() || checked == entry) return "";
  if (checked == Parent(entry)) return " on the parent";
  return " on " + checked;
}

// Every layer verdict of a decision: its own, and both sides of a refer.
std::vector<const LayerVerdict*> AllLayers(const Reason& r) {
  std::vector<const LayerVerdict*> out;
  for (const LayerVerdict& v : r.layers) out.push_back(&v);
  for (const ReferSide& side : r.refer)
    for (const LayerVerdict& v : side.layers) out.push_back(&v);
  return out;
}

std::string Joined(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const std::string& p : parts) {
    if (p.empty()) continue;
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

}  // namespace

std::string_view RightName(Right r) { return kRightNames[static_cast<size_t>(r)]; }

std::optional<Query> QueryFor(Right r, const std::string& path, uint32_t mode) {
  const bool dir = S_ISDIR(mode), reg = S_ISREG(mode);
  const std::string inside = Child(path, kNewName);
  // Not the entry itself: rename(2) of a name onto itself succeeds before
  // may_delete() (vfs_rename()), whoever asks.
  const bool is_new = path.size() > kNewName.size() && path.ends_with(kNewName) &&
                      path[path.size() - kNewName.size() - 1] == '/';
  const std::string beside =
      Child(Parent(path), is_new ? std::string(kNewName) + "~" : std::string(kNewName));
  // The query asking `req` of `at` (and `at2`), named by its operation.
  auto ask = [](Request req, const std::string& at, bool read_only = false,
                std::string at2 = {}) -> std::optional<Query> {
    return Query{.op = std::string(OpName(OpOf(req))),
                 .path = at,
                 .path2 = std::move(at2),
                 .request = std::move(req),
                 .read_only = read_only};
  };
  const std::nullopt_t none = std::nullopt;
  switch (r) {
    case Right::kRead:
      return dir ? none : ask(Open{.path = path, .flags = O_RDONLY}, path, true);
    case Right::kList:
      return !dir ? none : ask(Open{.path = path, .flags = O_RDONLY | O_DIRECTORY}, path, true);
    case Right::kWrite:
      return !reg ? none : ask(Open{.path = path, .flags = O_WRONLY}, path, true);
    case Right::kExecute:
      return !reg ? none : ask(ExecCheck{.path = path}, path, true);
    case Right::kSearch:
      return !dir ? none : ask(Chdir{.path = path}, path, true);
    case Right::kTruncate:
      return !reg ? none : ask(Truncate{.path = path}, path);
    case Right::kRemove:
      if (path == "/") return none;
      return dir ? ask(Rmdir{.path = path}, path) : ask(Unlink{.path = path}, path);
    case Right::kRename:
      if (path == "/") return none;
      return ask(Rename{.oldpath = path, .newpath = beside}, path, false, beside);
    case Right::kLink:
      // Linux: fs/namei.c vfs_link(): a directory is EPERM for anyone.
      if (dir || path == "/") return none;
      return ask(Link{.oldpath = path, .newpath = beside}, path, false, beside);
    case Right::kCreateFile:
      return !dir ? none
                  : ask(Open{.path = inside, .flags = O_WRONLY | O_CREAT | O_EXCL, .mode = 0644},
                        inside);
    case Right::kCreateDir:
      return !dir ? none : ask(Mkdir{.path = inside}, inside);
    case Right::kCreateSymlink:
      return !dir ? none : ask(Symlink{.target = "target", .path = inside}, inside, false, "target");
    case Right::kCreateFifo:
    case Right::kCreateSocket:
      if (!dir) return none;
      return ask(Mknod{.path = inside,
                       .type = static_cast<uint32_t>(r == Right::kCreateFifo ? S_IFIFO : S_IFSOCK),
                       .mode = 0644},
                 inside);
  }
  return std::nullopt;
}

// Why a security module the model does not model could refuse `op` (its
// hooks come before the filesystem's own answers, such as rmdir's
// ENOTEMPTY); "" when none could.
std::string ModulesWhy(Session& s, Op op) {
  const SecurityModules* m = s.model().security_modules();
  return m ? m->WhyUnknown(op) : std::string();
}

std::optional<RightVerdict> Decide(Session& s, Right r, const std::string& path, uint32_t mode) {
  if ((mode & S_IFMT) == 0) return std::nullopt;
  auto q = QueryFor(r, path, mode);
  if (!q) return std::nullopt;
  RightVerdict v;
  // Linux: fs/namei.c getname_flags(): a path as long as PATH_MAX with
  // its NUL is ENAMETOOLONG before anything is looked at.
  const bool two_paths = q->op == "rename" || q->op == "link";
  if (q->path.size() >= PATH_MAX || (two_paths && q->path2.size() >= PATH_MAX)) {
    v.unknown = v.unasked = true;
    return v;
  }
  const Decision d = s.AskQuiet(*q);
  if (d.unknown()) {
    v.unknown = true;
  } else if (d.allowed()) {
    v.allowed = true;
  } else if (r == Right::kRemove && S_ISDIR(mode) && d.err() == ENOTEMPTY) {
    // Linux: fs/namei.c do_rmdir() calls security_path_rmdir() and
    // vfs_rmdir() may_delete() before the filesystem's ->rmdir() finds
    // the directory not empty (simple_rmdir(), ext4_rmdir()): every
    // permission check passed -- but a security module's hooks there
    // (not modelled) come before it too.
    if (ModulesWhy(s, Op::kRmdir).empty())
      v.allowed = v.once_empty = true;
    else
      v.unknown = true;
  }
  return v;
}

std::string Source(Session& s, const PathRights& p, Right r) {
  const uint32_t b = Bit(r);
  if (!(p.applies & b)) return "";
  if (p.unasked & b) {
    auto q = QueryFor(r, p.path, p.mode);
    const size_t len = q ? std::max(q->path.size(), q->path2.size()) : p.path.size();
    return fmt::format("unknown: {} ({} bytes)", kUnaskedWhy, len);
  }
  auto q = QueryFor(r, p.path, p.mode);
  if (!q) return "";
  const Decision d = s.model().Evaluate(s.asker(), q->request);
  const Reason& why = d.reason();
  if (d.unknown()) return "unknown: " + why.unknown_why;
  if (r == Right::kRemove && S_ISDIR(p.mode) && d.err() == ENOTEMPTY)
    if (std::string m = ModulesWhy(s, Op::kRmdir); !m.empty()) return "unknown: " + m;
  const LayerOrigins origins{s.policies(), s.layers()};
  const auto layer_name = [&](int layer) {
    const std::string src = LayerSource(origins, layer);
    return fmt::format("Landlock layer {}{}", layer, src.empty() ? "" : " (" + src + ")");
  };
  // The entry is the object of the query, or the directory it creates in.
  const std::string& entry = p.path;
  std::vector<std::string> parts;
  // ENOTEMPTY: every permission check passed (Decide()).
  const bool once_empty = r == Right::kRemove && S_ISDIR(p.mode) && d.err() == ENOTEMPTY;
  if (d.allowed() || once_empty) {
    if (why.dac && why.dac->granted && why.dac->decided_by != PermClass::kNone)
      parts.push_back(DecidedBy(*why.dac, false) + Where(why.dac->path, entry));
    // Each layer that handles the request: the rules that granted it.
    for (const LayerVerdict* v : AllLayers(why)) {
      if (v->requested == 0 || v->grants.empty()) continue;
      std::vector<std::string> rules;
      for (const RuleGrant& g : v->grants) {
        const std::string origin = OriginOf(origins, g.layer, g.path);
        rules.push_back(fmt::format("rule {}{}", g.path, origin.empty() ? "" : " (" + origin + ")"));
      }
      parts.push_back(layer_name(v->layer) + " " + Joined(rules, ", "));
    }
    if (once_empty) parts.push_back("allowed once empty: rmdir is ENOTEMPTY now");
    if (parts.empty() && !d.ToText().empty()) parts.push_back(d.ToText());
    return Joined(parts, "; ");
  }
  // An unknown answer refuses nothing: its reason alone (below).
  switch (d.unknown() ? Stage::kNone : d.stage()) {
    case Stage::kLandlock:
      for (const LayerVerdict* v : AllLayers(why)) {
        if (v->missing == 0) continue;
        std::string names;
        for (const std::string& n : BlockerNames(*v, v->missing)) names += (names.empty() ? "" : ", ") + n;
        parts.push_back(fmt::format("{}: no rule grants {}", layer_name(v->layer), names));
      }
      break;
    case Stage::kWalk:
      for (const ComponentVerdict& c : why.components) {
        if (c.check.granted) continue;
        parts.push_back(fmt::format("no search permission on {} ({})", c.check.path,
                                    DecidedBy(c.check, c.fast)));
        break;
      }
      break;
    case Stage::kDac:
      if (why.dac && why.dac->decided_by != PermClass::kNone)
        parts.push_back(fmt::format("{}{} refuses {}", DecidedBy(*why.dac, false),
                                    Where(why.dac->path, entry), WantString(why.dac->want)));
      break;
    default:
      break;
  }
  if (parts.empty()) {
    const std::string text = d.ToText();
    parts.push_back(text.empty() ? ResultName(d) : fmt::format("{}: {}", ResultName(d), text));
  }
  return Joined(parts, "; ");
}

namespace {

// An entry of a directory being walked, its rights decided when it is not
// a directory.
struct Pending {
  DirEntry entry;
  PathRights rights;
};

// A directory the walk stands in: the length of its path, its entries,
// the next one to emit.
struct Frame {
  size_t path_len = 0;
  std::vector<Pending> kids;
  size_t next = 0;
};

}  // namespace

Result<void, std::string> MapTree(Session& s, const MapOptions& o,
                                  const std::function<void(const PathRights&)>& emit,
                                  MapStats* stats) {
  MapStats ignored;
  MapStats& st = stats != nullptr ? *stats : ignored;
  Model& m = s.model();
  auto top = m.Lookup(o.dir, true);
  if (!top && top.error() == -1) {
    // The model cannot see the directory itself (procfs, a directory
    // pathwarden may not search): every right of it is unknown.
    struct stat sb {};
    if (stat(o.dir.c_str(), &sb) != 0 || !S_ISDIR(sb.st_mode))
      return Unexpected(fmt::format("{}: unknown to the model", o.dir));
    PathRights pr;
    pr.path = o.dir;
    pr.mode = sb.st_mode;
    DecideAll(s, &pr);
    emit(pr);
    return {};
  }
  if (!top) return Unexpected(fmt::format("{}: {}", o.dir, std::strerror(top.error())));
  if (auto t = m.TypeOf(*top); !t || *t != FileType::kDirectory)
    return Unexpected(fmt::format("{}: not a directory", o.dir));
  // Read everything below at once: one listing per directory.
  (void)m.Preload(o.dir);
  auto walk = DirWalk::Open(o.dir);
  if (!walk) return Unexpected(fmt::format("{}: {}", o.dir, walk.error()));

  std::string path = o.dir;  // of the entry at hand; directories on the stack are prefixes
  // Whether the walk goes into directory `pr`: not past --depth, nor into
  // what the model cannot list for a reason other than PATH_MAX.
  const auto enter = [&](const PathRights& pr) {
    if (!S_ISDIR(pr.mode) || (o.depth >= 0 && pr.depth >= o.depth)) return false;
    const uint32_t list = Bit(Right::kList);
    return !(pr.unknown & list) || (pr.unasked & list);
  };
  // A directory not entered for want of a listing says so.
  const auto unlisted = [&](PathRights* pr) {
    if (S_ISDIR(pr->mode) && !(o.depth >= 0 && pr->depth >= o.depth))
      pr->note = "its entries are not listed: the model cannot decide its listing";
  };
  // Lists the directory the walk stands in (`dir`, whose path is `path`)
  // into `f`, deciding its entries that are not directories and which
  // rights most of them have.
  const auto list = [&](PathRights* dir, Frame* f) {
    auto kids = walk->List();
    if (!kids) {
      dir->note = "its entries could not be listed: " + kids.error();
      return false;
    }
    f->path_len = path.size();
    f->kids.reserve(kids->size());
    std::map<std::pair<uint32_t, uint32_t>, std::pair<size_t, size_t>> counts;  // -> count, first
    for (DirEntry& e : *kids) {
      Pending k{std::move(e), {}};
      if (k.entry.err == 0 && !S_ISDIR(k.entry.st.st_mode)) {
        PathRights& pr = k.rights;
        pr.path = Child(path, k.entry.name);
        pr.mode = k.entry.st.st_mode;
        pr.depth = dir->depth + 1;
        DecideAll(s, &pr);
        ++counts.try_emplace({pr.allowed, pr.unknown}, 0, f->kids.size()).first->second.first;
      }
      f->kids.push_back(std::move(k));
    }
    const std::pair<size_t, size_t>* best = nullptr;
    for (const auto& [key, c] : counts) {
      if (best == nullptr || c.first > best->first ||
          (c.first == best->first && c.second < best->second))
        best = &c;
    }
    if (best != nullptr) {
      const PathRights& ex = f->kids[best->second].rights;
      dir->files = true;
      dir->files_allowed = ex.allowed;
      dir->files_unknown = ex.unknown;
      dir->files_mode = ex.mode;
      dir->files_example = f->kids[best->second].entry.name;
    }
    return true;
  };

  std::vector<Frame> stack;
  {
    PathRights pr;
    pr.path = path;
    pr.mode = walk->here().st_mode;
    DecideAll(s, &pr);
    Frame f;
    const bool go = enter(pr);
    if (!go) unlisted(&pr);
    const bool listed = go && list(&pr, &f);
    emit(pr);
    if (listed) stack.push_back(std::move(f));
  }
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next == f.kids.size()) {
      stack.pop_back();
      if (stack.empty()) break;
      path.resize(stack.back().path_len);
      if (auto r = walk->Leave(); !r) return Unexpected(fmt::format("{}: {}", path, r.error()));
      continue;
    }
    Pending& k = f.kids[f.next++];
    const int depth = static_cast<int>(stack.size());
    path.resize(f.path_len);
    path = Child(path, k.entry.name);
    if (k.entry.err == ENOENT) {
      // Gone between the listing and its stat: not shown, but counted.
      ++st.vanished;
      if (st.gone.size() < 10) st.gone.push_back(path);
      continue;
    }
    if (k.entry.err != 0) {
      PathRights pr;
      pr.path = path;
      pr.depth = depth;
      pr.note = fmt::format("pathwarden cannot read it: {}", ErrnoName(k.entry.err));
      emit(pr);
      continue;
    }
    if (!S_ISDIR(k.entry.st.st_mode)) {
      emit(k.rights);
      k.rights = PathRights{};
      continue;
    }
    PathRights pr;
    pr.path = path;
    pr.mode = k.entry.st.st_mode;
    pr.depth = depth;
    DecideAll(s, &pr);
    if (!enter(pr)) {
      unlisted(&pr);
      emit(pr);
      continue;
    }
    if (auto r = walk->Enter(k.entry); !r) {
      pr.note = "its entries could not be listed: " + r.error();
      emit(pr);
      continue;
    }
    Frame nf;
    const bool listed = list(&pr, &nf);
    emit(pr);
    if (listed) {
      stack.push_back(std::move(nf));  // `f` and `k` are not used after this
    } else if (auto r = walk->Leave(); !r) {
      return Unexpected(fmt::format("{}: {}", Parent(path), r.error()));
    }
  }
  return {};
}

namespace {

// The rights of a line: the allowed ones, then those unknown.
std::string RightsLine(uint32_t allowed, uint32_t unknown, bool colour) {
  std::string out = Paint(colour, allowed ? kGreen : kRed, RightsText(allowed));
  if (unknown) out += " " + Paint(colour, kYellow, "unknown: " + RightsText(unknown));
  return out;
}

// The sources of the rights `bits` of `p`, grouped: "read,write: owner 0;
// execute: other refuses x".
std::string SourcesLine(Session& s, const PathRights& p, uint32_t bits) {
  std::vector<std::pair<std::string, uint32_t>> groups;
  for (int r = 0; r < kNumRights; ++r) {
    if (!(bits & p.applies & (1u << r))) continue;
    std::string src = Source(s, p, static_cast<Right>(r));
    if (src.empty()) continue;
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const auto& x) { return x.first == src; });
    if (g == groups.end()) {
      groups.emplace_back(std::move(src), 1u << r);
    } else {
      g->second |= 1u << r;
    }
  }
  std::string out;
  for (const auto& [src, b] : groups) {
    if (!out.empty()) out += "; ";
    out += RightsText(b) + ": " + input::EscapeText(src);
  }
  return out;
}

// What a line of the text tree compares with: a directory's rights, and
// the rights the entries of it that are not directories are compared with.
struct Shown {
  uint32_t allowed = 0, unknown = 0;
  bool files = false;
  uint32_t files_allowed = 0, files_unknown = 0;
};

}  // namespace

int RunMap(Session& s, Session* diff, Session* unix_alone, const MapOptions& o,
           std::string* out_error) {
  auto paint = [&](const char* code, std::string_view t) { return Paint(o.colour, code, t); };
  uint64_t paths = 0, readable = 0, writable = 0, writable_exec = 0, unknown = 0, differ = 0;
  uint64_t too_long = 0, unix_readable = 0, unix_writable = 0, unix_exec = 0, taken = 0;
  // Per depth: what the directory at that depth on the current branch
  // shows (the parent of the entries one deeper).
  std::vector<Shown> shown;
  auto want = [&](const PathRights& p) {
    if (o.only.empty()) return true;
    if (o.only == "writable") return (p.allowed & kWriteRights) != 0;
    if (o.only == "executable") return (p.allowed & Bit(Right::kExecute)) != 0;
    return (p.allowed & kReadRights) != 0;
  };
  // Another session's rights for the same path.
  auto rights_of = [&](Session& other, const PathRights& p) {
    PathRights q;
    q.path = p.path;
    q.mode = p.mode;
    q.depth = p.depth;
    DecideAll(other, &q);
    return q;
  };
  MapStats stats;
  auto r = MapTree(
      s, o,
      [&](const PathRights& p) {
        ++paths;
        const bool is_unknown = p.unknown != 0 || !p.note.empty();
        if (is_unknown) ++unknown;
        if (p.path.size() >= PATH_MAX) ++too_long;
        if (p.allowed & kReadRights) ++readable;
        if (p.allowed & kWriteRights) ++writable;
        if ((p.allowed & Bit(Right::kWrite)) && (p.allowed & Bit(Right::kExecute))) ++writable_exec;
        if (unix_alone != nullptr) {
          const uint32_t u = rights_of(*unix_alone, p).allowed;
          if (u & kReadRights) ++unix_readable;
          if (u & kWriteRights) ++unix_writable;
          if (u & Bit(Right::kExecute)) ++unix_exec;
          if (u & ~p.allowed) ++taken;
        }
        const bool dir = S_ISDIR(p.mode);
        if (diff != nullptr) {
          const PathRights q = rights_of(*diff, p);
          if (q.allowed == p.allowed && q.unknown == p.unknown) return;
          ++differ;
          const uint32_t gained = q.allowed & ~p.allowed, lost = p.allowed & ~q.allowed;
          const uint32_t unsure = (q.unknown ^ p.unknown) & ~(gained | lost);
          if (o.json) {
            nlohmann::json j{{"path", p.path},
                             {"gained", nlohmann::json::array()},
                             {"lost", nlohmann::json::array()},
                             {"unknown", nlohmann::json::array()}};
            for (int k = 0; k < kNumRights; ++k) {
              const char* key = (gained & (1u << k))   ? "gained"
                                : (lost & (1u << k))   ? "lost"
                                : (unsure & (1u << k)) ? "unknown"
                                                       : nullptr;
              if (key == nullptr) continue;
              j[key].push_back({{"right", kRightNames[static_cast<size_t>(k)]},
                                {"source", Source(*diff, q, static_cast<Right>(k))}});
            }
            fmt::print("{}\n", input::JsonText(j));
          } else {
            std::string line = input::QuoteName(p.path) + (dir ? "/" : "");
            if (gained) line += " " + paint(kGreen, "+" + RightsText(gained));
            if (lost) line += " " + paint(kRed, "-" + RightsText(lost));
            if (unsure) line += " " + paint(kYellow, "?" + RightsText(unsure));
            line += paint(kDim, "  (" + SourcesLine(*diff, q, gained | lost | unsure) + ")");
            fmt::print("{}\n", line);
          }
          return;
        }
        if (o.json) {
          nlohmann::json rights = nlohmann::json::object(), sources = nlohmann::json::object();
          nlohmann::json notes = nlohmann::json::object();
          for (int k = 0; k < kNumRights; ++k) {
            if (!(p.applies & (1u << k))) continue;
            const std::string name(kRightNames[static_cast<size_t>(k)]);
            rights[name] = (p.unknown & (1u << k)) ? nlohmann::json("unknown")
                                                   : nlohmann::json((p.allowed & (1u << k)) != 0);
            sources[name] = Source(s, p, static_cast<Right>(k));
            if (p.once_empty & (1u << k))
              notes[name] = "not empty now: rmdir is ENOTEMPTY; allowed once empty";
          }
          nlohmann::json j{{"path", p.path},
                           {"type", TypeWord(p.mode)},
                           {"rights", rights},
                           {"sources", sources}};
          if (!notes.empty()) j["notes"] = notes;
          if (!p.note.empty()) j["note"] = p.note;
          fmt::print("{}\n", input::JsonText(j));
          return;
        }
        if (!o.only.empty()) {
          // Filtered: parents may be left out, so each line is whole.
          if (!want(p)) return;
          std::string line = input::QuoteName(p.path) + (dir ? "/" : "");
          line += "  " + RightsLine(p.allowed, p.unknown, o.colour);
          const std::string src = SourcesLine(s, p, p.applies);
          if (!src.empty()) line += paint(kDim, "  (" + src + ")");
          if (!p.note.empty()) line += "  " + paint(kYellow, "[" + input::EscapeText(p.note) + "]");
          fmt::print("{}\n", line);
          return;
        }
        // The tree: rights where they differ from the parent's.
        const size_t depth = static_cast<size_t>(p.depth);
        if (shown.size() <= depth) shown.resize(depth + 1);
        const Shown* parent = depth > 0 ? &shown[depth - 1] : nullptr;
        std::string line(depth * 2, ' ');
        const std::string name =
            depth == 0 ? p.path : p.path.substr(p.path.rfind('/') + 1);
        line += dir ? paint(kBlue, input::QuoteName(name) + "/") : input::QuoteName(name);
        // What this line compares with: its parent directory's rights (a
        // directory), or the rights its directory's files: names (any
        // other entry); nothing at the top.
        std::optional<std::pair<uint32_t, uint32_t>> ref;
        if (parent != nullptr && dir) ref = {parent->allowed, parent->unknown};
        if (parent != nullptr && !dir && parent->files)
          ref = {parent->files_allowed, parent->files_unknown};
        const bool same = ref && ref->first == p.allowed && ref->second == p.unknown;
        if (!same && p.mode != 0) {
          const uint32_t changed =
              ref ? ((ref->first ^ p.allowed) | (ref->second ^ p.unknown)) & p.applies : p.applies;
          line += "  " + RightsLine(p.allowed, p.unknown, o.colour);
          const std::string src = SourcesLine(s, p, changed);
          if (!src.empty()) line += paint(kDim, "  (" + src + ")");
        }
        if (dir) {
          Shown& me = shown[depth];
          me = {p.allowed, p.unknown, false, 0, 0};
          if (parent != nullptr && parent->files) {
            me.files = true;
            me.files_allowed = parent->files_allowed;
            me.files_unknown = parent->files_unknown;
          }
          if (p.files && !(me.files && me.files_allowed == p.files_allowed &&
                           me.files_unknown == p.files_unknown)) {
            // The example entry's sources for what changed.
            PathRights ex;
            ex.path = Child(p.path, p.files_example);
            ex.mode = p.files_mode;
            DecideAll(s, &ex);
            const uint32_t changed_files =
                me.files ? (me.files_allowed ^ p.files_allowed) | (me.files_unknown ^ p.files_unknown)
                         : ex.applies;
            line += "  files: " + RightsLine(p.files_allowed, p.files_unknown, o.colour);
            const std::string src = SourcesLine(s, ex, changed_files & ex.applies);
            if (!src.empty())
              line += paint(kDim, "  (" + src + "; as for " + input::QuoteName(p.files_example) + ")");
            me.files = true;
            me.files_allowed = p.files_allowed;
            me.files_unknown = p.files_unknown;
          }
        }
        if (!p.note.empty()) line += "  " + paint(kYellow, "[" + input::EscapeText(p.note) + "]");
        fmt::print("{}\n", line);
      },
      &stats);
  if (!r) {
    *out_error = r.error();
    return 2;
  }
  for (const std::string& g : stats.gone)
    fmt::print(stderr, "map: note: {} was listed, then gone before it was read: not shown\n",
               input::QuoteName(g));
  if (stats.vanished > stats.gone.size())
    fmt::print(stderr, "map: note: {} more entries were gone before they were read\n",
               stats.vanished - stats.gone.size());
  if (!o.json) {
    if (diff == nullptr && o.only.empty())
      fmt::print("\n(a line shows rights where they differ from its parent directory's -- for an "
                 "entry that is not a directory, from the files: of its directory; remove of a "
                 "directory: allowed once empty)\n");
    std::string extra;
    if (unknown) {
      extra += fmt::format(", {} unknown", unknown);
      if (too_long) extra += fmt::format(" ({} longer than PATH_MAX)", too_long);
    }
    if (stats.vanished) extra += fmt::format(", {} gone while mapped (not shown)", stats.vanished);
    fmt::print("\n{} paths: {} readable, {} writable, {} writable and executable{}\n", paths,
               readable, writable, writable_exec, extra);
    if (diff != nullptr) fmt::print("{} paths differ\n", differ);
    if (unix_alone != nullptr)
      fmt::print("Unix alone: {} readable, {} writable, {} executable; the policy takes rights "
                 "from {} paths (Landlock only takes away)\n",
                 unix_readable, unix_writable, unix_exec, taken);
  }
  return unknown ? 3 : 0;
}

}  // namespace pathwarden::query
