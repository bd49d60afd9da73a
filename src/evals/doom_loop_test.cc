#include "pipette/doom_loop.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace pipette {
namespace {

// Varied prose (a fixed linear congruential walk over words): no detector may fire on it.
std::string Prose(size_t bytes, uint32_t seed = 1) {
  static const char* kWords[] = {"the",   "sum",  "of",     "both",  "roots", "is",    "equal",
                                 "to",    "then", "we",     "find",  "that",  "each", "side",
                                 "gives", "a",    "factor", "which", "means", "since", "x",
                                 "plus",  "two",  "so",     "hence", "area",  "angle", "first"};
  std::string out;
  uint32_t s = seed;
  int words = 0;
  while (out.size() < bytes) {
    s = s * 1664525u + 1013904223u;
    out += kWords[(s >> 16) % (sizeof kWords / sizeof *kWords)];
    out += (++words % 13 == 0) ? ".\n" : " ";
  }
  return out;
}

DoomLoopOptions Defaults() { return DoomLoopOptions{}; }

TEST(DoomLoop, VariedTextNeverFires) {
  EXPECT_EQ(DetectDoomLoop(Prose(30000), Defaults()), std::nullopt);
}

TEST(DoomLoop, NothingIsJudgedBelowTheMinimum) {
  std::string loop;
  for (int i = 0; i < 50; ++i) loop += "I will check this again and again.\n";
  ASSERT_LT(loop.size(), 8192u);
  EXPECT_EQ(DetectDoomLoop(loop, Defaults()), std::nullopt);
  DoomLoopOptions low;
  low.min_bytes = 256;
  EXPECT_TRUE(DetectDoomLoop(loop, low).has_value());
}

TEST(DoomLoop, ExactBlockNeedsThreeCopiesOfAtLeastThePeriod) {
  const std::string block = "Let me recompute the discriminant once more. ";  // 45 bytes
  const std::string base = Prose(9000);
  EXPECT_EQ(DetectDoomLoop(base + block + block + block, Defaults()), "exact_block");
  EXPECT_EQ(DetectDoomLoop(base + block + block, Defaults()), std::nullopt);
  DoomLoopOptions o;
  o.block_min_period = 64;  // the 45-byte block is below the period: 2 x 45 = 90 bytes is one
  EXPECT_NE(DetectDoomLoop(base + block + block + block, o), "exact_block");
}

TEST(DoomLoop, TheSameLineWithOtherNumbers) {
  std::string text = Prose(9000) + "\n";
  for (int i = 0; i < 6; ++i) text += "Step " + std::to_string(i * 7) + ": Try n = " + std::to_string(i) + "\n";
  DoomLoopOptions o;
  o.exact_block = o.long_block = false;
  EXPECT_EQ(DetectDoomLoop(text, o), "repeated_line");
  o.line_repeats = 7;
  EXPECT_EQ(DetectDoomLoop(text, o), std::nullopt);
}

TEST(DoomLoop, ACycleOfLines) {
  std::string text = Prose(9000) + "\n";
  for (int i = 0; i < 3; ++i) {
    text += "So the answer might be 12.\nBut wait, that does not satisfy the equation.\n"
            "Let me try the other root.\n";
  }
  DoomLoopOptions o;
  o.exact_block = o.long_block = false;
  EXPECT_EQ(DetectDoomLoop(text, o), "line_cycle");
  o.line_cycle = false;
  EXPECT_EQ(DetectDoomLoop(text, o), std::nullopt);
}

TEST(DoomLoop, ALongBlockTwice) {
  const std::string block = Prose(600, 7);
  const std::string text = Prose(9000) + block + Prose(700, 9) + block;
  EXPECT_EQ(DetectDoomLoop(text, Defaults()), "long_block");
}

TEST(DoomLoop, CounterLines) {
  std::string text = Prose(9000) + "\n";
  for (int i = 1; i <= 40; ++i) text += "Checking divisor " + std::to_string(i) + "\n";
  DoomLoopOptions o;
  o.exact_block = o.long_block = o.repeated_line = false;
  EXPECT_EQ(DetectDoomLoop(text, o), "counter_lines");
  o.counter_lines = 41;
  EXPECT_EQ(DetectDoomLoop(text, o), std::nullopt);
}

TEST(DoomLoop, TheTailFourTimes) {
  const std::string tail(64, 'q');
  std::string text = Prose(9000) + "\n";
  for (int i = 0; i < 4; ++i) text += Prose(300, 20 + i) + tail;
  DoomLoopOptions o;
  o.exact_block = o.long_block = false;
  EXPECT_EQ(DetectDoomLoop(text, o), "tail_repeat");
  o.tail_copies = 5;
  EXPECT_EQ(DetectDoomLoop(text, o), std::nullopt);
}

TEST(DoomLoop, LongTextCostsOnlyItsWindows) {
  // A megabyte of one repeated character: every detector is bounded by its window.
  const std::string text(1 << 20, 'a');
  EXPECT_EQ(DetectDoomLoop(text, Defaults()), "exact_block");
}

TEST(DoomLoop, OptionsAreSetByNameAndRecorded) {
  DoomLoopOptions o;
  ASSERT_TRUE(SetDoomLoopOption(o, "min_bytes=256").ok());
  ASSERT_TRUE(SetDoomLoopOption(o, "line_cycle=off").ok());
  ASSERT_TRUE(SetDoomLoopOption(o, "counter_lines=12").ok());
  EXPECT_EQ(o.min_bytes, 256);
  EXPECT_FALSE(o.line_cycle);
  EXPECT_EQ(o.counter_lines, 12);
  const auto j = ToJson(o);
  EXPECT_EQ(j["min_bytes"], 256);
  EXPECT_EQ(j["detectors"]["line_cycle"], false);
  EXPECT_EQ(j["detectors"]["exact_block"], true);

  const auto unknown = SetDoomLoopOption(o, "loops=3");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("min_bytes"), std::string::npos);
  EXPECT_FALSE(SetDoomLoopOption(o, "min_bytes=-1").ok());
  EXPECT_FALSE(SetDoomLoopOption(o, "min_bytes=ten").ok());
  EXPECT_FALSE(SetDoomLoopOption(o, "min_bytes").ok());
  EXPECT_FALSE(SetDoomLoopOption(o, "min_bytes=on").ok());
}

}  // namespace
}  // namespace pipette
