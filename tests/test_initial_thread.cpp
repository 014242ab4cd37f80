// The initial thread's park (model/initial_thread.h): work handed over from another thread runs on
// the initial thread once it parks, and never on the caller's thread while a park is announced
// (an OpenMP team started there makes libgomp throttle every later forward).
#include <catch2/catch.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "model/initial_thread.h"

using namespace exspec;

namespace {

pid_t this_thread_id() { return static_cast<pid_t>(syscall(SYS_gettid)); }

// Another thread hands fn over, as the verifier hands over its forwards.
struct Caller {
  std::atomic<bool> ran{false};
  std::atomic<pid_t> ran_on{0};
  std::thread thread;
  Caller() {
    thread = std::thread([this] {
      run_on_initial_thread([this] {
        ran_on = this_thread_id();
        ran = true;
      });
    });
  }
};

}  // namespace

CATCH_TEST_CASE("initial thread: work handed over before the announced park waits for it, then runs there",
                "[initial_thread]") {
  CATCH_REQUIRE(this_thread_id() == getpid());  // each test case is a process of its own (ctest)
  const InitialThreadPark park;
  Caller c;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CATCH_CHECK(!c.ran);  // it waits for the park instead of running on its own thread
  serve_on_initial_thread([&] { return c.ran.load(); }, 1);
  c.thread.join();
  CATCH_CHECK(c.ran);
  CATCH_CHECK(c.ran_on == getpid());
}

CATCH_TEST_CASE("initial thread: an announced park that never comes hands the waiting work back", "[initial_thread]") {
  std::unique_ptr<Caller> c;
  {
    const InitialThreadPark park;
    c = std::make_unique<Caller>();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CATCH_CHECK(!c->ran);
  }  // the command failed before parking
  c->thread.join();
  CATCH_CHECK(c->ran);
  CATCH_CHECK(c->ran_on != getpid());
}

CATCH_TEST_CASE("initial thread: without a park, other threads run their own work, and so does the initial thread",
                "[initial_thread]") {
  Caller c;
  c.thread.join();
  CATCH_CHECK(c.ran);
  CATCH_CHECK(c.ran_on != getpid());
  // A call from the initial thread itself runs here, announced or not (the engine's calibration).
  const InitialThreadPark park;
  pid_t on = 0;
  run_on_initial_thread([&] { on = this_thread_id(); });
  CATCH_CHECK(on == getpid());
}
