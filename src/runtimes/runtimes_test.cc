// The runtimes of this build: their setting definitions agree with what the readers filter on,
// and choices are checked before anything is touched.
#include <gtest/gtest.h>

#include <algorithm>

#include "pipette/runtimes.h"
#include "pipette/store.h"

namespace pipette {
namespace {

TEST(Runtimes, EverySettingOfEveryRuntimeCanBeFilteredOn) {
  const auto& known = RecordedSettingNames();
  for (const std::string& name : RuntimeNames()) {
    auto defs = RuntimeSettingDefs(name);
    ASSERT_TRUE(defs.ok()) << name << ": " << defs.error().message;
    for (const SettingDef& d : *defs) {
      EXPECT_NE(std::find(known.begin(), known.end(), d.name), known.end())
          << name << "'s setting " << d.name << " is missing from RecordedSettingNames()";
      EXPECT_FALSE(d.meaning.empty()) << name << "." << d.name;
    }
  }
}

TEST(Runtimes, ASettingSharedByRuntimesHasOneDefinition) {
  auto a = RuntimeSettingDefs("llamacpp");
  auto b = RuntimeSettingDefs("llamacpp-stock");
  ASSERT_TRUE(a.ok() && b.ok());
  for (const SettingDef& d : *b) {
    const SettingDef* same = FindSetting(*a, d.name);
    if (same == nullptr) continue;
    EXPECT_EQ(same->default_value, d.default_value) << d.name;
    EXPECT_EQ(same->min, d.min) << d.name;
    EXPECT_EQ(same->max, d.max) << d.name;
    EXPECT_EQ(same->choices, d.choices) << d.name;
  }
}

TEST(Runtimes, ChoicesAreCheckedBeforeAnythingRuns) {
  RuntimeChoice c;
  c.name = "vllm";
  EXPECT_EQ(CheckRuntimeChoice(c).error().message,
            "unknown runtime 'vllm'; the runtimes are: llamacpp, llamacpp-stock, openai");
  c.name = "llamacpp-stock";
  EXPECT_NE(CheckRuntimeChoice(c).error().message.find("needs the runtime directory"),
            std::string::npos);
  c.name = "openai";
  c.dir = "/opt/llama/bin";
  EXPECT_EQ(CheckRuntimeChoice(c).error().message, "runtime openai takes no runtime directory");
}

TEST(Runtimes, ASettingTheRuntimeDoesNotTakeIsNamed) {
  auto defs = RuntimeSettingDefs("openai");
  ASSERT_TRUE(defs.ok());
  const Status s = CheckSettings("openai", *defs, {{"type_k", "q8_0"}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "runtime openai does not take the setting type_k; it takes: none");
  const Status server = CheckSettings("openai", *defs, {{"server", "/bin/true"}});
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.error().message.find("records server from where it runs"), std::string::npos)
      << server.error().message;
}

}  // namespace
}  // namespace pipette
