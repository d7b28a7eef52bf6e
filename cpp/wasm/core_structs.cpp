// Prints the field tables of structs.h as JSON, for scripts/core-structs.mjs, which writes them as
// TypeScript interfaces (web/src/core/core-structs.ts): per struct its interface name, doc and
// extends, per key its name, TypeScript type, doc and whether it may be absent. A node program of
// the wasm build (scripts/build-wasm builds and runs it); the module the page loads has none of it.
#include <cstdio>
#include <string>

#include "wasm/structs.h"

namespace attn::js {
namespace {

template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};
template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};

// The TypeScript type of a getter's C++ result ("" for a val: its field names the type).
template <typename T>
std::string ts_type() {
  if constexpr (std::is_same_v<T, bool>) return "boolean";
  else if constexpr (std::is_arithmetic_v<T>) return "number";
  else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, const char*>) return "string";
  else if constexpr (std::is_same_v<T, std::vector<float>> || std::is_same_v<T, RowVec>) return "Float32Array";
  else if constexpr (std::is_same_v<T, std::vector<double>>) return "Float64Array";
  else if constexpr (std::is_same_v<T, std::vector<int32_t>>) return "Int32Array";
  else if constexpr (std::is_same_v<T, std::vector<uint8_t>>) return "Uint8Array";
  else if constexpr (std::is_same_v<T, Mat>) return "Matrix";
  else if constexpr (std::is_same_v<T, IntMat>) return "IntMatrix";
  else if constexpr (std::is_same_v<T, MatOrNull>) return "Matrix | null";
  else if constexpr (std::is_same_v<T, val>) return "";
  else if constexpr (IsJsStruct<T>::value) return JsStruct<T>::name;
  else if constexpr (IsVector<T>::value) return ts_type<typename T::value_type>() + "[]";
  else if constexpr (IsOptional<T>::value) return ts_type<typename T::value_type>() + " | null";
  else if constexpr (std::is_pointer_v<T>) return ts_type<std::remove_cv_t<std::remove_pointer_t<T>>>() + " | null";
  else if constexpr (IsMaybe<T>::value) return ts_type<std::remove_cv_t<std::remove_pointer_t<decltype(T::value)>>>();
  else static_assert(sizeof(T) == 0, "a getter's type with no TypeScript type: add it to ts_type");
}

std::string json_string(const char* s) {
  std::string out = "\"";
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\') out += '\\';
    if (*s == '\n') out += "\\n";
    else out += *s;
  }
  return out + "\"";
}

template <typename S>
void print_struct(bool first) {
  std::string extends, fields;
  std::apply(
      [&](const auto&... f) {
        const auto add = [&](const auto& f) {
          using F = std::decay_t<decltype(f)>;
          using V = std::decay_t<decltype(std::invoke(f.get, std::declval<const S&>()))>;
          if constexpr (IsSpread<F>::value) {
            extends = JsStruct<V>::name;
          } else {
            const std::string type = f.ts ? f.ts : ts_type<V>();
            if (type.empty()) {
              std::fprintf(stderr, "%s.%s is converted by hand: give its TypeScript type\n", JsStruct<S>::name, f.name);
              std::exit(1);
            }
            if (!fields.empty()) fields += ",\n";
            fields += "   {\"name\": " + json_string(f.name) + ", \"type\": " + json_string(type.c_str()) +
                      ", \"optional\": " + (IsMaybe<V>::value ? "true" : "false") + ", \"doc\": " + json_string(f.doc) + "}";
          }
        };
        (add(f), ...);
      },
      JsStruct<S>::fields);
  std::printf("%s {\"name\": %s, \"doc\": %s, \"extends\": %s, \"fields\": [\n%s]}", first ? "" : ",\n",
              json_string(JsStruct<S>::name).c_str(), json_string(JsStruct<S>::doc).c_str(),
              extends.empty() ? "null" : json_string(extends.c_str()).c_str(), fields.c_str());
}

template <typename... S>
void print_structs() {
  std::printf("[\n");
  bool first = true;
  ((print_struct<S>(first), first = false), ...);
  std::printf("\n]\n");
}

}  // namespace
}  // namespace attn::js

int main() {
  using namespace attn;
  using namespace attn::js;
  // Every struct of structs.h, in the order of the TypeScript file.
  print_structs<Evaluation, LengthEvaluation, TextEvaluation, TextCorpus, HeadStats, HeadRow, RowBackward,
                SelfTestResult, LogitLens, Attribution, Patching, HeadCircuit, Inspection, Corruption, FillGuess,
                FilledBlank, FillResult, AttentionStages, MultiHeadStages, PositionedInput, LessonInputs,
                SoftmaxSteps, ScalingDemo, ComputeSplit, PowerLawFit, SerialDepth, RopePair, BlockStages, TiledTrace, BlockTiledTrace, SpeculativeStats,
                SpeculativeResult, ExactnessPosition, Exactness, TensorSpec, ModelReport, ProductTime, OpTime>();
}
