// Field tables: what of a C++ struct crosses into JS, declared once per struct (structs.h). One
// table gives both the struct's conversion to a JS object (to_js below, used by convert.cpp and
// bindings.cpp) and its TypeScript interface (core_structs.cpp prints the tables, and
// scripts/core-structs.mjs writes web/src/core/core-structs.ts from them). How to add a field or a
// struct: cpp/wasm/README.md, "Field tables".
#pragma once

#include <emscripten/val.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "attn/base/tensor.h"

// A doc comment of the TypeScript declarations: kept only in the program that prints the tables
// (core_structs.cpp), so the module the page loads carries none of their text.
#ifdef ATTN_JS_DOCS
#define JS_DOC(text) text
#else
#define JS_DOC(text) ""
#endif

namespace attn::js {

using emscripten::val;

// One JS key of a struct S: its name, how it is read from S (a data member &S::x, or a function
// of const S&), its doc comment, and its TypeScript type when the C++ type does not give it (an
// enum's name as a string, a value converted by hand).
// The doc and the type exist only in the program that prints the tables: the module keeps a
// table's names and getters only.
template <typename Get>
struct Field {
  const char* name;
  Get get;
#ifdef ATTN_JS_DOCS
  const char* doc;
  const char* ts;
#endif
};
template <typename Get>
constexpr Field<Get> field(const char* name, Get get, [[maybe_unused]] const char* doc = "",
                           [[maybe_unused]] const char* ts = nullptr) {
#ifdef ATTN_JS_DOCS
  return {name, get, doc, ts};
#else
  return {name, get};
#endif
}

// spread(getter): the keys of the struct the getter returns, set on this struct's object (the
// TypeScript interface extends that struct's).
template <typename Get>
struct Spread {
  Get get;
};
template <typename Get>
constexpr Spread<Get> spread(Get get) {
  return {get};
}

template <typename T>
struct IsSpread : std::false_type {};
template <typename Get>
struct IsSpread<Spread<Get>> : std::true_type {};

// The table of an exported struct: specialised in structs.h with name (the TypeScript
// interface), doc and fields (a tuple of field(...)).
template <typename S>
struct JsStruct;

template <typename S, typename = void>
struct IsJsStruct : std::false_type {};
template <typename S>
struct IsJsStruct<S, std::void_t<decltype(JsStruct<S>::fields)>> : std::true_type {};

// A getter's result that is left out of the JS object when absent (`key?: T`); a null pointer or
// an empty std::optional is null in JS instead (`key: T | null`).
template <typename T>
struct Maybe {
  const T* value;
};
template <typename T>
struct IsMaybe : std::false_type {};
template <typename T>
struct IsMaybe<Maybe<T>> : std::true_type {};
template <typename T>
Maybe<T> present_if(bool present, const T& value) {
  return {present ? &value : nullptr};
}

// A matrix stage that the config may leave out: null when empty (`Matrix | null`).
struct MatOrNull {
  const Mat* m;
};
template <typename S>
struct StageOf {
  Mat S::*member;
  MatOrNull operator()(const S& s) const { return {&(s.*member)}; }
};
template <typename S>
constexpr auto stage(const char* name, Mat S::*member, const char* doc = "") {
  return field(name, StageOf<S>{member}, doc);
}

// ---- C++ -> JS by the C++ type (convert.cpp). Non-templates where they can be, so each is
// compiled once. Every array is a copy.

val js_value(double x);
val js_value(bool x);
val js_value(const std::string& s);
val js_value(const char* s);
val js_value(const std::vector<float>& v);    // Float32Array
val js_value(const std::vector<double>& v);   // Float64Array
val js_value(const std::vector<int32_t>& v);  // Int32Array
val js_value(const std::vector<uint8_t>& v);  // Uint8Array
val js_value(const RowVec& v);                // Float32Array
val js_value(const Mat& m);                   // Matrix {data: Float32Array, rows, cols}
val js_value(const IntMat& m);                // IntMatrix {data: Int32Array, rows, cols}
val js_value(MatOrNull m);                    // null when empty
inline val js_value(const val& v) { return v; }  // converted by the getter
inline val js_value(float x) { return js_value(double(x)); }
inline val js_value(int x) { return js_value(double(x)); }
inline val js_value(int64_t x) { return js_value(double(x)); }

template <typename S, std::enable_if_t<IsJsStruct<S>::value, int> = 0>
val js_value(const S& s);
template <typename T>
val js_value(const std::vector<T>& items) {
  val a = val::array();
  for (const T& x : items) a.call<void>("push", js_value(x));
  return a;
}
template <typename T>
val js_value(const std::optional<T>& x) {
  return x ? js_value(*x) : val::null();
}
template <typename T>
val js_value(const T* x) {
  return x ? js_value(*x) : val::null();
}

// Sets js[name] to x's JS value. The non-templates are compiled once (convert.cpp), so a field
// costs one call.
void put(val& js, const char* name, double x);
void put(val& js, const char* name, bool x);
void put(val& js, const char* name, const std::string& s);
void put(val& js, const char* name, const char* s);
void put(val& js, const char* name, const std::vector<float>& v);
void put(val& js, const char* name, const std::vector<double>& v);
void put(val& js, const char* name, const std::vector<int32_t>& v);
void put(val& js, const char* name, const std::vector<uint8_t>& v);
void put(val& js, const char* name, const RowVec& v);
void put(val& js, const char* name, const Mat& m);
void put(val& js, const char* name, const IntMat& m);
void put(val& js, const char* name, MatOrNull m);
inline void put(val& js, const char* name, float x) { put(js, name, double(x)); }
inline void put(val& js, const char* name, int x) { put(js, name, double(x)); }
inline void put(val& js, const char* name, int64_t x) { put(js, name, double(x)); }
template <typename T>
void put(val& js, const char* name, const T& x) {
  js.set(name, js_value(x));
}
template <typename T>
void put(val& js, const char* name, Maybe<T> x) {
  if (x.value) put(js, name, *x.value);
}

template <typename S>
void put_fields(val& js, const S& s);

// Sets every key of S's table on js.
template <typename S>
void put_fields(val& js, const S& s) {
  std::apply(
      [&](const auto&... f) {
        const auto put_field = [&](const auto& f) {
          if constexpr (IsSpread<std::decay_t<decltype(f)>>::value) put_fields(js, std::invoke(f.get, s));
          else put(js, f.name, std::invoke(f.get, s));
        };
        (put_field(f), ...);
      },
      JsStruct<S>::fields);
}

// S as a new JS object, by its table.
template <typename S, std::enable_if_t<IsJsStruct<S>::value, int>>
val js_value(const S& s) {
  val js = val::object();
  put_fields(js, s);
  return js;
}

// A struct with a table, or a vector of them, as JS (convert.h adds the results shaped by hand).
template <typename T>
val to_js(const T& x) {
  return js_value(x);
}

}  // namespace attn::js
