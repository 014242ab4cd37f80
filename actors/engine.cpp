// The engine front: loads the models, starts the actor system and the pipeline's actors, and
// turns producer calls into messages to the pool-manager.
#include "actors/engine.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <caf/all.hpp>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "actors/jobs/calibration.h"
#include "actors/messages.h"
#include "actors/jobs/model_pair.h"
#include "actors/planners.h"
#include "actors/pool_manager.h"
#include "actors/roles.h"
#include "actors/actor_handles.h"
#include "model/decoder.h"
#include "model/kv_store.h"
#include "model/kernels/isa.h"
#include "model/initial_thread.h"
#include "model/kernels/spin_team.h"
#include "model/runtime.h"
#include "model/shortlist_file.h"

namespace exspec {

int initial_threads(int setting) {
  return setting > 0 ? setting : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

struct Engine::Impl {
  EngineOptions options;
  ModelInfo info;
  std::shared_ptr<const Decoder> target, draft;
  // The config must outlive the system; the system is destroyed explicitly in shutdown()
  // (a system destroyed during static destruction crashes).
  std::unique_ptr<caf::actor_system_config> cfg;
  std::unique_ptr<caf::actor_system> system;
  std::shared_ptr<ActorHandles> handles;
  std::shared_ptr<std::atomic<size_t>> queued = std::make_shared<std::atomic<size_t>>(0);
  std::shared_ptr<StatsBoard> board = std::make_shared<StatsBoard>();
  std::atomic<SeqId> next_id{0};
  std::atomic<bool> closing{false};
  std::mutex shutdown_mu;
  bool stopped = false;
};

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Engine::~Engine() {
  try {
    shutdown(false);
  } catch (...) {
  }
}

namespace {

// Which products this CPU runs, once at start, and on which instruction set (EXSPEC_ISA caps it).
void log_matmul_path(const Decoder& m) {
  if (!m.device().is_cpu()) return;
  const char* how = m.kquant_weights() ? "int8: the GGUF file's K-quant blocks on the K-quant kernel (other products in Q8_0 blocks), float32 activations"
                    : m.int8_weights()   ? "int8 weights (a GGUF file's Q8_0, Q4_0 and IQ4_NL blocks as they are, others quantised to Q8_0 at load), float32 activations"
                    : m.packed_weights() ? "weights packed once at load, one fixed order of sums per output"
                                         : "at::linear";
  std::cerr << "exspec: CPU matmul: " << how << " (kernels: " << isa::describe() << ")" << std::endl;
}

// How the forwards' OpenMP threads wait, which libgomp reads from the environment before main: on
// cores that other work shares, spinning threads hold the cores that thread needs
// (docs/performance.md#threads).
void log_thread_wait(const Decoder& m) {
  if (!m.device().is_cpu()) return;
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const char* spins = std::getenv("GOMP_SPINCOUNT");
  std::cerr << "exspec: threads wait ";
  if (policy && *policy)
    std::cerr << "as OMP_WAIT_POLICY=" << policy << " says";
  else if (spins && *spins)
    std::cerr << "spinning GOMP_SPINCOUNT=" << spins << " times, then sleeping";
  else
    std::cerr << "spinning, then sleeping (libgomp's default); where other work shares the cores, OMP_WAIT_POLICY=PASSIVE";
  if (spin_team::on()) std::cerr << "; the kernels run on exspec's own spinning threads (EXSPEC_KERNEL_THREADS=spin)";
  std::cerr << std::endl;
}

// A longrope model serves one set of factors (choose_longrope): say which, and the context it gives.
void log_longrope(const Decoder& m) {
  const RopeScaling& r = m.config().rope_scaling;
  if (r.type != "longrope") return;
  std::cerr << "exspec: longrope: the " << (r.long_context ? "long" : "short") << " factors for every sequence, up to "
            << m.config().max_position_embeddings << " tokens"
            << (r.long_context ? " (Hugging Face uses the short ones while a sequence fits the original "
                               : " (--longrope long serves past the original ")
            << r.original_max_position_embeddings << ")" << std::endl;
}

// The OpenMP count a model's forwards get on the initial thread: every core where oneDNN runs its
// products; 1 where OpenBLAS does (its own threads take the cores, and OpenMP workers spinning
// beside them slow its forwards down: docs/performance.md#threads); --torch-threads when given
// (EngineOptions::initial_threads).
int forward_threads(const EngineOptions& o, const Decoder& m) {
  if (o.initial_threads > 0) return o.initial_threads;
  return m.packed_weights() || !m.device().is_cpu() ? initial_threads(0) : 1;
}

// In place, the stores take their whole size at start: said once, with what sizes them.
void log_store(const KVStore& target, const KVStore* draft, const EngineConfig& d) {
  auto mib = [](const KVStore& s) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f MiB", static_cast<double>(s.bytes()) / (1024.0 * 1024.0));
    return std::string(b);
  };
  std::cerr << "exspec: in-place KV store: " << target.blocks() << " blocks of " << target.block_size()
            << " positions (--block-size), " << target.capacity() << " positions in each of " << target.slots()
            << " slots (--slots): " << mib(target)
            << (draft ? " + " + mib(*draft) + " for the draft" : "") << "; the longest sequence: " << d.context
            << " tokens";
  if (d.kv_cache_bytes > 0)
    std::cerr << " (budget " << d.kv_cache_bytes / (1024 * 1024) << " MiB, --kv-cache-memory)";
  std::cerr << std::endl;
}

// What each model holds resident, once at start: its weights (packed copies with their padding)
// and its KV store (in place, whole from the start; otherwise per batch, as it runs).
void log_memory(const char* role, const Decoder& m, const KVStore* store) {
  auto mib = [](int64_t b) {
    char s[64];
    std::snprintf(s, sizeof s, "%lld bytes (%.1f MiB)", static_cast<long long>(b), static_cast<double>(b) / (1024.0 * 1024.0));
    return std::string(s);
  };
  std::cerr << "exspec: memory: " << role << " weights " << mib(m.weight_bytes()) << " in " << dtype_name(m.dtype())
            << ", KV store " << (store ? mib(store->bytes()) : std::string("per batch")) << std::endl;
}

// The draft's: the target's, with the shortlist its head multiplies or its head's screen, if one is given.
LoadOptions draft_load_options(const EngineOptions& o, const LoadOptions& target, const Decoder& t) {
  LoadOptions lo = target;
  // The decoder refuses a count beside a shortlist or outside int8; auto decides once it has the head.
  lo.head_screen = o.draft_screen;
  if (o.draft_shortlist.empty()) {
    if (o.draft_shortlist_size) throw std::invalid_argument("--draft-shortlist-size needs --draft-shortlist FILE");
    return lo;
  }
  lo.head_shortlist = read_shortlist(o.draft_shortlist, o.draft_shortlist_size, t.config().vocab_size);
  std::cerr << "exspec: draft head: " << lo.head_shortlist.size() << " of " << t.config().vocab_size
            << " tokens (" << o.draft_shortlist << ")" << std::endl;
  return lo;
}

}  // namespace

std::unique_ptr<Engine> Engine::start(const EngineOptions& o) {
  auto impl = std::make_unique<Impl>();
  impl->options = o;
  configure_threads(o.torch_threads, o.blas_threads);
  // The initial thread runs every forward when the command parks it (model/initial_thread.h):
  // the weights are packed, and the products planned, for its count.
  set_initial_thread_threads(initial_threads(o.initial_threads));
  check_blas();
  LoadOptions lo;
  lo.dtype = parse_dtype(o.dtype);
  lo.device = parse_device(o.device);
  lo.long_context = parse_longrope(o.longrope);
  // Whether there is a draft is the options' draft_dir: without one, in place runs plain steps.
  EngineConfig& d = impl->options.decoding;
  d.draft = d.mode != Mode::NonSpec && !o.draft_dir.empty();
  validate(d);
  impl->target = Decoder::load(o.model_dir, lo);
  log_matmul_path(*impl->target);
  log_thread_wait(*impl->target);
  log_longrope(*impl->target);
  const int target_threads = forward_threads(o, *impl->target);
  set_initial_thread_threads(target_threads);  // for the calibration below
  if (d.draft) impl->draft = Decoder::load(o.draft_dir, draft_load_options(o, lo, *impl->target));
  if (impl->draft && impl->draft->head_screen())
    std::cerr << "exspec: draft head: read in 4 bits, its best " << impl->draft->head_screen() << " candidates scored in int8"
              << (o.draft_screen == kScreenAuto ? " (--draft-screen auto; 0: off)" : "") << std::endl;
  check_models(d, *impl->target, impl->draft.get());
  fit_store(d, *impl->target, impl->draft.get());
  ModelInfo& info = impl->info;
  info.model_dir = o.model_dir;
  info.draft_dir = d.draft ? o.draft_dir : "";
  info.architecture = impl->target->config().architecture;
  info.dtype = dtype_name(lo.dtype);
  info.device = lo.device.str();
  info.vocab_size = impl->target->config().vocab_size;
  info.max_position_embeddings = impl->target->config().max_position_embeddings;
  info.longrope_positions = impl->target->config().rope_scaling.longer_context();
  info.num_parameters = impl->target->num_parameters();
  info.draft_parameters = impl->draft ? impl->draft->num_parameters() : 0;
  info.eos_ids = impl->target->config().eos_ids;

  // The policy calibrates on the models (forwards that can fail): before any actor is spawned,
  // since an actor system torn down under running detached actors waits for them forever.
  const ForwardThreads threads{target_threads, impl->draft ? forward_threads(o, *impl->draft) : 0};
  std::shared_ptr<DraftLengthPolicy> policy =
      !drafts(d) ? nullptr
      : o.policy ? o.policy
                 : make_policy(d, *impl->target, impl->draft.get(), o.overlap, mode_timings(d), threads);

  impl->cfg = std::make_unique<caf::actor_system_config>();
  impl->cfg->set("scheduler.max-threads", std::max(1, o.scheduler_threads));
  // Work sharing sleeps on a condition variable; work stealing polls aggressively between
  // messages, and on a small machine those spinning workers take the cores from OpenBLAS.
  impl->cfg->set("scheduler.policy", caf::atom("sharing"));
  impl->system = std::make_unique<caf::actor_system>(*impl->cfg);
  impl->handles = std::make_shared<ActorHandles>();
  auto& sys = *impl->system;
  std::shared_ptr<const ActorHandles> handles = impl->handles;
  // Drafter and verifier block their threads for whole forward passes: detached, so that they
  // run concurrently with each other and never stall the scheduler's workers.
  // In place, each store's forwards run on the role that owns its model; the realigner only
  // copies the slots of a job it holds (a slot move), which no forward touches meanwhile.
  std::shared_ptr<KVStore> target_store = make_store(d, impl->target.get());
  std::shared_ptr<KVStore> draft_store = make_store(d, impl->draft.get());
  if (target_store) log_store(*target_store, draft_store.get(), d);
  log_memory("target", *impl->target, target_store.get());
  if (impl->draft) log_memory("draft", *impl->draft, draft_store.get());
  if (impl->draft) impl->handles->drafter = sys.spawn<caf::detached>(drafter, impl->draft, handles, draft_store,
                                                               forward_threads(o, *impl->draft));
  impl->handles->verifier = sys.spawn<caf::detached>(verifier, impl->target, handles, target_store, target_threads);
  impl->handles->realigner = sys.spawn(realigner, handles, target_store, draft_store);
  PoolManagerSettings pm;
  pm.decoding = d;
  // In place without a draft only the verifier works: a second piece of work in flight overlaps
  // nothing and splits the decoding rows into batches that take turns, each a forward of its
  // own. (Fixed nonspec batches keep it: it is how a second batch starts beside a running one.)
  pm.overlap = o.overlap && (d.draft || d.mode != Mode::InPlace);
  pm.queued = impl->queued;
  pm.board = impl->board;
  pm.policy = policy;
  impl->handles->pool_manager = spawn_pool_manager(sys, pm, handles);
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

namespace {

// Validates a request (filling in the model's EOS ids) and returns why it cannot be served.
std::string invalid_reason(const Decoder& target, const ModelInfo& info, const EngineConfig& c, SeqRequest& request) {
  if (request.eos_ids.empty() && request.model_eos) request.eos_ids = info.eos_ids;
  try {
    validate_request(target.config(), request);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return slot_misfit(c, request);
}

}  // namespace

// Admission control: reserves n queue places or fails fast, instead of growing without limit.
static bool reserve_queue(std::atomic<size_t>& queued, size_t n, size_t max_queue) {
  size_t q = queued.load();
  do {
    if (q + n > max_queue) return false;
  } while (!queued.compare_exchange_weak(q, q + n));
  return true;
}

SubmitResult Engine::submit(SeqRequest request, int priority, std::shared_ptr<TokenSink> sink) {
  if (impl_->closing) return {SubmitStatus::ShuttingDown, 0, "the server is shutting down"};
  std::string why = invalid_reason(*impl_->target, impl_->info, impl_->options.decoding, request);
  if (!why.empty()) return {SubmitStatus::Invalid, 0, why};
  if (!reserve_queue(*impl_->queued, 1, impl_->options.max_queue))
    return {SubmitStatus::Overloaded, 0,
            "the engine's queue is full (" + std::to_string(impl_->options.max_queue) + " waiting sequences)"};
  auto m = std::make_shared<SubmitMsg>();
  m->id = ++impl_->next_id;
  m->request = std::move(request);
  m->priority = priority;
  m->sink = std::move(sink);
  SubmitResult r{SubmitStatus::Ok, m->id, ""};
  caf::anon_send(impl_->handles->pool_manager, submit_atom::value, std::move(m));
  return r;
}

std::vector<SubmitResult> Engine::submit_many(std::vector<SeqRequest> requests, int priority,
                                              std::shared_ptr<TokenSink> sink) {
  std::vector<SubmitResult> out(requests.size());
  auto fail_all = [&](SubmitStatus status, const std::string& why) {
    for (auto& r : out) r = {status, 0, why};
    return out;
  };
  if (impl_->closing) return fail_all(SubmitStatus::ShuttingDown, "the server is shutting down");
  for (size_t i = 0; i < requests.size(); ++i) {
    std::string why = invalid_reason(*impl_->target, impl_->info, impl_->options.decoding, requests[i]);
    if (!why.empty()) return fail_all(SubmitStatus::Invalid, "request " + std::to_string(i) + ": " + why);
  }
  if (!reserve_queue(*impl_->queued, requests.size(), impl_->options.max_queue))
    return fail_all(SubmitStatus::Overloaded, "the engine's queue cannot take " + std::to_string(requests.size()) +
                                                  " more sequences (max_queue " +
                                                  std::to_string(impl_->options.max_queue) + ")");
  auto ms = std::make_shared<std::vector<SubmitMsg>>(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    SubmitMsg& m = (*ms)[i];
    m.id = ++impl_->next_id;
    m.request = std::move(requests[i]);
    m.priority = priority;
    m.sink = sink;
    out[i] = {SubmitStatus::Ok, m.id, ""};
  }
  caf::anon_send(impl_->handles->pool_manager, submit_many_atom::value, std::move(ms));
  return out;
}

void Engine::cancel(SeqId id, FinishReason reason) {
  if (impl_->system) caf::anon_send(impl_->handles->pool_manager, cancel_atom::value, id, static_cast<int>(reason));
}

EngineStats Engine::stats() const {
  std::lock_guard<std::mutex> lock(impl_->board->mu);  // the queue and the window move together under it
  EngineStats s = impl_->board->stats;
  s.queued = impl_->queued->load();
  return s;
}

const ModelInfo& Engine::info() const { return impl_->info; }

const EngineOptions& Engine::options() const { return impl_->options; }

void Engine::shutdown(bool drain) {
  std::lock_guard<std::mutex> lock(impl_->shutdown_mu);
  if (impl_->stopped) return;
  impl_->closing = true;
  {
    caf::scoped_actor self{*impl_->system};
    self->request(impl_->handles->pool_manager, caf::infinite, shutdown_atom::value, drain)
        .receive([](bool) {}, [](const caf::error&) {});
    for (const caf::actor_addr& a :
         {impl_->handles->pool_manager.address(), impl_->handles->realigner.address(),
          impl_->handles->drafter.address(), impl_->handles->verifier.address()})
      if (a) self->send_exit(a, caf::exit_reason::user_shutdown);
  }
  *impl_->handles = ActorHandles{};  // drop the handles so that the actors can terminate
  impl_->system.reset();             // waits for every actor: none outlives the engine
  impl_->stopped = true;
}

}  // namespace exspec
