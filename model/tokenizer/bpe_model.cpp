#include "model/tokenizer/bpe_model.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/tokenizer/byte_level.h"
#include "model/tokenizer/utf8.h"

namespace exspec::tok {
namespace {

uint64_t pair_key(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }

uint64_t mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return k;
}

constexpr uint64_t kEmpty = ~uint64_t(0);

[[noreturn]] void bad(const std::string& msg) { throw std::runtime_error("tokenizer: model BPE: " + msg); }

}  // namespace

void BpeModel::MergeMap::init(size_t n) {
  size_t cap = 16;
  while (cap < n * 2) cap <<= 1;
  keys.assign(cap, kEmpty);
  vals.assign(cap, Merge{0, 0});
  mask = cap - 1;
}

void BpeModel::MergeMap::put(uint64_t key, Merge m) {
  for (uint64_t i = mix(key) & mask;; i = (i + 1) & mask) {
    if (keys[i] == kEmpty || keys[i] == key) {
      keys[i] = key;
      vals[i] = m;  // a later duplicate wins, as in the reference implementations
      return;
    }
  }
}

const BpeModel::Merge* BpeModel::MergeMap::find(uint64_t key) const {
  if (keys.empty()) return nullptr;
  for (uint64_t i = mix(key) & mask;; i = (i + 1) & mask) {
    if (keys[i] == key) return &vals[i];
    if (keys[i] == kEmpty) return nullptr;
  }
}

std::unique_ptr<BpeModel> BpeModel::from_json(const nlohmann::json& j, bool byte_level) {
  if (!j.is_object()) throw std::runtime_error("tokenizer: field 'model' must be an object");
  const std::string type = j.value("type", std::string("BPE"));
  if (type != "BPE")
    throw std::runtime_error("tokenizer: unsupported model type '" + type + "' (supported: BPE)");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    auto it = j.find(key);
    if (it != j.end() && it->is_string() && !it->get<std::string>().empty())
      bad(std::string("unsupported option '") + key + "'");
  }
  if (j.contains("dropout") && j["dropout"].is_number() && j["dropout"].get<double>() > 0.0)
    bad("unsupported option 'dropout' (BPE dropout is for training)");

  auto m = std::make_unique<BpeModel>();
  m->byte_level_ = byte_level;
  m->byte_fallback_ = j.value("byte_fallback", false);
  m->ignore_merges_ = j.value("ignore_merges", false);
  m->fuse_unk_ = j.value("fuse_unk", false);

  auto vit = j.find("vocab");
  if (vit == j.end() || !vit->is_object()) bad("field 'vocab' must be an object {token: id}");
  int64_t max_id = -1;
  for (auto it = vit->begin(); it != vit->end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0)
      bad("vocab id of '" + it.key() + "' must be a non-negative integer");
    max_id = std::max(max_id, it.value().get<int64_t>());
  }
  if (max_id >= (int64_t(1) << 31)) bad("vocab ids must be below 2^31");
  m->tokens_.assign(size_t(max_id + 1), std::string());
  m->present_.assign(size_t(max_id + 1), false);
  m->converted_.assign(size_t(max_id + 1), false);
  auto& converted = m->converted_;
  for (auto it = vit->begin(); it != vit->end(); ++it) {
    const size_t id = size_t(it.value().get<int64_t>());
    const std::string& key = it.key();
    std::string bytes;
    if (byte_level && utf8_is_valid(key) && byte_level_decode(key, bytes)) {
      m->tokens_[id] = std::move(bytes);
      converted[id] = true;
    } else {
      m->tokens_[id] = key;
    }
    m->present_[id] = true;
  }
  m->vocab_.reserve(m->tokens_.size());
  for (int pass = 0; pass < 2; ++pass)  // converted byte-level tokens take precedence
    for (size_t id = 0; id < m->tokens_.size(); ++id)
      if (m->present_[id] && (converted[id] == (pass == 0) || !byte_level))
        m->vocab_.emplace(m->tokens_[id], int32_t(id));

  if (j.contains("unk_token") && j["unk_token"].is_string()) {
    const std::string unk = j["unk_token"].get<std::string>();
    std::string key = unk;
    if (byte_level) { std::string b; if (byte_level_decode(unk, b)) key = b; }
    auto id = m->lookup(key);
    if (!id) bad("unk_token '" + unk + "' is not in the vocab");
    m->unk_id_ = *id;
  }
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    m->byte_ids_[b] = m->lookup(std::string_view(&c, 1)).value_or(-1);
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    m->fallback_ids_[b] = m->lookup(name).value_or(-1);
  }

  auto mit = j.find("merges");
  if (mit != j.end() && !mit->is_null()) {
    if (!mit->is_array()) bad("field 'merges' must be an array");
    m->merges_.init(mit->size());
    uint32_t rank = 0;
    std::string a, b;
    for (const auto& e : *mit) {
      if (e.is_string()) {
        const std::string& s = e.get_ref<const std::string&>();
        const size_t sp = s.find(' ');
        if (sp == std::string::npos) bad("merge #" + std::to_string(rank) + " '" + s + "' is not \"a b\"");
        a = s.substr(0, sp);
        b = s.substr(sp + 1);
      } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
        a = e[0].get<std::string>();
        b = e[1].get<std::string>();
      } else {
        bad("merge #" + std::to_string(rank) + " must be \"a b\" or [a, b]");
      }
      if (byte_level) {
        std::string ab, bb;
        if (byte_level_decode(a, ab) && byte_level_decode(b, bb)) { a.swap(ab); b.swap(bb); }
      }
      const auto ia = m->lookup(a), ib = m->lookup(b), inew = m->lookup(a + b);
      if (!ia || !ib || !inew)
        bad("merge #" + std::to_string(rank) + " uses a token that is not in the vocab");
      m->merges_.put(pair_key(*ia, *ib), Merge{rank, *inew});
      ++rank;
    }
  }
  return m;
}

std::optional<int64_t> BpeModel::token_to_id(std::string_view token) const {
  if (byte_level_ && utf8_is_valid(token)) {
    std::string bytes;
    if (byte_level_decode(token, bytes)) {
      if (auto id = lookup(bytes)) return *id;
    }
  }
  if (auto id = lookup(token)) return *id;
  return std::nullopt;
}

std::optional<std::string> BpeModel::token_text(int64_t id) const {
  const std::string* t = id_to_token(id);
  if (!t) return std::nullopt;
  return converted_[size_t(id)] ? byte_level_encode(*t) : *t;
}

void BpeModel::clear_cache() const {
  std::unique_lock<std::shared_mutex> lock(cache_mu_);
  cache_.clear();
}

void BpeModel::merge_symbols(std::vector<Sym>& syms, std::vector<int64_t>& out) const {
  const int32_t n = int32_t(syms.size());
  if (n > 1) {
    std::vector<uint64_t> heap;
    heap.reserve(size_t(n) * 2);
    auto push_pair = [&](int32_t i) {
      const int32_t j = syms[size_t(i)].next;
      if (j < 0) return;
      if (const Merge* mg = merges_.find(pair_key(syms[size_t(i)].id, syms[size_t(j)].id))) {
        heap.push_back((uint64_t(mg->rank) << 32) | uint32_t(i));
        std::push_heap(heap.begin(), heap.end(), std::greater<uint64_t>());
      }
    };
    for (int32_t i = 0; i + 1 < n; ++i) push_pair(i);
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), std::greater<uint64_t>());
      const uint64_t top = heap.back();
      heap.pop_back();
      const int32_t i = int32_t(top & 0xFFFFFFFFu);
      const uint32_t rank = uint32_t(top >> 32);
      Sym& s = syms[size_t(i)];
      if (s.id < 0 || s.next < 0) continue;
      Sym& r = syms[size_t(s.next)];
      const Merge* mg = merges_.find(pair_key(s.id, r.id));
      if (!mg || mg->rank != rank) continue;  // stale entry
      s.id = mg->id;
      r.id = -1;
      s.next = r.next;
      if (s.next >= 0) syms[size_t(s.next)].prev = i;
      if (s.prev >= 0) push_pair(s.prev);
      push_pair(i);
    }
  }
  for (int32_t i = n ? 0 : -1; i >= 0; i = syms[size_t(i)].next) out.push_back(syms[size_t(i)].id);
}

void BpeModel::encode_word(std::string_view word, std::vector<int64_t>& out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    if (auto id = lookup(word)) { out.push_back(*id); return; }
  }
  const bool cacheable = word.size() < kMaxCachedWord;
  if (cacheable) {
    std::shared_lock<std::shared_mutex> lock(cache_mu_);
    auto it = cache_.find(std::string(word));
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<Sym> syms;
  syms.reserve(word.size());
  auto add = [&](int32_t id, bool unk) {
    if (unk && fuse_unk_ && !syms.empty() && syms.back().id == unk_id_) return;
    const int32_t idx = int32_t(syms.size());
    syms.push_back(Sym{id, idx - 1, -1});
    if (idx > 0) syms[size_t(idx - 1)].next = idx;
  };
  if (byte_level_) {
    for (unsigned char c : word) {
      if (byte_ids_[c] >= 0) add(byte_ids_[c], false);
      else if (unk_id_ >= 0) add(unk_id_, true);
    }
  } else {
    for (size_t i = 0; i < word.size();) {
      const size_t len = std::min(utf8_char_len(static_cast<unsigned char>(word[i])), word.size() - i);
      const std::string_view ch = word.substr(i, len);
      i += len;
      if (auto id = lookup(ch)) { add(*id, false); continue; }
      bool all = byte_fallback_;
      for (size_t k = 0; all && k < ch.size(); ++k) all = fallback_ids_[static_cast<unsigned char>(ch[k])] >= 0;
      if (all) {
        for (unsigned char c : ch) add(fallback_ids_[c], false);
      } else if (unk_id_ >= 0) {
        add(unk_id_, true);
      }
    }
  }
  const size_t mark = out.size();
  merge_symbols(syms, out);
  if (cacheable) {
    std::vector<int32_t> ids(out.begin() + long(mark), out.end());
    std::unique_lock<std::shared_mutex> lock(cache_mu_);
    if (cache_.size() >= kCacheCapacity) cache_.clear();
    cache_.emplace(std::string(word), std::move(ids));
  }
}

}  // namespace exspec::tok
