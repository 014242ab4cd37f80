// Planning step N + 1 while step N runs (issue 60, "the host plans while the device runs"). Plain
// C++ over a few facts of the window, so the rule can be read and tested alone; the Scheduler
// gathers the facts and builds the plans (actors/scheduler/scheduler.cpp).
//
// What the Scheduler decides before it builds a step is read from the window alone: which piece
// comes next (actors/scheduler/inplace_turn.h) and which B rows a step takes. Once step N is
// handed out, those facts are known for the moment N comes back, up to what N's results decide:
// its rows are free again, Running, and stepped at the current step count, as long as none of
// them ends. So the choice is made then, from the window as it will be (assume_back), along with
// each chosen row's tokens so far. When N is back (and the queue's newcomers took their slots),
// the facts are gathered again: the pre-made choice is kept when they are the ones it assumed
// (still_valid), and made again when N's results changed them: a row that finished, failed or
// was cancelled, a newcomer, a pre-emption, a chunk that came back. Kept, it is the choice made
// after the results, by construction (the same function of the same facts); what still follows
// the results is what they decide: each row's new tokens and counts, its blocks for the next
// step (a pre-emption there re-plans too), K and the proposals.
#pragma once
#include <cstdint>
#include <vector>

#include "actors/scheduler/inplace_turn.h"
#include "actors/scheduler/sequence_pool.h"
#include "model/slot_row.h"

namespace exspec {

// What the choice of the next piece reads of one window member.
struct MemberFact {
  SeqId id = 0;
  int64_t slot = -1, last_step = -1;
  SeqState state = SeqState::Waiting;
  bool fresh = false;  // no token yet
  bool busy = false;   // a job holds it
};
bool operator==(const MemberFact& a, const MemberFact& b);

// The window's facts, members in window order.
struct WindowState {
  std::vector<MemberFact> members;
  bool chunk_in_flight = false;  // a prefill chunk is out
  bool last_was_chunk = false;   // the last piece handed out was a chunk
  int64_t batch = 1;             // B
};
bool operator==(const WindowState& a, const WindowState& b);

// The next piece: the pieces to try, in order (turn_order), and the rows a step would take: B
// ready members, neighbours in slot order around the least recently stepped one (before the
// Scheduler secures their blocks).
struct Choice {
  std::vector<Piece> order;
  std::vector<SeqId> step_rows;
};
Choice choose(const WindowState& w);

// The window once a step over `rows` is back with every row going on: free, Running, with a
// token, stepped at `step` (Planner::write_row sets last_step to the step count it completes at).
WindowState assume_back(WindowState w, const std::vector<SeqId>& rows, int64_t step);

// The next step's choice, made while the step `after` (its serial) runs.
struct PlannedStep {
  int64_t after = 0;
  bool back = false;      // the step `after` has come back: the plan may be used
  WindowState assumed;    // the facts it was chosen from
  Choice choice;
  // The chosen rows' tokens as they were when it was made (prompt and generated so far), in
  // step_rows order: what is added after is the step's committed tokens only.
  std::vector<std::vector<int64_t>> tokens;
};

// Whether a plan made ahead is the one the facts `now` give.
bool still_valid(const PlannedStep& p, const WindowState& now);

// A row's tokens made ahead (`made`) brought up to the sequence's: its tokens since appended.
// Returns false (and leaves `made` as it was) where it is longer than the sequence's.
bool catch_up(std::vector<int64_t>& made, const Sequence& s);

}  // namespace exspec
