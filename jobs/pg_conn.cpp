#include "jobs/pg_conn.h"

#include <cstdlib>
#include <stdexcept>

#include <libpq-fe.h>

namespace exspec::jobs {

PgResult::~PgResult() { PQclear(r_); }
int PgResult::rows() const { return PQntuples(r_); }
int64_t PgResult::affected() const {
  const char* n = PQcmdTuples(r_);
  return n && *n ? std::strtoll(n, nullptr, 10) : 0;
}
bool PgResult::null(int row, int col) const { return PQgetisnull(r_, row, col); }
std::string PgResult::text(int row, int col) const {
  return std::string(PQgetvalue(r_, row, col), static_cast<size_t>(PQgetlength(r_, row, col)));
}
int64_t PgResult::i64(int row, int col) const { return null(row, col) ? 0 : std::strtoll(PQgetvalue(r_, row, col), nullptr, 10); }
bool PgResult::boolean(int row, int col) const { return PQgetvalue(r_, row, col)[0] == 't'; }
std::string PgResult::bytes(int row, int col) const {
  if (PQfformat(r_, col) == 1) return text(row, col);  // binary result: the bytes themselves
  size_t n = 0;
  unsigned char* b = PQunescapeBytea(reinterpret_cast<const unsigned char*>(PQgetvalue(r_, row, col)), &n);
  if (!b) throw std::runtime_error("postgresql: cannot decode a bytea value");
  std::string s(reinterpret_cast<const char*>(b), n);
  PQfreemem(b);
  return s;
}

PgConn::PgConn(const std::string& url) {
  c_ = PQconnectdb(url.c_str());
  if (PQstatus(c_) != CONNECTION_OK) {
    std::string why = c_ ? PQerrorMessage(c_) : "out of memory";
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    PQfinish(c_);
    c_ = nullptr;
    throw std::runtime_error("cannot connect to PostgreSQL: " + why);
  }
  // Notices (CREATE TABLE IF NOT EXISTS ... skipping) are not errors: keep them off stderr.
  PQsetNoticeProcessor(c_, [](void*, const char*) {}, nullptr);
}

PgConn::~PgConn() { PQfinish(c_); }

bool PgConn::ok() const { return PQstatus(c_) == CONNECTION_OK; }

void PgConn::reset() { PQreset(c_); }

PgResult PgConn::exec(const std::string& sql, const std::vector<PgParam>& params, bool binary_result) {
  std::vector<const char*> values;
  std::vector<int> lengths, formats;
  for (const PgParam& p : params) {
    values.push_back(p.null ? nullptr : p.value.data());
    lengths.push_back(static_cast<int>(p.value.size()));
    formats.push_back(p.binary ? 1 : 0);
  }
  PGresult* raw = PQexecParams(c_, sql.c_str(), static_cast<int>(params.size()), nullptr, values.data(),
                               lengths.data(), formats.data(), binary_result ? 1 : 0);
  const ExecStatusType st = raw ? PQresultStatus(raw) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    std::string why = raw ? PQresultErrorMessage(raw) : PQerrorMessage(c_);
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    PQclear(raw);
    throw std::runtime_error("postgresql: " + why);
  }
  return PgResult(raw);
}

void PgConn::run_script(const std::string& sql) {
  PGresult* r = PQexec(c_, sql.c_str());
  const bool ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
  std::string why = ok ? "" : (r ? PQresultErrorMessage(r) : PQerrorMessage(c_));
  PQclear(r);
  if (!ok) throw std::runtime_error("postgresql: " + why);
}

void PgConn::rollback() noexcept {
  PGresult* r = PQexec(c_, "ROLLBACK");
  PQclear(r);
}

PgPool::PgPool(std::string url, size_t size) : url_(std::move(url)), size_(size ? size : 1) {
  idle_.push_back(std::make_unique<PgConn>(url_));  // fails now, at start-up, if the URL is wrong
  opened_ = 1;
}

PgPool::~PgPool() = default;

std::unique_ptr<PgConn> PgPool::acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !idle_.empty() || opened_ < size_; });
  std::unique_ptr<PgConn> c;
  if (!idle_.empty()) {
    c = std::move(idle_.back());
    idle_.pop_back();
  } else {
    ++opened_;
    lock.unlock();
    try {
      return std::make_unique<PgConn>(url_);
    } catch (...) {
      std::lock_guard<std::mutex> again(mu_);
      --opened_;
      cv_.notify_one();
      throw;
    }
  }
  lock.unlock();
  if (!c->ok()) c->reset();
  return c;
}

void PgPool::give_back(std::unique_ptr<PgConn> c) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(std::move(c));
  }
  cv_.notify_one();
}

}  // namespace exspec::jobs
