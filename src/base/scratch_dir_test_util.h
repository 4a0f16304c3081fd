// A test's own scratch directory under /tmp, removed with its whole tree
// when the test is done.

#ifndef PATHWARDEN_SRC_BASE_SCRATCH_DIR_TEST_UTIL_H_
#define PATHWARDEN_SRC_BASE_SCRATCH_DIR_TEST_UTIL_H_

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include <gtest/gtest.h>

namespace pathwarden::base_testing {

// ScratchDir
//
// mkdtemp("/tmp/<prefix>-XXXXXX"); aborts the test binary when /tmp
// cannot hold it (nothing the test asserts could run). Removed with
// rm(1), which removes trees deeper than PATH_MAX (relative to each
// directory), where std::filesystem::remove_all() does not.
class ScratchDir {
 public:
  explicit ScratchDir(std::string_view prefix = "pathwarden") {
    std::string tmpl = "/tmp/" + std::string(prefix) + "-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    path_ = std::move(tmpl);
  }
  ~ScratchDir() {
    // mkdtemp()'s name holds no quote.
    if (std::system(("rm -rf -- '" + path_ + "'").c_str()) != 0)
      std::fprintf(stderr, "could not remove %s\n", path_.c_str());
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // `rel` below the directory.
  std::string Path(std::string_view rel) const { return path_ + "/" + std::string(rel); }
  // A file `rel` holding `text`; false if it could not be written.
  bool Write(std::string_view rel, std::string_view text) const {
    FILE* f = std::fopen(Path(rel).c_str(), "w");
    if (f == nullptr) return false;
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    return std::fclose(f) == 0 && ok;
  }

 private:
  std::string path_;
};

// ScratchDirTest
//
// A fixture whose every test has a ScratchDir of its own, `dir_`.
class ScratchDirTest : public ::testing::Test {
 protected:
  ScratchDir scratch_;
  const std::string& dir_ = scratch_.path();
};

}  // namespace pathwarden::base_testing

#endif  // PATHWARDEN_SRC_BASE_SCRATCH_DIR_TEST_UTIL_H_
