// Scenarios and results as bytes, exactly (locations included), for the
// kernel executor's processes that do not share the caller's memory.

#ifndef PATHWARDEN_SRC_KERNEL_CODEC_H_
#define PATHWARDEN_SRC_KERNEL_CODEC_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "pathwarden/executor.h"
#include "pathwarden/scenario.h"
#include "src/kernel/probe_child.h"

namespace pathwarden::kernel_internal {

// ByteWriter / ByteReader
//
// Native-endian fixed-width integers and length-prefixed strings: both ends
// are the same binary on the same machine.
class ByteWriter {
 public:
  template <typename T>
  void Int(T v) {
    static_assert(std::is_integral_v<T> || std::is_enum_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof(v));
  }
  void Str(std::string_view s) {
    Int(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}
  template <typename T>
  bool Int(T* v) {
    static_assert(std::is_integral_v<T> || std::is_enum_v<T>);
    if (in_.size() < sizeof(T)) return false;
    std::memcpy(v, in_.data(), sizeof(T));
    in_.remove_prefix(sizeof(T));
    return true;
  }
  bool Str(std::string* s) {
    uint32_t n = 0;
    if (!Int(&n) || n > in_.size()) return false;
    s->assign(in_.substr(0, n));
    in_.remove_prefix(n);
    return true;
  }
  bool AtEnd() const { return in_.empty(); }

 private:
  std::string_view in_;
};

// EncodeResult() / DecodeResult()
void EncodeResult(const RunResult& r, ByteWriter* w);
bool DecodeResult(ByteReader* in, RunResult* r);

// EncodeScenario() / DecodeScenario()
//
// Every field of the parsed model, so that a scenario built in memory (by
// the fuzzer) arrives as it is, not as a file would re-parse it.
void EncodeScenario(const Scenario& s, ByteWriter* w);
bool DecodeScenario(ByteReader* in, Scenario* s);

// EncodeProbeJob() / DecodeProbeJob()
//
// A host probe's job for the server that forks its child. The decoded
// job's `cred` holds `groups` as its supplementary groups.
void EncodeProbeJob(const ProbeJob& j, ByteWriter* w);
bool DecodeProbeJob(ByteReader* in, ProbeJob* j);

}  // namespace pathwarden::kernel_internal

#endif  // PATHWARDEN_SRC_KERNEL_CODEC_H_
