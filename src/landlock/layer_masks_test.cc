// The two layouts of the unfulfilled-rights matrix ("landlock: Refactor
// layer masks") must be the same function: a few cases by hand from
// Landlock's rules (union within a layer, intersection across layers),
// then both layouts driven side by side through random domains, requests
// and rules, compared on everything the walk and the refer algorithm read.

#include "src/landlock/layer_masks.h"

#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "src/landlock/domain.h"

namespace pathwarden::landlock {
namespace {

std::shared_ptr<const Domain> DomainHandling(const std::vector<AccessMask>& handled) {
  std::shared_ptr<const Domain> d;
  for (AccessMask h : handled) {
    Ruleset rs;
    rs.handled_fs = h;
    d = MergeRuleset(d.get(), rs);
  }
  return d;
}

TEST(LayerMasksTest, ARuleGrantsOnlyWhatItsLayerDenies) {
  const auto d = DomainHandling({kFsReadFile | kFsWriteFile, kFsReadFile});
  for (int layout = 0; layout < 2; ++layout) {
    ByLayer bl;
    ByAccess ba;
    const AccessMask handled = layout ? ba.Init(*d, kFsReadFile, true) : bl.Init(*d, kFsReadFile, true);
    EXPECT_EQ(handled, kFsReadFile);
    // Layer 1 grants read_file: layer 2 still denies it (intersection).
    const LayerAccess l1[] = {{1, kFsReadFile}};
    EXPECT_FALSE(layout ? ba.Unmask(l1) : bl.Unmask(l1));
    EXPECT_EQ(layout ? ba.Union() : bl.Union(), kFsReadFile);
    // A rule of layer 2 granting write_file only changes nothing.
    const LayerAccess l2w[] = {{2, kFsWriteFile}};
    EXPECT_FALSE(layout ? ba.Unmask(l2w) : bl.Unmask(l2w));
    // Another rule of layer 2 grants it (union within a layer): allowed.
    const LayerAccess l2r[] = {{2, kFsReadFile}};
    EXPECT_TRUE(layout ? ba.Unmask(l2r) : bl.Unmask(l2r));
  }
}

TEST(LayerMasksTest, UnhandledRightsAreNotChecked) {
  const auto d = DomainHandling({kFsWriteFile});
  ByLayer bl;
  ByAccess ba;
  EXPECT_EQ(bl.Init(*d, kFsReadFile, true), 0u);
  EXPECT_EQ(ba.Init(*d, kFsReadFile, true), 0u);
  EXPECT_TRUE(bl.Allowed());
  EXPECT_TRUE(ba.Allowed());
}

TEST(LayerMasksTest, BothLayoutsAgreeOnRandomDomainsRequestsAndRules) {
  std::mt19937_64 rng(20261130);
  auto mask = [&] { return static_cast<AccessMask>(rng()) & kFsAll; };
  for (int round = 0; round < 3000; ++round) {
    std::vector<AccessMask> handled(1 + rng() % kMaxLayers);
    for (AccessMask& h : handled) h = mask() | (rng() % 2 ? kFsReadFile : 0);
    const auto d = DomainHandling(handled);
    const AccessMask request = mask();
    ByLayer bl[3];
    ByAccess ba[3];
    for (int k = 0; k < 3; ++k)
      ASSERT_EQ(bl[k].Init(*d, k ? kFsAll : request, true), ba[k].Init(*d, k ? kFsAll : request, true));
    for (int step = 0; step < 8; ++step) {
      std::vector<LayerAccess> rule(rng() % 4);
      for (LayerAccess& l : rule) l = {static_cast<uint8_t>(1 + rng() % handled.size()), mask()};
      for (int k = 0; k < 3; ++k) {
        ASSERT_EQ(bl[k].Unmask(rule), ba[k].Unmask(rule)) << round;
        ASSERT_EQ(bl[k].Allowed(), ba[k].Allowed()) << round;
        ASSERT_EQ(bl[k].Union(), ba[k].Union()) << round;
        for (int i = 0; i < kMaxLayers; ++i)
          ASSERT_EQ(bl[k].LayerDenies(i), ba[k].LayerDenies(i)) << round << " layer " << i;
        const AccessMask probe = mask();
        ASSERT_EQ(bl[k].IsEacces(probe), ba[k].IsEacces(probe)) << round;
      }
      const bool dir = rng() % 2;
      ASSERT_EQ(ByLayer::MayRefer(bl[1], bl[2], bl[0], dir),
                ByAccess::MayRefer(ba[1], ba[2], ba[0], dir))
          << round;
    }
    const AccessMask scope = mask();
    ASSERT_EQ(bl[0].ScopeTo(scope), ba[0].ScopeTo(scope)) << round;
    ASSERT_EQ(bl[0].Union(), ba[0].Union()) << round;
  }
}

}  // namespace
}  // namespace pathwarden::landlock
