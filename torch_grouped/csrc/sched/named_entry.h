// Lookups by GPU name in the calibration tables (streamk_calibration.h, rank2k_calibration.h),
// whose entries carry the name torch.cuda.get_device_name() reports as `device_name`.
#pragma once
#include <cstddef>

namespace torch_grouped::sched {

constexpr bool same_name(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

// The entry of `table` taken on the GPU named `name`; nullptr: none.
template <class Entry, std::size_t N>
constexpr const Entry* entry_named(const Entry (&table)[N], const char* name) {
  for (const Entry& entry : table)
    if (same_name(entry.device_name, name)) return &entry;
  return nullptr;
}

}  // namespace torch_grouped::sched
