#include "pipette/identity.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

namespace pipette {
namespace {

TEST(Identity, SignedRequestVerifiesAndAnyChangeBreaksIt) {
  const Identity id = GenerateIdentity();
  ASSERT_EQ(id.public_key_hex.size(), 64u);
  ASSERT_EQ(id.secret_key_hex.size(), 128u);
  ASSERT_EQ(id.client_id.rfind("pc_", 0), 0u);
  ASSERT_EQ(id.client_id.size(), 35u);
  const SignedHeaders h = SignRequest(id, "POST", "/api/results?x=1", "{\"a\":1}", 1764590000);
  EXPECT_EQ(h.nonce.size(), 32u);
  const auto message = [&](std::string_view method, std::string_view path, int64_t ts,
                           std::string_view body) {
    return SigningString(method, path, ts, h.client_id, h.nonce, body);
  };
  EXPECT_TRUE(VerifyMessage(id.public_key_hex, message("POST", "/api/results?x=1", 1764590000,
                                                       "{\"a\":1}"),
                            h.signature));
  EXPECT_FALSE(VerifyMessage(id.public_key_hex,
                             message("POST", "/api/results?x=1", 1764590000, "{\"a\":2}"),
                             h.signature));
  EXPECT_FALSE(VerifyMessage(id.public_key_hex,
                             message("POST", "/api/results?x=2", 1764590000, "{\"a\":1}"),
                             h.signature));
  EXPECT_FALSE(VerifyMessage(id.public_key_hex,
                             message("PUT", "/api/results?x=1", 1764590000, "{\"a\":1}"),
                             h.signature));
  EXPECT_FALSE(VerifyMessage(id.public_key_hex,
                             message("POST", "/api/results?x=1", 1764590001, "{\"a\":1}"),
                             h.signature));
  const Identity other = GenerateIdentity();
  EXPECT_FALSE(VerifyMessage(other.public_key_hex,
                             message("POST", "/api/results?x=1", 1764590000, "{\"a\":1}"),
                             h.signature));
  EXPECT_FALSE(VerifyMessage(id.public_key_hex, "x", "zz"));
  EXPECT_FALSE(VerifyMessage("not hex", "x", h.signature));
}

TEST(Identity, SigningStringIsTheDocumentedText) {
  EXPECT_EQ(SigningString("GET", "/api/me", 7, "pc_x", "n", ""),
            "pipette-request/1\nGET\n/api/me\n7\npc_x\nn\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Identity, FileIsCreatedPrivateAndReadBack) {
  const std::string dir = ::testing::TempDir() + "/identity_test_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  const std::string path = dir + "/sub/identity.json";
  EXPECT_FALSE(LoadIdentity(path).ok());
  auto created = LoadOrCreateIdentity(path);
  ASSERT_TRUE(created.ok()) << created.error().message;
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = LoadOrCreateIdentity(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->public_key_hex, created->public_key_hex);
  EXPECT_EQ(again->client_id, created->client_id);
  chmod(path.c_str(), 0644);
  auto open = LoadIdentity(path);
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.error().message.find("chmod 600"), std::string::npos);
  chmod(path.c_str(), 0600);
  std::ofstream(path) << "{\"public_key\":\"00\",\"secret_key\":\"11\"}";
  auto bad = LoadIdentity(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("malformed"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pipette
