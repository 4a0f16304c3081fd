// The policy learner of `pathwarden trace --learn` (issue 12): what the
// traced calls of one run needed of Landlock, turned into a landlockconfig
// TOML policy that allows it and no more than it must. The tracer feeds
// it successful calls only; it never sees a host.
// Like: sandlock's `learn` (multikernel/sandlock crates/sandlock-cli/
// src/learn.rs), with its known failures avoided (ecosystem.md §8.1).
//
// Example:
//   Learner l;
//   (void)l.AddFs({"/usr/bin/ls", landlock::kFsExecute | landlock::kFsReadFile, false});
//   (void)l.AddFs({"/etc", landlock::kFsReadDir, true});
//   LearnOptions o;
//   o.abi = sandbox::ProbeAbi();
//   o.home = "/root";
//   auto p = l.Learn(o);
//   if (p) WriteFile(out, ToToml(*p));

#ifndef PATHWARDEN_SRC_TRACE_LEARN_H_
#define PATHWARDEN_SRC_TRACE_LEARN_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pathwarden/decision.h"
#include "pathwarden/landlock.h"
#include "pathwarden/result.h"

namespace pathwarden::trace {

// FsNeed
//
// One thing a successful call needed of Landlock: `access` rights on
// `path` (absolute, normalised): the object itself for file rights
// (execute, write_file, read_file, truncate, ioctl_dev) and read_dir;
// the parent directory for make_*, remove_*, refer. `directory`: whether
// `path` is a directory on the host. The record Landlock's hooks make of
// what they ask (FsRequest, pathwarden/decision.h), so that what the
// predictor reads is what the learner takes.
using FsNeed = FsRequest;

// Need
//
// What a call that succeeded needed of Landlock, for --learn (the tracer's predictor
// makes them, Learner::Add() takes them): filesystem
// rights on a path (absolute, symlinks of the directories resolved; the
// object for the file rights and read_dir, the parent directory for
// make_*, remove_* and refer), a port's rights, or a scope it crossed
// (a signal or an abstract socket outside the traced tree).
struct Need {
  enum class Kind : uint8_t { kFs, kNet, kUnscope };
  Kind kind = Kind::kFs;
  std::string path;
  bool directory = false;
  landlock::AccessMask access = 0;
  uint32_t port = 0;
};

// LearnOptions
//
// `abi`: the running kernel's Landlock ABI (1..kAbiLatest): every right
// it knows is handled, and needs of rights it lacks are dropped (it
// cannot restrict them). `home`: $HOME (absolute, normalised; empty:
// none). `sibling_threshold`: a right needed beneath this many distinct
// entries of one directory is granted on the directory instead (0: never;
// 1 is refused, it would widen every rule up to the protected
// directories). `never_widen`: directories treated as holding
// credentials, beside ~/.ssh, ~/.gnupg and /etc/ssl/private.
struct LearnOptions {
  int abi = landlock::kAbiLatest;
  std::string home;
  size_t sibling_threshold = 4;
  std::vector<std::string> never_widen;
};

// LearntRule
//
// One pathBeneath rule of a learnt policy. `access` holds only rights no
// ancestor's rule grants (Landlock rights accumulate down the hierarchy);
// a non-directory's only file rights. `calls`: the needs this rule grants
// at least one right of (each need's right is granted by exactly one
// rule); `proc_calls` of them were on /proc/<pid>/..., /proc/self/... or
// /proc/thread-self/... and mapped to /proc. `widened`: the rights granted
// here because `widened_entries` distinct entries beneath this directory
// (at least the threshold) needed them.
struct LearntRule {
  std::string path;
  landlock::AccessMask access = 0;
  bool directory = false;
  uint64_t calls = 0;
  uint64_t proc_calls = 0;
  landlock::AccessMask widened = 0;
  size_t widened_entries = 0;
};

// LearntPort
//
// One netPort rule: `access` (bind_tcp, connect_tcp) on `port`, needed by
// `calls` calls.
struct LearntPort {
  uint64_t port = 0;
  landlock::AccessMask access = 0;
  uint64_t calls = 0;
};

// LearntPolicy
//
// One Landlock layer: every right of `abi` handled (filesystem, network
// and scopes but those the run needed unscoped), `paths` sorted bytewise,
// `ports` ascending. `notes`: what the policy could not say (rights this
// ABI lacks), one line each, for the file's header.
struct LearntPolicy {
  int abi = landlock::kAbiLatest;
  landlock::AccessMask handled_fs = 0;
  landlock::AccessMask handled_net = 0;
  landlock::AccessMask scoped = 0;
  std::vector<LearntRule> paths;
  std::vector<LearntPort> ports;
  std::vector<std::string> notes;
};

// Learner
//
// Collects the needs of one run's successful calls, then learns a policy
// from them. Learn() does not consume them: it may be called again (with
// other options).
class Learner {
 public:
  // AddFs()
  //
  // One call's need. Errors (the need is not recorded): a relative or
  // unnormalised path (empty, "//", a "." or ".." component, a trailing
  // '/'), a NUL byte or invalid UTF-8 in it (a TOML string cannot hold
  // it), rights beyond the filesystem's, no right, directory rights
  // (read_dir, make_*, remove_*, refer) on a non-directory.
  Result<void, std::string> AddFs(const FsNeed& need);

  // AddNet()
  //
  // One call's need of `net` (bind_tcp, connect_tcp) on TCP `port`.
  // Errors: a port above 65535, no right or rights beyond the network's.
  Result<void, std::string> AddNet(uint64_t port, landlock::AccessMask net);

  // NeedUnscoped()
  //
  // The run signalled a process outside itself (kScopeSignal) or
  // connected to an abstract unix socket of one
  // (kScopeAbstractUnixSocket): the learnt policy must not scope it.
  // Bits beyond the scopes are ignored.
  void NeedUnscoped(landlock::AccessMask scopes);

  // Add()
  //
  // A Need, by its kind: AddFs(), AddNet() or NeedUnscoped(), with their
  // errors.
  Result<void, std::string> Add(const Need& need);

  // Learn()
  //
  // The policy, built in this order: needs of rights `abi` lacks dropped
  // (noted); /proc/<digits>/..., /proc/self/... and /proc/thread-self/...
  // needs mapped to /proc (a rule pinned to one process's inode breaks
  // every other process); rights per path; for each directory, deepest
  // first, each right needed beneath at least `sibling_threshold` of its
  // entries granted on it instead, unless it is /, $HOME, a credential
  // directory (~/.ssh, ~/.gnupg, /etc/ssl/private, `never_widen`), beneath
  // one, or above one (so never /etc, above /etc/ssl/private, nor $HOME's
  // ancestors); a rule on / only when a need is literally on /; rights
  // granted by an ancestor's rule dropped, and rules left with none.
  // Errors: an `abi` out of 1..kAbiLatest, a `sibling_threshold` of 1, a
  // `home` or `never_widen` entry not absolute and normalised.
  Result<LearntPolicy, std::string> Learn(const LearnOptions& options) const;

  uint64_t fs_calls() const { return fs_calls_; }
  uint64_t net_calls() const { return net_calls_; }

 private:
  // By path, then by the rights one call needed: how many calls.
  std::map<std::string, std::map<landlock::AccessMask, uint64_t>> fs_;
  std::map<std::string, bool> directory_;
  std::map<uint64_t, std::map<landlock::AccessMask, uint64_t>> net_;
  landlock::AccessMask unscoped_ = 0;
  uint64_t fs_calls_ = 0;
  uint64_t net_calls_ = 0;
};

// ToToml()
//
// The learnt policy as a landlockconfig TOML file that policy::ParsePolicy()
// reads back: `abi` set, "abi.all" handled, each rule's rights as abi.*
// groups where they fit (abi.all, abi.read_write, abi.read_execute plus
// names; on directories only, since they hold directory rights), one
// pathBeneath entry per path and one netPort entry per port, each after a
// comment with its calls (and why it was mapped or widened); paths TOML-
// escaped, '$' written "$$". Deterministic.
std::string ToToml(const LearntPolicy& p);

// FsRightNames()
//
// A rule's rights as ToToml() writes them on a directory (`directory`) or
// a file at `abi`: ["abi.read_execute", "make_reg"].
std::vector<std::string> FsRightNames(landlock::AccessMask access, bool directory, int abi);

}  // namespace pathwarden::trace

#endif  // PATHWARDEN_SRC_TRACE_LEARN_H_
