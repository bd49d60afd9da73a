#include "cli/flag_names.h"
#include "cli/number_range.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <CLI/CLI.hpp>

namespace pipette::cli {
namespace {

// A pipette-like command tree: --store global, `run` with runtime and readiness flags, `suite run`
// with only some of them.
struct Commands {
  CLI::App root{"pipette"};
  CLI::App* run = nullptr;
  CLI::App* suite_run = nullptr;
  CLI::App* select = nullptr;
  std::string text;
  bool flag = false;

  Commands() {
    root.add_option("--store", text);
    run = root.add_subcommand("run");
    for (const SettingFlag& f : SettingFlags()) run->add_option(f.flags, text);
    for (const char* name : {"--readiness-deadline", "--request-timeout", "--reference",
                             "--runtime-log"}) {
      run->add_option(name, text);
    }
    for (const char* name : {"--no-readiness-thermal", "--no-readiness-load",
                             "--no-readiness-throttle", "--allow-context-overflow", "--min-reps"}) {
      run->add_flag(name, flag);
    }
    CLI::App* suite = root.add_subcommand("suite");
    suite_run = suite->add_subcommand("run");
    suite_run->add_option("--logs", text);
    suite_run->add_flag("--no-readiness-thermal", flag);
    suite_run->add_flag("--no-readiness-load", flag);
    select = root.add_subcommand("select");
    for (const char* name : {"--threads", "--cpus", "--runtime", "--setting"}) {
      select->add_option(name, text);  // filters over stored results
    }
  }
};

TEST(WithFlags, SettingNamesGetTheirFlags) {
  Commands c;
  EXPECT_EQ(WithFlags("n_ctx 50 is smaller than the shape's 64 tokens; raise n_ctx", *c.run),
            "n_ctx (--ctx-size) 50 is smaller than the shape's 64 tokens; raise n_ctx");
  EXPECT_EQ(WithFlags("threads must be at least 1", *c.run),
            "threads (--threads) must be at least 1");
}

TEST(WithFlags, TermsGetTheirFlagsInsideTheSettingNameParentheses) {
  Commands c;
  EXPECT_EQ(WithFlags("let it cool, or raise the readiness deadline (deadline_s), or waive the "
                      "thermal criterion / the load criterion",
                      *c.run),
            "let it cool, or raise the readiness deadline (--readiness-deadline, deadline_s), or "
            "waive the thermal criterion (--no-readiness-thermal) / the load criterion "
            "(--no-readiness-load)");
  EXPECT_EQ(WithFlags("did not answer within 2 s; raise the request timeout (request_timeout_s)",
                      *c.run),
            "did not answer within 2 s; raise the request timeout (--request-timeout, "
            "request_timeout_s)");
  EXPECT_EQ(WithFlags("reference model: x.gguf: no such file", *c.run),
            "reference model (--reference): x.gguf: no such file");
  EXPECT_EQ(WithFlags("shape above the context; pick a smaller shape or allow context overflow",
                      *c.run),
            "shape above the context; pick a smaller shape or allow context overflow "
            "(--allow-context-overflow)");
}

TEST(WithFlags, OnlyFlagsTheCommandTakes) {
  Commands c;
  const std::string advice =
      "raise the readiness deadline (deadline_s), or waive the thermal criterion / the "
      "throttling criterion";
  // `suite run` has --no-readiness-thermal but no --readiness-deadline nor
  // --no-readiness-throttle: those stay as the suite file names them.
  EXPECT_EQ(WithFlags(advice, *c.suite_run),
            "raise the readiness deadline (deadline_s), or waive the thermal criterion "
            "(--no-readiness-thermal) / the throttling criterion");
  EXPECT_EQ(WithFlags("x: cannot create the suite's log folder (denied); choose another logs "
                      "folder",
                      *c.suite_run),
            "x: cannot create the suite's log folder (denied); choose another logs folder "
            "(--logs)");
  EXPECT_EQ(WithFlags("threads must be at least 1", *c.suite_run), "threads must be at least 1");
  // Global options count for every subcommand.
  EXPECT_EQ(WithFlags("no results store at x (`pipette run` creates one); check the store path",
                      *c.suite_run),
            "no results store at x (`pipette run` creates one); check the store path (--store)");
  EXPECT_EQ(WithFlags("set the vocabulary folder (vocab_dir)", *c.run),
            "set the vocabulary folder (vocab_dir)");
}

TEST(WithFlags, SettingNamesOnlyWhereTheFlagsSetThem) {
  Commands c;
  // select's --threads and --cpus filter stored results: a message naming the setting is not
  // about them.
  const std::string keys = "unknown setting 'x' (settings: threads, n_gpu_layers, cpus)";
  EXPECT_EQ(WithFlags(keys, *c.select), keys);
  // KEY=VALUE is a filter or a suite key, not a mention of the flag.
  const std::string filter = "'x' is not a setting filter: give KEY=VALUE, e.g. threads=2";
  EXPECT_EQ(WithFlags(filter, *c.run), filter);
  // Terms still get the flags select takes (the global --store).
  EXPECT_EQ(WithFlags("threads: check the store path", *c.select),
            "threads: check the store path (--store)");
}

TEST(WithFlags, NeverTwice) {
  Commands c;
  // Written by the CLI with its flags already.
  const std::string cli = "--min-reps 5 is above --max-reps 3";
  EXPECT_EQ(WithFlags(cli, *c.run), cli);
  const std::string typed = "runtime openai does not take --cache-type-k (type_k)";
  EXPECT_EQ(WithFlags(typed, *c.run), typed);
  const std::string logs = "--logs x: y is not a folder; choose another logs folder";
  EXPECT_EQ(WithFlags(logs, *c.suite_run), logs);
  // Applying it again changes nothing.
  for (const std::string m : {"raise the request timeout (request_timeout_s) or n_ctx",
                              "waive the thermal criterion; check the store path"}) {
    const std::string once = WithFlags(m, *c.run);
    EXPECT_NE(once, m);
    EXPECT_EQ(WithFlags(once, *c.run), once);
  }
}

TEST(WithFlags, WholeWordsOnlyAndNotCounts) {
  Commands c;
  // A count of polls or threads is not the setting; longer names and flags are not it either.
  const std::string polls = "device not ready after 0 s (1 poll): throttling reported";
  EXPECT_EQ(WithFlags(polls, *c.run), polls);
  EXPECT_EQ(WithFlags("measured with 8 threads", *c.run), "measured with 8 threads");
  EXPECT_EQ(WithFlags("n_ctx_train is 128; poll_interval_s 3", *c.run),
            "n_ctx_train is 128; poll_interval_s 3");
  EXPECT_EQ(WithFlags("the runtime logs are kept", *c.run), "the runtime logs are kept");
  EXPECT_EQ(WithFlags("", *c.run), "");
}

TEST(RunningCommand, IsTheDeepestParsedSubcommand) {
  Commands c;
  EXPECT_EQ(&RunningCommand(c.root), &c.root);
  std::vector<std::string> argv = {"run", "suite"};  // CLI11 takes them reversed
  c.root.parse(argv);
  EXPECT_EQ(&RunningCommand(c.root), c.suite_run);
}

// Numeric options say what was wrong with the text given, in the user's terms.
TEST(NumberIn, NamesTextFractionsAndRange) {
  CLI::App app;
  double temperature = 0;
  int reps = 0;
  app.add_option("--temperature", temperature)->check(NumberIn(0.0, 10.0));
  app.add_option("--max-reps", reps)->check(NumberIn(1, 10000));
  const auto error_of = [&app](std::vector<std::string> argv) -> std::string {
    std::reverse(argv.begin(), argv.end());
    try {
      app.parse(argv);
    } catch (const CLI::ParseError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of({"--temperature", "abc"}),
            "--temperature: 'abc' is not a number; give one from 0 to 10");
  EXPECT_EQ(error_of({"--temperature", "20"}),
            "--temperature: 20 is out of range; give a number from 0 to 10");
  EXPECT_EQ(error_of({"--max-reps", "1.5"}),
            "--max-reps: 1.5 is not a whole number; give one from 1 to 10000");
  EXPECT_EQ(error_of({"--temperature", "0.6", "--max-reps", "3"}), "");
  EXPECT_DOUBLE_EQ(temperature, 0.6);
  EXPECT_EQ(reps, 3);
}

}  // namespace
}  // namespace pipette::cli
