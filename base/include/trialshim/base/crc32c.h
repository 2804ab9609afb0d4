// CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78), the
// checksum of iSCSI (RFC 3720) and of TFRecord files, which frame every
// TensorBoard event with it. Debian 12 packages no C/C++ CRC-32C library,
// so this is the classic byte-wise table (about 400 MB/s here; event files
// are written at a few KB per logging step, so nothing faster is needed).
//
// MaskedCrc32c is TFRecord's variant: a CRC stored beside the data it covers
// is rotated and offset so that the CRC of a string holding CRCs stays
// well distributed (tensorflow/core/lib/hash/crc32c.h, Mask()).
// Thread-safe: pure functions over a constant table.
#ifndef TRIALSHIM_BASE_CRC32C_H_
#define TRIALSHIM_BASE_CRC32C_H_

#include <cstdint>
#include <string_view>

namespace trialshim {

// The CRC-32C of `data` appended to data whose CRC-32C was `crc` (0 for
// none): Crc32c("abc") == Crc32c("c", Crc32c("ab")).
uint32_t Crc32c(std::string_view data, uint32_t crc = 0);

// TFRecord's masked CRC: ((c >> 15) | (c << 17)) + 0xa282ead8 of
// c = Crc32c(data).
uint32_t MaskedCrc32c(std::string_view data);

}  // namespace trialshim

#endif  // TRIALSHIM_BASE_CRC32C_H_
