// Tests of the GGUF reader, quantization names, synthetic models and the llama.cpp tools.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <map>
#include <sys/mount.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/sha256.h"
#include "ggml.h"
#include "gguf.h"
#include "models/gguf_patch.h"
#include "models/llama_tools.h"
#include "models/synth_tensors.h"
#include "models/synth_types.h"
#include "pipette/gguf.h"
#include "pipette/synth.h"
#include "platform/process.h"
#include "tests/support/test_data.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Root of this process's temporary files; removed when the tests end.
fs::path TempRoot() {
  return fs::path(::testing::TempDir()) / ("pipette_models_" + std::to_string(::getpid()));
}

class TempRootCleanup : public ::testing::Environment {
 public:
  void TearDown() override { fs::remove_all(TempRoot()); }
};
const auto* const kCleanup = ::testing::AddGlobalTestEnvironment(new TempRootCleanup);

// A fresh, empty folder per test.
std::string TestDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir = TempRoot() / (std::string(info->test_suite_name()) + "." + info->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

template <typename T>
void Append(std::string* s, T v) {
  s->append(reinterpret_cast<const char*>(&v), sizeof(v));
}

// A small model written with ggml's own gguf writer: 3 tensors of 3 types, 10 tokens.
// token_embd q8_0 {32, 10} (340 bytes), output_norm f32 {32} (128), blk.0.attn_q f16 {32, 32}
// (2048): 1376 elements, 2516 bytes.
std::string WriteTestModel(const std::string& dir, bool with_file_type) {
  const std::string path = dir + "/test.gguf";
  ggml_init_params params = {1 << 20, nullptr, false};
  ggml_context* ctx = ggml_init(params);
  gguf_context* g = gguf_init_empty();
  gguf_set_val_str(g, "general.architecture", "llama");
  gguf_set_val_str(g, "general.name", "test model");
  if (with_file_type) gguf_set_val_u32(g, "general.file_type", 7);
  gguf_set_val_u32(g, "llama.context_length", 128);
  gguf_set_val_u32(g, "llama.embedding_length", 32);
  gguf_set_val_u32(g, "llama.block_count", 1);
  gguf_set_val_u32(g, "llama.attention.head_count", 4);
  gguf_set_val_u32(g, "llama.feed_forward_length", 64);
  std::vector<std::string> tokens;
  for (int i = 0; i < 10; ++i) tokens.push_back("tok" + std::to_string(i));
  std::vector<const char*> token_ptrs;
  for (const auto& t : tokens) token_ptrs.push_back(t.c_str());
  gguf_set_arr_str(g, "tokenizer.ggml.tokens", token_ptrs.data(), token_ptrs.size());
  ggml_tensor* tensors[] = {ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 32, 10),
                            ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 32),
                            ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 32, 32)};
  const char* names[] = {"token_embd.weight", "output_norm.weight", "blk.0.attn_q.weight"};
  for (int i = 0; i < 3; ++i) {
    ggml_set_name(tensors[i], names[i]);
    std::memset(tensors[i]->data, 0, ggml_nbytes(tensors[i]));
    gguf_add_tensor(g, tensors[i]);
  }
  EXPECT_TRUE(gguf_write_to_file(g, path.c_str(), false));
  gguf_free(g);
  ggml_free(ctx);
  return path;
}

TEST(GgufReader, ReadsHeaderOfKnownModel) {
  const std::string path = WriteTestModel(TestDir(), /*with_file_type=*/true);
  Result<GgufInfo> info = ReadGgufInfo(path);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->file_name, "test.gguf");
  EXPECT_EQ(info->size_bytes, fs::file_size(path));
  EXPECT_EQ(info->version, 3u);
  EXPECT_EQ(info->architecture, "llama");
  EXPECT_EQ(info->name, "test model");
  EXPECT_EQ(info->params, 1376u);
  EXPECT_EQ(info->tensor_bytes, 2516u);
  EXPECT_EQ(info->file_type, 7);
  EXPECT_EQ(info->quant, "Q8_0");
  EXPECT_FALSE(info->quant_inferred);
  const std::map<std::string, uint64_t> types = {{"f16", 1}, {"f32", 1}, {"q8_0", 1}};
  EXPECT_EQ(info->tensor_types, types);
  EXPECT_EQ(info->n_ctx_train, 128u);
  EXPECT_EQ(info->vocab_size, 10u);
  EXPECT_EQ(info->n_embd, 32u);
  EXPECT_EQ(info->n_layer, 1u);
  EXPECT_EQ(info->n_head, 4u);
  EXPECT_EQ(info->n_head_kv, 4u);  // absent: llama.cpp's default, n_head
  EXPECT_EQ(info->n_ff, 64u);
  EXPECT_FALSE(info->synthetic);

  const nlohmann::json j = ToJson(*info);
  EXPECT_EQ(j["quant"], "Q8_0");
  EXPECT_EQ(j["file_type"], 7);
  EXPECT_EQ(j["tensor_types"]["q8_0"], 1);
  EXPECT_EQ(j["params"], 1376);
  EXPECT_EQ(j["vocab_size"], 10);
  EXPECT_FALSE(j.contains("sha256"));
}

TEST(GgufReader, InfersQuantFromLargestMatrixTypeWithoutFileType) {
  const std::string path = WriteTestModel(TestDir(), /*with_file_type=*/false);
  Result<GgufInfo> info = ReadGgufInfo(path);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->file_type, -1);
  EXPECT_TRUE(info->quant_inferred);
  EXPECT_EQ(info->quant, "F16");  // 2048 bytes of f16 outweigh 340 of q8_0
}

TEST(GgufReader, MissingFile) {
  Result<GgufInfo> info = ReadGgufInfo(TestDir() + "/nope.gguf");
  ASSERT_FALSE(info.ok());
  EXPECT_THAT(info.error().message, HasSubstr("nope.gguf: no such file"));
}

TEST(GgufReader, Directory) {
  const std::string dir = TestDir();
  Result<GgufInfo> info = ReadGgufInfo(dir);
  ASSERT_FALSE(info.ok());
  EXPECT_THAT(info.error().message, HasSubstr("is a directory"));
}

TEST(GgufReader, TextFileNamedGguf) {
  const std::string path = TestDir() + "/story.gguf";
  WriteBytes(path, "Once upon a time there was a model.\n");
  Result<GgufInfo> info = ReadGgufInfo(path);
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().message,
            path +
                ": not a GGUF file (magic 'Once'); give a GGUF model or convert a llama2.c "
                "checkpoint with `pipette models import-llama2c`");
}

TEST(GgufReader, EmptyFile) {
  const std::string path = TestDir() + "/empty.gguf";
  WriteBytes(path, "");
  Result<GgufInfo> info = ReadGgufInfo(path);
  ASSERT_FALSE(info.ok());
  EXPECT_THAT(info.error().message, HasSubstr("empty file"));
}

TEST(GgufReader, BadMagic) {
  const std::string path = TestDir() + "/bad.gguf";
  std::string bytes = "GGUX";
  Append<uint32_t>(&bytes, 3);
  WriteBytes(path, bytes);
  Result<GgufInfo> info = ReadGgufInfo(path);
  ASSERT_FALSE(info.ok());
  EXPECT_THAT(info.error().message, HasSubstr("not a GGUF file (magic 'GGUX')"));
}

TEST(GgufReader, UnsupportedVersions) {
  const std::string dir = TestDir();
  for (uint32_t version : {1u, 4u, 0x03000000u}) {
    std::string bytes = "GGUF";
    Append<uint32_t>(&bytes, version);
    Append<int64_t>(&bytes, 0);
    Append<int64_t>(&bytes, 0);
    WriteBytes(dir + "/v.gguf", bytes);
    Result<GgufInfo> info = ReadGgufInfo(dir + "/v.gguf");
    ASSERT_FALSE(info.ok()) << version;
    EXPECT_THAT(info.error().message,
                HasSubstr(version == 0x03000000u ? "big-endian" : "is not supported"));
  }
}

TEST(GgufReader, TruncatedToHalf) {
  const std::string dir = TestDir();
  const std::string path = WriteTestModel(dir, true);
  const auto size = fs::file_size(path);
  fs::resize_file(path, size / 2);
  Result<GgufInfo> info = ReadGgufInfo(path);
  ASSERT_FALSE(info.ok());
  EXPECT_THAT(info.error().message, HasSubstr("file is truncated"));
  EXPECT_THAT(info.error().message, HasSubstr("the download or copy is incomplete"));
}

// A model on a device: its header read from a copy of its first bytes, knowing the whole size.
TEST(GgufReader, FromAPrefixOfAFileElsewhere) {
  const std::string dir = TestDir();
  const std::string path = WriteTestModel(dir, true);
  const uint64_t size = fs::file_size(path);
  Result<GgufInfo> whole = ReadGgufInfo(path);
  ASSERT_TRUE(whole.ok());
  // The header ends before the tensor data: a copy of the first 1000 bytes holds it.
  const std::string head = dir + "/head";
  fs::copy_file(path, head, fs::copy_options::overwrite_existing);
  fs::resize_file(head, 1000);
  bool short_copy = true;
  Result<GgufInfo> info = ReadGgufInfoFromPrefix(head, "/data/local/tmp/m.gguf", size, &short_copy);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_FALSE(short_copy);
  EXPECT_EQ(info->file_name, "m.gguf");
  EXPECT_EQ(info->size_bytes, size);
  EXPECT_EQ(ToJson(*info).dump(), [&] {
    nlohmann::json j = ToJson(*whole);
    j["path"] = "/data/local/tmp/m.gguf";
    j["file_name"] = "m.gguf";
    return j.dump();
  }());
  // Too short a copy: said, and flagged so that the caller copies more.
  fs::resize_file(head, 100);
  info = ReadGgufInfoFromPrefix(head, "/data/local/tmp/m.gguf", size, &short_copy);
  ASSERT_FALSE(info.ok());
  EXPECT_TRUE(short_copy);
  EXPECT_THAT(info.error().message, HasSubstr("/data/local/tmp/m.gguf: the header goes on past"));
  // The file on the device is shorter than its tensors need: truncated, whatever the copy.
  fs::copy_file(path, head, fs::copy_options::overwrite_existing);
  fs::resize_file(head, 1000);
  info = ReadGgufInfoFromPrefix(head, "/data/local/tmp/m.gguf", size - 100, &short_copy);
  ASSERT_FALSE(info.ok());
  EXPECT_FALSE(short_copy);
  EXPECT_THAT(info.error().message, HasSubstr("needed for tensor data"));
}

TEST(GgufReader, TruncatedTensorDataNamesSizes) {
  const std::string path = WriteTestModel(TestDir(), true);
  fs::resize_file(path, fs::file_size(path) - 100);
  Result<GgufInfo> info = ReadGgufInfo(path);
  ASSERT_FALSE(info.ok());
  EXPECT_THAT(info.error().message, HasSubstr("needed for tensor data"));
}

TEST(GgufReader, AbsurdStringLengthIsAnErrorNotAnAllocation) {
  const std::string path = TestDir() + "/absurd.gguf";
  std::string bytes = "GGUF";
  Append<uint32_t>(&bytes, 3);
  Append<int64_t>(&bytes, 0);                       // tensors
  Append<int64_t>(&bytes, 1);                       // kv pairs
  Append<uint64_t>(&bytes, 0x7fffffffffffffffull);  // key length
  bytes += std::string(64, 'k');
  WriteBytes(path, bytes);
  Result<GgufInfo> info = ReadGgufInfo(path);
  ASSERT_FALSE(info.ok());
  EXPECT_THAT(info.error().message, HasSubstr("more than the whole file"));
  EXPECT_THAT(info.error().message, HasSubstr("corrupt"));
}

TEST(GgufReader, AbsurdCountsAreErrors) {
  const std::string dir = TestDir();
  for (bool tensors : {true, false}) {
    std::string bytes = "GGUF";
    Append<uint32_t>(&bytes, 3);
    Append<int64_t>(&bytes, tensors ? int64_t{1} << 40 : 0);
    Append<int64_t>(&bytes, tensors ? 0 : int64_t{1} << 40);
    WriteBytes(dir + "/c.gguf", bytes);
    Result<GgufInfo> info = ReadGgufInfo(dir + "/c.gguf");
    ASSERT_FALSE(info.ok());
    EXPECT_THAT(info.error().message, HasSubstr(tensors ? "tensors" : "key-value pairs"));
    EXPECT_THAT(info.error().message, HasSubstr("corrupt"));
  }
}

TEST(GgufReader, AbsurdArrayLengthIsAnError) {
  const std::string path = TestDir() + "/array.gguf";
  std::string bytes = "GGUF";
  Append<uint32_t>(&bytes, 3);
  Append<int64_t>(&bytes, 0);
  Append<int64_t>(&bytes, 1);
  Append<uint64_t>(&bytes, 3);
  bytes += "arr";
  Append<uint32_t>(&bytes, 9);  // array
  Append<uint32_t>(&bytes, 8);  // of strings
  Append<uint64_t>(&bytes, 1ull << 50);
  WriteBytes(path, bytes);
  Result<GgufInfo> info = ReadGgufInfo(path);
  ASSERT_FALSE(info.ok());
  EXPECT_THAT(info.error().message, HasSubstr("array 'arr' claims"));
}

TEST(QuantNames, FtypeNamesAsLlamaQuantizeSpellsThem) {
  EXPECT_EQ(FtypeName(0), "F32");
  EXPECT_EQ(FtypeName(1), "F16");
  EXPECT_EQ(FtypeName(2), "Q4_0");
  EXPECT_EQ(FtypeName(7), "Q8_0");
  EXPECT_EQ(FtypeName(10), "Q2_K");
  EXPECT_EQ(FtypeName(12), "Q3_K_M");
  EXPECT_EQ(FtypeName(15), "Q4_K_M");
  EXPECT_EQ(FtypeName(18), "Q6_K");
  EXPECT_EQ(FtypeName(19), "IQ2_XXS");
  EXPECT_EQ(FtypeName(32), "BF16");
  EXPECT_EQ(FtypeName(1024 | 7), "Q8_0");  // llama.cpp's "guessed" flag
  EXPECT_EQ(FtypeName(4), "FTYPE_4");      // removed from llama.cpp
  EXPECT_EQ(QuantNameOfTensorType("q4_K"), "Q4_K");
  EXPECT_EQ(QuantNameOfTensorType("f32"), "F32");
}

TEST(QuantNames, QuantizeTypesMatchCaseInsensitively) {
  EXPECT_EQ(CanonicalQuantizeType("q4_k_m"), "Q4_K_M");
  EXPECT_EQ(CanonicalQuantizeType("Q8_0"), "Q8_0");
  EXPECT_EQ(CanonicalQuantizeType("Q9_9"), "");
  // Every file type name of a quantize type is itself a quantize type.
  for (int ft : {0, 1, 2, 3, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 32}) {
    EXPECT_EQ(CanonicalQuantizeType(FtypeName(ft)), FtypeName(ft));
  }
}

TEST(LlamaTools, QuantizeRejectsUnknownTypeListingValidOnes) {
  const std::string path = WriteTestModel(TestDir(), true);
  Status s = QuantizeModel(path, "Q9_X", path + ".out");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("unknown quantization type 'Q9_X'"));
  EXPECT_THAT(s.error().message, HasSubstr("Q4_K_M"));
}

TEST(LlamaTools, MissingInputsAreReportedBeforeRunningTools) {
  const std::string dir = TestDir();
  Status q = QuantizeModel(dir + "/missing.gguf", "Q8_0", dir + "/out.gguf");
  ASSERT_FALSE(q.ok());
  EXPECT_THAT(q.error().message, HasSubstr("missing.gguf: no such file"));
  Status c = ImportLlama2c(dir + "/missing.bin", dir + "/tok.bin", dir + "/out.gguf");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message, HasSubstr("missing.bin: no such file"));
  EXPECT_FALSE(fs::exists(dir + "/out.gguf"));
}

std::string VocabDir() { return std::string(PIPETTE_LLAMA_PREFIX) + "/share/pipette"; }

#define SKIP_WITHOUT_VOCAB()                                                              \
  if (!fs::exists(VocabDir() + "/ggml-vocab-llama-spm.gguf")) {                           \
    GTEST_SKIP() << "no " << VocabDir() << "/ggml-vocab-llama-spm.gguf; build llama.cpp " \
                 << "with scripts/llama.sh";                                              \
  }

TEST(Synth, PresetsHaveConsistentShapes) {
  ASSERT_NE(FindSynthPreset("tiny"), nullptr);
  ASSERT_NE(FindSynthPreset("stories110m"), nullptr);
  EXPECT_EQ(FindSynthPreset("nope"), nullptr);
  for (const SynthPreset& p : SynthPresets()) {
    EXPECT_EQ(synth::CheckShape(p), "") << p.name;
    EXPECT_EQ(synth::CheckShape(SynthMiniature(p)), "") << p.name;
    EXPECT_EQ(synth::CheckShape(SynthMiniature(p, 256)), "") << p.name;
  }
  // stories110m with the 32000-token vocabulary (untied output): >= 100M parameters.
  EXPECT_EQ(SynthParamCount(*FindSynthPreset("stories110m"), 32000).total, 134105856u);
}

TEST(Synth, TinyIsDeterministicAndDescribesItself) {
  SKIP_WITHOUT_VOCAB();
  const std::string dir = TestDir();
  SynthOptions o;
  o.preset = "tiny";
  o.n_ctx = 4096;
  o.seed = 7;
  o.out_path = dir + "/a.gguf";
  Status s = WriteSyntheticModel(o);
  ASSERT_TRUE(s.ok()) << s.error().message;
  o.out_path = dir + "/b.gguf";
  ASSERT_TRUE(WriteSyntheticModel(o).ok());
  o.seed = 8;
  o.out_path = dir + "/c.gguf";
  ASSERT_TRUE(WriteSyntheticModel(o).ok());
  EXPECT_EQ(*Sha256OfFile(dir + "/a.gguf"), *Sha256OfFile(dir + "/b.gguf"));
  EXPECT_NE(*Sha256OfFile(dir + "/a.gguf"), *Sha256OfFile(dir + "/c.gguf"));

  Result<GgufInfo> info = ReadGgufInfo(dir + "/a.gguf");
  ASSERT_TRUE(info.ok()) << info.error().message;
  const SynthPreset& p = *FindSynthPreset("tiny");
  EXPECT_EQ(info->architecture, "llama");
  EXPECT_EQ(info->vocab_size, 32000u);
  EXPECT_EQ(info->params, SynthParamCount(p, 32000).total);
  EXPECT_EQ(info->params, 64u * 32000 * 2 + 2 * (4 * 64 * 64 + 3 * 64 * 256 + 2 * 64) + 64);
  EXPECT_EQ(info->n_ctx_train, 4096u);
  EXPECT_EQ(info->n_embd, 64u);
  EXPECT_EQ(info->n_layer, 2u);
  EXPECT_EQ(info->n_head_kv, 4u);
  EXPECT_EQ(info->n_ff, 256u);
  EXPECT_EQ(info->quant, "F16");
  EXPECT_EQ(info->file_type, 1);
  EXPECT_EQ(info->tensor_types.at("f32"), 2u * 2 + 1);  // norms
  EXPECT_EQ(info->tensor_types.at("f16"), 2u * 7 + 2);
  EXPECT_TRUE(info->synthetic);
  EXPECT_EQ(info->synth["preset"], "tiny");
  EXPECT_EQ(info->synth["seed"], 7);
  EXPECT_FALSE(fs::exists(dir + "/a.gguf.tmp-" + std::to_string(::getpid())));
}

TEST(Synth, F32AllTensorsF32) {
  SKIP_WITHOUT_VOCAB();
  SynthOptions o;
  o.preset = "tiny";
  o.type = "f32";
  o.out_path = TestDir() + "/f32.gguf";
  ASSERT_TRUE(WriteSyntheticModel(o).ok());
  Result<GgufInfo> info = ReadGgufInfo(o.out_path);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->quant, "F32");
  EXPECT_EQ(info->tensor_types.size(), 1u);
  EXPECT_EQ(info->tensor_bytes, info->params * 4);
}

TEST(Synth, BadOptionsAreClearErrors) {
  SynthOptions o;
  o.out_path = TestDir() + "/x.gguf";
  o.preset = "llama-70b";
  Status s = WriteSyntheticModel(o);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("unknown synthetic preset 'llama-70b'"));
  EXPECT_THAT(s.error().message, HasSubstr("stories15m"));
  o.preset = "tiny";
  o.type = "Q5_1";
  EXPECT_THAT(WriteSyntheticModel(o).error().message,
              HasSubstr("unknown synthetic model type 'Q5_1'; valid types: F32, F16, Q8_0, Q4_0, "
                        "Q4_K_M"));
  o.type = "F16";
  o.vocab_dir = TestDir() + "/novocab";
  EXPECT_THAT(WriteSyntheticModel(o).error().message, HasSubstr("ggml-vocab-llama-spm.gguf"));
  EXPECT_THAT(WriteSyntheticModel(o).error().message,
              HasSubstr("; set the vocabulary folder (vocab_dir) or PIPETTE_VOCAB_DIR to a folder "
                        "with ggml-vocab-*.gguf"));
  o.vocab_dir.clear();
  o.out_path = TestDir() + "/no/such/dir/x.gguf";
  EXPECT_THAT(WriteSyntheticModel(o).error().message, HasSubstr("does not exist"));
  o.out_path = "/dev/full";  // a device must never be replaced by a file
  EXPECT_THAT(WriteSyntheticModel(o).error().message, HasSubstr("not a regular file"));
}

// llama.cpp itself loads and runs the synthetic model.
TEST(Synth, LlamaBenchRunsTinyModel) {
  SKIP_WITHOUT_VOCAB();
  const std::string bench = LlamaToolsDir() + "/llama-bench";
  if (!fs::exists(bench)) GTEST_SKIP() << "no " << bench;
  SynthOptions o;
  o.preset = "tiny";
  o.out_path = TestDir() + "/tiny.gguf";
  ASSERT_TRUE(WriteSyntheticModel(o).ok());
  std::string output;
  Result<ExitInfo> exit =
      RunTool({bench, "-m", o.out_path, "-p", "16", "-n", "4", "-r", "1", "-t", "1"}, &output);
  ASSERT_TRUE(exit.ok());
  EXPECT_TRUE(exit->exited && exit->code == 0) << output;
  EXPECT_THAT(output, HasSubstr("pp16"));
}

// The llama presets of earlier versions keep their exact bytes: results recorded on them name
// the same file (its SHA-256) after the writer learned other architectures.
TEST(Synth, EarlierPresetsKeepTheirBytes) {
  SKIP_WITHOUT_VOCAB();
  SynthOptions o;
  o.preset = "tiny";
  o.n_ctx = 4096;
  o.seed = 7;
  o.out_path = TestDir() + "/tiny.gguf";
  ASSERT_TRUE(WriteSyntheticModel(o).ok());
  EXPECT_EQ(*Sha256OfFile(o.out_path),
            "00dc8adf1daaa328961f47dfdbc69c4eb2395baaea2c731d681510c200ea4372");
  o = {};
  o.preset = "stories15m";
  o.out_path = TestDir() + "/s15.gguf";
  ASSERT_TRUE(WriteSyntheticModel(o).ok());
  EXPECT_EQ(*Sha256OfFile(o.out_path),
            "293eef6eb49ec0954023ec0b47a104678d9150d396a11deac97c2b85bee4d391");
}

// Each preset's file carries its real model's chat template in tokenizer.chat_template (replacing
// the one a vocabulary file brings: ggml-vocab-qwen2.gguf has Qwen2's), and a preset without one
// carries none.
TEST(Synth, PresetsCarryTheirModelsChatTemplates) {
  SKIP_WITHOUT_VOCAB();
  const auto template_of = [](const std::string& path) -> std::string {
    gguf_init_params params = {/*no_alloc=*/true, /*ctx=*/nullptr};
    gguf_context* g = gguf_init_from_file(path.c_str(), params);
    if (!g) return "<unreadable>";
    const int64_t k = gguf_find_key(g, "tokenizer.chat_template");
    std::string t = k < 0 ? "" : gguf_get_val_str(g, k);
    gguf_free(g);
    return t;
  };
  const std::string dir = TestDir();
  for (const char* name : {"qwen3-0.6b", "smollm2-135m", "granite-4.0-350m", "tiny"}) {
    const SynthPreset mini = SynthMiniature(*FindSynthPreset(name));
    SynthOptions o;
    o.type = "Q8_0";
    o.out_path = dir + "/" + name + ".gguf";
    ASSERT_TRUE(WriteSyntheticModel(mini, o).ok()) << name;
    EXPECT_EQ(template_of(o.out_path), mini.chat_template) << name;
  }
  EXPECT_THAT(FindSynthPreset("qwen3-0.6b")->chat_template, HasSubstr("<|im_start|>"));
  EXPECT_THAT(FindSynthPreset("granite-4.0-350m")->chat_template, HasSubstr("<|start_of_role|>"));
  EXPECT_THAT(FindSynthPreset("smollm2-360m")->chat_template, HasSubstr("named SmolLM"));
  for (const char* none : {"tiny", "stories15m", "stories110m", "llama-160m", "tinyllama-1.1b"}) {
    EXPECT_EQ(FindSynthPreset(none)->chat_template, "") << none;
  }
  for (const SynthPreset& p : SynthPresets()) {
    EXPECT_EQ(p.chat_template.empty(), p.chat_template_source.empty()) << p.name;
  }
}

// Parameter counts against the published ones (synthetic-architectures.md section 2).
TEST(Synth, ParameterCountsOfRealShapes) {
  auto count = [](const std::string& name) {
    const SynthPreset& p = *FindSynthPreset(name);
    return SynthParamCount(p, p.n_vocab);
  };
  // MiniCPM5-1B: 1,080,632,832 parameters, exactly (litert-community/MiniCPM5-1B).
  EXPECT_EQ(count("minicpm5-1b").total, 1080632832u);
  EXPECT_EQ(count("minicpm5-1b").active, 1080632832u);
  // LFM2-8B-A1B: "8.3B total parameters and 1.5B active".
  EXPECT_NEAR(count("lfm2-8b-a1b").total / 1e9, 8.34, 0.02);
  EXPECT_NEAR(count("lfm2-8b-a1b").active / 1e9, 1.56, 0.02);
  // Qwen3-30B-A3B: 30.5B total, 3.3B active.
  EXPECT_NEAR(count("qwen3-30b-a3b").total / 1e9, 30.5, 0.1);
  EXPECT_NEAR(count("qwen3-30b-a3b").active / 1e9, 3.3, 0.1);
  EXPECT_NEAR(count("granite-4.0-h-350m").total / 1e6, 340, 10);
  EXPECT_NEAR(count("granite-4.0-350m").total / 1e6, 352, 10);
  EXPECT_NEAR(count("lfm2-1.2b").total / 1e9, 1.17, 0.01);
  EXPECT_NEAR(count("qwen3.5-4b").total / 1e9, 4.2, 0.1);
  EXPECT_NEAR(count("ministral-3-3b").total / 1e9, 3.43, 0.02);
  EXPECT_NEAR(count("smollm2-135m").total / 1e6, 134.5, 1);
  EXPECT_NEAR(count("smollm2-360m").total / 1e6, 361.8, 1);
}

TEST(Synth, PadsTheVocabularyToTheRealSize) {
  SKIP_WITHOUT_VOCAB();
  SynthOptions o;
  o.out_path = TestDir() + "/q35.gguf";
  const SynthPreset mini = SynthMiniature(*FindSynthPreset("qwen3.5-4b"));
  ASSERT_TRUE(WriteSyntheticModel(mini, o).ok());
  Result<GgufInfo> info = ReadGgufInfo(o.out_path);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->architecture, "qwen35");
  EXPECT_EQ(info->vocab_size, 248320u);  // ggml-vocab-qwen35.gguf has 151936
  EXPECT_EQ(info->params, SynthParamCount(mini, 248320).total);
  EXPECT_EQ(info->n_ctx_train, 262144u);
  gguf_init_params params = {true, nullptr};
  gguf_context* g = gguf_init_from_file(o.out_path.c_str(), params);
  ASSERT_NE(g, nullptr);
  const int64_t tokens = gguf_find_key(g, "tokenizer.ggml.tokens");
  EXPECT_STREQ(gguf_get_arr_str(g, tokens, 248319), "[PAD248319]");
  const int64_t types = gguf_find_key(g, "tokenizer.ggml.token_type");
  ASSERT_GE(types, 0);
  EXPECT_EQ(gguf_get_arr_n(g, types), 248320u);
  EXPECT_EQ(static_cast<const int32_t*>(gguf_get_arr_data(g, types))[248319], 5);  // UNUSED
  gguf_free(g);
}

// Tensor name -> ggml type name of every tensor of a GGUF file.
std::map<std::string, std::string> TensorTypesOf(const std::string& path) {
  std::map<std::string, std::string> out;
  gguf_init_params params = {true, nullptr};
  gguf_context* g = gguf_init_from_file(path.c_str(), params);
  if (g == nullptr) return out;
  for (int64_t i = 0; i < gguf_get_n_tensors(g); ++i) {
    out[gguf_get_tensor_name(g, i)] = ggml_type_name(gguf_get_tensor_type(g, i));
  }
  gguf_free(g);
  return out;
}

// A file written directly in a quantized type has, tensor by tensor, the types llama-quantize
// gives the F16 file of the same shape: every architecture in Q4_K_M (the type with the most
// per-tensor rules); Q8_0 and Q4_0 too for an untied llama and an 8-expert mixture (the rules
// that bump attention and output tensors with 8 experts apply to every type).
class SynthQuantTypes : public ::testing::TestWithParam<std::string> {};

TEST_P(SynthQuantTypes, DirectQuantizationMatchesLlamaQuantize) {
  SKIP_WITHOUT_VOCAB();
  if (!fs::exists(LlamaToolsDir() + "/llama-quantize")) {
    GTEST_SKIP() << "no llama-quantize in " << LlamaToolsDir();
  }
  const std::string name = GetParam();
  const std::string dir = TestDir();
  // Widths of 256 so that K-quant blocks fit most rows (the rest take llama-quantize's
  // fallbacks); the 32000-token vocabulary keeps the files small (types do not depend on it).
  SynthPreset shape = SynthMiniature(*FindSynthPreset(name), 256);
  shape.vocab = "llama-spm";
  shape.n_vocab = 0;
  SynthOptions o;
  o.out_path = dir + "/F16.gguf";
  ASSERT_TRUE(WriteSyntheticModel(shape, o).ok());
  std::vector<std::string> types = {"Q4_K_M"};
  if (name == "minicpm5-1b" || name == "lfm2-8b-a1b") types = {"Q8_0", "Q4_0", "Q4_K_M"};
  for (const std::string& type : types) {
    const std::string ref = dir + "/" + type + "-ref.gguf";
    Status q = QuantizeModel(o.out_path, type, ref);
    ASSERT_TRUE(q.ok()) << type << ": " << q.error().message;
    SynthOptions direct = o;
    direct.type = type;
    direct.out_path = dir + "/" + type + ".gguf";
    Status s = WriteSyntheticModel(shape, direct);
    ASSERT_TRUE(s.ok()) << type << ": " << s.error().message;
    const auto want = TensorTypesOf(ref);
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(TensorTypesOf(direct.out_path), want) << type;
    Result<GgufInfo> a = ReadGgufInfo(ref), b = ReadGgufInfo(direct.out_path);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(b->tensor_bytes, a->tensor_bytes) << type;
    EXPECT_EQ(b->quant, type);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryArchitecture, SynthQuantTypes,
                         ::testing::Values("granite-4.0-h-350m", "granite-4.0-350m", "lfm2-350m",
                                           "lfm2-8b-a1b", "qwen3-0.6b", "qwen3-30b-a3b",
                                           "qwen3.5-4b", "ministral-3-3b", "minicpm5-1b",
                                           "smollm2-135m"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

TEST(Synth, ContextBeyondTheRealModelsIsRefused) {
  SynthOptions o;
  o.preset = "granite-4.0-350m";
  o.n_ctx = 65536;
  o.out_path = TestDir() + "/g.gguf";
  Status s = WriteSyntheticModel(o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "a context of 65536 tokens was asked for, but granite-4.0-350m "
            "(ibm-granite/granite-4.0-350m) has a context of 32768 tokens; ask for at most that");
  EXPECT_TRUE(s.error().stage.empty());
  EXPECT_FALSE(fs::exists(o.out_path));
  SynthPreset bad = *FindSynthPreset("qwen3-0.6b");
  bad.arch = "gpt5";
  EXPECT_THAT(WriteSyntheticModel(bad, o).error().message,
              HasSubstr("unknown synthetic architecture 'gpt5'; known architectures: llama, "
                        "granite, granitehybrid, lfm2, lfm2moe, qwen3, qwen3moe, qwen35, "
                        "mistral3"));
}

// A disk that fills while the model is written: a one-line error naming the file, and no file
// left under either name. A real full file system: a small tmpfs (mounting needs root; elsewhere
// the test skips).
TEST(Synth, FullDiskLeavesNoFile) {
  SKIP_WITHOUT_VOCAB();
  const std::string dir = TestDir() + "/small";
  fs::create_directories(dir);
  if (mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=4m") != 0) {
    GTEST_SKIP() << "cannot mount a small tmpfs at " << dir << " (" << std::strerror(errno)
                 << "); run as root to test a full disk";
  }
  SynthOptions o;
  o.preset = "stories15m";  // 48 MiB in F16
  o.out_path = dir + "/s15.gguf";
  Status s = WriteSyntheticModel(o);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename().string());
  umount(dir.c_str());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr(o.out_path + ": writing the synthetic model failed ("));
  EXPECT_THAT(s.error().message, HasSubstr("No space left on device"));
  EXPECT_EQ(s.error().stage, "prepare");
  EXPECT_TRUE(left.empty()) << left.front();
}

TEST(LlamaTools, ImportAndQuantizeStories260K) {
  const std::string src = pipette::testing::DataDir() + "/models/stories260K";
  if (!fs::exists(src + "/stories260K.bin")) {
    GTEST_SKIP() << pipette::testing::NeedData("stories260K");
  }
  if (!fs::exists(LlamaToolsDir() + "/llama-convert-llama2c-to-ggml")) {
    GTEST_SKIP() << "no llama.cpp tools in " << LlamaToolsDir();
  }
  const std::string dir = TestDir();
  const std::string f32 = dir + "/stories260K-F32.gguf";
  Status s = ImportLlama2c(src + "/stories260K.bin", src + "/tok512.bin", f32);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(fs::file_size(f32), 1185280u);  // the converter's 1185376 less two keys, realigned
  Result<GgufInfo> info = ReadGgufInfo(f32);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->architecture, "llama");
  EXPECT_EQ(info->n_ctx_train, 512u);
  EXPECT_EQ(info->vocab_size, 512u);
  EXPECT_EQ(info->quant, "F32");
  EXPECT_EQ(info->tensor_types.size(), 1u);

  const std::string q8 = dir + "/stories260K-Q8_0.gguf";
  s = QuantizeModel(f32, "q8_0", q8);
  ASSERT_TRUE(s.ok()) << s.error().message;
  Result<GgufInfo> qinfo = ReadGgufInfo(q8);
  ASSERT_TRUE(qinfo.ok()) << qinfo.error().message;
  EXPECT_EQ(qinfo->quant, "Q8_0");
  EXPECT_EQ(qinfo->file_type, 7);
  EXPECT_FALSE(qinfo->quant_inferred);
  EXPECT_EQ(qinfo->params, info->params);
}

// The special token ids a GGUF file names: tokenizer.ggml.*_token_id -> id (as uint64).
std::map<std::string, uint64_t> TokenIdKeys(const std::string& path) {
  gguf_init_params params = {/*no_alloc=*/true, /*ctx=*/nullptr};
  gguf_context* g = gguf_init_from_file(path.c_str(), params);
  std::map<std::string, uint64_t> out;
  if (g == nullptr) return out;
  for (int64_t i = 0; i < gguf_get_n_kv(g); ++i) {
    const std::string key = gguf_get_key(g, i);
    if (key.rfind("tokenizer.ggml.", 0) != 0 || key.find("_token_id") == std::string::npos) {
      continue;
    }
    if (gguf_get_kv_type(g, i) == GGUF_TYPE_UINT32) out[key] = gguf_get_val_u32(g, i);
  }
  gguf_free(g);
  return out;
}

// Issue 27: "`results show` and every dashboard result page show "load: bad special token:
// 'tokenizer.ggml.seperator_token_id' = 4294967295" ... for a model pipette's own
// `import-llama2c` wrote". The converter writes -1 for tokens a llama2.c model does not have.
TEST(LlamaTools, ImportedLlama2cModelNamesOnlyTokensItHas) {
  const std::string src = pipette::testing::DataDir() + "/models/stories260K";
  if (!fs::exists(src + "/stories260K.bin")) {
    GTEST_SKIP() << pipette::testing::NeedData("stories260K");
  }
  if (!fs::exists(LlamaToolsDir() + "/llama-convert-llama2c-to-ggml")) {
    GTEST_SKIP() << "no llama.cpp tools in " << LlamaToolsDir();
  }
  const std::string f32 = TestDir() + "/stories260K-F32.gguf";
  Status s = ImportLlama2c(src + "/stories260K.bin", src + "/tok512.bin", f32);
  ASSERT_TRUE(s.ok()) << s.error().message;
  Result<GgufInfo> info = ReadGgufInfo(f32);
  ASSERT_TRUE(info.ok()) << info.error().message;
  const std::map<std::string, uint64_t> ids = TokenIdKeys(f32);
  EXPECT_EQ(ids, (std::map<std::string, uint64_t>{{"tokenizer.ggml.bos_token_id", 1},
                                                  {"tokenizer.ggml.eos_token_id", 2},
                                                  {"tokenizer.ggml.unknown_token_id", 0}}));
  for (const auto& [key, id] : ids) EXPECT_LT(id, info->vocab_size) << key;
}

// A GGUF file of a 4-token vocabulary naming bos 1 and separator -1, with one F32 tensor of 8
// values 0..7.
void WriteTokenIdModel(const std::string& path) {
  ggml_init_params p = {/*mem_size=*/1 << 16, /*mem_buffer=*/nullptr, /*no_alloc=*/false};
  ggml_context* ctx = ggml_init(p);
  ggml_tensor* t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
  ggml_set_name(t, "weights");
  for (int i = 0; i < 8; ++i) static_cast<float*>(t->data)[i] = static_cast<float>(i);
  gguf_context* g = gguf_init_empty();
  const char* tokens[] = {"<unk>", "<s>", "</s>", "a"};
  gguf_set_arr_str(g, "tokenizer.ggml.tokens", tokens, 4);
  gguf_set_val_u32(g, "tokenizer.ggml.bos_token_id", 1);
  gguf_set_val_u32(g, "tokenizer.ggml.seperator_token_id", 4294967295u);
  gguf_set_val_str(g, "general.architecture", "llama");
  gguf_add_tensor(g, t);
  ASSERT_TRUE(gguf_write_to_file(g, path.c_str(), /*only_meta=*/false));
  gguf_free(g);
  ggml_free(ctx);
}

TEST(GgufPatch, DropInvalidTokenIdsKeepsTheRestAndTheTensorData) {
  const std::string path = TestDir() + "/ids.gguf";
  WriteTokenIdModel(path);
  auto dropped = DropInvalidTokenIds(path);
  ASSERT_TRUE(dropped.ok()) << dropped.error().message;
  EXPECT_EQ(*dropped, std::vector<std::string>{"tokenizer.ggml.seperator_token_id"});
  EXPECT_EQ(TokenIdKeys(path),
            (std::map<std::string, uint64_t>{{"tokenizer.ggml.bos_token_id", 1}}));
  // The tensor's data moved with the shorter header and reads as it was written.
  ggml_context* data = nullptr;
  gguf_init_params params = {/*no_alloc=*/false, /*ctx=*/&data};
  gguf_context* g = gguf_init_from_file(path.c_str(), params);
  ASSERT_NE(g, nullptr);
  ggml_tensor* t = ggml_get_tensor(data, "weights");
  ASSERT_NE(t, nullptr);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(static_cast<const float*>(t->data)[i], static_cast<float>(i));
  }
  gguf_free(g);
  ggml_free(data);
  EXPECT_FALSE(fs::exists(path + ".ids"));
  // Nothing left to drop: the file is not rewritten.
  const auto before = fs::last_write_time(path);
  auto again = DropInvalidTokenIds(path);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->empty());
  EXPECT_EQ(fs::last_write_time(path), before);
}

TEST(LlamaTools, RejectsFileThatIsNotALlama2cCheckpoint) {
  const std::string dir = TestDir();
  WriteBytes(dir + "/model.bin", std::string(64, '\0'));
  WriteBytes(dir + "/tok.bin", std::string(16, '\0'));
  Status s = ImportLlama2c(dir + "/model.bin", dir + "/tok.bin", dir + "/out.gguf");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("model.bin: not a llama2.c checkpoint"));
  EXPECT_EQ(s.error().stage, "");  // bad input
}

TEST(LlamaTools, TruncatedLlama2cCheckpoint) {
  const std::string src = pipette::testing::DataDir() + "/models/stories260K";
  if (!fs::exists(src + "/stories260K.bin")) GTEST_SKIP() << pipette::testing::NeedData("stories260K");
  const std::string dir = TestDir();
  fs::copy_file(src + "/stories260K.bin", dir + "/cut.bin");
  fs::resize_file(dir + "/cut.bin", 500000);
  Status s = ImportLlama2c(dir + "/cut.bin", src + "/tok512.bin", dir + "/out.gguf");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("checkpoint is truncated (500000 of 1056540 bytes)"));
}

// A stand-in tool directory (PIPETTE_LLAMA_BIN_DIR) with a llama-quantize that runs `script`.
class FakeTools {
 public:
  FakeTools(const std::string& dir, const std::string& script) {
    const std::string tool = dir + "/llama-quantize";
    WriteBytes(tool, "#!/bin/sh\n" + script);
    fs::permissions(tool, fs::perms::owner_all);
    setenv("PIPETTE_LLAMA_BIN_DIR", dir.c_str(), 1);
  }
  ~FakeTools() { unsetenv("PIPETTE_LLAMA_BIN_DIR"); }
};

TEST(LlamaTools, ToolFailureCarriesLastLineOfOutput) {
  const std::string dir = TestDir();
  const std::string model = WriteTestModel(dir, true);
  FakeTools tools(dir, "echo loading\necho 'error: disk on fire' >&2\nexit 3\n");
  Status s = QuantizeModel(model, "Q8_0", dir + "/out.gguf");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "llama-quantize failed (exit code 3): error: disk on fire");
  EXPECT_EQ(s.error().stage, "prepare");
  EXPECT_FALSE(fs::exists(dir + "/out.gguf"));
}

TEST(LlamaTools, ToolThatWritesNoModelIsAFailure) {
  const std::string dir = TestDir();
  const std::string model = WriteTestModel(dir, true);
  FakeTools tools(dir, "echo garbage > \"$2\"\necho done\n");
  Status s = QuantizeModel(model, "Q8_0", dir + "/out.gguf");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("llama-quantize did not write a valid model"));
  EXPECT_THAT(s.error().message, HasSubstr("not a GGUF file"));
  EXPECT_FALSE(fs::exists(dir + "/out.gguf"));
  for (const auto& entry : fs::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().string().find(".tmp-"), std::string::npos) << entry.path();
  }
}

TEST(LlamaTools, MissingToolIsAFailureNamingIt) {
  const std::string dir = TestDir();
  const std::string model = WriteTestModel(dir, true);
  setenv("PIPETTE_LLAMA_BIN_DIR", (dir + "/nothing").c_str(), 1);
  Status s = QuantizeModel(model, "Q8_0", dir + "/out.gguf");
  unsetenv("PIPETTE_LLAMA_BIN_DIR");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("llama.cpp tool llama-quantize not found"));
}

}  // namespace
}  // namespace pipette
