// In place, what comes next: a prefill chunk, a decode step, or nothing yet. Plain C++ over a
// few facts of the window, so the rule can be read and tested alone (the Scheduler gathers the
// facts and plans the pieces: actors/scheduler/scheduler.cpp).
//
// A chunk and a step take turns while both have work, so a decoding sequence waits at most one
// chunk between two tokens. Sequences without a token yet wait until the B lowest slots among
// them are stored, and meanwhile chunks go first if nothing else can step: a step costs about as
// much with 3 rows as with 8, waiting costs those rows only their first token, and their first
// step is then a block of consecutive slots, which keeps its keys readable as a view for the
// rest of its life (and its successors', which take the same slots). Joining a decoding block
// one by one would split both.
#pragma once
#include <vector>

namespace exspec {

struct WindowFacts {
  bool chunk_due = false;        // a member outside any work still has prompt to store
  bool chunk_in_flight = false;  // a prefill chunk is out (one at a time)
  bool decoding = false;         // a member outside any work has tokens and its prompt stored
  bool hold_fresh = false;       // members without a token wait for their first block
  bool last_was_chunk = false;   // the last piece of work handed out was a chunk
};

enum class Piece { Chunk, Step };

// The pieces to try, in order: the first that finds rows is handed out; none: wait.
std::vector<Piece> turn_order(const WindowFacts& f);

}  // namespace exspec
