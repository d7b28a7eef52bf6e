// The JSON reader behind the safetensors header: what it accepts, and that every malformed or
// hostile input is a one-line std::invalid_argument naming the byte offset.
#include <catch2/catch.hpp>

#include <string>

#include "attn/base/json.h"

using attn::json::parse;
using attn::json::Value;
using Catch::Matchers::Contains;

namespace {

// The message of the std::invalid_argument that parse(text) throws ("" and a failure otherwise).
std::string json_parse_error(const std::string& text, int max_depth = attn::json::kDefaultMaxDepth) {
  try {
    parse(text, max_depth);
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    CHECK(msg.find('\n') == std::string::npos);
    CHECK_THAT(msg, Contains("invalid JSON at byte"));
    return msg;
  }
  FAIL("parse accepted: " << text);
  return "";
}

std::string str_key(int i) { return "\"k" + std::to_string(i) + "\""; }

}  // namespace

TEST_CASE("json: scalars, arrays and objects") {
  CHECK(parse("null").type == Value::Type::Null);
  CHECK(parse(" true ").boolean);
  CHECK_FALSE(parse("false").boolean);
  const Value n = parse("-12");
  CHECK(n.is_int);
  CHECK(n.integer == -12);
  const Value f = parse("2.5e-1");
  CHECK_FALSE(f.is_int);
  CHECK(f.number == 0.25);
  CHECK(parse("-0").integer == 0);

  const Value v = parse(R"( {"a": [1, 2, {"b": null}], "c": "x", "d": {}} )");
  REQUIRE(v.is_object());
  REQUIRE(v.object.size() == 3);
  CHECK(v.object[0].first == "a");  // file order is kept
  const Value* a = v.find("a");
  REQUIRE(a);
  REQUIRE(a->array.size() == 3);
  CHECK(a->array[1].integer == 2);
  CHECK(a->array[2].find("b")->type == Value::Type::Null);
  CHECK(v.find("c")->string == "x");
  CHECK(v.find("d")->object.empty());
  CHECK(v.find("zz") == nullptr);
  CHECK(parse("[]").array.empty());
}

TEST_CASE("json: integers up to the int64 limits stay exact") {
  CHECK(parse("9223372036854775807").integer == INT64_MAX);
  CHECK(parse("-9223372036854775808").integer == INT64_MIN);
  const Value big = parse("9223372036854775808");  // one past: a number, not an integer
  CHECK_FALSE(big.is_int);
  CHECK(big.number == 9223372036854775808.0);
  CHECK_FALSE(parse("1e3").is_int);
}

TEST_CASE("json: string escapes, \\u and surrogate pairs decode to UTF-8") {
  CHECK(parse(R"("a\"b\\c\/d\b\f\n\r\t")").string == "a\"b\\c/d\b\f\n\r\t");
  CHECK(parse(R"("\u0041\u00e9\u20AC")").string == "A\xC3\xA9\xE2\x82\xAC");  // A é €
  CHECK(parse(R"("\ud83d\ude00")").string == "\xF0\x9F\x98\x80");             // U+1F600
  CHECK(parse("\"\xC3\xA9\"").string == "\xC3\xA9");                            // raw UTF-8
  CHECK(parse(R"("\u0000")").string == std::string(1, '\0'));
}

TEST_CASE("json: malformed documents are rejected with the byte offset") {
  CHECK_THAT(json_parse_error(""), Contains("end of input"));
  CHECK_THAT(json_parse_error("   "), Contains("end of input"));
  CHECK_THAT(json_parse_error("{"), Contains("byte 1"));
  CHECK_THAT(json_parse_error("{\"a\":1,}"), Contains("string key"));
  CHECK_THAT(json_parse_error("{\"a\" 1}"), Contains("':'"));
  CHECK_THAT(json_parse_error("[1 2]"), Contains("',' or ']'"));
  CHECK_THAT(json_parse_error("[1,]"), Contains("expected a value"));
  CHECK_THAT(json_parse_error("{} {}"), Contains("after the value"));
  CHECK_THAT(json_parse_error("tru"), Contains("'true'"));
  CHECK_THAT(json_parse_error("nul"), Contains("'null'"));
  CHECK_THAT(json_parse_error("{'a':1}"), Contains("string key"));
  CHECK_THAT(json_parse_error("[NaN]"), Contains("expected a value"));
}

TEST_CASE("json: bad numbers") {
  CHECK_THAT(json_parse_error("01"), Contains("leading zero"));
  CHECK_THAT(json_parse_error("-"), Contains("digit"));
  CHECK_THAT(json_parse_error("1."), Contains("after '.'"));
  CHECK_THAT(json_parse_error("1e"), Contains("exponent"));
  CHECK_THAT(json_parse_error("+1"), Contains("expected a value"));
  CHECK_THAT(json_parse_error(".5"), Contains("expected a value"));
}

TEST_CASE("json: bad strings") {
  CHECK_THAT(json_parse_error("\"abc"), Contains("unterminated string"));
  CHECK_THAT(json_parse_error("\"a\\"), Contains("unterminated escape"));
  CHECK_THAT(json_parse_error("\"\\x\""), Contains("invalid escape"));
  CHECK_THAT(json_parse_error("\"\\u12\""), Contains("hex"));
  CHECK_THAT(json_parse_error("\"\\u12"), Contains("4 hex digits"));
  CHECK_THAT(json_parse_error("\"a\nb\""), Contains("control character"));
  CHECK_THAT(json_parse_error(std::string("\"a\0b\"", 5)), Contains("control character"));
  CHECK_THAT(json_parse_error(R"("\ud83d")"), Contains("surrogate"));
  CHECK_THAT(json_parse_error(R"("\ud83dx")"), Contains("surrogate"));
  CHECK_THAT(json_parse_error(R"("\ude00")"), Contains("lone low surrogate"));
  CHECK_THAT(json_parse_error(R"("\ud83d\u0041")"), Contains("low surrogate"));
}

TEST_CASE("json: invalid UTF-8 is rejected") {
  CHECK_THAT(json_parse_error("\"\xFF\""), Contains("invalid UTF-8"));
  CHECK_THAT(json_parse_error("\"\xC0\xAF\""), Contains("invalid UTF-8"));      // overlong '/'
  CHECK_THAT(json_parse_error("\"\xE0\x80\xAF\""), Contains("invalid UTF-8"));  // overlong
  CHECK_THAT(json_parse_error("\"\xED\xA0\x80\""), Contains("invalid UTF-8"));  // encoded surrogate
  CHECK_THAT(json_parse_error("\"\xF4\x90\x80\x80\""), Contains("invalid UTF-8"));  // > U+10FFFF
  CHECK_THAT(json_parse_error("\"\xC3\""), Contains("UTF-8"));                  // cut at the quote
  CHECK_THAT(json_parse_error("\"\xE2\x82"), Contains("truncated UTF-8"));      // cut at the end
}

TEST_CASE("json: duplicate keys are rejected") {
  CHECK_THAT(json_parse_error(R"({"a":1,"b":2,"a":3})"), Contains("duplicate key \"a\""));
  // Keys equal after unescaping are duplicates too.
  CHECK_THAT(json_parse_error(R"({"a":1,"\u0061":2})"), Contains("duplicate key"));
}

TEST_CASE("json: nesting is bounded, so deep input cannot exhaust the stack") {
  const std::string ok = std::string(64, '[') + std::string(64, ']');
  CHECK(parse(ok).is_array());
  CHECK_THAT(json_parse_error(std::string(65, '[') + std::string(65, ']')), Contains("nesting"));
  CHECK_THAT(json_parse_error(std::string(100000, '[')), Contains("nesting"));
  CHECK_THAT(json_parse_error(std::string(100000, '{')), Contains("string key"));
  std::string objs;
  for (int i = 0; i < 5; ++i) objs += "{\"a\":";
  CHECK_THAT(json_parse_error(objs + "1}}}}}", 4), Contains("nesting deeper than 4"));
}

TEST_CASE("json: every prefix of a valid document is rejected, never over-read") {
  const std::string doc = R"({"k\u00e9y":[1,-2.5e3,true,false,null,"s\"t"],"o":{"x":{}}})";
  CHECK(parse(doc).is_object());
  for (size_t n = 0; n < doc.size(); ++n) {
    // An exact-size heap copy, so a sanitizer build would catch a read past the end.
    const std::string prefix = doc.substr(0, n);
    CAPTURE(prefix);
    CHECK_THROWS_AS(parse(prefix), std::invalid_argument);
  }
}

TEST_CASE("json: quote and printable escape control characters") {
  CHECK(attn::json::quote("a\"b\\c\n\x01") == "\"a\\\"b\\\\c\\n\\u0001\"");
  CHECK(parse(attn::json::quote("x\ty\x1f\"")).string == "x\ty\x1f\"");
  CHECK(attn::json::printable("abcdef", 3) == "\"abc...\"");
  // Never cuts inside a UTF-8 sequence: "é" is 2 bytes.
  CHECK(attn::json::printable("a\xC3\xA9z", 2) == "\"a...\"");
  CHECK(attn::json::printable("line\nbreak").find('\n') == std::string::npos);
}

TEST_CASE("json: the number of values is bounded, and many keys parse in linear time") {
  CHECK(parse("[1,2,3]", 64, 4).array.size() == 3);
  CHECK_THROWS_WITH(parse("[1,2,3,4]", 64, 4), Contains("more than 4 values"));
  // 200k distinct keys: quadratic duplicate detection would take minutes here.
  std::string big = "{";
  for (int i = 0; i < 200000; ++i) big += str_key(i) + ":0,";
  big.back() = '}';
  CHECK(parse(big).object.size() == 200000);
  big.back() = ',';
  big += str_key(123456) + ":1}";
  CHECK_THROWS_WITH(parse(big), Contains("duplicate key \"k123456\""));
}

TEST_CASE("json: the byte offset names where the fault is") {
  CHECK(json_parse_error("[1 2]") == "invalid JSON at byte 3: expected ',' or ']', got '2'");
  CHECK(json_parse_error("[true, tru]") == "invalid JSON at byte 7: expected 'true'");
  CHECK(json_parse_error("{\"a\":1, \"a\":2}") == "invalid JSON at byte 8: duplicate key \"a\"");
  CHECK(json_parse_error("[\"ok\", \"\xC3\"]") == "invalid JSON at byte 8: invalid UTF-8 byte 0xc3");
  CHECK(json_parse_error("[\"a\\u12x4\"]") ==
        "invalid JSON at byte 7: invalid hex digit 'x' in \\u escape");
  CHECK(json_parse_error("[[[1]]]", 2) == "invalid JSON at byte 2: nesting deeper than 2");
  CHECK(json_parse_error("[0, 012]") == "invalid JSON at byte 4: leading zero in number");
  CHECK(json_parse_error("[1, \"ab") == "invalid JSON at byte 7: unterminated string");
}

TEST_CASE("json: no byte order mark, no NUL byte, no number a double cannot hold") {
  CHECK_THAT(json_parse_error("\xEF\xBB\xBF{}"), Contains("byte 0: expected a value, got byte 0xef"));
  CHECK_THAT(json_parse_error(std::string("{}\0", 3)),
             Contains("byte 2: unexpected byte 0x00 after the value"));
  CHECK_THAT(json_parse_error(std::string("[1,\0]", 5)),
             Contains("byte 3: expected a value, got byte 0x00"));
  CHECK_THAT(json_parse_error("[1e400]"), Contains("byte 1: number out of range"));
  CHECK(parse("[1e308, -1e308]").array[1].number == -1e308);
}
