// Predictions for traced calls: the model's processes kept in step with
// the tracee's threads, and each call evaluated at its entry.

#include "src/trace/predict.h"

#include <elf.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <linux/landlock.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "pathwarden/errno.h"
#include "pathwarden/scenario.h"
#include "src/identity/identity.h"
#include "src/trace/host_paths.h"
#include "src/trace/predict_state.h"

namespace pathwarden::trace {
namespace {

using landlock::AccessMask;

constexpr int kAtFdcwdNum = -100;

Need PathNeed(std::string path, AccessMask access, bool dir = false) {
  Need n;
  n.kind = Need::Kind::kFs;
  n.path = std::move(path);
  n.directory = dir;
  n.access = access;
  return n;
}
Need NetNeed(uint32_t port, AccessMask access) {
  Need n;
  n.kind = Need::Kind::kNet;
  n.port = port;
  n.access = access;
  return n;
}
Need Unscope(AccessMask scope) {
  Need n;
  n.kind = Need::Kind::kUnscope;
  n.access = scope;
  return n;
}

}  // namespace

bool OpenRefusedPastLandlock(const Request& r, int err) {
  return err == ENXIO && std::holds_alternative<pathwarden::Open>(r);
}

bool IsDenial(const Decision& d) {
  if (!d.denied()) return false;
  if (d.stage() == Stage::kLandlock) return true;
  return d.err() == EACCES || d.err() == EPERM || d.err() == EROFS;
}

Predictor::Predictor(PredictOptions options) : options_(std::move(options)) {}
Predictor::~Predictor() {
  if (!state_) return;
  for (auto& [pid, p] : state_->procs)
    if (p.pidfd >= 0) close(p.pidfd);
  for (const Ref& r : state_->refs) close(r.fd);
}

Result<std::unique_ptr<Predictor>, std::string> Predictor::Open(PredictOptions options) {
  auto self = identity::ReadCred("/proc/self/status");
  if (!self) return Unexpected(self.error());
  HostOptions o;
  o.consistency = HostOptions::Consistency::kRevalidate;
  // Every traced process asks: read from inside a user namespace, every
  // id shown as the overflow id is ambiguous.
  o.overflow = identity::HostOverflowFor(*self, /*many=*/true);
  o.assume_unseen_run_nothing = options.assume_unseen_run_nothing;
  o.lsm.read = false;
  SecurityModuleSources lsm_from;
  lsm_from.trusted = options.trusted_lsms;
  lsm_from.labels_change = true;
  auto m = Model::FromHost(o);
  if (!m) return Unexpected(m.error());
  std::unique_ptr<Predictor> p(new Predictor(std::move(options)));
  p->state_ = std::make_unique<State>(std::move(*m));
  State& st = *p->state_;
  st.host_options = o;
  st.lsms = ReadSecurityModules(lsm_from);
  // Said once, up front: every allowed prediction they could refuse will
  // be unknown (an execution is hooked by every module).
  if (std::string why = st.lsms.WhyUnknown(Op::kExecCheck); !why.empty())
    p->warnings_.push_back(fmt::format(
        "security modules: {}; allowed predictions they could refuse are unknown (--trust-lsm "
        "NAME takes one to refuse nothing)",
        why));
  st.self = *self;
  Process setup = st.model.Spawn("setup", Cred::ForUser(0, 0));
  char buf[PATH_MAX];
  if (getcwd(buf, sizeof buf) != nullptr) {
    auto n = st.model.Lookup(buf);
    if (n) (void)st.model.SetCwd(setup, *n);
  }
  st.base_plain = st.model.Spawn("traced", *self, setup);
  st.base_layered = st.model.Spawn("traced", *self, setup);
  // The layers, built on this host as landlockconfig (and run) build
  // them: rule paths opened with the tracer's own credentials.
  for (size_t i = 0; i < p->options_.layers.size(); ++i) {
    policy::HostLayer l = policy::BuildLayerOn(p->options_.layers[i], st.model, st.base_layered);
    const Decision d = st.model.Apply(st.base_layered, Restrict{l.ruleset});
    if (!d.allowed())
      return Unexpected(
          fmt::format("layer {} ({}): {}", i + 1, p->options_.layers[i].source, d.ToText()));
    for (const std::string& w : l.warnings)
      p->warnings_.push_back(fmt::format("layer {} ({}): {}", i + 1, p->options_.layers[i].source, w));
    st.built.push_back(std::move(l));
  }
  return p;
}

namespace {

// The paths of a request, and where they are relative to.
struct PathArgs {
  std::string* path = nullptr;
  std::string* path2 = nullptr;  // relative to the cwd (or abs_fd)
  Fd* dirfd = nullptr;
};

// OwnFdLink()
//
// For `path` of the form /proc/self/fd/N[/REST] (or thread-self, or the
// caller's own thread group or thread id for self): N and REST. procfs's
// link to descriptor N of the caller's own process, which it may always
// follow (proc_fd_permission(), proc_fd_access_allowed(): the same thread
// group), jumps to N's file. Linux: fs/proc/fd.c.
std::optional<std::pair<int, std::string>> OwnFdLink(std::string_view path, pid_t tgid,
                                                     pid_t tid) {
  constexpr std::string_view kProc = "/proc/";
  if (!path.starts_with(kProc)) return std::nullopt;
  path.remove_prefix(kProc.size());
  const size_t slash = path.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view who = path.substr(0, slash);
  const bool own = who == "self" || who == "thread-self" || who == std::to_string(tgid) ||
                   who == std::to_string(tid);
  path.remove_prefix(slash + 1);
  if (!own || !path.starts_with("fd/")) return std::nullopt;
  path.remove_prefix(3);
  const size_t end = std::min(path.find('/'), path.size());
  int fd = 0;
  auto [p, ec] = std::from_chars(path.data(), path.data() + end, fd);
  if (ec != std::errc() || p != path.data() + end || end == 0 || fd < 0) return std::nullopt;
  return std::pair{fd, std::string(path.substr(end))};
}

PathArgs PathsOf(Request& r) {
  PathArgs a;
  std::visit(
      [&](auto& q) {
        using T = std::decay_t<decltype(q)>;
        if constexpr (std::is_same_v<T, Link> || std::is_same_v<T, Rename>) {
          a.path = &q.oldpath;
          a.path2 = &q.newpath;
          a.dirfd = &q.dirfd;
        } else if constexpr (std::is_same_v<T, BindMount>) {
          a.path = &q.source;
          a.path2 = &q.target;
        } else if constexpr (requires { q.path; }) {
          a.path = &q.path;
          if constexpr (requires { q.dirfd; }) a.dirfd = &q.dirfd;
        }
      },
      r);
  return a;
}

std::string OpNameOf(const Request& r) { return std::string(OpName(OpOf(r))); }

// The NSpid line of /proc/PID/status: the process's pid in each PID
// namespace, its own (innermost) last.
std::vector<pid_t> NsPids(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  std::vector<pid_t> out;
  while (std::getline(in, line)) {
    if (!line.starts_with("NSpid:")) continue;
    std::istringstream words(line.substr(6));
    for (long v; words >> v;) out.push_back(static_cast<pid_t>(v));
  }
  return out;
}

// kill()'s target as the tracer's pid: the signaller (thread `tid`) names
// it in its own PID namespace, which may not be the tracer's (unshare
// -p, a container): there the traced process of that namespace whose own
// pid it is. "" when found.
std::string GlobalTarget(const Predictor::State& st, pid_t tid, pid_t* target) {
  const std::string ns = ReadLinkAt(fmt::format("/proc/{}/ns/pid", tid));
  if (ns.empty() || st.own_pid_ns.empty())
    return "the signaller's PID namespace cannot be read: which process its target is, is not "
           "known";
  if (ns == st.own_pid_ns) return "";
  for (const auto& [pid, ps] : st.procs) {
    if (ReadLinkAt(fmt::format("/proc/{}/ns/pid", pid)) != ns) continue;
    const std::vector<pid_t> pids = NsPids(pid);
    if (!pids.empty() && pids.back() == *target) {
      *target = pid;
      return "";
    }
  }
  return fmt::format("pid {} of its PID namespace ({}) is no traced process of it: processes "
                     "outside the trace are found by the tracer's pids",
                     *target, ns);
}

// Why a Landlock refusal in a view is not known ("" when it is): every
// layer that refuses has a rule whose place there was not found out
// (NsView::lost).
std::string LostRule(const ThreadState& t, const Decision& d) {
  if (!t.view) return "";
  std::string why;
  auto layer = [&](const LayerVerdict& l) {
    if (!l.missing) return true;
    const size_t i = static_cast<size_t>(l.layer) - 1;
    if (i >= t.view->lost.size() || t.view->lost[i].empty()) return false;  // a sure refusal
    if (why.empty())
      why = fmt::format("layer {} refuses, and where its rule on {} (of the tracer's namespace) "
                        "is in this mount namespace was not found out",
                        l.layer, t.view->lost[i].front());
    return true;
  };
  for (const LayerVerdict& l : d.reason().layers)
    if (!layer(l)) return "";
  for (const ReferSide& s : d.reason().refer)
    for (const LayerVerdict& l : s.layers)
      if (!layer(l)) return "";
  return why;
}

// The first layer (1-based) whose verdict misses a right.
int DenyingLayer(const Decision& d) {
  for (const LayerVerdict& l : d.reason().layers)
    if (l.missing) return l.layer;
  for (const ReferSide& s : d.reason().refer)
    for (const LayerVerdict& l : s.layers)
      if (l.missing) return l.layer;
  return 0;
}

}  // namespace

namespace {

// A forked process's state: its parent's descriptors and rulesets.
void CopyProcState(Predictor::State& st, pid_t pid, pid_t parent) {
  ProcState& ps = st.procs[pid];
  auto pp = st.procs.find(parent);
  if (pp == st.procs.end()) return;
  ps.fds = pp->second.fds;
  ps.refused = pp->second.refused;
  ps.rulesets = pp->second.rulesets;
  ps.exact = pp->second.exact;
}

}  // namespace

void Predictor::NewThread(pid_t tid, pid_t pid, pid_t parent, bool thread) {
  State& st = *state_;
  ThreadState t;
  t.pid = pid;
  auto from = st.threads.find(parent);
  const ThreadState* pt = from == st.threads.end() ? nullptr : &from->second;
  if (pt && pt->view && pt->view_gen != pt->view->gen) {
    // The parent's view was read again since its last call: the child's
    // processes are made in the new one at its first call.
    t.view = pt->view;
    t.view_gen = 0;
    t.cwd = pt->cwd;
    if (!thread) CopyProcState(st, pid, pt->pid);
  } else if (!pt) {
    t.layered = st.model.Fork(st.base_layered, fmt::format("pid {}", pid));
    t.plain = st.model.Fork(st.base_plain, fmt::format("pid {}", pid));
    // The first process: the descriptors it starts with were opened
    // outside every layer.
    TakeRefs(st, st.procs[pid], pid, st.base_plain);
  } else {
    Model& m = ModelOf(st, *pt);
    t.layered = m.Fork(pt->layered, fmt::format("pid {}", pid));
    t.plain = m.Fork(pt->plain, fmt::format("pid {}", pid));
    t.view = pt->view;
    t.view_gen = pt->view_gen;
    t.cwd = pt->cwd;
    if (!thread) CopyProcState(st, pid, pt->pid);
  }
  t.cred_stale = true;
  st.threads[tid] = std::move(t);
}

void Predictor::Gone(pid_t tid) {
  State& st = *state_;
  auto it = st.threads.find(tid);
  if (it == st.threads.end()) return;
  const pid_t pid = it->second.pid;
  st.threads.erase(it);
  if (tid == pid) {
    auto p = st.procs.find(pid);
    if (p != st.procs.end()) {
      if (p->second.pidfd >= 0) close(p->second.pidfd);
      st.procs.erase(p);
    }
  }
}

void Predictor::Evaluate(const Stop& s, const Memory& m) {
  State& st = *state_;
  auto it = st.threads.find(s.tid);
  if (it == st.threads.end()) return;
  ThreadState& t = it->second;
  ProcState& ps = st.procs[t.pid];
  Sync sync(st, t, s.tid);
  Pending& pend = t.pending;
  pend = Pending{};
  t.in_call = true;
  pend.d = Decode(s, m);
  Decoded& d = pend.d;
  Record& rec = pend.rec;
  rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - st.start).count();
  rec.pid = t.pid;
  rec.tid = s.tid;
  rec.call = d.call;
  auto unknown = [&](const std::string& why) {
    Reason r;
    r.unknown_why = why;
    r.text = "unknown: " + why;
    rec.predicted = Decision(Verdict::kUnknown, -1, std::move(r));
    rec.evaluated = false;
    pend.emit = true;
  };
  auto skip = [&](const std::string& why) {
    rec.note = why;
    ++counts_.skipped;
    pend.emit = false;
  };
  // A copied descriptor is no question of its own: followed at the exit
  // (Entry()), never a record.
  if (d.kind == Decoded::Kind::kDup) return;
  // A call the trace skips anyway needs neither.
  if (d.kind != Decoded::Kind::kSkip) {
    if (std::string e = sync.Namespaces(); !e.empty()) {
      // The call as the program named it: the cwd it would resolve from
      // is another namespace's.
      if (d.kind == Decoded::Kind::kRequest) {
        rec.op = OpNameOf(d.request);
        const PathArgs pa = PathsOf(d.request);
        if (pa.path) rec.path = *pa.path;
        if (pa.path2) rec.path2 = *pa.path2;
      }
      return unknown(e);
    }
    if (std::string e = sync.Cred(); !e.empty()) return unknown("credentials: " + e);
  }

  switch (d.kind) {
    case Decoded::Kind::kSkip: return skip(d.why);
    case Decoded::Kind::kDup: return;
    case Decoded::Kind::kUnknown: return unknown(d.why);
    case Decoded::Kind::kCred:
    case Decoded::Kind::kLandlockCreate:
    case Decoded::Kind::kLandlockRestrict:
      return;  // followed at the exit
    case Decoded::Kind::kLandlockAddRule:
      if (d.ll_rule_type == 1) pend.host_path = FdLink(s.tid, d.ll_parent_fd);
      return;
    case Decoded::Kind::kSignal: {
      if (d.target <= 0) return skip("a signal to a process group: the model signals one process");
      pid_t target = static_cast<pid_t>(d.target);
      rec.op = "signal";
      rec.path = fmt::format("pid {}", target);
      if (std::string e = GlobalTarget(st, s.tid, &target); !e.empty()) return unknown(e);
      Process tp;
      auto tt = st.threads.find(target);
      if (tt != st.threads.end() &&
          (tt->second.view != t.view || tt->second.view_gen != t.view_gen)) {
        return unknown("its target is modelled in another mount namespace's view");
      } else if (tt == st.threads.end() && t.view) {
        return unknown("a signal from a mount namespace of its own to a process outside the "
                       "trace, which is not modelled there");
      } else if (tt != st.threads.end()) {
        // A traced thread (kill() of a thread's id signals its process,
        // whose credentials and domain it shares): its credentials as they
        // are now.
        if (std::string e = Sync(st, tt->second, target).Cred(); !e.empty())
          return unknown("the target's credentials: " + e);
        tp = tt->second.layered;
      } else {
        auto c = identity::ReadCred(fmt::format("/proc/{}/status", target));
        if (!c) {
          Reason r;
          r.text = fmt::format("no process {}", target);
          rec.predicted = Decision(Verdict::kDenied, ESRCH, std::move(r));
          rec.evaluated = true;
          pend.emit = true;
          return;
        }
        Process& ext = st.external[target];
        if (!ext.valid()) ext = st.model.Spawn(fmt::format("pid {} (not traced)", target), *c);
        else (void)st.model.SetCred(ext, *c);
        tp = ext;
        rec.needs.push_back(Unscope(landlock::kScopeSignal));
      }
      rec.path = fmt::format("pid {}", target);  // the tracer's pid of it
      d.request = Signal{.target = tp};
      break;
    }
    case Decoded::Kind::kBind:
    case Decoded::Kind::kConnect: {
      const bool bind = d.kind == Decoded::Kind::kBind;
      // The socket: the request is about the address, not a file.
      const int sock = d.fd;
      d.fd = -1;
      if (d.family == AF_INET || d.family == AF_INET6) {
        // Landlock checks TCP sockets only: the protocol of the socket.
        const int pidfd = PidfdOf(ps, t.pid);
        const int sfd = pidfd < 0 ? -1 : static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, sock, 0));
        if (sfd < 0) return unknown(fmt::format("fd {}: the socket cannot be inspected", sock));
        int proto = 0, type = 0;
        socklen_t len = sizeof proto;
        getsockopt(sfd, SOL_SOCKET, SO_PROTOCOL, &proto, &len);
        len = sizeof type;
        getsockopt(sfd, SOL_SOCKET, SO_TYPE, &type, &len);
        close(sfd);
        if (type != SOCK_STREAM || proto != IPPROTO_TCP)
          return skip("not a TCP socket: Landlock does not check it");
        rec.op = bind ? "bind_tcp" : "connect_tcp";
        rec.path = std::to_string(d.port);
        if (bind)
          d.request = BindTcp{.port = d.port};
        else
          d.request = ConnectTcp{.port = d.port};
        rec.needs.push_back(
            NetNeed(d.port, bind ? landlock::kNetBindTcp : landlock::kNetConnectTcp));
        break;
      }
      if (d.family == AF_UNIX && !d.unix_path.empty()) {
        if (!bind) return skip("connect to a named UNIX socket: the model has no such request");
        // bind() makes a socket node: mknod(S_IFSOCK).
        d.request = Mknod{.path = d.unix_path, .type = S_IFSOCK, .mode = 0777};
        d.dirfd = kAtFdcwdNum;
        d.kind = Decoded::Kind::kRequest;
        break;
      }
      if (d.family == AF_UNIX && d.unix_path.empty() && !d.abstract_name.empty()) {
        if (bind) {
          pend.abstract_name = d.abstract_name;
          return skip("binding an abstract socket: nothing refuses it (recorded as a listener)");
        }
        rec.op = "connect_abstract";
        rec.path = "@" + d.abstract_name;
        if (t.view)
          return unknown("a connection from a mount namespace of its own: the listener's domain "
                         "is not followed there");
        auto l = st.listeners.find(d.abstract_name);
        if (l != st.listeners.end()) {
          d.request = ConnectAbstract{.target = l->second};
        } else {
          // Not one of the trace's: one listening outside, or none.
          std::ifstream unix_table("/proc/net/unix");
          std::string line;
          bool found = false;
          const std::string want = "@" + d.abstract_name;
          while (std::getline(unix_table, line))
            if (line.size() >= want.size() && line.ends_with(" " + want)) found = true;
          if (!found) {
            Reason r;
            r.text = fmt::format("no socket listens on @{}", d.abstract_name);
            r.stage = Stage::kUnix;
            rec.predicted = Decision(Verdict::kDenied, ECONNREFUSED, std::move(r));
            rec.evaluated = true;
            pend.emit = true;
            return;
          }
          Process& ext = st.listeners[d.abstract_name];
          ext = st.model.Spawn("a listener outside the trace", Cred::ForUser(0, 0));
          d.request = ConnectAbstract{.target = ext};
          rec.needs.push_back(Unscope(landlock::kScopeAbstractUnixSocket));
        }
        break;
      }
      return skip("not a TCP or UNIX socket address: Landlock does not check it");
    }
    case Decoded::Kind::kRequest: break;
  }

  // Paths: relative ones need the cwd or the dirfd; the ones an fd
  // anchors are made absolute.
  PathArgs pa = PathsOf(d.request);
  // The caller's own procfs links, outside a view (where /proc is the
  // host's): its descriptor's link names the descriptor's file, taken as
  // that file's path as a dirfd is; /proc/self and /proc/thread-self
  // name its own directories (proc_self_get_link(),
  // proc_thread_self_get_link()), which the model, having read them as
  // the tracer, is asked by their pids.
  for (std::string* path : {pa.path, pa.path2}) {
    if (path == nullptr || t.view) continue;
    if (const auto link = OwnFdLink(*path, t.pid, s.tid)) {
      const std::string fdpath = FdLink(s.tid, link->first);
      if (fdpath.empty()) {
        rec.op = OpNameOf(d.request);
        rec.path = *path;
        Reason r;
        r.stage = Stage::kWalk;
        r.text = fmt::format("{}: fd {} is not open, so procfs has no such link", *path, link->first);
        rec.predicted = Decision(Verdict::kDenied, ENOENT, std::move(r));
        rec.evaluated = true;
        pend.emit = true;
        return;
      }
      if (fdpath[0] != '/' || fdpath.ends_with(" (deleted)"))
        return unknown(fmt::format("{} links to fd {}, {}: not a file the model holds", *path,
                                   link->first, fdpath));
      *path = fdpath + link->second;
      continue;
    }
    for (const auto& [link, own] :
         {std::pair<std::string_view, std::string>{"/proc/self", fmt::format("/proc/{}", t.pid)},
          {"/proc/thread-self", fmt::format("/proc/{}/task/{}", t.pid, s.tid)}})
      if (path->starts_with(link) && (path->size() == link.size() || (*path)[link.size()] == '/')) {
        *path = own + path->substr(link.size());
        break;
      }
  }
  std::string cwd;
  const bool rel1 = pa.path && !pa.path->empty() && (*pa.path)[0] != '/';
  const bool rel2 = pa.path2 && !pa.path2->empty() && (*pa.path2)[0] != '/';
  std::string base1;  // where path is relative to
  // A call on a descriptor whose open was predicted refused: a
  // consequence of that denial, not a question of its own.
  for (const int fd : {d.fd, pa.dirfd && !pa.dirfd->at_cwd() ? pa.dirfd->num : -1,
                       d.abs_fd != kAtFdcwdNum ? d.abs_fd : -1}) {
    auto r = fd >= 0 ? ps.refused.find(fd) : ps.refused.end();
    struct stat sb;
    if (r == ps.refused.end()) continue;
    if (!FdStat(s.tid, fd, &sb) || sb.st_dev != r->second.dev || sb.st_ino != r->second.ino) {
      ps.refused.erase(r);  // closed meanwhile, the number reused
      continue;
    }
    rec.op = OpNameOf(d.request);
    if (rec.path.empty()) rec.path = FdLink(s.tid, fd);
    rec.consequence_of = r->second.denial;
    unknown(fmt::format("fd {} exists only because the kernel was not asked to refuse {}", fd,
                        r->second.denial));
    Reason why = rec.predicted.reason();
    why.text = "consequence: " + why.unknown_why;
    rec.predicted = Decision(Verdict::kUnknown, -1, std::move(why));
    return;
  }
  if (d.abs_fd != kAtFdcwdNum) {
    std::string fdpath = FdLink(s.tid, d.abs_fd);
    if (fdpath.empty()) {
      Reason r;
      r.stage = Stage::kFd;
      r.text = fmt::format("fd {} is not open", d.abs_fd);
      rec.predicted = Decision(Verdict::kDenied, EBADF, std::move(r));
      rec.evaluated = true;
      rec.op = OpNameOf(d.request);
      pend.emit = true;
      return;
    }
    if (fdpath[0] != '/' || fdpath.ends_with(" (deleted)"))
      return unknown(fmt::format("fd {} is {}: not a file the model holds", d.abs_fd, fdpath));
    std::string* which = d.abs_second ? pa.path2 : pa.path;
    if (which) *which = which->empty() ? fdpath : Join(fdpath, *which);
  }
  // The cwd: for a relative path from it, and a program's interpreter.
  const bool needs_cwd = (rel1 && (!pa.dirfd || pa.dirfd->at_cwd())) ||
                         (rel2 && !(d.abs_fd != kAtFdcwdNum && d.abs_second)) || d.exec;
  if (needs_cwd) {
    if (std::string e = sync.Cwd(&cwd); !e.empty()) return unknown(e);
  }
  if (rel1 && pa.dirfd && !pa.dirfd->at_cwd()) {
    if (std::string e = sync.Dirfd(pa.dirfd->num, &base1); !e.empty()) return unknown(e);
  } else if (pa.dirfd && !pa.dirfd->at_cwd() && pa.path && pa.path->empty()) {
    // AT_EMPTY_PATH: the dirfd itself.
    if (std::string e = sync.Dirfd(pa.dirfd->num, &base1); !e.empty()) return unknown(e);
  } else {
    base1 = cwd;
  }
  if (d.fd >= 0) {
    bool skipped = false;
    std::string fpath;
    std::string e = std::holds_alternative<Fchdir>(d.request)
                        ? sync.Dirfd(d.fd, &fpath)
                        : sync.File(d.fd, ps, &fpath, &skipped);
    if (skipped) return skip(e);
    if (!e.empty()) return unknown(e);
    rec.path = fpath;
    pend.host_path = fpath;
  }
  rec.op = OpNameOf(d.request);
  if (pa.path && rec.path.empty())
    rec.path = pa.path->empty() && pa.dirfd && !pa.dirfd->at_cwd() ? base1  // AT_EMPTY_PATH
               : pa.path->empty() || (*pa.path)[0] == '/'           ? *pa.path
                                                                    : Join(base1, *pa.path);
  if (pa.path2)
    rec.path2 = (*pa.path2).empty() || (*pa.path2)[0] == '/' ? *pa.path2 : Join(cwd, *pa.path2);
  if (auto* sl = std::get_if<Symlink>(&d.request)) rec.path2 = sl->target;

  // The prediction, then Unix alone when it denies.
  Model& model = ModelOf(st, t);
  // /dev/tty opens the caller's controlling terminal, which it must have:
  // whether it does is read at each open (setsid() drops it).
  // (Unreadable: not known, whatever a fork inherited.)
  if (std::holds_alternative<pathwarden::Open>(d.request)) {
    const std::optional<bool> c = identity::ReadControllingTty(fmt::format("/proc/{}/stat", s.tid));
    (void)model.SetControllingTty(t.layered, c);
    (void)model.SetControllingTty(t.plain, c);
  }
  rec.predicted = model.Evaluate(t.layered, d.request);
  rec.evaluated = !rec.predicted.unknown();
  pend.emit = true;
  if (rec.predicted.denied()) {
    const Decision plain = model.Evaluate(t.plain, d.request, Model::Detail::kVerdictOnly);
    if (plain.unknown()) {
      rec.predicted = plain;
      rec.evaluated = false;
    } else if (plain.denied() && plain.err() == rec.predicted.err()) {
      rec.by = "unix";
    } else {
      rec.by = "policy";
      rec.layer = DenyingLayer(rec.predicted);
      if (std::string e = LostRule(t, rec.predicted); !e.empty()) return unknown(e);
    }
  }
  // The requests whose Landlock needs a successful call has: the call,
  // and each interpreter's open.
  std::vector<Request> asked{d.request};
  // execve(): the interpreters the kernel opens as well (a script's, and
  // the ELF's PT_INTERP), each with the same checks.
  if (d.exec && rec.predicted.allowed()) {
    std::string prog = rec.path;
    if (!prog.empty() && prog[0] != '/') prog = Join(cwd, prog);
    // execveat() through a dirfd names the program /dev/fd/N/...: with N
    // close-on-exec, a script's interpreter could not open it, and
    // binfmt_script answers ENOENT (BINPRM_FLAGS_PATH_INACCESSIBLE).
    const auto& ex = std::get<ExecCheck>(d.request);
    const bool via_fd = !ex.dirfd.at_cwd() && (ex.path.empty() || ex.path[0] != '/');
    const bool fd_cloexec = via_fd && (FdFlags(s.tid, ex.dirfd.num) & O_CLOEXEC) != 0;
    for (int depth = 0; depth < 5; ++depth) {
      bool unreadable = false, script = false;
      // (In a view, read where the namespace has it.)
      std::string interp = InterpreterOf(
          t.view ? fmt::format("/proc/self/fd/{}{}", t.view->root_fd, prog) : prog, &unreadable,
          &script);
      if (unreadable) {
        unknown(fmt::format("the interpreter of {} cannot be read without changing its atime", prog));
        break;
      }
      if (interp.empty()) break;
      if (depth == 0 && script && fd_cloexec) {
        Reason r;
        r.stage = Stage::kVfs;
        r.text = fmt::format(
            "{} is a script run through close-on-exec fd {}: its interpreter could not open "
            "/dev/fd/{} after the exec, so binfmt_script refuses",
            prog, ex.dirfd.num, ex.dirfd.num);
        rec.predicted = Decision(Verdict::kDenied, ENOENT, std::move(r));
        rec.by = "unix";
        break;
      }
      if (interp[0] != '/') interp = Join(cwd, interp);
      rec.note += (rec.note.empty() ? "interpreter " : ", ") + interp;
      const Request ir = ExecCheck{.path = interp};
      Decision di = model.Evaluate(t.layered, ir);
      if (di.allowed()) asked.push_back(ir);
      if (!di.allowed()) {
        rec.predicted = di;
        rec.evaluated = !di.unknown();
        if (di.denied()) {
          const Decision plain = model.Evaluate(t.plain, ir, Model::Detail::kVerdictOnly);
          if (plain.denied() && plain.err() == di.err()) {
            rec.by = "unix";
          } else {
            rec.by = "policy";
            rec.layer = DenyingLayer(di);
            if (std::string e = LostRule(t, di); !e.empty()) unknown(e);
          }
        }
        break;
      }
      prog = interp;
    }
  }
  // A security module the model does not model could refuse what Unix and
  // Landlock allow (pathwarden/security_modules.h): unknown, naming it.
  // (What the call needs of Landlock is learnt all the same.)
  const bool allowed = rec.predicted.allowed();
  if (allowed)
    if (std::string why = st.lsms.WhyUnknown(OpOf(d.request)); !why.empty()) unknown(why);
  const bool past_landlock =
      rec.predicted.denied() && OpenRefusedPastLandlock(d.request, rec.predicted.err());
  if (!(allowed || past_landlock) || !options_.learn) return;
  // In another namespace a rule names the object by the tracer's path
  // for it (TracerPathOf()); a call on an object the tracer reaches by no
  // path gives no rule, and is counted.
  const NsView* other = t.view && !t.view->own ? t.view : nullptr;
  auto unlearnt = [&] {
    ++counts_.unlearnt;
    rec.note += std::string(rec.note.empty() ? "" : "; ") +
                "in a mount namespace of its own, on an object no path of the tracer's "
                "reaches: no rule learnt";
    rec.needs.clear();
  };

  // What Landlock would have to allow, if the call succeeds: what the
  // engine's Landlock hooks asked of which paths (Reason::fs_requests,
  // recorded whether or not a layer handles them), for the call and its
  // interpreters: the rights of each call are the ops', written once.
  // One need per path and call (an O_CREAT open asks make_reg and
  // write_file of the directory in two hooks; the learner counts calls).
  // (Traced again: the hooks record their requests only in a trace.)
  std::vector<FsRequest> per_path;
  for (const Request& r : asked) {
    const Decision traced = model.Evaluate(t.layered, r, Model::Detail::kTrace);
    for (const FsRequest& f : traced.reason().fs_requests) {
      auto same = std::find_if(per_path.begin(), per_path.end(),
                               [&](const FsRequest& p) { return p.path == f.path; });
      if (same == per_path.end()) per_path.push_back(f);
      else same->access |= f.access;
    }
  }
  for (const FsRequest& f : per_path) {
    std::string at = f.path;
    if (other) {
      std::optional<std::string> tp = TracerPathOf(*other, f.path);
      if (!tp) return unlearnt();
      at = std::move(*tp);
    }
    rec.needs.push_back(PathNeed(std::move(at), f.access, f.directory));
  }

  // What the call creates (its real path), for the needs of later calls
  // beneath it (at the exit); an open's path for the exit's bookkeeping.
  // (In another namespace: read through its root, and named by the
  // tracer's path of the parent.)
  const std::string abs1 = rec.path;
  auto host = [&](const std::string& p) { return other ? ViewPath(*other, p) : p; };
  // (realpath() cannot resolve below /proc/self/fd/N, whose link text is
  // the namespace's "/": the parent is found by device and inode.)
  auto real_join = [&](const std::string& p) -> std::string {
    if (!other) return RealParentJoin(p, nullptr);
    auto [dir, name] = Split(p);
    std::optional<std::string> tp = TracerPathOf(*other, dir);
    return tp ? Join(*tp, name) : "";
  };
  std::visit(
      [&](const auto& q) {
        using T = std::decay_t<decltype(q)>;
        if constexpr (std::is_same_v<T, pathwarden::Open>) {
          if (q.flags & O_PATH) return;
          struct stat sb;
          if (stat(host(abs1).c_str(), &sb) != 0 && (q.flags & O_CREAT))
            pend.creates = real_join(abs1);
          pend.host_path = abs1;
        } else if constexpr (std::is_same_v<T, Mkdir> || std::is_same_v<T, Mknod> ||
                             std::is_same_v<T, Symlink>) {
          pend.creates = real_join(abs1);
        } else if constexpr (std::is_same_v<T, Link> || std::is_same_v<T, Rename>) {
          struct stat sb;
          if (lstat(host(rec.path2).c_str(), &sb) != 0) pend.creates = real_join(rec.path2);
        }
      },
      d.request);
}

}  // namespace pathwarden::trace
