// Fuzz target: explain's query lines (query), the `explain --batch`
// grammar (src/query/query.h).
//
// Each line of the input is one query. Properties: the tokenizer and the
// parser never crash or throw; a message starts with its column, which
// lies within the line (or one past its end); a parsed query echoes its
// operation as written.

#include <charconv>
#include <string>
#include <string_view>

#include "src/query/query.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pathwarden;
  using fuzz_target::FuzzFail;
  std::string_view text = fuzz_target::Text(data, size);
  for (int lines = 0; !text.empty() && lines < 64; ++lines) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    auto q = query::ParseQueryLine(line);
    if (q.has_value()) {
      if (line.find(q->op) == std::string_view::npos) FuzzFail("op not echoed: " + q->op);
      continue;
    }
    const std::string& e = q.error();
    size_t col = 0;
    auto [end, ec] = std::from_chars(e.data(), e.data() + e.size(), col);
    if (ec != std::errc() || end == e.data() + e.size() || *end != ':' || col < 1 ||
        col > line.size() + 1)
      FuzzFail("message without a column in the line: " + e);
  }
  return 0;
}
