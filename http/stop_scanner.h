// Stop strings over streamed text: feed() returns the text that can be sent now. Text that could
// still become the start of a stop string is held back until it cannot; once a stop string
// appears, everything from it on is dropped (OpenAI does not return the stop text), or everything
// after it (keep_stop: vLLM's include_stop_str_in_output).
#pragma once
#include <string>
#include <vector>

namespace exspec::http {

class StopScanner {
 public:
  explicit StopScanner(std::vector<std::string> stops = {}, bool keep_stop = false)
      : stops_(std::move(stops)), keep_stop_(keep_stop) {}

  bool stopped() const { return stopped_; }
  // The stop string that ended the text (empty while none has).
  const std::string& matched() const { return matched_; }

  std::string feed(const std::string& text) {
    if (stopped_) return "";
    pending_ += text;
    if (stops_.empty()) return take(pending_.size());
    size_t first = std::string::npos, end = 0;
    const std::string* which = nullptr;
    for (const auto& s : stops_) {
      const size_t at = pending_.find(s);
      if (at < first) first = at, end = at + s.size(), which = &s;
    }
    if (first != std::string::npos) {
      stopped_ = true;
      matched_ = *which;
      std::string out = pending_.substr(0, keep_stop_ ? end : first);
      pending_.clear();
      return out;
    }
    // Hold back the longest suffix that is a proper prefix of some stop string.
    size_t hold = 0;
    for (const auto& s : stops_)
      for (size_t n = std::min(s.size() - 1, pending_.size()); n > hold; --n)
        if (pending_.compare(pending_.size() - n, n, s, 0, n) == 0) {
          hold = n;
          break;
        }
    return take(pending_.size() - hold);
  }

  // End of the sequence: whatever is held back is final text.
  std::string finish() {
    if (stopped_) return "";
    return take(pending_.size());
  }

 private:
  std::string take(size_t n) {
    std::string out = pending_.substr(0, n);
    pending_.erase(0, n);
    return out;
  }
  std::vector<std::string> stops_;
  bool keep_stop_ = false;
  std::string pending_, matched_;
  bool stopped_ = false;
};

}  // namespace exspec::http
