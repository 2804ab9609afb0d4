// Decimal's arithmetic (python_decimal.h).
#include "python_decimal.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <string>

namespace trialshim::config::override_internal {

// decimal.Decimal(float) is exact: all the digits of the double (0.1 is
// 0.1000000000000000055511151231257827...), not its shortest repr.
// A double has at most 767 significant decimal digits, so %.1100e loses
// none. An int bound reaches us as a double, exact below 2^53, where
// Python's Decimal(int) is always exact.
Decimal::Decimal(double v) {
  char buf[1200];
  std::snprintf(buf, sizeof buf, "%.1100e", v);  // glibc prints exact digits
  std::string text(buf);
  negative_ = text[0] == '-';
  digits_.clear();
  size_t e = text.find('e');
  for (size_t i = negative_ ? 1 : 0; i < e; ++i) {
    if (text[i] != '.') digits_ += text[i];
  }
  exp_ = std::stoi(text.substr(e + 1)) - static_cast<int>(digits_.size() - 1);
  Normalize();
}

// FloatRange's `self.start += self.step` under decimal's default context:
// exact, then rounded to 28 significant digits, half to even.
Decimal Decimal::Plus(const Decimal& o) const {
  int e = std::min(exp_, o.exp_);
  std::string a = digits_ + std::string(exp_ - e, '0');
  std::string b = o.digits_ + std::string(o.exp_ - e, '0');
  Decimal r;
  r.exp_ = e;
  if (negative_ == o.negative_) {
    r.digits_ = AddMag(a, b);
    r.negative_ = negative_;
  } else if (CmpMag(a, b) >= 0) {
    r.digits_ = SubMag(a, b);
    r.negative_ = negative_;
  } else {
    r.digits_ = SubMag(b, a);
    r.negative_ = o.negative_;
  }
  r.Round(28);
  r.Normalize();
  return r;
}

// FloatRange's `start < stop` (types.py): an exact comparison, no context.
// -0 equals 0 as in Python; Normalize has already made every zero plain 0.
bool Decimal::Less(const Decimal& o) const {
  if (IsZero() && o.IsZero()) return false;
  if (negative_ != o.negative_) return negative_;
  int c = CmpValue(o);
  return negative_ ? c > 0 : c < 0;
}

// float(Decimal): correctly rounded, which from_chars is too.
double Decimal::ToDouble() const {
  std::string text = digits_ + "e" + std::to_string(exp_);
  double v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return negative_ ? -v : v;
}

// Python keeps trailing zeros (Decimal('1.10') has exponent -2), but only
// the value reaches comparisons and float(), and rounding to 28 digits
// counts from the first nonzero digit, so dropping them changes nothing.
void Decimal::Normalize() {
  size_t nz = digits_.find_first_not_of('0');
  if (nz == std::string::npos) {
    digits_ = "0";
    exp_ = 0;
    negative_ = false;
    return;
  }
  digits_.erase(0, nz);
  while (digits_.size() > 1 && digits_.back() == '0') {
    digits_.pop_back();
    ++exp_;
  }
}

// ROUND_HALF_EVEN: above half rounds up, exactly half goes to the even
// last digit. The carry can make precision+1 digits (999...9 + 1); that
// value is still exact, and Normalize drops the trailing zero.
void Decimal::Round(size_t precision) {
  size_t nz = digits_.find_first_not_of('0');
  if (nz == std::string::npos) return;
  digits_.erase(0, nz);
  if (digits_.size() <= precision) return;
  std::string rest = digits_.substr(precision);
  exp_ += static_cast<int>(digits_.size() - precision);
  digits_.resize(precision);
  std::string half = "5" + std::string(rest.size() - 1, '0');
  int c = CmpMag(rest, half);
  if (c > 0 || (c == 0 && (digits_.back() - '0') % 2 == 1)) {
    digits_ = AddMag(digits_, "1");
  }
}

int Decimal::CmpValue(const Decimal& o) const {
  int ma = static_cast<int>(digits_.size()) + exp_;
  int mb = static_cast<int>(o.digits_.size()) + o.exp_;
  if (IsZero()) return o.IsZero() ? 0 : -1;
  if (o.IsZero()) return 1;
  if (ma != mb) return ma < mb ? -1 : 1;
  size_t n = std::max(digits_.size(), o.digits_.size());
  std::string a = digits_ + std::string(n - digits_.size(), '0');
  std::string b = o.digits_ + std::string(n - o.digits_.size(), '0');
  return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
}

int Decimal::CmpMag(const std::string& a, const std::string& b) {
  size_t n = std::max(a.size(), b.size());
  std::string x = std::string(n - a.size(), '0') + a;
  std::string y = std::string(n - b.size(), '0') + b;
  return x.compare(y) < 0 ? -1 : (x == y ? 0 : 1);
}

std::string Decimal::AddMag(const std::string& a, const std::string& b) {
  std::string r;
  int carry = 0;
  for (size_t i = 0; i < std::max(a.size(), b.size()) || carry; ++i) {
    int d = carry;
    if (i < a.size()) d += a[a.size() - 1 - i] - '0';
    if (i < b.size()) d += b[b.size() - 1 - i] - '0';
    r += static_cast<char>('0' + d % 10);
    carry = d / 10;
  }
  std::reverse(r.begin(), r.end());
  return r;
}

// a >= b.
std::string Decimal::SubMag(const std::string& a, const std::string& b) {
  std::string r;
  int borrow = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    int d = a[a.size() - 1 - i] - '0' - borrow;
    if (i < b.size()) d -= b[b.size() - 1 - i] - '0';
    borrow = d < 0;
    r += static_cast<char>('0' + (d + 10) % 10);
  }
  std::reverse(r.begin(), r.end());
  return r;
}

}  // namespace trialshim::config::override_internal
