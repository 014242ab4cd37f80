// One line of `exspec script` (app/script_line.h): words and redirections as a shell reads a
// simple command, and the errors of a line that cannot be read. Torch-free.
#include <catch2/catch.hpp>

#include "app/script_line.h"

using exspec::parse_script_line;
using Words = std::vector<std::string>;

CATCH_TEST_CASE("script lines: words split at blanks, with quotes and backslashes as a shell takes them") {
  CATCH_CHECK(parse_script_line("generate --model m  --max-tokens\t8").words == Words{"generate", "--model", "m", "--max-tokens", "8"});
  CATCH_CHECK(parse_script_line(R"(generate --prompt "hello world" --prompt 'it''s' --prompt a\ b)").words ==
              Words{"generate", "--prompt", "hello world", "--prompt", "its", "--prompt", "a b"});
  CATCH_CHECK(parse_script_line(R"(x "say \"hi\" \\ \n" '\n' "")").words == Words{"x", R"(say "hi" \ \n)", R"(\n)", ""});
  CATCH_CHECK(parse_script_line("   ").words.empty());
  CATCH_CHECK(parse_script_line("  # generate --model m").words.empty());
  CATCH_CHECK(parse_script_line("generate --prompt #1").words == Words{"generate", "--prompt", "#1"});
}

CATCH_TEST_CASE("script lines: > >> 2> 2>> with or without a space, 2>&1, and quoted ones are words") {
  auto l = parse_script_line("generate --model m > out.jsonl 2>err.txt");
  CATCH_CHECK(l.words == Words{"generate", "--model", "m"});
  CATCH_REQUIRE(l.out);
  CATCH_CHECK(l.out->path == "out.jsonl");
  CATCH_CHECK_FALSE(l.out->append);
  CATCH_REQUIRE(l.err);
  CATCH_CHECK(l.err->path == "err.txt");
  CATCH_CHECK_FALSE(l.err->append);
  l = parse_script_line(">>'a file' check 2>> log");
  CATCH_CHECK(l.words == Words{"check"});
  CATCH_CHECK(l.out->path == "a file");
  CATCH_CHECK(l.out->append);
  CATCH_CHECK(l.err->append);
  l = parse_script_line("check > both.txt 2>&1");
  CATCH_CHECK(l.out->path == "both.txt");
  CATCH_CHECK_FALSE(l.err);
  CATCH_CHECK(l.err_to_out);
  l = parse_script_line(R"(tokenize --text ">" '2>' \> x)");
  CATCH_CHECK(l.words == Words{"tokenize", "--text", ">", "2>", ">", "x"});
  CATCH_CHECK_FALSE(l.out);
  CATCH_CHECK_FALSE(l.err);
}

CATCH_TEST_CASE("script lines: an unclosed quote, a trailing backslash and a bare or second redirection are errors") {
  CATCH_CHECK_THROWS_WITH(parse_script_line(R"(generate --prompt "hi)"), "an unclosed \" quote");
  CATCH_CHECK_THROWS_WITH(parse_script_line("generate --prompt 'hi"), "an unclosed ' quote");
  CATCH_CHECK_THROWS_WITH(parse_script_line("generate \\"), "a backslash ends the line");
  CATCH_CHECK_THROWS_WITH(parse_script_line("generate >"), "a redirection without its file");
  CATCH_CHECK_THROWS_WITH(parse_script_line("generate > a >b"), "stdout redirected twice");
  CATCH_CHECK_THROWS_WITH(parse_script_line("generate 2> a 2>>b"), "stderr redirected twice");
  CATCH_CHECK_THROWS_WITH(parse_script_line("generate 2> a 2>&1"), "stderr redirected twice");
  CATCH_CHECK_THROWS_WITH(parse_script_line("generate 2>&1 > a"), "2>&1 before > FILE: write > FILE 2>&1");
}
