// Decimal arithmetic for the float range() sweeps Hydra enumerates with
// Python's decimal module (private to the config library).
#ifndef TRIALSHIM_CONFIG_SRC_PYTHON_DECIMAL_H_
#define TRIALSHIM_CONFIG_SRC_PYTHON_DECIMAL_H_

#include <string>

namespace trialshim::config::override_internal {

// Just enough of Python's decimal.Decimal for Hydra's FloatRange: exact
// conversion from a double, addition rounded to the default context's 28
// significant digits (ROUND_HALF_EVEN), comparison, conversion back. The
// rounding matters: range(0,1,0.1) gives 0.3, not 0.30000000000000004.
class Decimal {
 public:
  explicit Decimal(double v);

  Decimal Plus(const Decimal& o) const;
  bool Less(const Decimal& o) const;
  double ToDouble() const;

 private:
  Decimal() = default;
  bool IsZero() const { return digits_ == "0"; }
  void Normalize();
  void Round(size_t precision);
  // Magnitudes compared as values: more integer digits wins, then digits.
  int CmpValue(const Decimal& o) const;
  static int CmpMag(const std::string& a, const std::string& b);
  static std::string AddMag(const std::string& a, const std::string& b);
  static std::string SubMag(const std::string& a,
                            const std::string& b);  // a >= b

  bool negative_ = false;
  std::string digits_ = "0";
  int exp_ = 0;
};

}  // namespace trialshim::config::override_internal

#endif  // TRIALSHIM_CONFIG_SRC_PYTHON_DECIMAL_H_
