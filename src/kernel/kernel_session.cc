// KernelSession::RunBatch(): several scenarios on the kernel at once, one
// lean server per job, never two sysctl settings at the same time.

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "src/kernel/kernel_session.h"

namespace pathwarden::kernel_internal {

std::vector<RunResult> KernelSession::RunBatch(std::span<const Scenario* const> batch,
                                               const KernelOptions& options, int jobs) {
  std::vector<RunResult> results(batch.size());
  jobs = std::max(1, std::min<int>(jobs, static_cast<int>(batch.size())));
  if (jobs > 1 && launch_ == Launch::kServer && (server_ == nullptr || !server_->ok())) {
    server_.reset();
    if (auto server = KernelServer::Spawn()) server_ = std::move(*server);
  }
  if (jobs <= 1 || launch_ != Launch::kServer || server_ == nullptr) {
    for (size_t i = 0; i < batch.size(); ++i) results[i] = Run(*batch[i], options);
    return results;
  }
  // Groups of equal sysctl values, in the order they first appear; the
  // skipped scenarios answer at once.
  std::map<Sysctls, std::vector<size_t>> groups;
  std::vector<Sysctls> order;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (std::string why = SkipReason(*batch[i], abi_, params_.caps_available); !why.empty()) {
      results[i] = Skipped(why);
      continue;
    }
    auto [it, fresh] = groups.try_emplace(batch[i]->sysctl);
    if (fresh) order.push_back(batch[i]->sysctl);
    it->second.push_back(i);
  }
  for (auto& server : extra_servers_)
    if (!server->ok())
      if (auto fresh = KernelServer::Spawn()) server = std::move(*fresh);
  while (static_cast<int>(extra_servers_.size()) < jobs - 1) {
    auto server = KernelServer::Spawn();
    if (!server) break;
    extra_servers_.push_back(std::move(*server));
  }
  std::vector<KernelServer*> servers{server_.get()};
  for (auto& s : extra_servers_)
    if (static_cast<int>(servers.size()) < jobs) servers.push_back(s.get());
  for (const auto& values : order) {
    const std::vector<size_t>& members = groups[values];
    if (std::string e = sysctl_->Set(values); !e.empty()) {
      for (size_t i : members) results[i] = Failed(fmt::format("{}: internal: sysctl: {}", batch[i]->file, e));
      continue;
    }
    std::atomic<size_t> next{0};
    auto work = [&](size_t w) {
      for (size_t k; (k = next.fetch_add(1)) < members.size();) {
        const size_t i = members[k];
        // A server that fails stops answering (its results say so); it is
        // replaced at the next batch, from the calling thread: a server
        // dies with the thread that forked it (PR_SET_PDEATHSIG).
        results[i] = servers[w]->Run(*batch[i], options, params_);
      }
    };
    std::vector<std::thread> threads;
    for (size_t w = 1; w < servers.size(); ++w) threads.emplace_back(work, w);
    work(0);
    for (std::thread& t : threads) t.join();
  }
  return results;
}

}  // namespace pathwarden::kernel_internal
