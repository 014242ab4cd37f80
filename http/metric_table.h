// A Prometheus exposition as a table: each row describes one metric (name, type, help) and how to
// read its samples from a view of the figures; one loop renders them all. Internal to http/.
#pragma once
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace exspec::http {

class Histogram;

using Samples = std::vector<std::pair<std::string, double>>;              // labels, value
using Histograms = std::vector<std::pair<std::string, const Histogram*>>;  // labels, histogram

template <class View>
struct MetricRow {
  std::string name;
  const char* type = "gauge";
  const char* help = "";
  std::function<Samples(const View&)> samples;        // counters and gauges
  std::function<Histograms(const View&)> histograms;  // or histograms
  std::function<bool(const View&)> shown;             // null: always

  MetricRow when(std::function<bool(const View&)> pred) const {
    MetricRow r = *this;
    r.shown = std::move(pred);
    return r;
  }
};

// A metric of one unlabelled sample: value(view) converted to double.
template <class View, class F>
MetricRow<View> scalar(std::string name, const char* type, const char* help, F value) {
  MetricRow<View> r{std::move(name), type, help, nullptr, nullptr, nullptr};
  r.samples = [value](const View& v) { return Samples{{"", static_cast<double>(value(v))}}; };
  return r;
}

template <class View>
MetricRow<View> labelled(std::string name, const char* type, const char* help, std::function<Samples(const View&)> f) {
  return MetricRow<View>{std::move(name), type, help, std::move(f), nullptr, nullptr};
}

template <class View>
MetricRow<View> histogram(std::string name, const char* help, std::function<Histograms(const View&)> f) {
  return MetricRow<View>{std::move(name), "histogram", help, nullptr, std::move(f), nullptr};
}

inline std::string metric_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Histogram::write, declared here so that the loop below need not see metrics.h.
void write_histogram(std::string& out, const Histogram& h, const std::string& name, const std::string& labels);

template <class View>
void render_rows(std::string& out, const std::vector<MetricRow<View>>& rows, const View& v) {
  for (const MetricRow<View>& r : rows) {
    if (r.shown && !r.shown(v)) continue;
    out += "# HELP " + r.name + " " + r.help + "\n# TYPE " + r.name + " " + r.type + "\n";
    if (r.histograms)
      for (const auto& [labels, h] : r.histograms(v)) write_histogram(out, *h, r.name, labels);
    else
      for (const auto& [labels, value] : r.samples(v))
        out += r.name + (labels.empty() ? "" : "{" + labels + "}") + " " + metric_number(value) + "\n";
  }
}

}  // namespace exspec::http
