#include "streamk_model_env.h"

#include <c10/util/Exception.h>

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace torch_grouped {

sched::StreamKModel streamk_model_from_env(const sched::StreamKModel& base, const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return base;
  std::vector<double> values;
  std::stringstream fields(text);
  std::string field;
  bool valid = true;
  while (std::getline(fields, field, ',')) {
    char* end = nullptr;
    const double v = std::strtod(field.c_str(), &end);
    valid = valid && !field.empty() && *end == '\0' && std::isfinite(v) && v >= 0.0;
    values.push_back(v);
  }
  TORCH_CHECK_VALUE(valid && (values.size() == 4 || values.size() == 6), name,
                    " must be four or six non-negative numbers a,b,c,d[,e,f]; got '", text, "'");
  values.resize(6, 0.0);
  // (the fitted terms only: the DRAM rate stays the device's)
  return sched::StreamKModel{values[0], values[1], values[2], values[3], values[4], values[5], base.dram_us_per_mb};
}

}  // namespace torch_grouped
