// TinyAttentionLM weights as safetensors: save/load round trip, config inference, the
// all-or-nothing load, one test per hostile-weights case, and the file helpers.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "attn/io/weights.h"

using namespace attn;
using Catch::Matchers::Contains;

namespace {

using Bytes = std::vector<uint8_t>;

ModelConfig weights_config() { return ModelConfig{11, 6, 3, 5}; }  // V, D, H, C

// All parameter values of a model, concatenated in state-dict order.
std::vector<float> values_of(TinyAttentionLM& m) {
  std::vector<float> out;
  for (const ParamRef& p : m.parameters()) out.insert(out.end(), p.value, p.value + p.numel());
  return out;
}

// The model's tensors as TensorOut, for building modified files.
std::vector<TensorOut> tensors_of(TinyAttentionLM& m) {
  std::vector<TensorOut> out;
  for (const ParamRef& p : m.parameters()) out.push_back({p.name, "F32", p.shape, p.value});
  return out;
}

std::map<std::string, std::string> metadata_of(const ModelConfig& c) {
  return {{"format", "pt"},
          {"n_heads", std::to_string(c.n_heads)},
          {"max_context_length", std::to_string(c.max_context_length)}};
}

// The one-line std::invalid_argument message of f(), and a failure when it does not throw one.
template <typename F>
std::string invalid_message(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    CHECK(msg.find('\n') == std::string::npos);
    return msg;
  }
  FAIL("no std::invalid_argument");
  return "";
}

// Checks that loading bytes fails the same way through every entry point, leaving a model
// unchanged; returns the message.
std::string load_error(const Bytes& bytes) {
  TinyAttentionLM model(weights_config(), 5);
  const std::vector<float> before = values_of(model);
  const std::string msg =
      invalid_message([&] { load_weights(model, bytes.data(), bytes.size()); });
  CHECK(values_of(model) == before);
  CHECK_THROWS_AS(load_model(bytes.data(), bytes.size()), std::invalid_argument);
  return msg;
}

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/attn_test_weights_" + name;
}

bool file_exists(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f) std::fclose(f);
  return f != nullptr;
}

}  // namespace

TEST_CASE("weights: save then load reproduces every parameter and the logits") {
  TinyAttentionLM a(weights_config(), 1), b(weights_config(), 2);
  REQUIRE(values_of(a) != values_of(b));
  const Bytes bytes = save_model(a);
  load_weights(b, bytes.data(), bytes.size());
  CHECK(values_of(a) == values_of(b));

  const std::unique_ptr<TinyAttentionLM> c = load_model(bytes.data(), bytes.size());
  CHECK(values_of(*c) == values_of(a));
  const int32_t ids[8] = {0, 3, 10, 2, 7, 7, 1, 9};
  TinyAttentionLM::State sa, sc;
  a.forward(ids, 2, 4, sa);
  c->forward(ids, 2, 4, sc);
  CHECK(sa.logits == sc.logits);
  CHECK(sa.attn.weights() == sc.attn.weights());
}

TEST_CASE("weights: save_model is deterministic, with sorted names, metadata and 8-byte header") {
  TinyAttentionLM m(weights_config(), 3);
  const Bytes bytes = save_model(m);
  CHECK(save_model(m) == bytes);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[static_cast<size_t>(i)];
  CHECK((8 + n) % 8 == 0);
  const std::string header(bytes.begin() + 8, bytes.begin() + 8 + static_cast<long>(n));
  CHECK(header.rfind(R"({"__metadata__":{"format":"pt","max_context_length":"5","n_heads":"3"},)"
                     R"("attn.out_proj.bias":{"dtype":"F32","shape":[6],"data_offsets":[0,24]},)",
                     0) == 0);
  const SafetensorsFile f = parse_safetensors(bytes.data(), bytes.size());
  std::vector<std::string> names;
  for (const TensorView& t : f.tensors) names.push_back(t.name);
  CHECK(names == std::vector<std::string>{"attn.out_proj.bias", "attn.out_proj.weight",
                                          "attn.qkv_proj.bias", "attn.qkv_proj.weight",
                                          "lm_head.bias", "lm_head.weight",
                                          "token_emb.embedding.weight"});
  CHECK(f.get("attn.qkv_proj.weight").shape == std::vector<int64_t>{18, 6});
  CHECK(f.get("token_emb.embedding.weight").shape == std::vector<int64_t>{11, 6});
}

TEST_CASE("weights: infer_config reads V and D from shapes, H and C from metadata") {
  TinyAttentionLM m(weights_config(), 3);
  const Bytes bytes = save_model(m);
  const ModelConfig c = infer_config(bytes.data(), bytes.size());
  CHECK(c.vocab_size == 11);
  CHECK(c.d_model == 6);
  CHECK(c.n_heads == 3);
  CHECK(c.max_context_length == 5);
}

TEST_CASE("weights: load_weights into a model of another config is a shape error") {
  TinyAttentionLM m(weights_config(), 3);
  const Bytes bytes = save_model(m);
  ModelConfig other = weights_config();
  other.vocab_size = 12;
  TinyAttentionLM wrong_v(other, 1);
  const std::vector<float> before = values_of(wrong_v);
  CHECK_THAT(invalid_message([&] { load_weights(wrong_v, bytes.data(), bytes.size()); }),
             Contains("token_emb.embedding.weight\" has shape (11,6), expected (12,6)"));
  CHECK(values_of(wrong_v) == before);

  other = weights_config();
  other.n_heads = 2;  // same shapes, different heads: the metadata says 3
  TinyAttentionLM wrong_h(other, 1);
  CHECK_THAT(invalid_message([&] { load_weights(wrong_h, bytes.data(), bytes.size()); }),
             Contains("n_heads is 3 but the model has 2"));
  other = weights_config();
  other.max_context_length = 9;
  TinyAttentionLM wrong_c(other, 1);
  CHECK_THAT(invalid_message([&] { load_weights(wrong_c, bytes.data(), bytes.size()); }),
             Contains("max_context_length is 5 but the model has 9"));
}

TEST_CASE("weights: a file without metadata loads into a model of known config") {
  TinyAttentionLM m(weights_config(), 3), n(weights_config(), 4);
  const Bytes bare = write_safetensors(tensors_of(m), {});
  load_weights(n, bare.data(), bare.size());
  CHECK(values_of(n) == values_of(m));
  // ... but the config cannot be inferred from it.
  CHECK_THAT(invalid_message([&] { infer_config(bare.data(), bare.size()); }),
             Contains("__metadata__ has no \"n_heads\""));
}

TEST_CASE("weights hostile: not a safetensors file") {
  CHECK_THAT(load_error({}), Contains("empty"));
  const Bytes junk = {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '!'};
  CHECK_THAT(load_error(junk), Contains("over the limit"));
}

TEST_CASE("weights hostile: every truncation of a weights file is rejected") {
  TinyAttentionLM m(weights_config(), 3);
  const Bytes bytes = save_model(m);
  for (size_t n = 0; n < bytes.size(); n += 7) {
    CAPTURE(n);
    const Bytes prefix(bytes.begin(), bytes.begin() + static_cast<long>(n));
    TinyAttentionLM target(weights_config(), 5);
    const std::vector<float> before = values_of(target);
    CHECK_THROWS_AS(load_weights(target, prefix.data(), prefix.size()), std::invalid_argument);
    CHECK(values_of(target) == before);
  }
}

TEST_CASE("weights hostile: missing tensor") {
  TinyAttentionLM m(weights_config(), 3);
  std::vector<TensorOut> t = tensors_of(m);
  t.erase(t.begin() + 2);  // attn.qkv_proj.bias
  CHECK_THAT(load_error(write_safetensors(t, metadata_of(m.config))),
             Contains("missing tensor \"attn.qkv_proj.bias\""));
}

TEST_CASE("weights hostile: unexpected extra tensor") {
  TinyAttentionLM m(weights_config(), 3);
  std::vector<TensorOut> t = tensors_of(m);
  const float extra[2] = {1, 2};
  t.push_back({"attn.rotary.freq", "F32", {2}, extra});
  CHECK_THAT(load_error(write_safetensors(t, metadata_of(m.config))),
             Contains("unexpected tensor \"attn.rotary.freq\""));
}

TEST_CASE("weights hostile: wrong dtype") {
  TinyAttentionLM m(weights_config(), 3);
  std::vector<TensorOut> t = tensors_of(m);
  std::vector<double> as_f64(6, 0.5);
  t[4] = {"attn.out_proj.bias", "F64", {6}, as_f64.data()};
  CHECK_THAT(load_error(write_safetensors(t, metadata_of(m.config))),
             Contains("\"attn.out_proj.bias\" has dtype F64, expected F32"));
  std::vector<int32_t> as_i32(6, 1);
  t[4] = {"attn.out_proj.bias", "I32", {6}, as_i32.data()};
  CHECK_THAT(load_error(write_safetensors(t, metadata_of(m.config))), Contains("dtype I32"));
}

TEST_CASE("weights hostile: shape not matching the config") {
  TinyAttentionLM m(weights_config(), 3);
  std::vector<TensorOut> t = tensors_of(m);
  t[3].shape = {3, 12};  // attn.out_proj.weight: same 36 floats, wrong shape
  Bytes b = write_safetensors(t, metadata_of(m.config));
  CHECK_THAT(load_error(b),
             Contains("tensor \"attn.out_proj.weight\" has shape (3,12), expected (6,6)"));
  CHECK_THAT(invalid_message([&] { infer_config(b.data(), b.size()); }),
             Contains("\"attn.out_proj.weight\" has shape (3,12) but token_emb.embedding.weight "
                      "(11,6) implies (6,6)"));

  t = tensors_of(m);
  std::vector<float> bigger(12 * 6, 0.1f);
  t[5] = {"lm_head.weight", "F32", {12, 6}, bigger.data()};  // V disagrees with the embedding
  b = write_safetensors(t, metadata_of(m.config));
  CHECK_THAT(load_error(b), Contains("\"lm_head.weight\" has shape (12,6), expected (11,6)"));
  CHECK_THAT(invalid_message([&] { infer_config(b.data(), b.size()); }),
             Contains("(12,6) but token_emb.embedding.weight (11,6) implies (11,6)"));

  t = tensors_of(m);
  t[0].shape = {66};  // embedding flattened
  b = write_safetensors(t, metadata_of(m.config));
  CHECK_THAT(load_error(b), Contains("has shape (66), expected (11,6)"));
  CHECK_THAT(invalid_message([&] { infer_config(b.data(), b.size()); }),
             Contains("token_emb.embedding.weight must be (V,D), got shape (66)"));
}

TEST_CASE("weights hostile: config the model rejects") {
  ModelConfig c = weights_config();
  TinyAttentionLM m(c, 3);
  std::map<std::string, std::string> meta = metadata_of(c);
  meta["n_heads"] = "4";  // 6 % 4 != 0
  CHECK_THAT(invalid_message([&] {
               const Bytes b = write_safetensors(tensors_of(m), meta);
               infer_config(b.data(), b.size());
             }),
             Contains("d_model (6) must be divisible by n_heads (4)"));
  for (const char* bad : {"0", "-3", "03", "3 ", "three", "", "99999999999"}) {
    meta = metadata_of(c);
    meta["max_context_length"] = bad;
    const Bytes b = write_safetensors(tensors_of(m), meta);
    CAPTURE(bad);
    CHECK_THAT(load_error(b), Contains("max_context_length"));
  }
  meta = metadata_of(c);
  meta["max_context_length"] = "5000";  // above kMaxFileContext
  const Bytes b = write_safetensors(tensors_of(m), meta);
  CHECK_THAT(invalid_message([&] { infer_config(b.data(), b.size()); }),
             Contains("max_context_length \"5000\" must be an integer in [1, 4096]"));
  CHECK_THAT(load_error(b), Contains("max_context_length is 5000 but the model has 5"));

  // d_model must be even: a hand-made file with D = 3, H = 1.
  std::vector<float> zeros(9 * 3 + 9 + 3 * 3 + 3 + 11 * 3 * 2 + 11, 0.0f);
  const std::vector<TensorOut> odd = {
      {"token_emb.embedding.weight", "F32", {11, 3}, zeros.data()},
      {"attn.qkv_proj.weight", "F32", {9, 3}, zeros.data()},
      {"attn.qkv_proj.bias", "F32", {9}, zeros.data()},
      {"attn.out_proj.weight", "F32", {3, 3}, zeros.data()},
      {"attn.out_proj.bias", "F32", {3}, zeros.data()},
      {"lm_head.weight", "F32", {11, 3}, zeros.data()},
      {"lm_head.bias", "F32", {11}, zeros.data()},
  };
  meta = metadata_of(c);
  meta["n_heads"] = "1";
  const Bytes ob = write_safetensors(odd, meta);
  CHECK_THAT(invalid_message([&] { load_model(ob.data(), ob.size()); }), Contains("even"));
}

TEST_CASE("weights hostile: non-finite weights, and the load is all-or-nothing") {
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()}) {
    TinyAttentionLM src(weights_config(), 3);
    src.lm_head.bias(10) = bad;  // the last parameter in state-dict order
    const Bytes b = save_model(src);
    CAPTURE(bad);
    CHECK_THAT(load_error(b), Contains("\"lm_head.bias\" has a non-finite value"));
    CHECK_THAT(load_error(b), Contains("at index 10"));
  }
}

TEST_CASE("weights hostile: metadata that is not a string map") {
  TinyAttentionLM m(weights_config(), 3);
  Bytes b = save_model(m);
  // Replace "5" (max_context_length) by 5 without quotes, same length with a trailing space.
  const std::string from = "\"max_context_length\":\"5\"";
  const std::string to = "\"max_context_length\":5  ";
  std::string text(b.begin(), b.end());
  text.replace(text.find(from), from.size(), to);
  CHECK_THAT(load_error(Bytes(text.begin(), text.end())), Contains("must be a string"));
}

TEST_CASE("weights: read_file names the path on failure") {
  const std::string missing = temp_path("does_not_exist.safetensors");
  std::remove(missing.c_str());
  try {
    read_file(missing);
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(std::string(e.what()), Contains(missing));
  }
}

TEST_CASE("weights: write_file_atomic writes, replaces, and leaves nothing on failure") {
  const std::string path = temp_path("atomic.bin");
  const Bytes one = {1, 2, 3}, two(100000, 7);
  write_file_atomic(path, one);
  CHECK(read_file(path) == one);
  write_file_atomic(path, two);
  CHECK(read_file(path) == two);
  write_file_atomic(path, {});
  CHECK(read_file(path).empty());
  std::remove(path.c_str());

  const std::string bad = temp_path("no_such_dir/x.safetensors");
  try {
    write_file_atomic(bad, one);
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(std::string(e.what()), Contains(bad));
  }
  CHECK_FALSE(file_exists(bad));
}

TEST_CASE("weights: a saved file survives the disk round trip and loads") {
  TinyAttentionLM m(weights_config(), 8);
  const std::string path = temp_path("model.safetensors");
  write_file_atomic(path, save_model(m));
  const Bytes bytes = read_file(path);
  std::remove(path.c_str());
  const auto loaded = load_model(bytes.data(), bytes.size());
  CHECK(values_of(*loaded) == values_of(m));
}

TEST_CASE("weights hostile: random header corruption never crashes load_model") {
  TinyAttentionLM m(weights_config(), 3);
  const Bytes good = save_model(m);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | good[static_cast<size_t>(i)];
  Rng rng(99);
  int loaded = 0, rejected = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    Bytes b = good;
    // Mostly the length and header bytes, where the structure lives.
    const int flips = 1 + static_cast<int>(rng.below(3));
    for (int k = 0; k < flips; ++k)
      b[rng.below(static_cast<uint32_t>(8 + n))] = static_cast<uint8_t>(rng.below(256));
    try {
      const auto model = load_model(b.data(), b.size());
      ++loaded;  // a harmless change, e.g. in padding
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
      ++rejected;
    }
  }
  CHECK(rejected > 1000);
  CAPTURE(loaded);
}

// ---- Depth: n_layers and residual in the file

namespace {
ModelConfig deep_weights_config(int L, bool residual) {
  ModelConfig c = weights_config();
  c.n_layers = L;
  c.residual = residual;
  return c;
}

std::map<std::string, std::string> metadata_of_file(const Bytes& b) {
  return parse_safetensors(b.data(), b.size()).metadata;
}
}  // namespace

TEST_CASE("weights: a deep model round-trips with n_layers and residual in the metadata",
          "[depth]") {
  for (const int L : {2, 3, 4})
    for (const bool residual : {false, true}) {
      CAPTURE(L, residual);
      TinyAttentionLM a(deep_weights_config(L, residual), 1), b(deep_weights_config(L, residual), 2);
      const Bytes bytes = save_model(a);
      const std::map<std::string, std::string> meta = metadata_of_file(bytes);
      CHECK(meta.at("n_layers") == std::to_string(L));
      CHECK(meta.at("residual") == (residual ? "true" : "false"));
      const SafetensorsFile f = parse_safetensors(bytes.data(), bytes.size());
      CHECK(f.find("layers.0.qkv_proj.weight") != nullptr);
      CHECK(f.find(str_cat("layers.", L - 1, ".out_proj.bias")) != nullptr);
      CHECK(f.find("attn.qkv_proj.weight") == nullptr);
      CHECK(f.tensors.size() == size_t(3 + 4 * L));

      const ModelConfig c = infer_config(bytes.data(), bytes.size());
      CHECK(c.n_layers == L);
      CHECK(c.residual == residual);
      load_weights(b, bytes.data(), bytes.size());
      CHECK(values_of(a) == values_of(b));
      const std::unique_ptr<TinyAttentionLM> m = load_model(bytes.data(), bytes.size());
      CHECK(values_of(*m) == values_of(a));
      CHECK(save_model(*m) == bytes);
      const int32_t ids[5] = {0, 3, 10, 2, 7};
      TinyAttentionLM::State sa, sm;
      a.forward(ids, 1, 5, sa);
      m->forward(ids, 1, 5, sm);
      CHECK(sa.logits == sm.logits);
    }
}

TEST_CASE("weights: the curriculum's model writes no n_layers or residual; 1 layer with "
          "residual does", "[depth]") {
  TinyAttentionLM plain(weights_config(), 3), res(deep_weights_config(1, true), 3);
  const Bytes pb = save_model(plain), rb = save_model(res);
  CHECK(metadata_of_file(pb) == metadata_of(weights_config()));  // exactly the old metadata
  CHECK(metadata_of_file(rb).at("n_layers") == "1");
  CHECK(metadata_of_file(rb).at("residual") == "true");
  const ModelConfig c = infer_config(rb.data(), rb.size());
  CHECK(c.n_layers == 1);
  CHECK(c.residual);
  // Same tensors and names: only the metadata says how they combine.
  CHECK(parse_safetensors(rb.data(), rb.size()).tensors.size() == 7);
}

TEST_CASE("weights: a file of another depth or residual names both values", "[depth]") {
  TinyAttentionLM two(deep_weights_config(2, true), 3), one(weights_config(), 3);
  TinyAttentionLM three(deep_weights_config(3, true), 3), two_plain(deep_weights_config(2, false), 3);
  const Bytes b2 = save_model(two), b1 = save_model(one);
  auto load_into = [](TinyAttentionLM& m, const Bytes& b) {
    const std::vector<float> before = values_of(m);
    const std::string msg = invalid_message([&] { load_weights(m, b.data(), b.size()); });
    CHECK(values_of(m) == before);
    return msg;
  };
  CHECK_THAT(load_into(one, b2), Contains("the file has n_layers 2") &&
                                     Contains("the model has n_layers 1"));
  CHECK_THAT(load_into(three, b2), Contains("n_layers 2") && Contains("n_layers 3"));
  CHECK_THAT(load_into(two, b1), Contains("the file has n_layers 1 (absent from __metadata__") &&
                                     Contains("the model has n_layers 2"));
  CHECK_THAT(load_into(two_plain, b2), Contains("the file has residual true") &&
                                           Contains("the model has residual false"));
  try {
    load_weights(one, b2.data(), b2.size());
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Format);
  }
}

TEST_CASE("weights hostile: n_layers and residual metadata", "[depth]") {
  TinyAttentionLM m(deep_weights_config(2, true), 3);
  const std::vector<TensorOut> tensors = tensors_of(m);
  std::map<std::string, std::string> meta = metadata_of(m.config);
  meta["residual"] = "true";
  for (const char* bad : {"7", "0", "abc", "", "-2", "02", "2 ", "5"}) {
    CAPTURE(bad);
    meta["n_layers"] = bad;
    const Bytes b = write_safetensors(tensors, meta);
    const std::string msg = load_error(b);
    CHECK_THAT(msg, Contains("n_layers") && Contains("must be an integer in [1, 4]"));
    CHECK_THAT(invalid_message([&] { infer_config(b.data(), b.size()); }),
               Contains(str_cat("n_layers \"", bad, "\"")));
  }
  meta["n_layers"] = "2";
  for (const char* bad : {"yes", "1", "True", "", "false "}) {
    CAPTURE(bad);
    meta["residual"] = bad;
    const Bytes b = write_safetensors(tensors, meta);
    CHECK_THAT(load_error(b), Contains("residual") && Contains("must be \"true\" or \"false\""));
  }
  // A depth that does not fit the tensors: the names it implies are missing.
  meta["residual"] = "true";
  meta["n_layers"] = "3";
  const Bytes b3 = write_safetensors(tensors, meta);
  CHECK_THAT(invalid_message([&] { infer_config(b3.data(), b3.size()); }),
             Contains("layers.2.qkv_proj.weight"));
  // Without n_layers the tensors of a deep model are unexpected names for one layer.
  meta.erase("n_layers");
  const Bytes b0 = write_safetensors(tensors, meta);
  CHECK_THAT(invalid_message([&] { infer_config(b0.data(), b0.size()); }),
             Contains("attn.qkv_proj.weight"));
}

// ---- The transformer block

namespace {

// A block config: V 11, D 8, H 4, C 6, the residual stream and the given settings.
ModelConfig block_config(void (*edit)(ModelConfig&)) {
  ModelConfig c{11, 8, 4, 6};
  c.residual = true;
  c.ffn_mult = 2;
  edit(c);
  return c;
}

// The file a block model saves, with one tensor replaced (or removed when shape is empty) or
// one added.
Bytes edited_file(TinyAttentionLM& m, const std::string& name, std::vector<int64_t> shape,
                  const std::vector<float>& data) {
  std::vector<TensorOut> tensors = tensors_of(m);
  const SafetensorsFile original = parse_safetensors(save_model(m).data(), save_model(m).size());
  bool replaced = false;
  for (TensorOut& t : tensors)
    if (t.name == name) {
      t.shape = shape;
      t.data = data.data();
      replaced = true;
    }
  if (!replaced) tensors.push_back({name, "F32", shape, data.data()});
  return write_safetensors(std::move(tensors), original.metadata);
}

// The message of loading a whole file (the config inferred from it).
std::string block_load_error(const Bytes& bytes) {
  return invalid_message([&] { load_model(bytes.data(), bytes.size()); });
}

}  // namespace

TEST_CASE("weights: block models round-trip with their settings in __metadata__",
          "[weights][block]") {
  const std::vector<void (*)(ModelConfig&)> edits = {
      [](ModelConfig& c) { c.positions = PositionKind::Learned; },
      [](ModelConfig& c) { c.positions = PositionKind::Rope, c.kv_heads = 2; },
      [](ModelConfig& c) {
        c.positions = PositionKind::Alibi, c.norm = NormKind::LayerNorm, c.ffn = FfnKind::GELU;
      },
      [](ModelConfig& c) {
        c.norm = NormKind::RMSNorm, c.norm_position = NormPosition::Post, c.ffn = FfnKind::SwiGLU,
        c.kv_heads = 1, c.n_layers = 3, c.positions = PositionKind::None;
      },
  };
  for (size_t i = 0; i < edits.size(); ++i) {
    CAPTURE(i);
    const ModelConfig c = block_config(edits[i]);
    TinyAttentionLM model(c, 3 + i);
    const Bytes bytes = save_model(model);
    const SafetensorsFile file = parse_safetensors(bytes.data(), bytes.size());
    CHECK(file.metadata.at("positions") == position_kind_name(c.positions));
    CHECK(file.metadata.at("kv_heads") == std::to_string(c.kv_heads_resolved()));
    CHECK(file.metadata.at("max_seq_len") == "6");
    CHECK(file.metadata.at("norm") == norm_kind_name(c.norm));
    CHECK(file.metadata.at("norm_position") == norm_position_name(c.norm_position));
    CHECK(file.metadata.at("ffn") == ffn_kind_name(c.ffn));
    CHECK(file.metadata.at("ffn_mult") == "2");
    CHECK(file.metadata.at("n_layers") == std::to_string(c.n_layers));
    CHECK(file.metadata.at("residual") == "true");
    const ModelConfig inferred = infer_config(bytes.data(), bytes.size());
    CHECK(inferred.kv_heads_resolved() == c.kv_heads_resolved());
    CHECK(inferred.positions == c.positions);
    CHECK(inferred.norm == c.norm);
    CHECK(inferred.norm_position == c.norm_position);
    CHECK(inferred.ffn == c.ffn);
    CHECK(inferred.ffn_mult == c.ffn_mult);
    CHECK(inferred.n_layers == c.n_layers);
    const std::unique_ptr<TinyAttentionLM> back = load_model(bytes.data(), bytes.size());
    CHECK(values_of(*back) == values_of(model));
    CHECK(save_model(*back) == bytes);
    // A model of another block config refuses the file, naming the setting.
    ModelConfig other = c;
    other.ffn_mult = 3;
    TinyAttentionLM wrong(other, 1);
    CHECK_THAT(invalid_message([&] { load_weights(wrong, bytes.data(), bytes.size()); }),
               Contains("ffn_mult"));
  }
}

TEST_CASE("weights hostile: a block file whose shapes disagree with its metadata names the tensor",
          "[weights][block]") {
  {
    TinyAttentionLM m(block_config([](ModelConfig& c) { c.norm = NormKind::RMSNorm; }), 1);
    const std::vector<float> v(9, 1.0f);
    const Bytes b = edited_file(m, "layers.0.attn_norm.weight", {9}, v);
    const std::string msg = block_load_error(b);
    CHECK_THAT(msg, Contains("\"layers.0.attn_norm.weight\" has shape (9)"));
  }
  {
    TinyAttentionLM m(block_config([](ModelConfig& c) { c.ffn = FfnKind::SwiGLU; }), 1);
    const std::vector<float> v(16, 0.0f);
    const Bytes b = edited_file(m, "layers.0.ffn.up.bias", {16}, v);
    CHECK_THAT(block_load_error(b), Contains("unexpected tensor \"layers.0.ffn.up.bias\""));
  }
  {
    // qkv_proj of 3D rows in a file that says kv_heads 2 ((4 + 2*2) * 2 = 16 rows).
    TinyAttentionLM m(block_config([](ModelConfig& c) { c.kv_heads = 2; }), 1);
    const std::vector<float> v(24 * 8, 0.0f);
    const Bytes b = edited_file(m, "layers.0.qkv_proj.weight", {24, 8}, v);
    CHECK_THAT(block_load_error(b), Contains("\"layers.0.qkv_proj.weight\" has shape (24,8)") &&
                                  Contains("imply (16,8)"));
  }
  {
    // A norm without residual in the metadata: the file contradicts itself.
    TinyAttentionLM m(block_config([](ModelConfig& c) { c.norm = NormKind::LayerNorm; }), 1);
    std::vector<TensorOut> tensors = tensors_of(m);
    const Bytes good = save_model(m);
    std::map<std::string, std::string> meta = parse_safetensors(good.data(), good.size()).metadata;
    meta["residual"] = "false";
    const Bytes b = write_safetensors(std::move(tensors), meta);
    CHECK_THAT(block_load_error(b), Contains("norm (layernorm) needs residual"));
    meta["residual"] = "true";
    meta["positions"] = "absolute";
    const Bytes c = write_safetensors(tensors_of(m), meta);
    CHECK_THAT(block_load_error(c), Contains("positions") && Contains("'absolute'"));
  }
}
