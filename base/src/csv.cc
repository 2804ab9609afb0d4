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

StatusOr<std::vector<std::vector<std::string>>> ParseCsv(
    std::string_view text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;      // inside a quoted field
  bool was_quoted = false;  // the current field had quotes ('""' is a field)
  bool pending = false;     // a row has begun
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c != '"') {
        field += c;
      } else if (i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else {
        quoted = false;
      }
      continue;
    }
    pending = true;
    if (c == '"') {
      quoted = was_quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
      was_quoted = false;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      // An empty line is a row of no fields, as csv.reader reads it.
      if (!row.empty() || !field.empty() || was_quoted) {
        row.push_back(std::move(field));
      }
      field.clear();
      was_quoted = false;
      rows.push_back(std::move(row));
      row.clear();
      pending = false;
    } else {
      field += c;
    }
  }
  if (quoted) {
    return Status::InvalidArgument("a quoted CSV field is not closed");
  }
  if (pending) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace trialshim
