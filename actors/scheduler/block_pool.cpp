#include "actors/scheduler/block_pool.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace exspec {

size_t BlockPool::KeyHash::operator()(const Key& k) const {
  uint64_t h = 1469598103934665603ull ^ k.parent;  // FNV-1a over the parent and the tokens
  for (int64_t t : k.tokens) h = (h ^ static_cast<uint64_t>(t)) * 1099511628211ull;
  return static_cast<size_t>(h);
}

BlockPool::BlockPool(int64_t slots, int64_t blocks_per_slot, int64_t block_size, bool cache)
    : per_slot_(blocks_per_slot), block_size_(block_size), cache_(cache) {
  if (slots < 1 || blocks_per_slot < 1 || block_size < 1) throw std::invalid_argument("BlockPool: empty geometry");
  blocks_.resize(static_cast<size_t>(slots * blocks_per_slot));
  for (int64_t i = 0; i < blocks(); ++i) free_.insert(free_.end(), i);
}

BlockTable BlockPool::match(const std::vector<int64_t>& tokens, int64_t max_positions) const {
  BlockTable found;
  if (!cache_) return found;
  Key key;
  const int64_t n = std::min<int64_t>(max_positions, static_cast<int64_t>(tokens.size())) / block_size_;
  for (int64_t i = 0; i < n; ++i) {
    key.tokens.assign(tokens.begin() + i * block_size_, tokens.begin() + (i + 1) * block_size_);
    auto it = keys_.find(key);
    if (it == keys_.end()) break;
    found.push_back(it->second);
    key.parent = blocks_[static_cast<size_t>(it->second)].entry;
  }
  return found;
}

int64_t BlockPool::unheld(const BlockTable& blocks) const {
  int64_t n = 0;
  for (int64_t id : blocks) n += blocks_.at(static_cast<size_t>(id)).holders == 0;
  return n;
}

void BlockPool::take(BlockTable& table, const BlockTable& blocks) {
  if (!table.empty()) throw std::logic_error("BlockPool::take: a cached prefix starts a table");
  for (int64_t id : blocks) hold(id), table.push_back(id);
}

bool BlockPool::grow(BlockTable& table, int64_t slot, int64_t positions) {
  const int64_t need = blocks_for(positions) - static_cast<int64_t>(table.size());
  if (need <= 0) return true;
  if (need > available()) return false;
  for (int64_t i = static_cast<int64_t>(table.size()); i < blocks_for(positions); ++i) {
    const bool at_home = i < per_slot_ && blocks_[static_cast<size_t>(home(slot, i))].holders == 0;
    const int64_t id = at_home ? home(slot, i) : borrowable();
    claim(id);
    table.push_back(id);
  }
  return true;
}

bool BlockPool::home_free(int64_t slot, int64_t n) const {
  if (n > per_slot_) return false;
  for (int64_t i = 0; i < n; ++i)
    if (blocks_[static_cast<size_t>(home(slot, i))].holders != 0) return false;
  return true;
}

bool BlockPool::home_clean(int64_t slot, int64_t n) const {
  if (!home_free(slot, n)) return false;
  for (int64_t i = 0; i < n; ++i)
    if (blocks_[static_cast<size_t>(home(slot, i))].entry != 0) return false;
  return true;
}

BlockTable BlockPool::take_home(int64_t slot, int64_t n) {
  if (!home_free(slot, n)) throw std::logic_error("BlockPool::take_home: a home block is held");
  BlockTable t;
  for (int64_t i = 0; i < n; ++i) claim(home(slot, i)), t.push_back(home(slot, i));
  return t;
}

bool BlockPool::at_home(const BlockTable& table, int64_t slot) const {
  if (static_cast<int64_t>(table.size()) > per_slot_) return false;
  for (size_t i = 0; i < table.size(); ++i)
    if (table[i] != home(slot, static_cast<int64_t>(i))) return false;
  return true;
}

void BlockPool::release(BlockTable& table) {
  // The tail of a chain is evicted before its head: a block is found only after the ones before it.
  const uint64_t base = clock_;
  clock_ += table.size() + 1;
  for (size_t i = 0; i < table.size(); ++i) {
    blocks_[static_cast<size_t>(table[i])].last_use = base + table.size() - i;
    unhold(table[i]);
  }
  table.clear();
}

void BlockPool::publish(const BlockTable& table, const std::vector<int64_t>& tokens, int64_t valid) {
  if (!cache_) return;
  const int64_t full = std::min({valid, static_cast<int64_t>(tokens.size()) / block_size_ * block_size_,
                                 static_cast<int64_t>(table.size()) * block_size_}) / block_size_;
  Key key;
  for (int64_t i = 0; i < full; ++i) {
    Block& b = blocks_.at(static_cast<size_t>(table[i]));
    if (b.entry != 0) {  // cached already: taken from the cache, or published before
      key.parent = b.entry;
      continue;
    }
    key.tokens.assign(tokens.begin() + i * block_size_, tokens.begin() + (i + 1) * block_size_);
    auto it = keys_.find(key);
    if (it != keys_.end()) {  // another block holds the same content: the chain goes on through it
      key.parent = blocks_[static_cast<size_t>(it->second)].entry;
      continue;
    }
    b.entry = next_entry_++;
    keys_.emplace(key, table[i]);
    entries_.emplace(b.entry, key);
    key.parent = b.entry;
  }
}

void BlockPool::claim(int64_t id) {
  Block& b = blocks_.at(static_cast<size_t>(id));
  if (b.holders != 0) throw std::logic_error("BlockPool: block " + std::to_string(id) + " is held");
  if (b.entry != 0) forget(id);
  free_.erase(id);
  hold(id);
}

void BlockPool::hold(int64_t id) {
  Block& b = blocks_.at(static_cast<size_t>(id));
  if (b.holders++ == 0) {
    ++held_;
    if (b.entry != 0) idle_.erase({b.last_use, id});
    else free_.erase(id);
  }
  b.last_use = ++clock_;
}

void BlockPool::unhold(int64_t id) {
  Block& b = blocks_.at(static_cast<size_t>(id));
  if (b.holders <= 0) throw std::logic_error("BlockPool: block " + std::to_string(id) + " is not held");
  if (--b.holders > 0) return;
  --held_;
  if (b.entry != 0) idle_.insert({b.last_use, id});
  else free_.insert(id);
}

void BlockPool::forget(int64_t id) {
  Block& b = blocks_.at(static_cast<size_t>(id));
  auto e = entries_.find(b.entry);
  keys_.erase(e->second);
  entries_.erase(e);
  if (b.holders == 0) idle_.erase({b.last_use, id}), free_.insert(id);
  b.entry = 0;
}

int64_t BlockPool::borrowable() const {
  if (!free_.empty()) return *free_.begin();
  if (!idle_.empty()) return idle_.begin()->second;
  throw std::logic_error("BlockPool: no block to borrow");
}

}  // namespace exspec
