// What the kernel will answer to each call a traced program makes, and
// why: the live host (revalidated on use), one model process per traced
// thread with that thread's credentials, working directory, root and
// descriptors, confined by the policy's layers and by the layers the
// program adds itself; and, for a denial, the same call without the
// policy's layers, to tell what Unix denies alone from what the policy
// adds.

#ifndef PATHWARDEN_SRC_TRACE_PREDICT_H_
#define PATHWARDEN_SRC_TRACE_PREDICT_H_

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pathwarden/decision.h"
#include "pathwarden/model.h"
#include "pathwarden/result.h"
#include "src/policy/policy.h"
#include "src/trace/decode.h"
#include "src/trace/learn.h"
#include "src/trace/tracer.h"

namespace pathwarden::trace {

// Record
//
// One evaluated call: where and when, the request as the program made
// it (paths absolute, as named: symlinks not resolved), the prediction,
// what decided it (by: "unix" when Unix alone denies, "policy" when the
// layers add the denial), and at the exit the kernel's result.
struct Record {
  double seconds = 0;  // since the trace began
  pid_t pid = 0, tid = 0;
  std::string call;
  std::string op;  // the scenario step's name ("open"); "" when not evaluated
  std::string path, path2;
  Decision predicted;
  bool evaluated = false;  // false: skipped (why in `note`) or unknown
  std::string by;          // "", "unix", "policy"
  int layer = 0;           // the policy's denying layer (1-based), when by policy
  std::string note;        // why skipped, the interpreter checked, ...
  bool has_actual = false;
  long actual = 0;  // the kernel's return (or -errno)
  bool disagrees = false;
  std::vector<Need> needs;  // when the call succeeded
  // A call on a descriptor whose open was predicted refused (the kernel
  // was not asked to refuse it: trace without --enforce, or a
  // disagreement): the denial it follows from ("openat(/dev/tty) at
  // 0.012 s, predicted EACCES by policy"). Not evaluated (`predicted` is
  // unknown, saying so) and counted apart from the unknown.
  std::string consequence_of;
};

// PredictOptions
//
// The policy's layers (each one Landlock layer, as `run` enforces them);
// `enforce`: the kernel enforces them too, so each result is compared;
// `on_record`: told of each record at its call's exit, in order.
struct Pending;

struct PredictOptions {
  std::vector<policy::Policy> layers;
  bool enforce = false;
  bool learn = false;
  bool assume_unseen_run_nothing = false;  // HostOptions::assume_unseen_run_nothing
  std::vector<std::string> trusted_lsms;  // SecurityModuleSources::trusted (--trust-lsm)
  std::function<void(const Record&)> on_record;
};

// Counts
//
// calls: evaluated; denials: predicted refusals by a permission check
// (of which by the policy); unknown; consequences: calls on a descriptor
// whose open was predicted refused (Record::consequence_of), not among
// the unknown; disagreements (with enforce).
struct Counts {
  uint64_t calls = 0, denials = 0, policy_denials = 0, unknown = 0, consequences = 0,
           disagreements = 0, skipped = 0;
  // Calls allowed in a mount namespace other than the tracer's on an
  // object the tracer reaches by no path, whose needs --learn does not
  // write (a rule is built on the tracer's paths).
  uint64_t unlearnt = 0;
};

class Predictor : public Observer {
 public:
  // Open()
  //
  // The host as this process sees it, the layers built on it as
  // landlockconfig builds them. Errors: the mount table, a layer the
  // kernel would refuse.
  static Result<std::unique_ptr<Predictor>, std::string> Open(PredictOptions options);
  ~Predictor() override;

  bool Entry(const Stop& s, const Memory& m) override;
  void Exit(const Stop& s, const Memory& m) override;
  void NewThread(pid_t tid, pid_t pid, pid_t parent, bool thread) override;
  void Gone(pid_t tid) override;

  const Counts& counts() const { return counts_; }
  // Warnings from building the layers on this host.
  const std::vector<std::string>& warnings() const { return warnings_; }
  const std::vector<policy::Policy>& policies() const { return options_.layers; }

  struct State;

 private:
  explicit Predictor(PredictOptions options);
  // The call at its entry: decoded, the model put in step, predicted.
  void Evaluate(const Stop& s, const Memory& m);
  // The record completed (with the kernel's result when `has_actual`),
  // counted and handed on.
  void Finish(Pending& pend, bool has_actual, long ret);

  PredictOptions options_;
  Counts counts_;
  std::vector<std::string> warnings_;
  std::unique_ptr<State> state_;
};

// One call between its entry and its exit (predict_state.h).
struct Pending;

// OpenRefusedPastLandlock()
//
// Whether `r` failing with `err` is an open refused with ENXIO (/dev/tty
// without a controlling terminal, a FIFO opened O_WRONLY|O_NONBLOCK
// without a reader, a socket, a device without a driver): refused by the
// file's own open, after Landlock's
// file_open hook allowed it. What it needs of Landlock is learnt as a
// successful call's is, or a policy learnt from the run would refuse it
// with EACCES where the program expects ENXIO.
bool OpenRefusedPastLandlock(const Request& r, int err);

// IsDenial()
//
// Whether a decision is a refusal by a permission check (EACCES, EPERM,
// EROFS, or any Landlock refusal), rather than an answer such as ENOENT.
bool IsDenial(const Decision& d);

}  // namespace pathwarden::trace

#endif  // PATHWARDEN_SRC_TRACE_PREDICT_H_
