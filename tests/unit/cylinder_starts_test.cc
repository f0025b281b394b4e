// CylinderStarts: every slot of every cylinder against the free bits read
// one sector at a time, for track lengths below, at and past a word and not
// a multiple of it, several skews, and the lengths a write asks for, while
// the map changes between looks (its caches must follow every allocate and
// release, and a release that restores what was there).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/vld/cylinder_starts.h"
#include "core/vld/free_space_map.h"

namespace vld {
namespace {

// Whether some track of the cylinder starts a run of len at slot a: the
// len sectors from the one under a (wrapping) all free, one by one.
bool brute_slot(const FreeSpaceMap& m, uint32_t cylinder, uint32_t heads,
                const CylinderShape& shape, uint32_t len, uint32_t a) {
  for (uint32_t h = 0; h < heads; ++h) {
    const uint32_t sector = (a + shape.spt - shape.offset_of(h)) % shape.spt;
    bool all_free = len <= shape.spt;
    for (uint32_t i = 0; i < len && all_free; ++i)
      all_free = m.is_free(cylinder * heads + h, (sector + i) % shape.spt);
    if (all_free) return true;
  }
  return false;
}

void expect_slots(const CylinderStarts& cs, const FreeSpaceMap& m, uint32_t cylinders,
                  uint32_t heads, const CylinderShape& shape, uint32_t len) {
  for (uint32_t c = 0; c < cylinders; ++c) {
    const uint64_t* slots = cs.slots(c, len, shape);
    for (uint32_t a = 0; a < shape.spt; ++a) {
      const bool got = (slots[a / 64] >> (a % 64) & 1) != 0;
      ASSERT_EQ(got, brute_slot(m, c, heads, shape, len, a))
          << "spt " << shape.spt << " cylinder " << c << " len " << len << " slot " << a;
    }
    // Nothing at or past spt.
    if (shape.spt % 64 != 0) {
      EXPECT_EQ(slots[shape.spt / 64] >> (shape.spt % 64), 0u) << "spt " << shape.spt;
    }
  }
}

TEST(CylinderStarts, EverySlotIsSomeTracksRunStartTurnedByItsSkew) {
  std::mt19937_64 rng(7);
  struct Case {
    uint32_t spt, offset0, skew;
  };
  for (const Case& k : {Case{256, 0, 21}, Case{72, 5, 9}, Case{37, 36, 11}, Case{130, 64, 0},
                        Case{1323, 700, 113}}) {
    const uint32_t cylinders = 4, heads = 5;
    FreeSpaceMap m(cylinders * heads, k.spt);
    CylinderStarts cs(m, cylinders, heads, k.spt);
    const CylinderShape shape{k.offset0, k.spt, k.skew};
    // One track left empty, one full: all slots, and none.
    for (uint32_t t = 0; t < cylinders * heads; ++t) {
      if (t == 1) continue;
      if (t == 2) {
        m.allocate(t, 0, k.spt);
        continue;
      }
      for (uint32_t s = 0; s < k.spt; ++s)
        if (std::bernoulli_distribution(0.7)(rng)) m.allocate(t, s, 1);
    }
    for (int round = 0; round < 6; ++round) {
      for (uint32_t len : {1u, 8u, 9u, 2u, 17u, k.spt, k.spt + 1})
        expect_slots(cs, m, cylinders, heads, shape, len);
      // Changes between looks: a few sectors flipped, and one run taken
      // and given back (the same bits, a new version).
      for (int i = 0; i < 8; ++i) {
        const uint32_t t = static_cast<uint32_t>(rng() % (cylinders * heads));
        const uint32_t s = static_cast<uint32_t>(rng() % k.spt);
        if (m.is_free(t, s)) m.allocate(t, s, 1);
        else if (t != 2) m.release(t, s, 1);
      }
      if (auto run = m.first_free_run(3, 0, 4)) {
        m.allocate(3, run->sector, 4);
        expect_slots(cs, m, cylinders, heads, shape, 8);
        m.release(3, run->sector, 4);
      }
    }
  }
}

}  // namespace
}  // namespace vld
