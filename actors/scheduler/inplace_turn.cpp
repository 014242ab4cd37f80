#include "actors/scheduler/inplace_turn.h"

namespace exspec {

std::vector<Piece> turn_order(const WindowFacts& f) {
  const bool fill_first = f.hold_fresh && !f.decoding;  // only newcomers' chunks can run
  if (fill_first && f.chunk_in_flight) return {};       // the chunk in flight brings more rows
  const bool chunk_ok = f.chunk_due && !f.chunk_in_flight;
  if (chunk_ok && (!f.last_was_chunk || fill_first)) return {Piece::Chunk, Piece::Step};
  if (chunk_ok) return {Piece::Step, Piece::Chunk};
  return {Piece::Step};
}

}  // namespace exspec
