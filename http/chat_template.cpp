#include "http/chat_template.h"

#include <stdexcept>

#include "http/api_error.h"
#include "model/tokenizer/tokenizer.h"

namespace exspec::http {
namespace {

std::string trim(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// Qwen2's template writes its default system prompt as a literal:
// '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n'.
std::string chatml_default_system(const std::string& tpl) {
  const std::string head = "<|im_start|>system\\n";
  size_t at = 0;
  while ((at = tpl.find(head, at)) != std::string::npos) {
    at += head.size();
    const auto end = tpl.find("<|im_end|>", at);
    if (end == std::string::npos) break;
    const std::string text = tpl.substr(at, end - at);
    if (!text.empty() && text.find_first_of("{}'\"+") == std::string::npos) return text;
  }
  return "";
}

void alternate(const std::vector<ChatMessage>& msgs, size_t first) {
  for (size_t i = first; i < msgs.size(); ++i) {
    const bool want_user = (i - first) % 2 == 0;
    if ((msgs[i].role == "user") != want_user || (msgs[i].role != "user" && msgs[i].role != "assistant"))
      throw bad_param("messages", "this model's chat template needs the roles to alternate user/assistant/user/... "
                                  "(after an optional first system message); message " + std::to_string(i) +
                                  " has role \"" + msgs[i].role + "\"");
  }
}

}  // namespace

const char* family_name(ChatFamily f) {
  switch (f) {
    case ChatFamily::ChatML: return "chatml";
    case ChatFamily::Llama2: return "llama2";
    case ChatFamily::Mistral: return "mistral";
    case ChatFamily::Vicuna: return "vicuna";
    case ChatFamily::Llama3: return "llama3";
    case ChatFamily::Llama31: return "llama3.1";
    case ChatFamily::Glm4: return "glm4";
  }
  return "?";
}

std::string ChatTemplate::render(const std::vector<ChatMessage>& msgs) const {
  if (msgs.empty()) throw bad_param("messages", "messages must not be empty");
  const bool has_system = msgs.front().role == "system";
  for (size_t i = has_system ? 1 : 0; i < msgs.size(); ++i)
    if (msgs[i].role == "system" && family != ChatFamily::ChatML && family != ChatFamily::Llama3 &&
        family != ChatFamily::Glm4)
      throw bad_param("messages", std::string("a system message is only allowed first with the ") +
                                      family_name(family) + " chat template (message " + std::to_string(i) + ")");
  std::string out;
  switch (family) {
    case ChatFamily::ChatML: {
      if (!has_system && !default_system.empty()) out += "<|im_start|>system\n" + default_system + "<|im_end|>\n";
      for (const auto& m : msgs) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
      out += "<|im_start|>assistant\n";
      break;
    }
    case ChatFamily::Llama2: {
      alternate(msgs, has_system ? 1 : 0);
      for (size_t i = has_system ? 1 : 0; i < msgs.size(); ++i) {
        std::string content = msgs[i].content;
        if (i == (has_system ? 1u : 0u) && has_system)
          content = "<<SYS>>\n" + msgs[0].content + "\n<</SYS>>\n\n" + content;
        if (msgs[i].role == "user") out += bos_text + "[INST] " + trim(content) + " [/INST]";
        else out += " " + trim(content) + " " + eos_text;
      }
      break;
    }
    case ChatFamily::Mistral: {
      alternate(msgs, has_system ? 1 : 0);
      out += bos_text;
      for (size_t i = has_system ? 1 : 0; i < msgs.size(); ++i) {
        std::string content = msgs[i].content;
        if (i == (has_system ? 1u : 0u) && has_system) content = msgs[0].content + "\n\n" + content;
        if (msgs[i].role == "user") out += "[INST] " + content + " [/INST]";
        else out += content + eos_text;
      }
      break;
    }
    case ChatFamily::Vicuna: {  // FastChat vicuna_v1.1: sep " ", sep2 "</s>"
      alternate(msgs, has_system ? 1 : 0);
      out += bos_text + (has_system ? msgs[0].content : default_system) + " ";
      for (size_t i = has_system ? 1 : 0; i < msgs.size(); ++i) {
        if (msgs[i].role == "user") out += "USER: " + msgs[i].content + " ";
        else out += "ASSISTANT: " + msgs[i].content + eos_text;
      }
      out += "ASSISTANT:";
      break;
    }
    case ChatFamily::Llama3: {
      out += bos_text;
      for (const auto& m : msgs)
        out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) + "<|eot_id|>";
      out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
      break;
    }
    case ChatFamily::Llama31: {  // without tools: the date header and the system message first
      out += bos_text + "<|start_header_id|>system<|end_header_id|>\n\n";
      out += "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n";
      out += (has_system ? trim(msgs[0].content) : std::string()) + "<|eot_id|>";
      for (size_t i = has_system ? 1 : 0; i < msgs.size(); ++i)
        out += "<|start_header_id|>" + msgs[i].role + "<|end_header_id|>\n\n" + trim(msgs[i].content) + "<|eot_id|>";
      out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
      break;
    }
    case ChatFamily::Glm4: {  // GLM-4-9B-chat without tools: messages with empty content are skipped
      out += "[gMASK]<sop>";
      for (const auto& m : msgs)
        if (!m.content.empty()) out += "<|" + m.role + "|>\n" + m.content;
      out += "<|assistant|>";
      break;
    }
  }
  return out;
}

std::optional<ChatTemplate> choose_chat_template(const Tokenizer& tok, const std::string& setting, std::string& why) {
  ChatTemplate t;
  const std::string& tpl = tok.chat_template();
  std::string name = setting;
  if (setting == "auto") {
    t.source = "tokenizer_config.json";
    if (tpl.empty()) {
      name = "chatml";
      t.source = "default (the tokenizer has no chat_template)";
    } else if (tpl.find("<|im_start|>") != std::string::npos) {
      name = "chatml";
      t.default_system = chatml_default_system(tpl);
    } else if (tpl.find("<|start_header_id|>") != std::string::npos) {
      name = tpl.find("Cutting Knowledge Date") != std::string::npos ? "llama3.1" : "llama3";
    } else if (tpl.find("[INST]") != std::string::npos) {
      name = tpl.find("<<SYS>>") != std::string::npos ? "llama2" : "mistral";
    } else if (tpl.find("USER:") != std::string::npos && tpl.find("ASSISTANT:") != std::string::npos) {
      name = "vicuna";
    } else if (tpl.find("[gMASK]<sop>") != std::string::npos && tpl.find("<|assistant|>") != std::string::npos) {
      name = "glm4";
    } else {
      why = "the model's chat_template (tokenizer_config.json) is not one exspec knows (ChatML, Llama-2, Mistral, "
            "Vicuna, Llama-3, Llama-3.1, GLM-4); set \"chat_template\" in the server config to one of chatml, "
            "llama2, mistral, vicuna, llama3, llama3.1, glm4";
      return std::nullopt;
    }
  } else {
    t.source = "config";
  }
  if (name == "chatml") t.family = ChatFamily::ChatML;
  else if (name == "llama2") t.family = ChatFamily::Llama2;
  else if (name == "mistral") t.family = ChatFamily::Mistral;
  else if (name == "vicuna") t.family = ChatFamily::Vicuna;
  else if (name == "llama3") t.family = ChatFamily::Llama3;
  else if (name == "llama3.1") t.family = ChatFamily::Llama31;
  else if (name == "glm4") t.family = ChatFamily::Glm4;
  else
    throw std::invalid_argument("chat_template \"" + setting +
                                "\" is not one of auto, chatml, llama2, mistral, vicuna, llama3, llama3.1, glm4");
  if (t.family == ChatFamily::Vicuna && t.default_system.empty())
    t.default_system = "A chat between a curious user and an artificial intelligence assistant. The assistant gives "
                       "helpful, detailed, and polite answers to the user's questions.";
  if (auto b = tok.bos_id())
    if (auto s = tok.id_to_token(*b)) t.bos_text = *s;
  const auto eos = tok.eos_ids();
  if (!eos.empty())
    if (auto s = tok.id_to_token(eos.front())) t.eos_text = *s;
  std::vector<std::string> ends;
  if (t.family == ChatFamily::ChatML) ends = {"<|im_end|>"};
  if (t.family == ChatFamily::Llama3 || t.family == ChatFamily::Llama31) ends = {"<|eot_id|>"};
  // GLM-4 ends an assistant turn by starting the next one: the user's or a tool's.
  if (t.family == ChatFamily::Glm4) ends = {"<|user|>", "<|observation|>"};
  for (const auto& end : ends) {
    if (auto id = tok.token_to_id(end); id && tok.is_special(*id)) t.end_ids.push_back(*id);
    else t.end_stops.push_back(end);
  }
  return t;
}

}  // namespace exspec::http
