#include "driver/engine.h"

#include "driver/argmax.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "driver/argmax.h"
#include "driver/chat_prompt.h"
#include "ggml-cpu.h"
#include "ggml.h"
#include "llama.h"
#include "pipette/kl.h"
#include "platform/cpu_affinity.h"

namespace pipette::driver {
namespace {

using Clock = std::chrono::steady_clock;

int64_t NsSince(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

Result<ggml_type> ParseKvType(const std::string& name) {
  for (int t = 0; t < GGML_TYPE_COUNT; ++t) {
    const char* n = ggml_type_name(static_cast<ggml_type>(t));
    if (n && name == n) return static_cast<ggml_type>(t);
  }
  return MakeError("unknown KV cache type '" + name + "'; use a ggml type name such as f16, q8_0",
                   "load");
}

Result<llama_flash_attn_type> ParseFlashAttn(const std::string& v) {
  if (v == "auto") return LLAMA_FLASH_ATTN_TYPE_AUTO;
  if (v == "on") return LLAMA_FLASH_ATTN_TYPE_ENABLED;
  if (v == "off") return LLAMA_FLASH_ATTN_TYPE_DISABLED;
  return MakeError("unknown flash_attn value '" + v + "'; use auto, on or off", "load");
}

}  // namespace

struct Engine::Sampling {
  llama_sampler* chain = nullptr;
  Clock::time_point t0;
  int32_t pending = -1;  // the last sampled token, not yet decoded
  int generated = 0;
  int max_tokens = 0;
  int64_t decode_ns = 0;
  int64_t first_token_ns = -1;
  bool done = false;
  // Parallel completions: the position of `pending` in its sequence, and the check interval.
  int n_past = 0;
  int check_every = 0;
  ~Sampling() {
    if (chain) llama_sampler_free(chain);
  }
};

Engine::Engine() { llama_backend_init(); }

Engine::~Engine() {
  sampling_.reset();
  seqs_.clear();
  prompter_.reset();
  if (ctx_) llama_free(ctx_);
  if (model_) llama_model_free(model_);
  if (threadpool_) ggml_threadpool_free(threadpool_);
  llama_backend_free();
}

Status Engine::Load(const std::string& path, const EngineSettings& requested) {
  if (model_) return MakeError("model already loaded; start a new driver per cell", "load");
  settings_ = requested;
  if (settings_.threads < 1) return MakeError("threads must be at least 1", "load");
  if (settings_.n_seq < 1 || settings_.n_seq > 64) {
    return MakeError("n_seq must be from 1 to 64, not " + std::to_string(settings_.n_seq), "load");
  }
  auto type_k = ParseKvType(settings_.type_k);
  if (!type_k) return type_k.error();
  auto type_v = ParseKvType(settings_.type_v);
  if (!type_v) return type_v.error();
  auto fa = ParseFlashAttn(settings_.flash_attn);
  if (!fa) return fa.error();
  if (settings_.n_gpu_layers < 0) settings_.n_gpu_layers = llama_supports_gpu_offload() ? 999 : 0;
  if (!settings_.cpus.empty()) {
    auto cpus = ParseCpuList(settings_.cpus);
    if (!cpus) return MakeError(cpus.error().message, "load");
    if (auto s = RestrictToCpus(*cpus); !s) return MakeError("cpus: " + s.error().message, "load");
  }

  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = settings_.n_gpu_layers;
  mp.load_mode = settings_.mmap ? LLAMA_LOAD_MODE_MMAP : LLAMA_LOAD_MODE_NONE;
  model_ = llama_model_load_from_file(path.c_str(), mp);
  if (!model_) {
    return MakeError("llama.cpp could not load " + path, "load");
  }
  vocab_ = llama_model_get_vocab(model_);
  prompter_ = std::make_unique<ChatPrompter>(model_, path);
  if (settings_.n_ctx <= 0) settings_.n_ctx = llama_model_n_ctx_train(model_);

  llama_context_params cp = llama_context_default_params();
  // n_ctx is one sequence's: with n_seq sequences llama.cpp splits its n_ctx into n_seq KV
  // streams (kv_unified off, the default), each sequence attending to its own cells only.
  cp.n_ctx = static_cast<uint32_t>(settings_.n_ctx) * static_cast<uint32_t>(settings_.n_seq);
  cp.n_seq_max = static_cast<uint32_t>(settings_.n_seq);
  cp.kv_unified = false;
  cp.n_batch = static_cast<uint32_t>(settings_.n_batch);
  cp.n_ubatch = static_cast<uint32_t>(settings_.n_ubatch);
  cp.n_threads = settings_.threads;
  cp.n_threads_batch = settings_.threads;
  cp.flash_attn_type = *fa;
  cp.type_k = *type_k;
  cp.type_v = *type_v;
  cp.no_perf = true;
  ctx_ = llama_init_from_model(model_, cp);
  if (!ctx_) return MakeError("llama.cpp could not create a context for " + path, "load");

  // One persistent threadpool, as llama-bench attaches: without it ggml starts threads for every
  // graph, which would put thread creation inside each timed decode step.
  ggml_threadpool_params tpp = ggml_threadpool_params_default(settings_.threads);
  tpp.poll = static_cast<uint32_t>(settings_.poll);
  threadpool_ = ggml_threadpool_new(&tpp);
  if (!threadpool_) return MakeError("could not create a threadpool", "load");
  llama_attach_threadpool(ctx_, threadpool_, nullptr);

  char desc[256];
  llama_model_desc(model_, desc, sizeof desc);
  facts_.desc = desc;
  facts_.n_params = llama_model_n_params(model_);
  facts_.size_bytes = llama_model_size(model_);
  facts_.n_vocab = llama_vocab_n_tokens(vocab_);
  facts_.n_ctx_train = llama_model_n_ctx_train(model_);
  facts_.add_bos = llama_vocab_get_add_bos(vocab_);
  for (int t = 0; t < facts_.n_vocab; ++t) {
    if (llama_vocab_is_eog(vocab_, t)) eog_tokens_.push_back(t);
  }
  if (static_cast<int>(eog_tokens_.size()) >= facts_.n_vocab) {
    return MakeError("every token of the vocabulary ends generation", "load");
  }
  seqs_.resize(static_cast<size_t>(settings_.n_seq));
  return Status::Ok();
}

Result<std::vector<int32_t>> Engine::Tokenize(const std::string& text, bool add_special) const {
  if (!vocab_) return MakeError("no model loaded", "tokenize");
  const int32_t len = static_cast<int32_t>(text.size());
  std::vector<int32_t> tokens(text.size() + 2);
  int32_t n = llama_tokenize(vocab_, text.data(), len, tokens.data(),
                             static_cast<int32_t>(tokens.size()), add_special, false);
  if (n < 0) {
    tokens.resize(static_cast<size_t>(-n));
    n = llama_tokenize(vocab_, text.data(), len, tokens.data(), static_cast<int32_t>(tokens.size()),
                       add_special, false);
  }
  if (n < 0) return MakeError("tokenization failed", "tokenize");
  tokens.resize(static_cast<size_t>(n));
  return tokens;
}

EngineCounts Engine::Counts() const {
  if (!ctx_) return {};
  return {llama_n_ctx_seq(ctx_), llama_n_batch(ctx_), llama_n_ubatch(ctx_), llama_n_seq_max(ctx_),
          llama_n_ctx(ctx_)};
}

Status Engine::WriteLogProbs(const std::vector<int32_t>& tokens, const std::string& path) {
  if (!ctx_) return MakeError("no model loaded", "logprobs");
  if (tokens.empty()) return MakeError("logprobs needs at least one token", "logprobs");
  if (auto s = CheckFits(tokens.size()); !s) return Error{s.error().message, "logprobs"};
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return MakeError("cannot write " + path, "logprobs");
  const uint32_t header[2] = {static_cast<uint32_t>(tokens.size()),
                              static_cast<uint32_t>(facts_.n_vocab)};
  bool ok = std::fwrite("PPLP", 1, 4, f) == 4 && std::fwrite(header, 4, 2, f) == 2;
  ClearKvCache();
  const int n = static_cast<int>(tokens.size());
  const int chunk_max = std::min(settings_.n_batch, settings_.n_ubatch);
  llama_batch batch = llama_batch_init(chunk_max, 0, 1);
  std::vector<float> row(static_cast<size_t>(facts_.n_vocab));
  for (int done = 0; ok && done < n;) {
    const int chunk = std::min(n - done, chunk_max);
    batch.n_tokens = chunk;
    for (int j = 0; j < chunk; ++j) {
      batch.token[j] = tokens[static_cast<size_t>(done + j)];
      batch.pos[j] = done + j;
      batch.n_seq_id[j] = 1;
      batch.seq_id[j][0] = 0;
      batch.logits[j] = 1;
    }
    if (llama_decode(ctx_, batch) != 0) {
      ok = false;
      break;
    }
    for (int j = 0; ok && j < chunk; ++j) {
      const float* logits = llama_get_logits_ith(ctx_, j);
      LogSoftmax(std::span<const float>(logits, row.size()), row);
      ok = std::fwrite(row.data(), sizeof(float), row.size(), f) == row.size();
    }
    done += chunk;
  }
  llama_batch_free(batch);
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) return MakeError("evaluating or writing log-probabilities to " + path + " failed",
                            "logprobs");
  return Status::Ok();
}

void Engine::ClearKvCache() {
  // Parallel completions lose their cells with the cache: they end too.
  for (auto& s : seqs_) s.reset();
  if (ctx_) llama_memory_clear(llama_get_memory(ctx_), true);
}

Status Engine::CheckFits(size_t n_tokens) const {
  if (n_tokens > static_cast<size_t>(settings_.n_ctx)) {
    return MakeError("shape needs " + std::to_string(n_tokens) + " tokens but the context holds " +
                     std::to_string(settings_.n_ctx) + "; raise n_ctx");
  }
  return Status::Ok();
}

Status Engine::DecodeBatch(const int32_t* tokens, int n) {
  for (int done = 0; done < n;) {
    const int chunk = std::min(n - done, settings_.n_batch);
    const int rc =
        llama_decode(ctx_, llama_batch_get_one(const_cast<int32_t*>(tokens + done), chunk));
    if (rc != 0) return MakeError("llama_decode returned " + std::to_string(rc));
    done += chunk;
  }
  llama_synchronize(ctx_);
  return Status::Ok();
}

int32_t Engine::GreedyNext() const {
  // End-of-generation tokens are suppressed (exactly D tokens, never an early stop) by masking
  // their logits in llama.cpp's output buffer, which is rewritten by the next llama_decode; the
  // argmax is then one branch-free pass over the vocabulary.
  float* logits = llama_get_logits_ith(ctx_, -1);
  for (int32_t t : eog_tokens_) logits[t] = -INFINITY;
  return ArgMax(logits, facts_.n_vocab);
}

Status Engine::CheckLogitsFinite(size_t n_tokens, const char* stage) const {
  // Outside the timed steps: once a hidden state is NaN or infinite every later logit is too, so
  // the last position tells whether the model ran away (e.g. a recurrent state that grew).
  const float* logits = llama_get_logits_ith(ctx_, -1);
  for (int t = 0; t < facts_.n_vocab; ++t) {
    if (!std::isfinite(logits[t]) && !(std::isinf(logits[t]) && logits[t] < 0)) {
      return MakeError("the model's logits are not finite (NaN or infinity) after " +
                           std::to_string(n_tokens) +
                           " tokens: its weights or the runtime's arithmetic broke down",
                       stage);
    }
  }
  return Status::Ok();
}

std::string Engine::Piece(int32_t token) const {
  char buf[256];
  const int n = llama_token_to_piece(vocab_, token, buf, sizeof buf, 0, false);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

Result<int64_t> Engine::Prefill(const std::vector<int32_t>& tokens) {
  if (!ctx_) return MakeError("no model loaded", "prefill");
  if (tokens.empty()) return MakeError("prefill needs at least one token", "prefill");
  if (auto s = CheckFits(tokens.size()); !s) return Error{s.error().message, "prefill"};
  ClearKvCache();
  const auto t0 = Clock::now();
  if (auto s = DecodeBatch(tokens.data(), static_cast<int>(tokens.size())); !s) {
    return Error{s.error().message, "prefill"};
  }
  const int64_t ns = NsSince(t0);
  if (auto s = CheckLogitsFinite(tokens.size(), "prefill"); !s) return s.error();
  return ns;
}

Result<DecodeTiming> Engine::Decode(const std::vector<int32_t>& context, int n) {
  if (!ctx_) return MakeError("no model loaded", "decode");
  if (context.empty() || n < 1) return MakeError("decode needs a context and n >= 1", "decode");
  if (auto s = CheckFits(context.size() + static_cast<size_t>(n)); !s) {
    return Error{s.error().message, "decode"};
  }
  ClearKvCache();
  if (auto s = DecodeBatch(context.data(), static_cast<int>(context.size())); !s) {
    return Error{"context prefill: " + s.error().message, "decode"};
  }
  DecodeTiming out;
  out.step_ns.reserve(static_cast<size_t>(n));
  out.tokens.reserve(static_cast<size_t>(n));
  int32_t token = GreedyNext();
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    if (auto s = DecodeBatch(&token, 1); !s) return Error{s.error().message, "decode"};
    token = GreedyNext();
    out.step_ns.push_back(NsSince(t0));
    out.tokens.push_back(token);
  }
  if (auto s = CheckLogitsFinite(context.size() + static_cast<size_t>(n), "decode"); !s) {
    return s.error();
  }
  return out;
}

Result<GenerateTiming> Engine::Generate(const std::string& text, int n, bool add_special) {
  if (!ctx_) return MakeError("no model loaded", "generate");
  if (n < 1) return MakeError("generate needs n >= 1", "generate");
  if (settings_.test_leak_bytes > 0) {
    const auto bytes = static_cast<size_t>(settings_.test_leak_bytes);
    leaked_.emplace_back(new char[bytes]);
    std::memset(leaked_.back().get(), 1, bytes);
  }
  ClearKvCache();
  GenerateTiming out;
  const auto t0 = Clock::now();
  auto prompt = Tokenize(text, add_special);
  if (!prompt) return Error{prompt.error().message, "generate"};
  if (prompt->empty()) return MakeError("the prompt tokenizes to nothing", "generate");
  if (auto s = CheckFits(prompt->size() + static_cast<size_t>(n)); !s) {
    return Error{s.error().message, "generate"};
  }
  out.tokenize_ns = NsSince(t0);
  if (auto s = DecodeBatch(prompt->data(), static_cast<int>(prompt->size())); !s) {
    return Error{s.error().message, "generate"};
  }
  out.prefill_ns = NsSince(t0) - out.tokenize_ns;
  out.token_ns.reserve(static_cast<size_t>(n));
  int32_t token = GreedyNext();
  out.text += Piece(token);
  out.token_ns.push_back(NsSince(t0));
  for (int i = 1; i < n; ++i) {
    if (auto s = DecodeBatch(&token, 1); !s) return Error{s.error().message, "generate"};
    token = GreedyNext();
    out.text += Piece(token);
    out.token_ns.push_back(NsSince(t0));
  }
  if (auto s = CheckLogitsFinite(prompt->size() + static_cast<size_t>(n), "generate"); !s) {
    return s.error();
  }
  out.n_prompt_tokens = static_cast<int>(prompt->size());
  out.prompt_tokens = std::move(*prompt);
  return out;
}

Result<std::unique_ptr<Engine::Sampling>> Engine::BeginCompletion(const CompletionParams& p,
                                                                  CompletionChunk& out,
                                                                  std::vector<int32_t>& tokens) {
  auto built = prompter_->Build(p.message, p.use_chat_template);
  if (!built) return built.error();
  out.prompt_format = built->format;
  out.chat_template = std::move(built->chat_template);
  out.template_engine = std::move(built->engine);
  out.prompt = std::move(built->text);
  const std::string& prompt = out.prompt;
  auto s = std::make_unique<Sampling>();
  s->t0 = Clock::now();
  // Special tokens in the templated text (<|im_start|>, ...) are tokens, as llama-server reads them.
  const int32_t len = static_cast<int32_t>(prompt.size());
  tokens.assign(prompt.size() + 2, 0);
  int32_t nt = llama_tokenize(vocab_, prompt.data(), len, tokens.data(),
                              static_cast<int32_t>(tokens.size()), true, true);
  if (nt < 0) {
    tokens.resize(static_cast<size_t>(-nt));
    nt = llama_tokenize(vocab_, prompt.data(), len, tokens.data(),
                        static_cast<int32_t>(tokens.size()), true, true);
  }
  if (nt <= 0) return MakeError("the prompt does not tokenize", "generate");
  tokens.resize(static_cast<size_t>(nt));
  out.prompt_tokens = nt;
  if (static_cast<int64_t>(nt) + p.max_tokens > settings_.n_ctx) {
    return MakeError("the prompt's " + std::to_string(nt) + " tokens and max_tokens " +
                         std::to_string(p.max_tokens) + " exceed the context of " +
                         std::to_string(settings_.n_ctx) + " tokens",
                     "context");
  }
  llama_sampler* chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
  s->chain = chain;
  if (p.temperature <= 0) {
    llama_sampler_chain_add(chain, llama_sampler_init_greedy());
  } else {
    llama_sampler_chain_add(chain, llama_sampler_init_top_k(p.top_k));
    llama_sampler_chain_add(chain, llama_sampler_init_top_p(p.top_p, 1));
    llama_sampler_chain_add(chain, llama_sampler_init_min_p(p.min_p, 1));
    llama_sampler_chain_add(chain, llama_sampler_init_temp(p.temperature));
    llama_sampler_chain_add(chain, llama_sampler_init_dist(p.seed));
  }
  s->max_tokens = p.max_tokens;
  return s;
}

Result<CompletionChunk> Engine::Complete(const CompletionParams& p, int n) {
  if (!ctx_) return MakeError("no model loaded", "generate");
  if (p.max_tokens < 1 || n < 1) return MakeError("complete needs max_tokens and n >= 1", "generate");
  sampling_.reset();
  CompletionChunk out;
  std::vector<int32_t> tokens;
  auto s = BeginCompletion(p, out, tokens);
  if (!s) return s.error();
  ClearKvCache();
  const auto t_prefill = Clock::now();
  if (auto st = DecodeBatch(tokens.data(), static_cast<int>(tokens.size())); !st) {
    return Error{st.error().message, "generate"};
  }
  out.prefill_ns = NsSince(t_prefill);
  sampling_ = std::move(*s);
  return Produce(n, std::move(out));
}

Result<CompletionChunk> Engine::Continue(int n) {
  if (!sampling_ || sampling_->done) return MakeError("no completion is running", "generate");
  if (n < 1) return MakeError("continue needs n >= 1", "generate");
  return Produce(n, CompletionChunk{});
}

// Samples up to n output tokens: the first from the prompt's logits, each later one after
// decoding the previous. An end-of-generation token ends the completion and is not output.
Result<CompletionChunk> Engine::Produce(int n, CompletionChunk out) {
  Sampling& s = *sampling_;
  for (int i = 0; i < n && !s.done; ++i) {
    if (s.pending >= 0) {
      const auto t0 = Clock::now();
      if (auto st = DecodeBatch(&s.pending, 1); !st) {
        s.done = true;
        return Error{st.error().message, "generate"};
      }
      s.decode_ns += NsSince(t0);
    }
    const auto t0 = Clock::now();
    const int32_t token = llama_sampler_sample(s.chain, ctx_, -1);
    if (s.pending >= 0) s.decode_ns += NsSince(t0);
    if (s.first_token_ns < 0) s.first_token_ns = NsSince(s.t0);
    if (llama_vocab_is_eog(vocab_, token)) {
      s.done = true;
      out.stop = "eos";
      break;
    }
    out.text += Piece(token);
    ++out.tokens;
    s.pending = token;
    if (++s.generated >= s.max_tokens) {
      s.done = true;
      out.stop = "truncated";
    }
  }
  out.done = s.done;
  out.first_token_ns = s.first_token_ns;
  out.decode_ns = s.decode_ns;
  return out;
}

// ---- Parallel completions ----------------------------------------------------------------------

Result<CompletionChunk> Engine::StartSeq(int slot, const CompletionParams& p, int check_every) {
  if (!ctx_) return MakeError("no model loaded", "generate");
  if (slot < 0 || slot >= static_cast<int>(seqs_.size())) {
    return MakeError("slot " + std::to_string(slot) +
                         " is out of range: the driver was loaded with " +
                         std::to_string(seqs_.size()) + " sequences (n_seq)",
                     "protocol");
  }
  if (seqs_[static_cast<size_t>(slot)]) {
    return MakeError("slot " + std::to_string(slot) + " is running a completion", "protocol");
  }
  if (p.max_tokens < 1) return MakeError("seq_start needs max_tokens >= 1", "generate");
  CompletionChunk out;
  std::vector<int32_t> tokens;
  auto started = BeginCompletion(p, out, tokens);
  if (!started) return started.error();
  Sampling& s = **started;
  s.check_every = std::max(0, check_every);
  llama_memory_seq_rm(llama_get_memory(ctx_), slot, -1, -1);
  // The prompt in the chunks DecodeBatch uses for Complete, so that each of llama.cpp's batches
  // has the shape it has there (the kernels chosen depend on the number of rows).
  const int n = static_cast<int>(tokens.size());
  const int chunk_max = std::min(n, settings_.n_batch);
  llama_batch batch = llama_batch_init(chunk_max, 0, 1);
  const auto t_prefill = Clock::now();
  for (int done = 0; done < n;) {
    const int chunk = std::min(n - done, chunk_max);
    batch.n_tokens = chunk;
    for (int j = 0; j < chunk; ++j) {
      batch.token[j] = tokens[static_cast<size_t>(done + j)];
      batch.pos[j] = done + j;
      batch.n_seq_id[j] = 1;
      batch.seq_id[j][0] = slot;
      batch.logits[j] = done + j == n - 1;
    }
    if (const int rc = llama_decode(ctx_, batch); rc != 0) {
      llama_batch_free(batch);
      llama_memory_seq_rm(llama_get_memory(ctx_), slot, -1, -1);
      return MakeError("llama_decode returned " + std::to_string(rc), "generate");
    }
    done += chunk;
  }
  llama_batch_free(batch);
  llama_synchronize(ctx_);
  out.prefill_ns = NsSince(t_prefill);
  s.n_past = n;
  seqs_[static_cast<size_t>(slot)] = std::move(*started);
  SampleSeq(slot, -1, out);
  if (out.done) FreeSeq(slot);  // ended at its first token (end of generation, max_tokens 1)
  return out;
}

void Engine::SampleSeq(int slot, int idx, CompletionChunk& out) {
  Sampling& s = *seqs_[static_cast<size_t>(slot)];
  const int32_t token = llama_sampler_sample(s.chain, ctx_, idx);
  if (s.first_token_ns < 0) s.first_token_ns = NsSince(s.t0);
  if (llama_vocab_is_eog(vocab_, token)) {
    s.done = true;
    out.stop = "eos";
  } else {
    out.text += Piece(token);
    ++out.tokens;
    s.pending = token;
    if (++s.generated >= s.max_tokens) {
      s.done = true;
      out.stop = "truncated";
    } else if (s.check_every > 0 && s.generated % s.check_every == 0) {
      // Where Complete's caller, asking for check_every tokens at a time, would judge the text.
      out.checks.push_back({s.generated, static_cast<int64_t>(out.text.size()), s.decode_ns});
    }
  }
  out.done = s.done;
  out.first_token_ns = s.first_token_ns;
  out.decode_ns = s.decode_ns;
}

Result<std::vector<std::pair<int, CompletionChunk>>> Engine::StepSeqs(int n) {
  if (!ctx_) return MakeError("no model loaded", "generate");
  if (n < 1) return MakeError("seq_step needs n >= 1", "generate");
  std::vector<std::pair<int, CompletionChunk>> out;
  for (size_t k = 0; k < seqs_.size(); ++k) {
    if (seqs_[k] && !seqs_[k]->done) out.push_back({static_cast<int>(k), CompletionChunk{}});
  }
  if (out.empty()) return out;
  llama_batch batch = llama_batch_init(static_cast<int32_t>(out.size()), 0, 1);
  std::vector<size_t> running;  // indexes into `out` of the slots in this step, in slot order
  for (int step = 0; step < n; ++step) {
    running.clear();
    for (size_t i = 0; i < out.size(); ++i) {
      const Sampling* s = seqs_[static_cast<size_t>(out[i].first)].get();
      if (s && !s->done) running.push_back(i);
    }
    if (running.empty()) break;
    // Slots in increasing order: llama.cpp puts consecutive sequence ids in one micro-batch.
    batch.n_tokens = static_cast<int32_t>(running.size());
    for (size_t j = 0; j < running.size(); ++j) {
      const int slot = out[running[j]].first;
      Sampling& s = *seqs_[static_cast<size_t>(slot)];
      batch.token[j] = s.pending;
      batch.pos[j] = s.n_past;
      batch.n_seq_id[j] = 1;
      batch.seq_id[j][0] = slot;
      batch.logits[j] = 1;
    }
    const auto t0 = Clock::now();
    if (const int rc = llama_decode(ctx_, batch); rc != 0) {
      llama_batch_free(batch);
      for (size_t k = 0; k < seqs_.size(); ++k) FreeSeq(static_cast<int>(k));
      return MakeError("llama_decode returned " + std::to_string(rc) + " (" +
                           std::to_string(running.size()) + " sequences)",
                       "generate");
    }
    llama_synchronize(ctx_);
    bool ended = false;
    for (size_t j = 0; j < running.size(); ++j) {
      const int slot = out[running[j]].first;
      Sampling& s = *seqs_[static_cast<size_t>(slot)];
      ++s.n_past;
      SampleSeq(slot, static_cast<int>(j), out[running[j]].second);
      ended = ended || s.done;
    }
    // The step's time (the shared decode and every sequence's sampling) is each sequence's
    // decode time: the wall time it spent generating while it shared the batch.
    const int64_t step_ns = NsSince(t0);
    for (size_t i : running) {
      CompletionChunk& c = out[i].second;
      Sampling& s = *seqs_[static_cast<size_t>(out[i].first)];
      s.decode_ns += step_ns;
      c.decode_ns = s.decode_ns;
      // A check point taken in this step saw the decode time before the step was added.
      if (!c.checks.empty() && c.checks.back().tokens == s.generated) {
        c.checks.back().decode_ns = s.decode_ns;
      }
    }
    if (ended) break;
  }
  llama_batch_free(batch);
  for (const auto& [slot, chunk] : out) {
    if (chunk.done) FreeSeq(slot);
  }
  return out;
}

Status Engine::StopSeq(int slot) {
  if (slot < 0 || slot >= static_cast<int>(seqs_.size())) {
    return MakeError("slot " + std::to_string(slot) + " is out of range", "protocol");
  }
  FreeSeq(slot);
  return Status::Ok();
}

void Engine::FreeSeq(int slot) {
  auto& s = seqs_[static_cast<size_t>(slot)];
  if (!s) return;
  s.reset();
  llama_memory_seq_rm(llama_get_memory(ctx_), slot, -1, -1);
}

}  // namespace pipette::driver
