#include "actors/jobs/model_pair.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/decoder.h"
#include "model/step_runner.h"

namespace exspec {

void check_models(const EngineConfig& c, const Decoder& target, const Decoder* draft) {
  if (!drafts(c) || c.speculate == Speculate::Ngram) return;
  if (!draft) throw std::invalid_argument(std::string(mode_name(c.mode)) + " needs a draft model");
  if (draft->config().vocab_size != target.config().vocab_size)
    throw std::invalid_argument("draft and target vocabularies differ (" + std::to_string(draft->config().vocab_size) +
                                " vs " + std::to_string(target.config().vocab_size) + ")");
}

void fit_store(EngineConfig& c, const Decoder& target, const Decoder* draft) {
  if (c.mode != Mode::InPlace || c.slot_positions > 0) return;
  const int64_t want = c.context > 0 ? c.context : target.config().max_position_embeddings;
  const int64_t k = largest_k(c), bs = c.block_size;
  const int64_t whole = (want + k + bs - 1) / bs * bs;  // a whole context a slot, in blocks
  if (c.kv_cache_bytes <= 0) {
    c.slot_positions = whole;
    c.context = want;
    return;
  }
  const int64_t per_position = target.kv_bytes_per_position() + (draft ? draft->kv_bytes_per_position() : 0);
  // More than a whole context a slot would hold nothing more: the budget is a ceiling.
  const int64_t row = std::min(whole, c.kv_cache_bytes / (std::max<int64_t>(1, c.slots) * per_position) / bs * bs);
  const int64_t fits = c.slots * row - k;
  constexpr int64_t kShortest = 16;
  if (row < bs || fits < kShortest)
    throw std::invalid_argument("the KV cache budget (" + std::to_string(c.kv_cache_bytes) + " bytes) holds " +
                                std::to_string(std::max<int64_t>(0, fits)) + " positions in blocks of " +
                                std::to_string(bs) + " for " + std::to_string(c.slots) + " slots (" +
                                std::to_string(per_position) +
                                " bytes a position): give it more memory (--kv-cache-memory) or fewer slots (--slots)");
  c.slot_positions = row;
  c.context = std::min(want, fits);
}

std::string slot_misfit(const EngineConfig& c, const SeqRequest& r) {
  if (c.mode != Mode::InPlace) return "";
  const int64_t need = static_cast<int64_t>(r.prompt.size()) + r.max_tokens;
  if (need <= c.context) return "";
  return "prompt (" + std::to_string(r.prompt.size()) + " tokens) + max_tokens (" + std::to_string(r.max_tokens) +
         ") exceeds the engine's context of " + std::to_string(c.context) + " tokens";
}

std::shared_ptr<KVStore> make_store(const EngineConfig& c, const Decoder* model) {
  if (c.mode != Mode::InPlace || !model) return nullptr;
  auto store = std::make_shared<KVStore>(model->new_store(c.slots, c.slot_positions, c.block_size));
  const bool cuda = model->device().is_cuda();
  const bool buckets = c.row_buckets == Toggle::On || (c.row_buckets == Toggle::Auto && cuda);
  // A layer of experts reads its routing on the host (model/experts.h), which a graph cannot hold.
  const bool routed = model->config().experts.num_experts > 0;
  if (routed && c.cuda_graphs == Toggle::On)
    throw std::invalid_argument("--cuda-graphs on: a model with experts routes its rows on the host, which CUDA graphs cannot capture");
  const bool graphs = buckets && !routed &&
                      (c.cuda_graphs == Toggle::On || (c.cuda_graphs == Toggle::Auto && cuda && cuda_graphs_built()));
  if (!buckets) return store;
  batch_invariant_products(model->device());
  store->set_step(std::make_shared<StepState>(row_buckets_from_env(), graphs ? cuda_graph_parts(model->device()) : eager_parts()));
  if (graphs) warm_up_buckets(*model, *store);  // every bucket captured before serving, largest first
  return store;
}

}  // namespace exspec
