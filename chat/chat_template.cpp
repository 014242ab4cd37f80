#include "chat/chat_template.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "model/tokenizer/tokenizer.h"

namespace exspec::chat {
namespace {

using nlohmann::ordered_json;

// transformers' default_chat_template before templates were required (ChatML).
const char* const kChatML =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
    "'\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

// Special tokens that end a turn where a vocabulary has them (as llama.cpp's end-of-generation
// list): GLM's <|observation|> starts a tool's turn, which a probe conversation cannot show.
const char* const kTurnEnds[] = {"<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<end_of_turn>", "<|end|>",
                                 "<|observation|>", "<｜end▁of▁sentence｜>"};

std::shared_ptr<const jinja::Template> compile(const std::string& text, const std::string& where) {
  try {
    return std::make_shared<const jinja::Template>(jinja::Template::parse(text));
  } catch (const jinja::TemplateError& e) {
    throw std::runtime_error("the chat template (" + where + ") cannot be run: line " + std::to_string(e.line()) +
                             ": " + e.what());
  }
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("--chat-template " + path + ": cannot read the file");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Renders with the variables apply_chat_template passes; TemplateError passes through.
std::string run(const jinja::Template& t, const ChatTemplate& ct, const ChatInput& in, const ordered_json& messages) {
  ordered_json vars = ct.special_tokens;
  for (auto it = in.kwargs.begin(); it != in.kwargs.end(); ++it) vars[it.key()] = it.value();
  vars["messages"] = messages;
  vars["tools"] = in.tools;
  vars["documents"] = nullptr;
  vars["add_generation_prompt"] = in.add_generation_prompt;
  return t.render(vars, in.now);
}

// The special tokens that open what a template writes after an assistant's text.
void probe_turn_end(ChatTemplate& ct, const Tokenizer& tok) {
  const std::string probe = "\x01probe\x01";
  const ordered_json user{{"role", "user"}, {"content", "x"}}, answer{{"role", "assistant"}, {"content", probe}};
  std::vector<int64_t> ids;
  for (const ordered_json& msgs : {ordered_json{user, answer}, ordered_json{user, answer, user}}) {
    ChatInput in;
    in.add_generation_prompt = false;
    std::string text;
    try {
      text = run(*ct.program, ct, in, msgs);
    } catch (const jinja::TemplateError&) {
      continue;
    }
    const size_t at = text.find(probe);
    if (at == std::string::npos) continue;
    const auto after = tok.encode(text.substr(at + probe.size()), false, /*allow_special=*/true);
    if (!after.empty() && tok.is_special(after[0])) ids.push_back(after[0]);
  }
  for (const char* end : kTurnEnds)
    if (auto id = tok.token_to_id(end); id && tok.is_special(*id)) ids.push_back(*id);
  for (int64_t id : ids)
    if (std::find(ct.end_ids.begin(), ct.end_ids.end(), id) == ct.end_ids.end()) ct.end_ids.push_back(id);
}

}  // namespace

std::string ChatTemplate::render(const ChatInput& in) const {
  const jinja::Template& t = !in.tools.is_null() && tool_use ? *tool_use : *program;
  try {
    try {
      return run(t, *this, in, in.messages);
    } catch (const jinja::TemplateError& e) {
      // An assistant message with tool_calls may come back with content null (OpenAI's shape);
      // templates that use the content as a string fail on it, so retry with "" (as llama.cpp).
      bool nulls = false;
      ordered_json msgs = in.messages;
      for (auto& m : msgs)
        if (m.contains("content") && m["content"].is_null()) {
          m["content"] = "";
          nulls = true;
        }
      if (e.raised() || !nulls) throw;
      return run(t, *this, in, msgs);
    }
  } catch (const jinja::TemplateError& e) {
    if (e.raised()) throw ChatTemplateError(e.what());
    throw ChatTemplateError("the chat template failed on these messages (line " + std::to_string(e.line()) + "): " +
                            e.what());
  }
}

ChatTemplate load_chat_template(const Tokenizer& tok, const std::string& setting, const std::string& tool_parser) {
  ChatTemplate ct;
  for (const auto& [name, text] : tok.special_tokens_map()) ct.special_tokens[name] = text;
  std::string text, tool_text;
  if (setting == "auto" && !tok.chat_templates().empty()) {
    ct.source = "tokenizer_config.json";
    for (const auto& [name, body] : tok.chat_templates()) {
      auto program = compile(body, "tokenizer_config.json \"" + name + "\"");
      if (name == "default") ct.program = program, text = body;
      if (name == "tool_use") ct.tool_use = program, tool_text = body;
    }
    if (!ct.program)
      throw std::runtime_error("tokenizer_config.json's chat_template list has no \"default\" template");
  } else if (setting == "auto" && !tok.chat_template().empty()) {
    ct.source = "tokenizer_config.json";
    text = tok.chat_template();
  } else if (setting == "auto" || setting == "chatml") {
    ct.source = setting == "auto" ? "ChatML (the tokenizer has no chat_template)" : "ChatML";
    text = kChatML;
  } else {
    if (!std::filesystem::is_regular_file(setting))
      throw std::runtime_error("--chat-template " + setting + ": no such file (give \"auto\", \"chatml\" or a Jinja "
                               "template file)");
    ct.source = setting;
    text = read_file(setting);
  }
  if (!ct.program) ct.program = compile(text, ct.source);
  if (tool_parser == "auto") {
    ct.tool_format = tool_format_of_template(tool_text.empty() ? text : tool_text);
  } else if (auto f = tool_format_named(tool_parser)) {
    ct.tool_format = *f;
  } else {
    throw std::runtime_error("tool_call_parser \"" + tool_parser +
                             "\" is not one of auto, hermes, llama3_json, deepseek_v3, mistral, none");
  }
  ct.mistral_args = (tool_text.empty() ? text : tool_text).find("[ARGS]") != std::string::npos;
  probe_turn_end(ct, tok);
  if (text == kChatML) {  // ChatML written as text in a vocabulary without its tokens
    if (auto id = tok.token_to_id("<|im_end|>"); !id || !tok.is_special(*id)) ct.end_stops.push_back("<|im_end|>");
  }
  return ct;
}

}  // namespace exspec::chat
