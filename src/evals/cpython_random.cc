// MT19937 as CPython's Modules/_randommodule.c uses it (see cpython_random.h).
#include "evals/cpython_random.h"

#include <bit>

namespace pipette::evals {
namespace {

constexpr int kN = 624;
constexpr int kM = 397;
constexpr uint32_t kMatrixA = 0x9908b0dfU;
constexpr uint32_t kUpperMask = 0x80000000U;
constexpr uint32_t kLowerMask = 0x7fffffffU;

}  // namespace

CPythonRandom::CPythonRandom(uint64_t seed) {
  std::vector<uint32_t> key;
  for (uint64_t rest = seed; rest != 0; rest >>= 32) key.push_back(static_cast<uint32_t>(rest));
  if (key.empty()) key.push_back(0);
  InitByArray(key);
}

void CPythonRandom::InitGenrand(uint32_t s) {
  mt_[0] = s;
  for (int i = 1; i < kN; ++i) {
    mt_[i] = 1812433253U * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<uint32_t>(i);
  }
  index_ = kN;
}

void CPythonRandom::InitByArray(const std::vector<uint32_t>& key) {
  InitGenrand(19650218U);
  const int key_length = static_cast<int>(key.size());
  int i = 1;
  int j = 0;
  for (int k = kN > key_length ? kN : key_length; k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525U)) + key[j] +
             static_cast<uint32_t>(j);
    ++i;
    ++j;
    if (i >= kN) {
      mt_[0] = mt_[kN - 1];
      i = 1;
    }
    if (j >= key_length) j = 0;
  }
  for (int k = kN - 1; k > 0; --k) {
    mt_[i] =
        (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941U)) - static_cast<uint32_t>(i);
    ++i;
    if (i >= kN) {
      mt_[0] = mt_[kN - 1];
      i = 1;
    }
  }
  mt_[0] = 0x80000000U;  // MSB is 1, assuring a non-zero initial array
}

uint32_t CPythonRandom::NextUint32() {
  if (index_ >= kN) {
    int kk = 0;
    for (; kk < kN - kM; ++kk) {
      const uint32_t y = (mt_[kk] & kUpperMask) | (mt_[kk + 1] & kLowerMask);
      mt_[kk] = mt_[kk + kM] ^ (y >> 1) ^ ((y & 1U) != 0 ? kMatrixA : 0U);
    }
    for (; kk < kN - 1; ++kk) {
      const uint32_t y = (mt_[kk] & kUpperMask) | (mt_[kk + 1] & kLowerMask);
      mt_[kk] = mt_[kk + (kM - kN)] ^ (y >> 1) ^ ((y & 1U) != 0 ? kMatrixA : 0U);
    }
    const uint32_t y = (mt_[kN - 1] & kUpperMask) | (mt_[0] & kLowerMask);
    mt_[kN - 1] = mt_[kM - 1] ^ (y >> 1) ^ ((y & 1U) != 0 ? kMatrixA : 0U);
    index_ = 0;
  }
  uint32_t y = mt_[index_++];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680U;
  y ^= (y << 15) & 0xefc60000U;
  y ^= (y >> 18);
  return y;
}

uint64_t CPythonRandom::GetRandBits(int k) {
  if (k <= 0) return 0;
  if (k <= 32) return NextUint32() >> (32 - k);
  // Words least significant first; the last word keeps its top (k mod 32) bits.
  const uint64_t low = NextUint32();
  const uint64_t high = NextUint32() >> (64 - k);
  return low | (high << 32);
}

uint64_t CPythonRandom::RandBelow(uint64_t n) {
  const int k = std::bit_width(n);
  uint64_t r = GetRandBits(k);
  while (r >= n) r = GetRandBits(k);
  return r;
}

double CPythonRandom::Random() {
  const uint32_t a = NextUint32() >> 5;
  const uint32_t b = NextUint32() >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

}  // namespace pipette::evals
