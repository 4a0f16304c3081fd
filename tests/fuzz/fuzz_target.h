// Coverage-guided fuzz targets (libFuzzer): what every target shares.
//
// Each target is one LLVMFuzzerTestOneInput() over the project's readers
// (scenario files, policy files, query lines) or over parse-then-run. In
// the `fuzz` build (PATHWARDEN_LIBFUZZER, clang with
// -fsanitize=fuzzer,address,undefined) they link libFuzzer; in every other
// build they link replay_main.cc, which runs the seeds and the saved
// regressions through them once (ctest fuzz.replay.*). A property that
// fails calls FuzzFail(): it prints what failed and aborts, which
// libFuzzer reports as a crash and saves the input of.

#ifndef PATHWARDEN_TESTS_FUZZ_FUZZ_TARGET_H_
#define PATHWARDEN_TESTS_FUZZ_FUZZ_TARGET_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace pathwarden::fuzz_target {

[[noreturn]] inline void FuzzFail(const std::string& what) {
  std::fprintf(stderr, "fuzz target: property failed: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline std::string_view Text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace pathwarden::fuzz_target

#endif  // PATHWARDEN_TESTS_FUZZ_FUZZ_TARGET_H_
