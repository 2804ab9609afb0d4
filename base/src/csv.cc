#include "trialshim/base/csv.h"

namespace trialshim {
namespace {

void AppendField(std::string_view field, std::string* out) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) {
    out->append(field);
    return;
  }
  out->push_back('"');
  for (char c : field) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

}  // namespace

void AppendCsvRow(const std::vector<std::string>& fields, std::string* out) {
  if (fields.size() == 1 && fields[0].empty()) {
    out->append("\"\"\r\n");
    return;
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendField(fields[i], out);
  }
  out->append("\r\n");
}

}  // namespace trialshim
