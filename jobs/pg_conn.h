// A thin layer over libpq for the PostgreSQL job store: a result that frees itself, parameters
// (text, or binary for bytea), transactions that roll back on exceptions, and a small pool of
// connections shared by the HTTP threads and the batch runner. Torch-free.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

struct pg_conn;
struct pg_result;

namespace exspec::jobs {

struct PgParam {
  std::string value;
  bool binary = false;  // bytea: the bytes as they are (client file names, custom_ids, contents)
  bool null = false;
};
inline PgParam pg_text(std::string s) { return PgParam{std::move(s), false, false}; }
inline PgParam pg_int(int64_t v) { return PgParam{std::to_string(v), false, false}; }
inline PgParam pg_bytes(std::string s) { return PgParam{std::move(s), true, false}; }

class PgResult {
 public:
  explicit PgResult(pg_result* r) : r_(r) {}
  PgResult(PgResult&& o) noexcept : r_(o.r_) { o.r_ = nullptr; }
  PgResult& operator=(PgResult&&) = delete;
  ~PgResult();
  int rows() const;
  int64_t affected() const;  // rows changed by an INSERT/UPDATE/DELETE
  bool null(int row, int col) const;
  std::string text(int row, int col) const;
  int64_t i64(int row, int col) const;
  bool boolean(int row, int col) const;
  std::string bytes(int row, int col) const;  // a bytea column of a text-format result

 private:
  pg_result* r_;
};

class PgConn {
 public:
  explicit PgConn(const std::string& url);
  ~PgConn();
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;
  // One statement; throws std::runtime_error with the server's message. binary_result: every
  // column comes back in binary (for one bytea column read as it is, no hex doubling).
  PgResult exec(const std::string& sql, const std::vector<PgParam>& params = {}, bool binary_result = false);
  // Several statements without parameters (the schema).
  void run_script(const std::string& sql);
  // Runs f inside BEGIN/COMMIT; rolls back and rethrows if f throws.
  template <class F>
  auto transaction(F&& f) -> decltype(f()) {
    exec("BEGIN");
    try {
      if constexpr (std::is_void_v<decltype(f())>) {
        f();
        exec("COMMIT");
      } else {
        auto r = f();
        exec("COMMIT");
        return r;
      }
    } catch (...) {
      rollback();
      throw;
    }
  }
  bool ok() const;
  void reset();  // reconnects (after the server restarted or the connection broke)

 private:
  void rollback() noexcept;
  pg_conn* c_ = nullptr;
};

// Connections are opened on demand, up to `size`; a caller waits when all are busy.
class PgPool {
 public:
  PgPool(std::string url, size_t size);
  ~PgPool();
  // Runs f with a connection of its own; a broken connection is reset before it is handed out.
  template <class F>
  auto with(F&& f) -> decltype(f(std::declval<PgConn&>())) {
    std::unique_ptr<PgConn> c = acquire();
    struct Back {
      PgPool* p;
      std::unique_ptr<PgConn>& c;
      ~Back() { p->give_back(std::move(c)); }
    } back{this, c};
    return f(*c);
  }

 private:
  std::unique_ptr<PgConn> acquire();
  void give_back(std::unique_ptr<PgConn> c);
  std::string url_;
  size_t size_, opened_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<PgConn>> idle_;
};

// '{a,b,c}': a PostgreSQL array literal of plain identifiers or numbers.
template <class C>
std::string pg_array(const C& items) {
  std::string s = "{";
  bool first = true;
  for (const auto& i : items) {
    if (!first) s += ",";
    first = false;
    if constexpr (std::is_arithmetic_v<std::decay_t<decltype(i)>>) s += std::to_string(i);
    else s += i;
  }
  return s + "}";
}

}  // namespace exspec::jobs
