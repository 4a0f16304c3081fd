// The engine: orchestration only. It owns a world, its task table and
// Landlock (the world's security module), and runs one operation as a
// task: dispatch to the system call's check order (src/ops), the writer's
// lock for Apply(), the readers' retry protocol for Evaluate().

#ifndef PATHWARDEN_SRC_ENGINE_ENGINE_H_
#define PATHWARDEN_SRC_ENGINE_ENGINE_H_

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "pathwarden/tree.h"
#include "src/base/engine_options.h"
#include "src/explain/explain.h"
#include "src/task/task.h"
#include "src/vfs/backend.h"
#include "src/vfs/world.h"
#include "src/walk/namei.h"

namespace pathwarden {

namespace landlock {
class Landlock;
}  // namespace landlock

class Engine {
 public:
  explicit Engine(const EngineOptions& options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Apply()
  //
  // Runs one operation as task `task`, changing the world as the call
  // does; returns 0 or the errno, and in *new_fd the fd an open or
  // send_fd installed (-1: none). The world's single writer.
  int Apply(int task, const OpArgs& args, Explainer* ex, int* new_fd = nullptr);

  // Evaluate()
  //
  // What the operation would give, changing nothing: safe from any number
  // of threads while one thread runs Apply() (on other tasks' state: a
  // task's own cwd, root, fds and domain must not change meanwhile).
  // Retries an evaluation that raced a write, so the answer never mixes
  // two states. Not const only because the operations share one
  // signature with Apply(): a dry run writes nothing shared.
  int Evaluate(int task, const OpArgs& args, Explainer* ex, EngineStats* stats = nullptr);

  // EvaluateOrStop(), EvaluateFilling()
  //
  // Evaluate() with nothing to explain or count, in two halves for a
  // caller that tests the result anyway (Model::Evaluate()): the first
  // returns vfs::kErrNeedFill where Evaluate() would fill, and the second
  // fills and evaluates again until the answer stands.
  int EvaluateOrStop(int task, const OpArgs& args);
  int EvaluateFilling(int task, const OpArgs& args, Explainer* ex, EngineStats* stats);

  // EvaluateWithPrefixMemo(), EvaluateOrStopWithPrefixMemo()
  //
  // Evaluate() and EvaluateOrStop() whose walks resume from this thread's
  // prefix memo (walk::kFastSearchPrefixMemo; namei.h): the same answers,
  // cheaper for many queries that share directory prefixes, for a caller
  // that asks them (a query::Session). Without the fast search check, as
  // Evaluate(). A separate entry so that a single query's costs nothing.
  int EvaluateWithPrefixMemo(int task, const OpArgs& args, Explainer* ex,
                             EngineStats* stats = nullptr);
  int EvaluateOrStopWithPrefixMemo(int task, const OpArgs& args);

  // EvaluateAs()
  //
  // Evaluate() as `task` with credentials `cred` in place of its own (its
  // root, cwd, fds and domain stay), filling on demand: what a process
  // that differs only in its credentials would be answered. Off the hot
  // path: no prefix memo, no statistics.
  int EvaluateAs(int task, const OpArgs& args, Explainer* ex, const Cred& cred);

  // Snapshot()
  //
  // The final tree as the first task (root) sees it.
  std::vector<TreeEntry> Snapshot() const;

  vfs::World& world() { return world_; }
  const vfs::World& world() const { return world_; }
  TaskTable& tasks() { return tasks_; }
  const TaskTable& tasks() const { return tasks_; }
  landlock::Landlock& landlock() { return *landlock_; }
  const EngineOptions& options() const { return options_; }
  // For benchmarks that compare variants on one world; not while other
  // threads evaluate.
  EngineOptions& mutable_options() { return options_; }
  EngineStats& stats() { return stats_; }

  // WalkEnvFor()
  //
  // How `p` walks (its credentials, root and cwd).
  walk::WalkEnv WalkEnvFor(const Task& p, Explainer* ex);

  // Fill()
  //
  // Fills what this thread's last evaluation or walk stopped for
  // (vfs::kErrNeedFill, vfs::Pending), as the world's writer: 0, or
  // vfs::kErrUnknown with the reason when the backend cannot, or makes no
  // progress on `last` (the previous fill; start with a default one).
  int Fill(vfs::Pending* last);

  // ResolveUnknown()
  //
  // After an evaluation that answered vfs::kErrUnknown on this thread:
  // the reason in words (the backend's reason for an opaque inode, read
  // as the writer).
  std::string ResolveUnknown();

  // AsWriter()
  //
  // Runs `f` as the world's writer (the writers' lock and a WriteGuard),
  // for changes made outside Apply() while others may evaluate.
  template <typename F>
  decltype(auto) AsWriter(F&& f) {
    std::lock_guard<std::mutex> lock(writer_mutex_);
    vfs::World::WriteGuard g(world_);
    return std::forward<F>(f)();
  }

  // Context()
  //
  // The context of an operation of `p` outside Apply()/Evaluate() (the
  // model builder's own steps), applying.
  OpCtx Context(Task& p, const OpArgs& args, Explainer* ex, const Cred* cred_override = nullptr);

 private:
  // One evaluation (kQuiet: nothing to explain or count). kFills: one
  // that stops for a fill goes on in EvaluateFilling(), as a tail call,
  // so that Evaluate() stays one.
  // kMemo: with the prefix memo.
  template <bool kQuiet, bool kFills = true, bool kMemo = false>
  int EvaluateT(int task, const OpArgs& args, Explainer* ex, EngineStats* stats);
  // kCred: as `cred` in place of the task's own credentials.
  template <bool kQuiet, bool kMemo, bool kCred = false>
  int EvaluateOnce(int task, const OpArgs& args, Explainer* ex, EngineStats* stats,
                   const Cred* cred = nullptr);
  int ApplyOnce(int task, const OpArgs& args, Explainer* ex, int* new_fd);
  int Dispatch(OpCtx& ctx);

  EngineOptions options_;
  vfs::World world_;
  EngineStats stats_;
  std::unique_ptr<landlock::Landlock> landlock_;
  TaskTable tasks_;
  // Serializes the world's writers when a backend fills on demand: Apply()
  // and the fills of evaluating threads.
  std::mutex writer_mutex_;
};

}  // namespace pathwarden

#endif  // PATHWARDEN_SRC_ENGINE_ENGINE_H_
