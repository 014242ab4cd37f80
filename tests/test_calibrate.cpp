// The step cost model's calibration (model/tools/calibrate.h, the paper's modes'
// model/paper/paper_timings.h): forwards timed on the path a mode runs, where the roles run them,
// and the draft's agreement with the target's own text.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <thread>

#include "model/decoder.h"
#include "model/paper/paper_timings.h"
#include "model/tools/calibrate.h"
#include "tests/support.h"

using namespace exspec;

CATCH_TEST_CASE("calibration: timings grow with the work, the overlap share is a share", "[calibration]") {
  auto m = Decoder::load(test::model_dir("llama"), {at::kFloat, test::device()});
  for (const ForwardPath& path : {ForwardPath(slots_forward), ForwardPath(dense_forward_run)}) {
    const double one = time_forward(*m, 1, 1, 16, 2, path), many = time_forward(*m, 16, 64, 16, 2, path);
    CATCH_CHECK(one > 0);
    CATCH_CHECK(many > one);  // 1024 tokens against 1
  }
  CATCH_CHECK(time_realign(*m, 8, 64) > 0);
  // On the initial thread before a command parks it every forward will run here, one at a time.
  CATCH_CHECK(overlap_serial_share(*m, *m, 4, 3, 32) == 1.0);
  // From another thread (as serve's loader starts the engine), measured: the roles' two phases
  // handed over at once, here (nothing parked) run side by side on two threads.
  double s = -1;
  std::thread([&] { s = overlap_serial_share(*m, *m, 4, 3, 32); }).join();
  CATCH_CHECK(s >= 0);
  CATCH_CHECK(s <= 1);
}

CATCH_TEST_CASE("calibration: a draft's agreement with the target's own greedy text", "[calibration]") {
  auto m = Decoder::load(test::model_dir("llama"), {at::kDouble, test::device()});
  auto other = Decoder::load(test::model_dir("llama", "tiny", 7), {at::kDouble, test::device()});
  // The target as its own draft agrees at every generated position.
  const AgreementSample self = measure_agreement(*m, *m, 2, 6, 16);
  CATCH_CHECK(self.positions == 2 * 16);
  CATCH_CHECK(self.agreed == self.positions);
  // An unrelated model of the same shape (another seed) rarely predicts the target's token.
  const AgreementSample unrelated = measure_agreement(*m, *other, 2, 6, 16);
  CATCH_CHECK(unrelated.positions == 2 * 16);
  CATCH_CHECK(unrelated.agreed < unrelated.positions / 4);
}
