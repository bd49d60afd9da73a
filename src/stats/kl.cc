#include "pipette/kl.h"

#include <algorithm>
#include <cmath>

namespace pipette {

void LogSoftmax(std::span<const float> logits, std::span<float> out) {
  const float max = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float x : logits) sum += std::exp(static_cast<double>(x) - max);
  const double log_sum = max + std::log(sum);
  for (size_t i = 0; i < logits.size(); ++i) out[i] = static_cast<float>(logits[i] - log_sum);
}

double KlDivergence(std::span<const float> log_p, std::span<const float> log_q) {
  double kl = 0;
  for (size_t i = 0; i < log_p.size(); ++i) {
    const double p = std::exp(static_cast<double>(log_p[i]));
    if (p > 0) kl += p * (static_cast<double>(log_p[i]) - log_q[i]);
  }
  return std::max(kl, 0.0);  // rounding can give -1e-12 for equal rows
}

int32_t ArgMax(std::span<const float> row) {
  return static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

void KlAccumulator::Add(std::span<const float> log_p, std::span<const float> log_q,
                        int32_t next_token) {
  kl.push_back(KlDivergence(log_p, log_q));
  if (ArgMax(log_p) == ArgMax(log_q)) ++top1_agree;
  if (next_token >= 0 && static_cast<size_t>(next_token) < log_p.size()) {
    ref_nll -= log_p[static_cast<size_t>(next_token)];
    q_nll -= log_q[static_cast<size_t>(next_token)];
    ++scored;
  }
}

double KlAccumulator::Top1Agreement() const {
  return kl.empty() ? 0.0 : static_cast<double>(top1_agree) / static_cast<double>(kl.size());
}

double KlAccumulator::RefPerplexity() const {
  return scored ? std::exp(ref_nll / static_cast<double>(scored)) : 0.0;
}

double KlAccumulator::Perplexity() const {
  return scored ? std::exp(q_nll / static_cast<double>(scored)) : 0.0;
}

}  // namespace pipette
