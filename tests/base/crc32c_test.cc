// CRC-32C against the vectors of RFC 3720 appendix B.4 and the standard
// check value, the masked form TFRecord stores, and incremental use.
#include "trialshim/base/crc32c.h"

#include <gtest/gtest.h>

#include <string>

namespace trialshim {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

std::string Iota(int from, int step) {
  std::string s;
  for (int i = 0; i < 32; ++i) s.push_back(static_cast<char>(from + i * step));
  return s;
}

// The 48-byte iSCSI SCSI Read (10) command PDU of RFC 3720, B.4.
std::string IscsiReadPdu() {
  std::string s = Bytes({0x01, 0xc0});
  s += std::string(14, '\0');
  s +=
      Bytes({0x14, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 0, 0x14, 0, 0, 0, 0x18, 0x28});
  s += std::string(7, '\0');
  s += Bytes({0x02});
  s += std::string(7, '\0');
  return s;
}

TEST(Crc32cTest, KnownVectors) {
  struct Case {
    const char* name;
    std::string data;
    uint32_t crc;
    uint32_t masked;  // computed with crcmod's crc-32c and the mask formula
  } cases[] = {
      {"RFC 3720 32 bytes of zeros", std::string(32, '\0'), 0x8a9136aa,
       0x0fd7fffa},
      {"RFC 3720 32 bytes of 0xff", std::string(32, '\xff'), 0x62a8ab43,
       0xf909b029},
      {"RFC 3720 32 incrementing bytes", Iota(0, 1), 0x46dd794e, 0x951f7892},
      {"RFC 3720 32 decrementing bytes", Iota(31, -1), 0x113fdb5c, 0x593b0d57},
      {"RFC 3720 iSCSI read PDU", IscsiReadPdu(), 0xd9963a56, 0x17309e04},
      {"check value '123456789'", "123456789", 0xe3069283, 0xc78ab0e5},
      {"empty", "", 0, 0xa282ead8},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Crc32c(c.data), c.crc) << c.name;
    EXPECT_EQ(MaskedCrc32c(c.data), c.masked) << c.name;
  }
}

TEST(Crc32cTest, ExtendsIncrementally) {
  const std::string data = IscsiReadPdu();
  for (size_t cut : {size_t{0}, size_t{1}, size_t{17}, data.size()}) {
    EXPECT_EQ(Crc32c(data.substr(cut), Crc32c(data.substr(0, cut))),
              Crc32c(data))
        << "cut at " << cut;
  }
}

}  // namespace
}  // namespace trialshim
