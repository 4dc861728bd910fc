#include "kernel_switch.h"

#include <c10/util/Exception.h>

#include <cstdlib>
#include <string>

namespace torch_grouped {

KernelSwitch kernel_switch(const char* variable) {
  const char* v = std::getenv(variable);
  const std::string setting = v == nullptr ? "" : v;
  TORCH_CHECK_VALUE(setting.empty() || setting == "0" || setting == "1", variable, " must be 0 or 1; got '", setting,
                    "'");
  return setting.empty() ? KernelSwitch::Measured : (setting == "1" ? KernelSwitch::Always : KernelSwitch::Never);
}

}  // namespace torch_grouped
