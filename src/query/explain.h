// `pathwarden explain`: queries answered for an identity under policy
// layers on the live machine, with the reason, the walk, the DAC check
// and each Landlock layer's verdict, as text (coloured on a terminal) or
// JSON; optionally checked against the real kernel.

#ifndef PATHWARDEN_SRC_QUERY_EXPLAIN_H_
#define PATHWARDEN_SRC_QUERY_EXPLAIN_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "pathwarden/model.h"
#include "pathwarden/result.h"
#include "src/identity/identity.h"
#include "src/policy/policy.h"
#include "src/query/query.h"

namespace pathwarden::query {

class ScratchGuard;  // src/query/scratch.h

// Answer
//
// One query's decision; with --verify, what the kernel gave (nullopt: not
// verified, and why in `unverified`).
struct Answer {
  Query query;
  Decision decision;
  std::optional<int> kernel_err;
  std::string unverified;
};

// Session
//
// The live machine as `who` sees it, confined by `layers` in order.
class Session {
 public:
  // Open()
  //
  // Errors: a mount table that cannot be read, a cwd or root that does not
  // resolve, a layer the kernel would refuse (with its reason).
  static Result<std::unique_ptr<Session>, std::string> Open(const identity::Identity& who,
                                                            std::vector<policy::Policy> layers);

  // Ask()
  //
  // The decision, explained with the walk (Model::Detail::kTrace), on the
  // host as it is now (what was read is checked again first). With
  // `verify`, also on the kernel when the query is read-only.
  //
  // A query that changes the host is run on the kernel only inside
  // `scratch` (a directory the user lets it change; "" for none), when it
  // can touch nothing outside it; the directory is put back after, also
  // when this process dies meanwhile (a ScratchGuard, src/query/scratch.h,
  // held from the first such query to the session's end: the scratch
  // directory's lock with it).
  Answer Ask(const Query& q, bool verify, const std::string& scratch = "");

  // Result only, no reason: the batch's --format result.
  Decision AskQuiet(const Query& q);

  const identity::Identity& who() const { return who_; }
  const std::vector<policy::HostLayer>& layers() const { return built_; }
  const std::vector<policy::Policy>& policies() const { return policies_; }
  // Warnings from building the layers on this host.
  std::vector<std::string> warnings() const;
  Model& model() { return model_; }
  Process asker() const { return asker_; }

  ~Session();

 private:
  Session(Model m, identity::Identity who);
  std::optional<int> Verify(const Query& q, const std::string& scratch, std::string* why);

  Model model_;
  identity::Identity who_;
  Process asker_{};
  std::vector<policy::Policy> policies_;
  std::vector<policy::HostLayer> built_;
  std::unique_ptr<ScratchGuard> scratch_;  // the changing queries' directory
};

// Terminal colours (ANSI), and Paint(): `text` in `code` when `colour`.
namespace ansi {
inline constexpr const char* kReset = "\033[0m";
inline constexpr const char* kRed = "\033[31m";
inline constexpr const char* kGreen = "\033[32m";
inline constexpr const char* kYellow = "\033[33m";
inline constexpr const char* kBlue = "\033[34;1m";
inline constexpr const char* kDim = "\033[2m";
inline constexpr const char* kBold = "\033[1m";
}  // namespace ansi
std::string Paint(bool colour, const char* code, std::string_view text);

// DecidedBy()
//
// What decided one permission check, in words ("owner 1000", "ACL entry
// user:33", "CAP_DAC_OVERRIDE", "anyone may search (fast path)"): the
// walk table's column, and map's sources.
std::string DecidedBy(const PermVerdict& v, bool fast);

// ResultName()
//
// "ok", "EACCES", ..., "unknown".
std::string ResultName(const Decision& d);

// ResultLines
//
// The output of `explain --batch --format result`: a line per answer, its
// ResultName() (coloured when asked), gathered in one buffer. A batch asks
// this for every query: a string made and freed for each, appended, was
// an eighth of the batch's time; here a line is one 16-byte copy from a
// table built once.
class ResultLines {
 public:
  explicit ResultLines(bool colour = false);

  void Add(const Decision& d) {
    // Row 0 is "unknown"; an errno e is row e + 1 (a negative one, which
    // only an unknown decision has, is AddSlow()'s).
    const size_t row = d.unknown() ? 0 : d.err() >= 0 ? static_cast<size_t>(d.err()) + 1 : SIZE_MAX;
    if (colour_ || row >= rows_ || lines_[row].size == 0) [[unlikely]] {
      AddSlow(d);
      return;
    }
    if (buf_.size() - size_ < sizeof(Line::text)) [[unlikely]] Grow(sizeof(Line::text));
    std::memcpy(buf_.data() + size_, lines_[row].text, sizeof(Line::text));
    size_ += lines_[row].size;
  }
  std::string_view text() const { return {buf_.data(), size_}; }
  void clear() { size_ = 0; }

  // Line
  //
  // A line as Add() copies it: the name, '\n' and padding in one block;
  // `size` counts the name and the newline (0: too long for the block,
  // left to AddSlow()).
  struct Line {
    char text[16];
    uint8_t size;
  };

 private:
  void AddSlow(const Decision& d);
  void Grow(size_t more);

  bool colour_;
  const Line* lines_;  // the table, built once for the process
  size_t rows_;
  std::string buf_;  // text() and room after it
  size_t size_ = 0;
};

// RenderText()
//
// For people: the result and reason, the walk as a table (component, type,
// mode with '+' for an ACL, owner, group, the check and what decided it),
// each Landlock layer (rights asked, the rule that granted each, with its
// policy file:line, or the blockers as the kernel's audit names them), the
// kernel's verdict when verified. `colour`: ANSI colours. Names are
// written as input::QuoteName() writes them, prose that embeds them as
// input::EscapeText() does (src/input/text_quote.h): one answer never
// holds a control character from a name.
std::string RenderText(const Session& s, const Answer& a, bool colour);

// RenderLine()
//
// One line for --batch: the operation and its paths (names quoted as
// QuoteName() does: a path reads back as the same bytes), the result, the
// reason, and with --verify the kernel's verdict
// or why there is none ("[kernel agrees]", "[kernel DISAGREES: ok]",
// "[kernel: ok, not compared: the model's answer is unknown]",
// "[unverified: ...]"). No newline at the end.
std::string RenderLine(const Answer& a, bool colour);

// Verdict
//
// What --verify found: no kernel answer (`why` says why), the kernel's
// answer compared (agrees or not), or the kernel's answer not compared
// (the model's is unknown: an unknown is never a disagreement, nor an
// agreement).
struct Verdict {
  enum class Kind { kUnverified, kAgrees, kDisagrees, kNotCompared };
  Kind kind = Kind::kUnverified;
  std::string kernel;  // "ok", "EACCES", ...; "" when unverified
  std::string why;
};
Verdict VerdictOf(const Answer& a);

// LayersOf()
//
// A decision's per-layer verdicts: its layers, and for a rename or link
// across directories the two sides' merged per layer (requested and
// missing rights united, grants of both) -- what the JSON's "layers" and
// the text's layer lines show; the sides stay in "refer".
std::vector<LayerVerdict> LayersOf(const Reason& r);

// LayerOrigins
//
// Where the asker's layers came from, in order: the policies and the
// layers built of them (the policy named for a layer, the file:line of a
// rule). Layers past the end are named "".
struct LayerOrigins {
  std::span<const policy::Policy> policies;
  std::span<const policy::HostLayer> layers;
};

// LayerSource() / OriginOf()
//
// The policy of layer `layer` (1-based); where the rule on `path` in it
// was written ("policy.toml:4, other.toml:2"), or the rule a grant came
// from (a path rule, or a port rule); "" when not known.
std::string LayerSource(const LayerOrigins& o, int layer);
std::string OriginOf(const LayerOrigins& o, int layer, const std::string& path);
std::string OriginOf(const LayerOrigins& o, const RuleGrant& g);

// RenderJson()
//
// {"op", "path", "path2" (when given), "result", "errno", "reason",
// "walk": [...], "dac": {...}, "layers": [...] (LayersOf()), "refer": [...]
// (a rename or link across directories), "verified": {"kernel", "agrees"
// (null: not compared), "why"}}; docs/commands.md lists every field.
nlohmann::json RenderJson(const Session& s, const Answer& a);
nlohmann::json RenderJson(const LayerOrigins& o, const Answer& a);

// BlockerNames()
//
// The missing rights as the kernel's audit records name them
// ("fs.read_file", "net.bind_tcp", "scope.signal").
std::vector<std::string> BlockerNames(const LayerVerdict& v, landlock::AccessMask m);

}  // namespace pathwarden::query

#endif  // PATHWARDEN_SRC_QUERY_EXPLAIN_H_
