// The permutation launchers are templates on the element size in bytes; this turns the runtime
// size into that template argument once, for all of them.
#pragma once
#include <cstdint>
#include <type_traits>

namespace torch_grouped {

// f(std::integral_constant<int, E>{}) for element size E in {1, 2, 4, 8, 16}; false for others
// (a launcher's "this kernel does not apply").
template <typename F>
bool with_element_size(int64_t element_size, F&& f) {
  switch (element_size) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 8: return f(std::integral_constant<int, 8>{});
    case 16: return f(std::integral_constant<int, 16>{});
    default: return false;
  }
}

}  // namespace torch_grouped
