// Token-level comparison of two models' next-token distributions on the same text: the
// quantization-quality measure `kl_divergence_<ctx>` (DESIGN.md 4.1, issue 3), computed on the
// device itself.
//
// All logarithms are natural: KL divergence is in nats. Distributions are given as
// log-probabilities (log-softmax of the logits) over the same vocabulary, one row per position.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace pipette {

// out[i] = logits[i] - log(sum_j exp(logits[j])), computed stably (max subtracted first).
// REQUIRES: out.size() == logits.size() > 0.
void LogSoftmax(std::span<const float> logits, std::span<float> out);

// KL(P || Q) = sum_i p_i (log p_i - log q_i) for one position, P the reference. Terms with
// p_i == 0 contribute 0. Result >= 0 up to rounding; 0 when the rows are equal.
// REQUIRES: equal, non-zero sizes.
double KlDivergence(std::span<const float> log_p, std::span<const float> log_q);

// Index of the largest value (the greedy token); the lowest index among equals.
int32_t ArgMax(std::span<const float> row);

// Accumulates per-position results over a text.
struct KlAccumulator {
  std::vector<double> kl;   // per position, nats
  int64_t top1_agree = 0;   // positions where both models' greedy tokens are equal
  double ref_nll = 0;       // sum of -log p_ref(next token), over positions with a next token
  double q_nll = 0;         // same for the compared model
  int64_t scored = 0;       // positions with a next token

  // Adds one position. `next_token` is the token that follows in the text, or -1 at the end.
  void Add(std::span<const float> log_p, std::span<const float> log_q, int32_t next_token);
  double Top1Agreement() const;   // fraction in [0, 1]
  double RefPerplexity() const;   // exp(ref_nll / scored)
  double Perplexity() const;      // exp(q_nll / scored)
};

}  // namespace pipette
