// CPython's `random.Random` generator, reproduced bit for bit where the eval protocol needs it: the
// GPQA option shuffle (evals.md 1) is `random.Random(seed).shuffle(options)`.
//
// CPython uses MT19937 (Matsumoto and Nishimura, 2002) seeded with `init_by_array` over the 32-bit
// words of |seed| (least significant first; the single word 0 for seed 0). `getrandbits(k)` takes
// the top k bits of one output for k <= 32 and fills 32-bit words least significant first above
// that; `_randbelow(n)` draws `getrandbits(n.bit_length())` until the value is below n; `shuffle`
// is Fisher-Yates from the last index down, swapping x[i] with x[_randbelow(i + 1)].
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace pipette::evals {

class CPythonRandom {
 public:
  // As `random.Random(seed)` for a non-negative integer seed below 2^64.
  explicit CPythonRandom(uint64_t seed);

  // The next raw 32-bit output of MT19937 (CPython's genrand_uint32).
  uint32_t NextUint32();
  // As `getrandbits(k)`. REQUIRES: 0 <= k <= 64.
  uint64_t GetRandBits(int k);
  // As `_randbelow(n)`: uniform in [0, n). REQUIRES: n >= 1.
  uint64_t RandBelow(uint64_t n);
  // As `random()`: 53 random bits as a double in [0, 1).
  double Random();

  // As `shuffle(items)`.
  template <typename T>
  void Shuffle(std::vector<T>& items) {
    for (size_t i = items.size(); i-- > 1;) {
      const size_t j = static_cast<size_t>(RandBelow(i + 1));
      std::swap(items[i], items[j]);
    }
  }

 private:
  void InitGenrand(uint32_t s);
  void InitByArray(const std::vector<uint32_t>& key);

  std::array<uint32_t, 624> mt_{};
  int index_ = 625;
};

}  // namespace pipette::evals
