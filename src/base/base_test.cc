#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "base/ids.h"
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
