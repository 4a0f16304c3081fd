// File: src/fuzz/random.h
//
// The fuzzer's random numbers: a small, fast generator whose sequence is
// fixed by its seed on every machine and compiler (std::uniform_*
// distributions are not), so a seed names the same scenarios everywhere.
//
// Example:
//   Rng rng(CaseSeed(seed, case_index));
//   if (rng.Percent(30)) ... rng.Below(4) ... rng.Pick(kNames)

#ifndef PATHWARDEN_SRC_FUZZ_RANDOM_H_
#define PATHWARDEN_SRC_FUZZ_RANDOM_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace pathwarden::fuzz {

// SplitMix64()
//
// One step of SplitMix64: a bijective mix of 64 bits.
constexpr uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// CaseSeed()
//
// The seed of case `index` of a run seeded `seed`: each case can be
// generated alone, without the cases before it.
constexpr uint64_t CaseSeed(uint64_t seed, uint64_t index) {
  return SplitMix64(SplitMix64(seed) ^ SplitMix64(index + 0x5851f42d4c957f2dull));
}

// Rng
//
// xoshiro256** seeded through SplitMix64.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (uint64_t& w : s_) {
      seed = SplitMix64(seed);
      w = seed;
    }
  }

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Below()
  //
  // Uniform in [0, n); 0 when n is 0.
  uint64_t Below(uint64_t n) {
    if (n == 0) return 0;
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }

  // Range()
  //
  // Uniform in [lo, hi].
  int Range(int lo, int hi) { return lo + static_cast<int>(Below(static_cast<uint64_t>(hi - lo + 1))); }

  // Percent()
  //
  // True with probability p/100.
  bool Percent(int p) { return Below(100) < static_cast<uint64_t>(p); }

  template <typename T>
  const T& Pick(std::span<const T> items) {
    return items[Below(items.size())];
  }
  template <typename T, size_t N>
  const T& Pick(const T (&items)[N]) {
    return items[Below(N)];
  }

  // Weighted()
  //
  // An index drawn with the given weights (all >= 0, some > 0).
  size_t Weighted(std::span<const int> weights) {
    uint64_t total = 0;
    for (int w : weights) total += static_cast<uint64_t>(w);
    uint64_t r = Below(total);
    for (size_t i = 0; i < weights.size(); ++i) {
      if (r < static_cast<uint64_t>(weights[i])) return i;
      r -= static_cast<uint64_t>(weights[i]);
    }
    return weights.size() - 1;
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace pathwarden::fuzz

#endif  // PATHWARDEN_SRC_FUZZ_RANDOM_H_
