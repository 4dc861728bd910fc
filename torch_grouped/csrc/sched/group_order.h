// Host-side group ordering for load balance (seed 000, "sorting problems"): tiles are dealt to
// CTAs round-robin, so visiting the groups with the largest K first gives every CTA one of the
// long tiles before any gets a second. Host only: the list API knows its sizes on the host.
#pragma once
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace torch_grouped::sched {

// Visiting order: group indices sorted by K, descending; ties keep their original order.
inline std::vector<int32_t> order_by_k_descending(const std::vector<int64_t>& k) {
  std::vector<int32_t> order(k.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t x, int32_t y) { return k[x] > k[y]; });
  return order;
}

// The groups in the order given.
inline std::vector<int32_t> identity_order(size_t count) {
  std::vector<int32_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  return order;
}

// The list API's visiting order: by K, descending (sort_by_k), or as given.
inline std::vector<int32_t> visiting_order(const std::vector<int64_t>& k, bool sort_by_k) {
  return sort_by_k ? order_by_k_descending(k) : identity_order(k.size());
}

}  // namespace torch_grouped::sched
