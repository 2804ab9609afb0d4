// CSV exactly as Python's csv.writer and csv.DictWriter write it with the
// default dialect ("excel"), because metrics.csv must read as Lightning's
// CSVLogger writes it and trials.csv as any Python tool would:
// QUOTE_MINIMAL (a field holding the delimiter ',', the quote '"', '\r' or
// '\n' is quoted, quotes doubled; a row of one empty field is written '""'
// so that it is not an empty line) and "\r\n" after every row.
#ifndef TRIALSHIM_BASE_CSV_H_
#define TRIALSHIM_BASE_CSV_H_

#include <string>
#include <string_view>
#include <vector>

#include "trialshim/base/status.h"

namespace trialshim {

// Appends one row, line terminator included.
void AppendCsvRow(const std::vector<std::string>& fields, std::string* out);

// The rows of `text` as csv.reader reads what AppendCsvRow writes: quoted
// fields (quotes doubled, delimiters and line breaks inside), rows ended by
// "\r\n" or "\n", a last row with or without its terminator. A quote left
// open at the end is kInvalidArgument.
StatusOr<std::vector<std::vector<std::string>>> ParseCsv(std::string_view text);

}  // namespace trialshim

#endif  // TRIALSHIM_BASE_CSV_H_
