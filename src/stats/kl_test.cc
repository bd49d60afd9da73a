#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "pipette/kl.h"

namespace pipette {
namespace {

std::vector<float> Logs(std::vector<double> probs) {
  std::vector<float> out;
  for (double p : probs) out.push_back(static_cast<float>(std::log(p)));
  return out;
}

TEST(Kl, HandComputedExample) {
  // P = (0.5, 0.25, 0.25), Q = (0.25, 0.5, 0.25):
  // KL = 0.5 ln 2 + 0.25 ln 0.5 + 0 = 0.25 ln 2 = 0.1732868 nats.
  const auto p = Logs({0.5, 0.25, 0.25}), q = Logs({0.25, 0.5, 0.25});
  EXPECT_NEAR(KlDivergence(p, q), 0.25 * std::log(2.0), 1e-6);
  EXPECT_NEAR(KlDivergence(q, p), 0.25 * std::log(2.0), 1e-6);  // symmetric here by chance
  const auto r = Logs({0.8, 0.1, 0.1});
  // KL(r || p) = 0.8 ln 1.6 + 0.1 ln 0.4 + 0.1 ln 0.4 = 0.376004 - 0.183258 = 0.192746
  EXPECT_NEAR(KlDivergence(r, p), 0.8 * std::log(1.6) + 0.2 * std::log(0.4), 1e-6);
}

TEST(Kl, EqualRowsGiveZero) {
  const auto p = Logs({0.7, 0.2, 0.1});
  EXPECT_EQ(KlDivergence(p, p), 0.0);
}

TEST(Kl, LogSoftmaxIsStableAndNormalized) {
  const std::vector<float> logits = {1000.f, 1000.f, 998.f};
  std::vector<float> out(3);
  LogSoftmax(logits, out);
  double sum = 0;
  for (float x : out) sum += std::exp(static_cast<double>(x));
  EXPECT_NEAR(sum, 1.0, 1e-6);
  EXPECT_NEAR(out[0], out[1], 1e-6);
  EXPECT_NEAR(out[0] - out[2], 2.0, 1e-5);
}

TEST(Kl, AccumulatorAgreementAndPerplexity) {
  KlAccumulator acc;
  const auto a = Logs({0.5, 0.25, 0.25}), b = Logs({0.25, 0.5, 0.25});
  acc.Add(a, a, 0);   // agree; next token 0: p = 0.5 for both
  acc.Add(a, b, 1);   // disagree; next token 1: p_ref 0.25, q 0.5
  acc.Add(a, a, -1);  // end of text: not scored
  EXPECT_DOUBLE_EQ(acc.Top1Agreement(), 2.0 / 3.0);
  EXPECT_EQ(acc.scored, 2);
  EXPECT_NEAR(acc.RefPerplexity(), std::exp(-(std::log(0.5) + std::log(0.25)) / 2), 1e-5);
  EXPECT_NEAR(acc.Perplexity(), std::exp(-(std::log(0.5) + std::log(0.5)) / 2), 1e-5);
  ASSERT_EQ(acc.kl.size(), 3u);
  EXPECT_EQ(acc.kl[0], 0.0);
  EXPECT_GT(acc.kl[1], 0.0);
}

}  // namespace
}  // namespace pipette
