// The decoder-only transformer (every row of model/architectures.h) as serving runs it: one
// forward over the new tokens of the rows in a batch, each row's keys and values written in place
// into its slot of a KVStore (model/kv_store.h). Device-generic: weights and inputs live on
// whatever torch::Device the model was loaded to. The oracle's dense forward over a left-padded
// batch (model/oracle/dense_forward.h) runs the same layers.
#pragma once
#include <ATen/core/Tensor.h>

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/attention.h"
#include "model/checkpoint.h"
#include "model/experts.h"
#include "model/kv_store.h"
#include "model/linear.h"
#include "model/model_config.h"
#include "model/rope.h"
#include "model/screened_head.h"
#include "model/shortlist_head.h"

namespace exspec {

class StepState;
struct DenseForward;

struct LoadOptions {
  // at::kChar is int8: the weights quantised at load as Q8_0 blocks (model/int8_matmul.h), the
  // activations and the KV cache in float32 (CPU only).
  at::ScalarType dtype = at::kFloat;
  at::Device device = at::kCPU;
  // CPU products packed at load where they apply (model/linear.h) and attention's batched
  // products on oneDNN. false keeps plain libtorch (at::linear, at::matmul) everywhere: the
  // benchmarks' "before" and the tests' reference (int8 still quantises: it has no plain twin).
  bool pack_weights = true;
  // float32 and bfloat16 products on oneDNN, as before the fixed-order kernels: a row's result
  // then depends on its batch. For the benchmarks' comparison only.
  bool onednn_bf16 = false;
  // longrope (Phi-3-128k, Phi-3.5, Phi-4-mini): the long factors for every sequence, up to
  // max_position_embeddings; false: the short ones, sequences up to the original context
  // (choose_longrope, model/model_config.h). No effect on other models.
  bool long_context = false;
  // A draft's head over these tokens only (ascending, model/shortlist_head.h): the logits of the
  // rest are -inf. Empty: the whole vocabulary. Never for a target: it must choose from all.
  std::vector<int64_t> head_shortlist;
  // A draft's head read in 4 bits, its best `head_screen` candidates scored again by the int8
  // head (model/screened_head.h); 0: off. int8 only; never for a target. kScreenAuto (model/head_screen.h): 16
  // candidates where screen_pays (an int8 head whose screen saves a ninth of a token's bytes), else off.
  int64_t head_screen = 0;
};

// Hands the decoder each weight by its checkpoint name, once: what it keeps of it (the tensor, or
// its packed copy) is all that stays of it (CheckpointWeights::take streams them from the files).
using WeightSource = std::function<at::Tensor(const std::string&)>;

class Decoder {
 public:
  Decoder(ModelConfig config, const WeightSource& weights, const LoadOptions& opts);
  Decoder(ModelConfig config, const WeightMap& weights, const LoadOptions& opts);
  // dir: a Hugging Face checkpoint directory, or a .gguf file (model/gguf_weights.h).
  static std::shared_ptr<const Decoder> load(const std::string& dir, const LoadOptions& opts = {});

  // Row b of input_ids [B, T] (right-padded) feeds its first rows[b].count tokens to the
  // sequence in slot rows[b].slot, at positions rows[b].start ..., in its blocks. Logits:
  // every position ([B, T, vocab]), only each row's last content position ([B, 1, vocab]), or
  // none (an undefined tensor).
  enum class Logits { All, Last, None };
  at::Tensor forward_slots(const at::Tensor& input_ids, const std::vector<SlotSpan>& rows, KVStore& store,
                           Logits logits) const;
  // A store of `slots` rows of `capacity` positions, in blocks of block_size (0: one block a row).
  KVStore new_store(int64_t slots, int64_t capacity, int64_t block_size = 0) const;

  const ModelConfig& config() const { return config_; }
  at::ScalarType dtype() const { return dtype_; }  // of the activations and the KV cache
  bool int8_weights() const { return head_weight().int8(); }
  bool kquant_weights() const;  // any product on a GGUF file's K-quant (Q2_K to Q6_K) blocks (int8 only)
  at::Device device() const { return device_; }
  int64_t num_parameters() const;
  // Bytes the weights hold in memory: every kept tensor's storage and every packed copy.
  int64_t weight_bytes() const;
  // Bytes of the weights every new token is multiplied by, as held (the layers' products and the
  // head, or its shortlist's rows; the embedding is only looked up; of a layer's experts, the top
  // k it goes through): a forward's read floor.
  int64_t product_bytes() const;
  // Bytes one sequence position takes in a KV store of this model: every layer's key and value.
  int64_t kv_bytes_per_position() const;
  bool packed_weights() const { return head_weight().packed(); }
  int64_t head_shortlist_size() const { return shortlist_.size(); }  // 0: the whole vocabulary
  int64_t head_screen() const { return screen_.candidates(); }        // 0: no screen
  // Layers of experts, counted since load: each run of such a layer over a forward's rows, and
  // the distinct experts those runs read (each read once a run, however many rows chose it).
  // What a verification of B (K + 1) rows costs beyond a plain step (bench/moe_verify.sh).
  struct ExpertReads {
    int64_t layer_runs = 0, experts = 0;
  };
  ExpertReads expert_reads() const { return {expert_layer_runs_.load(), experts_read_.load()}; }

 private:
  // q, k and v share one product, and so do gate and up: one weight read, one call, for what
  // Hugging Face stores as separate tensors (each output element is the same dot product).
  struct Layer {
    LayerKind kind;  // its attention window, activation and norm form (model/layer_kind.h)
    at::Tensor ln1, ln2;
    at::Tensor qk_norm;  // [H + Hkv, D]: q_norm's weight for each q head, then k_norm's (Qwen3)
    Linear qkv;      // [H*D + 2*Hkv*D, hidden]: q, then k, then v
    Linear o;        // [hidden, H*D]
    Linear gate_up;  // [2*intermediate, hidden]: gate, then up (a dense layer's)
    Linear down;     // [hidden, intermediate]
    Experts experts;  // a layer of experts' (Mlp::Experts), in place of gate_up and down
    at::Tensor post_attn_norm, post_mlp_norm;  // GLM-4-0414, Gemma 3: norms of each branch's output
    // Every product the layer holds; `active`: those a row is multiplied by, the experts as
    // top_k of them (each the same size).
    std::vector<const Linear*> products() const;
    int64_t product_bytes(bool active) const;
  };
  Layer load_layer(const WeightSource& get, int64_t i, WeightPath pack) const;  // layer i's weights
  // The layers over h [B*T, hidden] for positions [B, T]; `kv(layer, k, v)` stores this
  // forward's keys and values ([B, T, kv_heads, D]) and returns what attention reads
  // ([B, kv_heads, S, D]) under its kind's mask of `masks` (model/attention.h). Returns the final
  // hidden states.
  // Packed (content [N] defined: the indices b * T + t of the content positions), h is
  // [N, hidden], kv gets [1, N, kv_heads, D] and the result is [N, hidden].
  // An in-place forward's step also names its store and plan, for attention straight over the
  // store on the CPU (attention_in_store, model/attention.h): the same bits, without the views.
  struct KVStep {
    using Fn = std::function<std::pair<at::Tensor, at::Tensor>(int64_t, const at::Tensor&, const at::Tensor&)>;
    template <class F>
    KVStep(F fn, KVStore* store = nullptr, const SlotForward* f = nullptr) : fn(std::move(fn)), store(store), f(f) {}
    std::pair<at::Tensor, at::Tensor> operator()(int64_t i, const at::Tensor& k, const at::Tensor& v) const { return fn(i, k, v); }
    Fn fn;
    KVStore* store;
    const SlotForward* f;
  };
  at::Tensor layers(at::Tensor h, const at::Tensor& positions, const AttentionMasks& masks, const KVStep& kv,
                    const at::Tensor& content = {}) const;
  // The masks of a forward over a store: its keys are at positions 0 .. f.window - 1.
  AttentionMasks slot_masks(const SlotForward& f) const;
  // One layer in three parts, so that the step runner (model/step_runner.h) can run the parts
  // whose shapes it fixes (before and after attention) apart from attention itself.
  // pre_attention: norm, qkv, q/k norm, rope over h [N, hidden] seen as [Bx, Tx]: (qk, v).
  std::pair<at::Tensor, at::Tensor> pre_attention(const Layer& l, const at::Tensor& h, const RopeTables& rope, int64_t Bx,
                                                  int64_t Tx) const;
  // attend: the content rows' attention over the store ([N, H * D]; q padded to [B, T] inside).
  at::Tensor attend(int64_t i, const at::Tensor& qk, const at::Tensor& v, const at::Tensor& blocked, const KVStep& kv,
                    const at::Tensor& content, int64_t B, int64_t T) const;
  // post_attention: o, the residual, the MLP, the residual: h updated in place and returned.
  at::Tensor post_attention(const Layer& l, at::Tensor h, const at::Tensor& a) const;
  RopeTables rope_tables(const at::Tensor& pos) const;  // [Bx, Tx, 1, D] each
  at::Tensor final_norm(const at::Tensor& h) const;
  // A norm's weight as its form multiplies by (model/layer_kind.h): Llama's w in the model's
  // dtype; Gemma's 1 + w, made in float32 from w in the model's dtype (Gemma3RMSNorm's
  // 1.0 + weight.float()), kept in float32 at least.
  at::Tensor norm_weight(const at::Tensor& w) const;
  at::Tensor head(const at::Tensor& h) const;  // [N, hidden] -> [N, vocab]: lm_head_, the shortlist's or the screen's
  const Linear& head_weight() const { return lm_head_.numel() ? lm_head_ : shortlist_.rows(); }
  // forward_slots with the rows padded to a bucket of the store's StepState (model/step_runner.cpp):
  // false, and nothing run, when no bucket holds the rows. ids: [B * T] on the device.
  bool forward_bucketed(const at::Tensor& ids, const SlotForward& f, KVStore& store, Logits logits, at::Tensor& out) const;
  at::Tensor run_bucketed(const at::Tensor& ids, const SlotForward& f, KVStore& store, StepState& step, int64_t bucket,
                          Logits logits) const;
  friend class StepState;
  friend struct DenseForward;  // the oracle's forward (model/oracle/dense_forward.cpp)
  at::Tensor embed(const at::Tensor& ids) const;  // ids [N] -> [N, hidden]
  ModelConfig config_;
  bool onednn_ = true;  // LoadOptions::pack_weights: the CPU kernels for attention, norms, rope, activation
  at::ScalarType dtype_;
  at::Device device_;
  at::Tensor embed_, norm_;  // embed_ undefined in int8: its rows come from embed_int8_
  Linear embed_int8_;  // int8, untied: the embedding's rows (Linear::rows), never multiplied
  Linear lm_head_;  // empty when a shortlist serves the head and the embedding has rows of its own
  ShortlistHead shortlist_;
  ScreenedHead screen_;  // beside lm_head_, which scores its candidates
  std::vector<Layer> layers_;
  Rope rope_;
  Rope rope_local_;  // the sliding layers' (RopeKind::Local); rope_'s config where no layer has one
  mutable std::atomic<int64_t> expert_layer_runs_{0}, experts_read_{0};  // expert_reads()
};

}  // namespace exspec
