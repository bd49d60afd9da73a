// ResultFilter (pipette/store.h) as PostgreSQL SQL over the results table, and the keyset cursor
// of ListResults.
#pragma once

#include <pqxx/pqxx>
#include <string>

#include "pipette/status.h"
#include "pipette/store.h"

namespace pipette::pg {

// " WHERE ..." (or "") selecting the rows `filter` matches, values quoted by `conn`; `limit` is
// left to the caller. Errors: ParseSince's and ParseSettingFilter's.
Result<std::string> WhereClause(pqxx::connection_base& conn, const ResultFilter& filter);

// `text` as a PostgreSQL string literal escaped by `conn`: what conn.quote(text) gives, made
// without pqxx's `"'" + esc(text) + "'"`, in which GCC 12 sees an overlapping copy (-Wrestrict).
std::string Quote(pqxx::connection_base& conn, const std::string& text);

// The position after a listed row: (started_at, result_id) of the last row shown.
struct Cursor {
  std::string started_at, result_id;
};
std::string EncodeCursor(const Cursor& cursor);
// Errors: "bad cursor; start from the first page".
Result<Cursor> DecodeCursor(const std::string& text);

}  // namespace pipette::pg
