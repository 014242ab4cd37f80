#include "actors/scheduler/block_manager.h"

#include <algorithm>
#include <stdexcept>

#include "actors/scheduler/slot_moves.h"

namespace exspec {
namespace {

// Blocks of each slot's own row: the resolved geometry (fit_store), else a whole context.
int64_t row_blocks(const EngineConfig& c) {
  constexpr int64_t kUnsizedContext = 4096;  // a Scheduler built without fit_store (unit tests)
  const int64_t positions = c.slot_positions > 0 ? c.slot_positions
                                                 : (c.context > 0 ? c.context : kUnsizedContext) + largest_k(c);
  return (positions + c.block_size - 1) / c.block_size;
}

std::vector<int64_t> slots_of(const std::vector<SlotRow>& rows) {
  std::vector<int64_t> slots;
  for (const SlotRow& r : rows) slots.push_back(r.slot);
  return slots;
}

}  // namespace

BlockManager::BlockManager(const EngineConfig& c)
    : has_draft_(c.draft),
      block_size_(c.block_size),
      slots_(c.slots),
      target_pool_(c.slots, row_blocks(c), c.block_size, c.prefix_cache),
      draft_pool_(c.slots, row_blocks(c), c.block_size, c.prefix_cache),
      tables_(static_cast<size_t>(c.slots)) {}

BlockCounts BlockManager::counts() const { return {target_pool_.blocks(), target_pool_.held(), target_pool_.cached()}; }

StoreBlocks BlockManager::available() const {
  return {target_pool_.available(), has_draft_ ? draft_pool_.available() : 0};
}

// The cached blocks of the longest prefix of these tokens before the pending one, in each store:
// the draft's at most the target's.
BlockManager::Hits BlockManager::hits(const std::vector<int64_t>& tokens) const {
  Hits h;
  h.target = target_pool_.match(tokens, static_cast<int64_t>(tokens.size()) - 1);
  if (has_draft_) h.draft = draft_pool_.match(tokens, static_cast<int64_t>(h.target.size()) * block_size_);
  return h;
}

StoreBlocks BlockManager::admission(const std::vector<int64_t>& tokens, int64_t step) const {
  const int64_t need = static_cast<int64_t>(tokens.size()) + step;
  const Hits h = hits(tokens);
  StoreBlocks a;
  a.target = target_pool_.blocks_for(need) - static_cast<int64_t>(h.target.size()) + target_pool_.unheld(h.target);
  if (has_draft_)
    a.draft = draft_pool_.blocks_for(need) - static_cast<int64_t>(h.draft.size()) + draft_pool_.unheld(h.draft);
  return a;
}

std::optional<BlockManager::Allocation> BlockManager::allocate(const std::vector<int64_t>& tokens, bool use_cache) {
  const int64_t before_pending = static_cast<int64_t>(tokens.size()) - 1;
  const Hits h = use_cache ? hits(tokens) : Hits{};
  int64_t preferred = h.target.empty() ? -1 : h.target[0] / target_pool_.blocks_per_slot();
  if (preferred >= 0 && (h.target[0] != target_pool_.home(preferred, 0) || slots_.in_use(preferred))) preferred = -1;
  if (preferred < 0) preferred = coldest_free_slot(target_pool_.blocks_for(before_pending));
  Allocation a;
  a.slot = slots_.acquire(preferred);
  if (a.slot < 0) throw std::logic_error("BlockManager: no free slot for a newcomer");
  SlotBlocks& t = tables_[static_cast<size_t>(a.slot)];
  a.copied = take_prefix(target_pool_, h.target, a.slot, t.target, t.target_from, t.pending.target) +
             take_prefix(draft_pool_, h.draft, a.slot, t.draft, t.draft_from, t.pending.draft);
  const bool room = target_pool_.grow(t.target, a.slot, before_pending) &&
                    (!has_draft_ || draft_pool_.grow(t.draft, a.slot, before_pending));
  if (!room) {  // nothing is stored yet: nothing is cached
    free(a.slot);
    return std::nullopt;
  }
  a.cached = {static_cast<int64_t>(h.target.size()) * block_size_, static_cast<int64_t>(h.draft.size()) * block_size_};
  return a;
}

int64_t BlockManager::coldest_free_slot(int64_t n) const {
  int64_t coldest = -1;
  for (int64_t c = 0; c < slots_.slots(); ++c) {
    if (slots_.in_use(c)) continue;
    if (target_pool_.home_clean(c, std::min(n, target_pool_.blocks_per_slot()))) return c;
    if (coldest < 0 || tables_[static_cast<size_t>(c)].released < tables_[static_cast<size_t>(coldest)].released) coldest = c;
  }
  return coldest;
}

// A copy (a read of the prefix once, the next job's; the cached blocks are held until it
// returns) spares a gather of this row at every later forward.
int64_t BlockManager::take_prefix(BlockPool& pool, const BlockTable& hit, int64_t slot, BlockTable& table,
                                  BlockTable& from, std::vector<std::pair<int64_t, int64_t>>& copies) {
  const int64_t n = static_cast<int64_t>(hit.size());
  // (A clean home holds none of the cached blocks it would copy.)
  const bool own = n > 0 && !pool.at_home(hit, slot) && pool.home_clean(slot, n);
  if (!own) {
    pool.take(table, hit);
    return 0;
  }
  pool.take(from, hit);
  table = pool.take_home(slot, n);
  for (int64_t i = 0; i < n; ++i) copies.emplace_back(hit[i], table[i]);
  return n;
}

bool BlockManager::can_reserve(int64_t slot, int64_t positions) const {
  const SlotBlocks& t = tables_.at(static_cast<size_t>(slot));
  auto short_of = [&](const BlockPool& pool, const BlockTable& table) {
    return pool.blocks_for(positions) - static_cast<int64_t>(table.size()) > pool.available();
  };
  return !short_of(target_pool_, t.target) && !(has_draft_ && short_of(draft_pool_, t.draft));
}

void BlockManager::reserve(int64_t slot, int64_t positions) {
  SlotBlocks& t = tables_.at(static_cast<size_t>(slot));
  if (!target_pool_.grow(t.target, slot, positions) || (has_draft_ && !draft_pool_.grow(t.draft, slot, positions)))
    throw std::logic_error("BlockManager::reserve: the stores lack the blocks (can_reserve first)");
}

void BlockManager::publish(int64_t slot, const std::vector<int64_t>& tokens, Stored stored) {
  const SlotBlocks& t = tables_.at(static_cast<size_t>(slot));
  target_pool_.publish(t.target, tokens, stored.target);
  if (has_draft_) draft_pool_.publish(t.draft, tokens, stored.draft);
}

void BlockManager::release_tables(SlotBlocks& t) {
  target_pool_.release(t.target);
  draft_pool_.release(t.draft);
  target_pool_.release(t.target_from);
  draft_pool_.release(t.draft_from);
  t.pending = {};
}

void BlockManager::free(int64_t slot) {
  SlotBlocks& t = tables_.at(static_cast<size_t>(slot));
  release_tables(t);
  t.released = ++releases_;
  slots_.release(slot);
}

BlockCopies BlockManager::take_copies(int64_t slot) {
  SlotBlocks& t = tables_.at(static_cast<size_t>(slot));
  BlockCopies c = std::move(t.pending);
  t.pending = {};
  return c;
}

void BlockManager::copied(int64_t slot) {
  SlotBlocks& t = tables_.at(static_cast<size_t>(slot));
  if (!t.pending.empty()) return;  // no job took them yet
  target_pool_.release(t.target_from);
  draft_pool_.release(t.draft_from);
}

// The moved rows take their new slots' own blocks now; the realigner copies their contents
// before the step's forwards (StepJob::assemble), after the step's prefix copies. The blocks they
// leave are cached as a leaving sequence's are. Jobs reach the realigner in the order they are
// planned, so a later job that takes a left block writes it only after the copy has read it. A
// move whose new home blocks are held (borrowed by a long sequence) is left out.
std::vector<SlotMove> BlockManager::plan_moves(std::vector<SlotRow>& rows) {
  std::vector<bool> taken(static_cast<size_t>(slots_.slots()));
  for (int64_t s = 0; s < slots_.slots(); ++s) taken[static_cast<size_t>(s)] = slots_.in_use(s);
  std::vector<SlotMove> moves;
  for (const RowMove& m : plan_row_moves(slots_of(rows), taken)) {
    SlotRow& r = rows[m.row];
    SlotBlocks& from = tables_[static_cast<size_t>(r.slot)];
    const int64_t nt = static_cast<int64_t>(from.target.size()), nd = static_cast<int64_t>(from.draft.size());
    if (!target_pool_.home_free(m.to, nt) || !draft_pool_.home_free(m.to, nd)) continue;
    SlotBlocks to;
    to.target = target_pool_.take_home(m.to, nt);
    to.draft = draft_pool_.take_home(m.to, nd);
    // The cached blocks a prefix copy reads stay held until the job that copies them returns.
    to.target_from = std::move(from.target_from), to.draft_from = std::move(from.draft_from);
    from.target_from.clear(), from.draft_from.clear();
    SlotMove mv{r.slot, m.to, {}, {}};
    const Stored held{r.target_len, has_draft_ ? std::max<int64_t>(0, r.draft_len) : 0};
    for (int64_t i = 0; i < target_pool_.blocks_for(held.target); ++i) mv.target.emplace_back(from.target[i], to.target[i]);
    for (int64_t i = 0; i < draft_pool_.blocks_for(held.draft); ++i) mv.draft.emplace_back(from.draft[i], to.draft[i]);
    publish(r.slot, r.tokens, held);
    target_pool_.release(from.target);
    draft_pool_.release(from.draft);
    tables_[static_cast<size_t>(m.to)] = std::move(to);
    slots_.move(r.slot, m.to);
    r.slot = m.to;
    r.target_blocks = target_table(m.to);
    r.draft_blocks = draft_table(m.to);
    moves.push_back(std::move(mv));
  }
  return moves;
}

bool BlockManager::viewed(const std::vector<SlotRow>& rows) const {
  if (!consecutive(slots_of(rows))) return false;
  return std::all_of(rows.begin(), rows.end(), [&](const SlotRow& r) { return target_pool_.at_home(r.target_blocks, r.slot); });
}

}  // namespace exspec
