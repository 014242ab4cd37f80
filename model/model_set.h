// The models a forward runs on, each with its in-place KV store (model/kv_store.h): the target,
// and optionally the draft (same slot count). Torch-free, so that the actors' job interface
// (actors/jobs/job.h) names it without the tensor headers.
#pragma once

namespace exspec {

class Decoder;
class KVStore;

struct ModelSet {
  const Decoder* target = nullptr;
  KVStore* target_store = nullptr;  // null in the paper's modes
  const Decoder* draft = nullptr;   // null without a draft model
  KVStore* draft_store = nullptr;
};

}  // namespace exspec
