// model/runtime.h's thread settings beside the spin team (model/kernels/spin_team.h): a thread
// given its count keeps libtorch's operators on itself, even after torch sets the thread's count
// to its default at its first parallel operation. Where that undid it, libgomp's worker spun
// beside the team's after every operator, and a mixture-of-experts step took 13 times as long.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <thread>

#include "model/kernels/spin_team.h"
#include "model/runtime.h"

CATCH_TEST_CASE("configure_threads: beside the spin team a thread's torch operators stay on it, after its first parallel one too",
                "[threads]") {
  const bool before = exspec::spin_team::on();
  exspec::spin_team::enable(true);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int torch_threads = -1;
  std::thread([&] {  // a new thread: torch has not given it its default count yet
    exspec::configure_threads(cores, cores);  // the count a server gives every thread
    const at::Tensor t = at::rand({1 << 20});
    (void)t.sum().item<float>();            // a parallel operation
    torch_threads = at::get_num_threads();  // OpenMP's count on this thread
  }).join();
  exspec::spin_team::enable(before);
  CATCH_CHECK(torch_threads == 1);
}
