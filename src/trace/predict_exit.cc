// A traced call's exit: whether the tracer stops for it (the kernel's
// result, or what the model must follow), what the model follows from
// it (credentials, Landlock, descriptors, exec, chroot, listeners, mount
// changes), and the record completed with the kernel's answer.

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "src/trace/host_paths.h"
#include "src/trace/predict_state.h"

namespace pathwarden::trace {
namespace {

// Errors a call gives for what the model does not decide when it
// predicted success: the network's answer, a driver's, the binary
// format's, an interrupted call.
bool OutsideTheModel(const std::string& op, long actual) {
  const int e = static_cast<int>(-actual);
  if (e == EINTR || e == EAGAIN || e == ERESTART) return true;
  if (op == "connect_tcp" || op == "bind_tcp" || op == "connect_abstract")
    return e == ECONNREFUSED || e == EINPROGRESS || e == ENETUNREACH || e == ETIMEDOUT ||
           e == EADDRINUSE || e == EADDRNOTAVAIL || e == EISCONN || e == EALREADY ||
           e == EHOSTUNREACH || e == EAFNOSUPPORT || e == EINVAL || e == ECONNRESET;
  if (op == "ioctl") return e == ENOTTY || e == EINVAL || e == ENODEV ||
                            e == EOPNOTSUPP || e == EIO || e == EFAULT;
  if (op == "exec_check") return e == ENOEXEC || e == E2BIG || e == ETXTBSY || e == ENOMEM;
  return false;
}

// Whether system call `call` may change the mounts of its namespace.
bool ChangesMounts(std::string_view call) {
  return call == "mount" || call == "umount2" || call == "pivot_root" || call == "move_mount" ||
         call == "mount_setattr";
}

}  // namespace

bool Predictor::Entry(const Stop& s, const Memory& m) {
  Evaluate(s, m);
  auto it = state_->threads.find(s.tid);
  if (it == state_->threads.end()) return false;
  ThreadState& t = it->second;
  Pending& pend = t.pending;
  const Decoded& d = pend.d;
  // The exit: for the result (--enforce, --learn), and for what the model
  // follows (descriptors opened or copied, credentials, Landlock, exec,
  // chroot, a listener).
  bool want = options_.enforce || options_.learn || !pend.abstract_name.empty();
  switch (d.kind) {
    case Decoded::Kind::kCred:
    case Decoded::Kind::kLandlockCreate:
    case Decoded::Kind::kLandlockAddRule:
    case Decoded::Kind::kLandlockRestrict: want = true; break;
    // A copy of a descriptor opened where a denial was predicted: its
    // calls are consequences too; a copy onto one's number replaces it.
    case Decoded::Kind::kDup: want |= !state_->procs[t.pid].refused.empty(); break;
    case Decoded::Kind::kUnknown: want |= ChangesMounts(d.call); break;
    case Decoded::Kind::kRequest:
      if (d.exec || std::holds_alternative<Chroot>(d.request)) want = true;
      want |= ChangesMounts(d.call);
      // An open's fd is recorded once the process confined itself, and
      // where a denial was predicted (the calls on it are consequences);
      // while some are, every open's (its fd may be one's number again:
      // close() is not traced).
      if (std::holds_alternative<pathwarden::Open>(d.request)) {
        const ProcState& ps = state_->procs[t.pid];
        if (ps.exact || !ps.refused.empty() || IsDenial(pend.rec.predicted)) want = true;
      }
      break;
    default: break;
  }
  if (!want) {
    t.in_call = false;
    if (pend.emit) Finish(pend, false, 0);
    pend = Pending{};
  }
  return want;
}

void Predictor::Exit(const Stop& s, const Memory& m) {
  (void)m;
  State& st = *state_;
  auto it = st.threads.find(s.tid);
  if (it == st.threads.end()) return;
  ThreadState& t = it->second;
  if (!t.in_call) return;
  t.in_call = false;
  Pending& pend = t.pending;
  Decoded& d = pend.d;
  ProcState& ps = st.procs[t.pid];
  const long ret = s.ret;

  // What the model must follow.
  switch (d.kind) {
    case Decoded::Kind::kCred:
      if (ret >= 0 || d.call == "setfsuid" || d.call == "setfsgid") t.cred_stale = true;
      break;
    case Decoded::Kind::kLandlockCreate:
      if (ret >= 0) {
        ProgramRuleset r;
        r.ruleset.handled_access_fs = d.ll_handled_fs;
        r.ruleset.handled_access_net = d.ll_handled_net;
        r.ruleset.scoped = d.ll_scoped;
        ps.rulesets[static_cast<int>(ret)] = std::move(r);
      }
      break;
    case Decoded::Kind::kLandlockAddRule:
      if (ret == 0) {
        auto r = ps.rulesets.find(d.ll_ruleset_fd);
        if (r != ps.rulesets.end()) {
          if (d.ll_rule_type == 1 && !pend.host_path.empty())
            r->second.ruleset.AllowPath(pend.host_path, d.ll_access);
          else if (d.ll_rule_type == 2)
            r->second.ruleset.AllowPort(static_cast<uint32_t>(d.ll_port), d.ll_access);
        }
      }
      break;
    case Decoded::Kind::kLandlockRestrict:
      if (ret == 0) {
        auto r = ps.rulesets.find(d.ll_ruleset_fd);
        // The thread's domain grows by one layer; files it opened before
        // keep the rights frozen then (their opener stays the old one).
        // What it holds now was opened under the old domain.
        ps.exact = true;
        // In a view the program's own layers are not followed: its calls
        // are unknown from here (Sync::Namespaces()).
        if (t.view) break;
        TakeRefs(st, ps, t.pid, t.layered);
        const Process next = st.model.Fork(t.layered, fmt::format("pid {}", t.pid));
        if (r != ps.rulesets.end()) {
          (void)st.model.Apply(next, Restrict{r->second.ruleset});
        }
        t.layered = next;
        t.cwd.clear();
        t.cred_stale = true;
      }
      break;
    default: break;
  }
  if (ret == 0 && ChangesMounts(d.call)) {
    if (t.view) t.view->stale = true;
    else st.own_changed = true;
  }
  if (!pend.abstract_name.empty() && ret == 0 && !t.view) {
    // The process now listens: connections are checked against its domain
    // now.
    const Process l = st.model.Fork(t.layered, fmt::format("pid {} listening", t.pid));
    (void)st.model.Listen(l);
    st.listeners[pend.abstract_name] = l;
  }
  // dup2(fd, fd) changes nothing, not even close-on-exec.
  if (d.kind == Decoded::Kind::kDup && ret >= 0 && ret != d.fd) {
    const int fd = static_cast<int>(ret);
    auto from = ps.refused.find(d.fd);
    struct stat sb;
    if (from != ps.refused.end() && FdStat(s.tid, fd, &sb) && sb.st_dev == from->second.dev &&
        sb.st_ino == from->second.ino) {
      RefusedFd copy = from->second;
      copy.cloexec = (d.open_flags & O_CLOEXEC) != 0;
      ps.refused[fd] = std::move(copy);
    } else {
      ps.refused.erase(fd);
    }
  }
  if (d.kind == Decoded::Kind::kRequest && ret >= 0) {
    if (std::holds_alternative<pathwarden::Open>(d.request)) {
      struct stat sb;
      const int fd = static_cast<int>(ret);
      const bool cloexec = (pend.d.open_flags & O_CLOEXEC) != 0;
      const bool have = FdStat(s.tid, fd, &sb);
      if (ps.exact && have) ps.fds[fd] = FdRec{sb.st_dev, sb.st_ino, t.layered, cloexec};
      // Opened where a denial was predicted: the calls on it follow from
      // that denial (Record::consequence_of).
      const Record& r = pend.rec;
      if (have && IsDenial(r.predicted))
        ps.refused[fd] = RefusedFd{sb.st_dev, sb.st_ino, cloexec,
                                   fmt::format("{}({}) at {:.3f} s, predicted {}{}", r.call, r.path,
                                               r.seconds, ErrnoName(r.predicted.err()),
                                               r.by.empty() ? "" : " by " + r.by)};
      else
        ps.refused.erase(fd);
    } else if (d.exec) {
      // The new program: close-on-exec files gone, credentials may change
      // (a setuid binary), the other threads gone.
      for (auto f = ps.fds.begin(); f != ps.fds.end();)
        f = f->second.cloexec ? ps.fds.erase(f) : std::next(f);
      for (auto f = ps.refused.begin(); f != ps.refused.end();)
        f = f->second.cloexec ? ps.refused.erase(f) : std::next(f);
      t.cred_stale = true;
    } else if (std::holds_alternative<Chroot>(d.request)) {
      // Model the new root.
      const std::string root = ReadLinkAt(fmt::format("/proc/{}/root", s.tid));
      Model& model = ModelOf(st, t);
      auto n = LookupFresh(model, t.plain, root, true);
      if (n) {
        (void)model.SetRoot(t.layered, *n);
        (void)model.SetRoot(t.plain, *n);
      }
    }
  }

  if (pend.emit) Finish(pend, true, ret);
  pend = Pending{};
}

void Predictor::Finish(Pending& pend, bool has_actual, long ret) {
  State& st = *state_;
  Record& rec = pend.rec;
  rec.has_actual = has_actual;
  rec.actual = ret;
  const bool predicted_ok = rec.predicted.allowed();
  const bool actual_ok = has_actual && ret >= 0;
  if (options_.enforce && has_actual && !rec.predicted.unknown()) {
    if (predicted_ok && !actual_ok) {
      rec.disagrees = !OutsideTheModel(rec.op, ret);
    } else if (!predicted_ok && actual_ok) {
      rec.disagrees = true;
    } else if (!predicted_ok && !actual_ok) {
      rec.disagrees = rec.predicted.err() != static_cast<int>(-ret);
    }
  }
  // What a call needs of Landlock counts when it succeeded, or failed
  // only past Landlock's checks (OpenRefusedPastLandlock()).
  const bool needed =
      actual_ok || (has_actual && OpenRefusedPastLandlock(pend.d.request, static_cast<int>(-ret)));
  if (!needed) rec.needs.clear();
  if (needed && options_.learn) {
    if (!pend.creates.empty()) st.created.insert(pend.creates);
    for (Need& n : rec.needs) {
      if (n.kind != Need::Kind::kFs) continue;
      // The shallowest created directory on the way, or the object itself.
      for (std::string at = n.path; at.size() > 1;) {
        if (st.created.count(at)) {
          n.path = Split(at).first;
          n.directory = true;
        }
        at = Split(at).first;
      }
    }
  }
  ++counts_.calls;
  if (!rec.consequence_of.empty()) ++counts_.consequences;
  else if (rec.predicted.unknown()) ++counts_.unknown;
  if (IsDenial(rec.predicted)) {
    ++counts_.denials;
    if (rec.by == "policy") ++counts_.policy_denials;
  }
  if (rec.disagrees) ++counts_.disagreements;
  if (options_.on_record) options_.on_record(rec);
}

}  // namespace pathwarden::trace
