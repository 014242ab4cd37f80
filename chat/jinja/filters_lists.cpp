// Jinja2's filters that order, pick from or regroup a sequence. Sorts are stable both ways, as
// Python's sorted(..., reverse=True) is: equal keys keep their order.
#include <algorithm>

#include "chat/jinja/filters_internal.h"
#include "chat/jinja/interpreter.h"
#include "chat/jinja/pystr.h"

namespace exspec::jinja::filters {
namespace {

std::string text_of(const Value& v) { return to_str(v); }

Value ignore_case(Value k, bool case_sensitive) {
  return k.is_string() && !case_sensitive ? Value(pystr::lower(k.str())) : k;
}

// make_attrgetter's key: the item, or its attribute path (`dflt` where that is undefined).
Value key_of(const Value& e, const Value* attr, const Value* dflt, bool case_sensitive) {
  Value k = attr && !attr->is_none() ? attribute_path(e, text_of(*attr)) : e;
  if (dflt && !dflt->is_none() && k.is_undefined()) k = *dflt;
  return ignore_case(k, case_sensitive);
}

// sorted(items, key, reverse): stable, and a reverse sort keeps equal keys in order.
void sort_by(Array& items, const Array& keys, bool reverse) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return reverse ? less(keys[y], keys[x]) : less(keys[x], keys[y]);
  });
  Array out;
  for (size_t i : order) out.push_back(items[i]);
  items = std::move(out);
}

Value f_sort(Interpreter&, const Value& v, const Args& a) {
  Array items = iterate(v);
  const bool cs = flag(a, 1, "case_sensitive", false);
  const Value* attr = a.get(2, "attribute");
  // make_multi_attrgetter: "age,name" sorts by a list of keys.
  std::vector<std::string> paths;
  if (attr && !attr->is_none()) paths = pystr::split(text_of(*attr), std::string(","), -1);
  Array keys;
  for (const Value& e : items) {
    Array k;
    if (paths.empty()) k.push_back(ignore_case(e, cs));
    for (const auto& p : paths) k.push_back(ignore_case(attribute_path(e, p), cs));
    keys.push_back(Value(std::move(k)));
  }
  sort_by(items, keys, flag(a, 0, "reverse", false));
  return Value(std::move(items));
}

Value f_dictsort(Interpreter&, const Value& v, const Args& a) {
  if (!v.is_object()) throw std::runtime_error("dictsort(): can only be used on a mapping");
  const Value* by = a.get(1, "by");
  const std::string by_s = by ? text_of(*by) : "key";
  if (by_s != "key" && by_s != "value") throw std::runtime_error("You can only sort by either \"key\" or \"value\"");
  const bool cs = flag(a, 0, "case_sensitive", false);
  Array pairs, keys;
  for (const auto& [k, e] : v.object().items) {
    pairs.push_back(Value::tuple(Array{Value(k), e}));
    keys.push_back(ignore_case(by_s == "value" ? e : Value(k), cs));
  }
  sort_by(pairs, keys, flag(a, 2, "reverse", false));
  return Value(std::move(pairs));
}

Value f_unique(Interpreter&, const Value& v, const Args& a) {
  Array out, seen;
  for (const Value& e : iterate(v)) {
    const Value k = key_of(e, a.get(1, "attribute"), nullptr, flag(a, 0, "case_sensitive", false));
    if (!hashable(k))
      throw std::runtime_error(std::string("unhashable type: '") + k.type_name() + "'");
    if (std::none_of(seen.begin(), seen.end(), [&](const Value& x) { return equal(x, k); })) {
      seen.push_back(k);
      out.push_back(e);
    }
  }
  return Value(std::move(out));
}

// min / max: the first item whose key is least / greatest.
Value extreme(const Value& v, const Args& a, bool want_max) {
  const Array items = iterate(v);
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  const bool cs = flag(a, 0, "case_sensitive", false);
  const Value* attr = a.get(1, "attribute");
  size_t best = 0;
  Value bk = key_of(items[0], attr, nullptr, cs);
  for (size_t i = 1; i < items.size(); ++i) {
    Value k = key_of(items[i], attr, nullptr, cs);
    if (want_max ? less(bk, k) : less(k, bk)) {
      best = i;
      bk = std::move(k);
    }
  }
  return items[best];
}

Value f_max(Interpreter&, const Value& v, const Args& a) { return extreme(v, a, true); }
Value f_min(Interpreter&, const Value& v, const Args& a) { return extreme(v, a, false); }

// groupby(attribute, default, case_sensitive): sorted by the key, then runs of equal keys, each
// a (grouper, list) namedtuple whose grouper is the first item's key as written.
Value f_groupby(Interpreter&, const Value& v, const Args& a) {
  const Value* attr = a.get(0, "attribute");
  if (!attr) throw std::runtime_error("groupby() missing required argument: 'attribute'");
  const Value* dflt = a.get(1, "default");
  const bool cs = flag(a, 2, "case_sensitive", false);
  Array items = iterate(v), keys;
  for (const Value& e : items) keys.push_back(key_of(e, attr, dflt, cs));
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return less(keys[x], keys[y]); });
  Array groups;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    Array members;
    while (j < order.size() && equal(keys[order[j]], keys[order[i]])) members.push_back(items[order[j++]]);
    const Value grouper = key_of(items[order[i]], attr, dflt, true);
    groups.push_back(Value::named_tuple(Array{grouper, Value(std::move(members))}, {"grouper", "list"}));
    i = j;
  }
  return Value(std::move(groups));
}

int64_t count_arg(const Args& a, size_t i, const char* name, const char* filter) {
  const Value* n = a.get(i, name);
  if (!n) throw std::runtime_error(std::string(filter) + "() missing required argument: '" + name + "'");
  if (!n->is_int() && !n->is_bool()) throw std::runtime_error(std::string(filter) + "(): '" + name + "' must be an int");
  return n->as_int();
}

// batch(linecount, fill_with): lists of linecount items, the last one filled up.
Value f_batch(Interpreter&, const Value& v, const Args& a) {
  const int64_t n = count_arg(a, 0, "linecount", "batch");
  const Value* fill = a.get(1, "fill_with");
  Array out, cur;
  for (const Value& e : iterate(v)) {
    if (int64_t(cur.size()) == n) out.push_back(Value(std::exchange(cur, Array{})));
    cur.push_back(e);
  }
  if (!cur.empty()) {
    if (fill && !fill->is_none())
      while (int64_t(cur.size()) < n) cur.push_back(*fill);
    out.push_back(Value(std::move(cur)));
  }
  return Value(std::move(out));
}

// slice(slices, fill_with): `slices` columns, the first length % slices of them one longer.
Value f_slice(Interpreter&, const Value& v, const Args& a) {
  const int64_t slices = count_arg(a, 0, "slices", "slice");
  if (slices == 0) throw std::runtime_error("integer division or modulo by zero");
  const Value* fill = a.get(1, "fill_with");
  const Array seq = iterate(v);
  const int64_t len = int64_t(seq.size());
  const Value per_v = arithmetic("//", Value(len), Value(slices)), extra_v = arithmetic("%", Value(len), Value(slices));
  const int64_t per = per_v.as_int(), extra = extra_v.as_int();
  Array out;
  int64_t offset = 0;
  for (int64_t k = 0; k < slices; ++k) {
    const int64_t start = offset + k * per;
    if (k < extra) ++offset;
    const int64_t end = offset + (k + 1) * per;
    Array part;
    for (int64_t i : pystr::slice_indices(len, start, end, 1)) part.push_back(seq[size_t(i)]);
    if (fill && !fill->is_none() && k >= extra) part.push_back(*fill);
    out.push_back(Value(std::move(part)));
  }
  return Value(std::move(out));
}

}  // namespace

void add_list_filters(Table& t) {
  t.insert({{"sort", f_sort}, {"dictsort", f_dictsort}, {"unique", f_unique}, {"max", f_max}, {"min", f_min},
            {"groupby", f_groupby}, {"batch", f_batch}, {"slice", f_slice}});
}

}  // namespace exspec::jinja::filters
