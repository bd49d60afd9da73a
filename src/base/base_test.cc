#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "base/ids.h"
#include "base/json_depth.h"
#include "base/sha256.h"

namespace pipette {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, TokensAreLittleEndianInt32) {
  const std::vector<int32_t> tokens = {1, 258};
  const std::string bytes("\x01\x00\x00\x00\x02\x01\x00\x00", 8);
  EXPECT_EQ(Sha256OfTokens(tokens), Sha256Hex(bytes));
}

TEST(Sha256, MissingFileNamesIt) {
  auto r = Sha256OfFile("/nonexistent/model.gguf");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/nonexistent/model.gguf"), std::string::npos);
}

TEST(Ids, UuidV7Shape) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    const std::string id = NewUuidV7();
    ASSERT_EQ(id.size(), 36u);
    EXPECT_EQ(id[14], '7');
    EXPECT_TRUE(id[19] == '8' || id[19] == '9' || id[19] == 'a' || id[19] == 'b');
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 100u);
}

TEST(Ids, Rfc3339) {
  const auto t = std::chrono::system_clock::time_point(std::chrono::milliseconds(1700000000123));
  EXPECT_EQ(Rfc3339Utc(t), "2023-11-14T22:13:20.123Z");
}

}  // namespace
}  // namespace pipette

namespace pipette {
namespace {

TEST(JsonDepth, CountsBracketsOutsideStringsOnly) {
  EXPECT_EQ(JsonNestsDeeperThan("{\"a\":[1,{\"b\":2}]}", 3), std::nullopt);
  EXPECT_EQ(JsonNestsDeeperThan("{\"a\":[1,{\"b\":[2]}]}", 3), 13u);  // the fourth level opens
  // Brackets in strings, escaped quotes included, are text.
  EXPECT_EQ(JsonNestsDeeperThan("[\"[[[[\\\"[[[[\"]", 1), std::nullopt);
  EXPECT_EQ(JsonNestsDeeperThan(std::string(64, '[') + std::string(64, ']')), std::nullopt);
  EXPECT_EQ(JsonNestsDeeperThan(std::string(1000000, '[')), 64u);
  EXPECT_TRUE(ParseBoundedJson(std::string(100000, '[') + std::string(100000, ']')).is_discarded());
  EXPECT_EQ(ParseBoundedJson("{\"a\": [1]}")["a"][0], 1);
  EXPECT_EQ(TooDeeplyNested(64), "nested deeper than 64 levels (byte 64)");
}

}  // namespace
}  // namespace pipette
