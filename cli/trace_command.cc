// `pathwarden trace`.

#include "cli/trace_command.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/explain_command.h"
#include "pathwarden/errno.h"
#include "src/query/explain.h"
#include "src/sandbox/run.h"
#include "src/trace/learn.h"
#include "src/trace/learn_host.h"
#include "src/trace/predict.h"
#include "src/trace/tracer.h"
#include "src/input/json_text.h"

namespace pathwarden::cli {
namespace {

constexpr int kOwnError = 125;

std::string ActualName(long ret) { return ret >= 0 ? "ok" : ErrnoName(static_cast<int>(-ret)); }

std::string Parent(const std::string& p) {
  const size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

// The reason as the report gives it: the sentence, and for Landlock each
// denying layer's blockers and the policy it came from.
std::string ReasonText(const trace::Predictor& p, const trace::Record& r) {
  std::string out = r.predicted.ToText();
  for (const LayerVerdict& l : r.predicted.reason().layers) {
    if (!l.missing) continue;
    const size_t n = p.policies().size();
    const std::string source = l.layer >= 1 && static_cast<size_t>(l.layer) <= n
                                   ? p.policies()[static_cast<size_t>(l.layer) - 1].source
                                   : "the program's own layer";
    std::string names;
    for (const std::string& b : query::BlockerNames(l, l.missing))
      names += (names.empty() ? "" : ",") + b;
    out += fmt::format("; layer {} ({}) blockers {}", l.layer, source, names);
  }
  return out;
}

nlohmann::json RecordJson(const trace::Predictor& p, const trace::Record& r, bool enforce) {
  nlohmann::json j;
  j["time"] = r.seconds;
  j["pid"] = r.pid;
  j["tid"] = r.tid;
  j["call"] = r.call;
  j["op"] = r.op.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.op);
  j["path"] = r.path;
  if (!r.path2.empty()) j["path2"] = r.path2;
  j["predicted"] = r.consequence_of.empty() ? query::ResultName(r.predicted) : "consequence";
  if (!r.consequence_of.empty()) j["consequence_of"] = r.consequence_of;
  if (enforce && r.has_actual) j["actual"] = ActualName(r.actual);
  if (enforce) j["agrees"] = !r.disagrees;
  j["by"] = r.by.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.by);
  if (r.layer) j["layer"] = r.layer;
  j["stage"] = std::string(StageName(r.predicted.stage()));
  j["reason"] = ReasonText(p, r);
  if (r.predicted.unknown() && r.consequence_of.empty())
    j["unknown_why"] = r.predicted.reason().unknown_why;
  if (!r.note.empty()) j["note"] = r.note;
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerVerdict& l : r.predicted.reason().layers) {
    if (!l.missing) continue;
    layers.push_back({{"layer", l.layer}, {"blockers", query::BlockerNames(l, l.missing)}});
  }
  if (!layers.empty()) j["layers"] = layers;
  return j;
}

// The needs of the calls that succeeded, as a policy for this machine
// (trace::LearnOnHost()), its warnings written to `err`.
Result<trace::LearnReport, std::string> Learnt(const std::vector<trace::Need>& needs,
                                               std::ostream& err) {
  auto r = trace::LearnOnHost(needs, trace::HostLearnOptions());
  if (r)
    for (const std::string& w : r->warnings) err << "pathwarden trace: --learn: " << w << "\n";
  return r;
}

// The calls of other mount namespaces a learnt policy has no rule for.
std::string Unlearnt(uint64_t n) {
  return fmt::format(
      "{} call{} in mount namespaces of their own, on objects no path of this namespace "
      "reaches, gave no rule: the policy may refuse {}\n",
      n, n == 1 ? "" : "s", n == 1 ? "it" : "them");
}

// What a learnt policy grants beyond what the run used.
void Beyond(const trace::LearnReport& learnt, std::ostream& err) {
  for (const std::string& b : learnt.beyond) err << "  beyond the run: " << b << "\n";
}

// --learn: the learnt policy written to `file` (whole or not at all),
// then what it grants beyond what the run used.
Result<void, std::string> WriteLearnt(const std::vector<trace::Need>& needs, const std::string& file,
                                      std::ostream& err) {
  auto learnt = Learnt(needs, err);
  if (!learnt) return Unexpected(learnt.error());
  const std::string text = trace::ToToml(learnt->policy);
  const std::string tmp = file + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) return Unexpected(fmt::format("{}: {}", tmp, std::strerror(errno)));
    f << text;
    f.close();
    if (!f) return Unexpected(fmt::format("{}: cannot write", tmp));
  }
  if (std::rename(tmp.c_str(), file.c_str()) != 0)
    return Unexpected(fmt::format("{}: {}", file, std::strerror(errno)));
  err << fmt::format("pathwarden trace: --learn: wrote {} ({} rules on paths, {} on ports)\n", file,
                     learnt->policy.paths.size(), learnt->policy.ports.size());
  Beyond(*learnt, err);
  return {};
}

}  // namespace

void AddTrace(CLI::App& app, TraceOptions* o, CLI::App** out) {
  auto* cmd = app.add_subcommand(
      "trace",
      "run a command and predict, call by call, what policy layers would deny and why "
      "(seccomp + ptrace); with --enforce the kernel enforces them too and every result is "
      "compared; --learn writes a policy from the run");
  AddLayerFlags(cmd, &o->policies, &o->from_env, "none: report what a policy would need");
  cmd->add_flag("--enforce", o->enforce,
                "enforce the layers with the kernel as run does, and compare each prediction "
                "with the kernel's result");
  cmd->add_option("--learn", o->learn,
                  "write a landlockconfig TOML policy allowing what the run needed");
  cmd->add_flag("--keep-on-failure", o->keep_on_failure,
                "with --learn: write the policy even when the command fails");
  cmd->add_flag("--assume-unseen-run-nothing", o->assume_unseen_run_nothing, kAssumeUnseenHelp);
  AddTrustLsm(cmd, &o->trusted_lsms);
  cmd->add_flag("--json", o->json, "one JSON object per evaluated call");
  cmd->add_option("-o,--output", o->output, "write the report to FILE (default: stderr)");
  cmd->add_option("--colour,--color", o->colour, "auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->prefix_command();
  cmd->allow_extras();
  cmd->footer(
      "The last line on stderr is always: trace: N calls evaluated, D denials predicted, U "
      "unknown, C consequences, K disagreements (C: calls on a descriptor whose open was "
      "predicted refused, which the kernel would not have had to answer). Exit status: the command's; 125 for trace's own errors and when "
      "--enforce found a disagreement.");
  *out = cmd;
}

namespace {

int RunTraceCounting(const TraceOptions& o, trace::Counts* counts);

}  // namespace

int RunTrace(const TraceOptions& o) {
  trace::Counts c;
  const int rc = RunTraceCounting(o, &c);
  std::cerr << fmt::format(
      "trace: {} calls evaluated, {} denials predicted, {} unknown, {} consequences, {} "
      "disagreements\n",
      c.calls, c.denials, c.unknown, c.consequences, c.disagreements);
  return rc;
}

void PrintNoCounts() {
  std::cerr << "trace: 0 calls evaluated, 0 denials predicted, 0 unknown, 0 consequences, 0 "
               "disagreements\n";
}

namespace {

int RunTraceCounting(const TraceOptions& o, trace::Counts* counts) {
  const char* self = "pathwarden trace: ";
  if (o.argv.empty()) {
    std::cerr << self << "no command: pathwarden trace [OPTIONS] -- CMD ARGS...\n";
    return kOwnError;
  }
  const std::string cwd = CurrentDir();
  auto layers = LoadLayers(o.policies, o.from_env, cwd, o.from_env_at);
  if (!layers) {
    std::cerr << self << layers.error() << "\n";
    return kOwnError;
  }
  if (auto ok = CheckTrustLsm(o.trusted_lsms); !ok) {
    std::cerr << self << ok.error() << "\n";
    return kOwnError;
  }
  // The report: a file, or stderr.
  FILE* out = stderr;
  if (!o.output.empty()) {
    out = std::fopen(o.output.c_str(), "we");
    if (out == nullptr) {
      std::cerr << self << o.output << ": " << std::strerror(errno) << "\n";
      return kOwnError;
    }
  }
  const bool colour = o.output.empty() && o.colour != "never" &&
                      (o.colour == "always" || (isatty(STDERR_FILENO) && !std::getenv("NO_COLOR")));

  // The kernel's layers for --enforce, built (rule paths opened) here.
  // Without layers the command runs unconfined (no no_new_privs either),
  // every call still predicted and compared: the Unix rules alone.
  std::vector<sandbox::HostLayer> host_layers;
  if (o.enforce && !layers->empty()) {
    std::string why;
    const int abi = sandbox::ProbeAbi(&why);
    if (abi == 0) {
      std::cerr << self << "--enforce: no Landlock on this kernel: " << why << "\n";
      return kOwnError;
    }
    for (const policy::Policy& p : *layers) {
      sandbox::HostLayer l = sandbox::BuildHostLayer(p, abi);
      if (l.Dropped())
        std::cerr << self << p.source << ": this kernel lacks " << sandbox::DroppedRights(l)
                  << ": dropped\n";
      host_layers.push_back(std::move(l));
    }
  }

  // Group keys of the summary: (by, layer or errno, blocker, directory).
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> groups;
  std::vector<trace::Need> needs;
  std::vector<std::string> unknowns;
  trace::Predictor* pred = nullptr;
  trace::PredictOptions po;
  po.layers = *layers;
  po.enforce = o.enforce;
  po.assume_unseen_run_nothing = o.assume_unseen_run_nothing;
  po.trusted_lsms = o.trusted_lsms;
  // Without layers, the report is what a policy would need: learnt.
  const bool need_report = layers->empty() && o.learn.empty();
  po.learn = !o.learn.empty() || need_report;
  po.on_record = [&](const trace::Record& r) {
    if (po.learn)
      for (const trace::Need& n : r.needs) needs.push_back(n);
    const bool denial = trace::IsDenial(r.predicted);
    if (o.json) {
      const std::string line = input::JsonText(RecordJson(*pred, r, o.enforce)) + "\n";
      std::fwrite(line.data(), 1, line.size(), out);
    } else if (denial || r.predicted.unknown() || r.disagrees) {
      const std::string paths = r.path2.empty() ? r.path : r.path + " -> " + r.path2;
      std::string verdict =
          r.consequence_of.empty() ? query::ResultName(r.predicted) : "consequence";
      const char* paint = r.predicted.unknown() ? query::ansi::kYellow
                          : r.by == "policy"    ? query::ansi::kRed
                                                : query::ansi::kBlue;
      std::string line = fmt::format(
          "{:9.3f} {} {}({}) {} {}{}: {}\n", r.seconds, r.pid, r.call, paths,
          query::Paint(colour, paint, verdict),
          r.by.empty() ? "" : "by " + r.by,
          o.enforce && r.has_actual ? fmt::format(", kernel {}", ActualName(r.actual)) : "",
          ReasonText(*pred, r));
      if (r.disagrees) line = query::Paint(colour, query::ansi::kBold, "DISAGREES ") + line;
      std::fwrite(line.data(), 1, line.size(), out);
    }
    if (denial) {
      if (r.by == "policy") {
        for (const LayerVerdict& l : r.predicted.reason().layers)
          for (const std::string& b : query::BlockerNames(l, l.missing))
            ++groups[{fmt::format("layer {}", l.layer), b, Parent(r.path)}];
        if (r.predicted.reason().layers.empty())
          ++groups[{fmt::format("layer {}", r.layer), "", Parent(r.path)}];
      } else {
        ++groups[{"unix", ErrnoName(r.predicted.err()), Parent(r.path)}];
      }
    }
    if (r.predicted.unknown() && r.consequence_of.empty() && unknowns.size() < 1000)
      unknowns.push_back(fmt::format("{}({}): {}", r.call, r.path, r.predicted.reason().unknown_why));
  };
  auto predictor = trace::Predictor::Open(std::move(po));
  if (!predictor) {
    std::cerr << self << predictor.error() << "\n";
    return kOwnError;
  }
  pred = predictor->get();
  for (const std::string& w : pred->warnings()) std::cerr << self << "warning: " << w << "\n";

  trace::TraceOptions to;
  to.argv = o.argv;
  if (o.enforce && !host_layers.empty()) {
    to.before_exec = [&]() -> std::string {
      auto r = sandbox::EnforceLayers(host_layers);
      return r ? "" : r.error();
    };
  }
  auto status = trace::RunTraced(to, *pred);
  host_layers.clear();
  if (!status) {
    std::cerr << self << status.error() << "\n";
    return kOwnError;
  }
  const trace::Counts& c = pred->counts();
  *counts = c;

  // The summary, for people.
  if (!o.json) {
    std::string s;
    if (!groups.empty()) s += "summary of predicted denials:\n";
    std::vector<std::pair<uint64_t, std::tuple<std::string, std::string, std::string>>> sorted;
    for (const auto& [k, n] : groups) sorted.push_back({n, k});
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [n, k] : sorted) {
      const auto& [who, what, dir] = k;
      s += who == "unix" ? fmt::format("  Unix would deny with {} {} time{} under {}\n", what, n,
                                       n == 1 ? "" : "s", dir)
                         : fmt::format("  {} would deny {} {} time{} under {}\n", who, what, n,
                                       n == 1 ? "" : "s", dir);
    }
    if (!unknowns.empty()) {
      s += fmt::format("{} call{} the engine could not decide:\n", c.unknown, c.unknown == 1 ? "" : "s");
      for (const std::string& u : unknowns) s += "  " + u + "\n";
    }
    if (need_report && *status == 0) {
      // No policy given: what one would need, as landlockconfig TOML.
      std::ostringstream err;
      if (c.unlearnt > 0) err << Unlearnt(c.unlearnt);
      if (auto learnt = Learnt(needs, err)) {
        s += "what a policy would need for this run (landlockconfig TOML; --learn FILE writes "
             "it):\n" + trace::ToToml(learnt->policy);
        Beyond(*learnt, err);
      } else {
        s += "what a policy would need: " + learnt.error() + "\n";
      }
      s += err.str();
    }
    std::fwrite(s.data(), 1, s.size(), out);
  }
  if (out != stderr) std::fclose(out);

  int rc = *status;
  if (!o.learn.empty()) {
    if (*status != 0 && !o.keep_on_failure) {
      std::cerr << self << "--learn: the command failed (exit " << *status
                << "): no policy written (--keep-on-failure writes it anyway)\n";
    } else {
      if (c.unlearnt > 0) std::cerr << self << "--learn: " << Unlearnt(c.unlearnt);
      if (auto w = WriteLearnt(needs, o.learn, std::cerr); !w) {
        std::cerr << self << "--learn: " << w.error() << "\n";
        rc = kOwnError;
      }
    }
  }
  if (o.enforce && c.disagreements > 0) rc = kOwnError;
  return rc;
}

}  // namespace

}  // namespace pathwarden::cli
