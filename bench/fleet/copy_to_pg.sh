#!/usr/bin/env bash
# Copies the results bench/fleet/fill_results.sh generated in an SQLite fleet database (with
# their clients and model pairs) into a PostgreSQL fleet database, for the query figures at
# 1,000,000 results on both backends (issue 10 "Load"):
#   bench/fleet/copy_to_pg.sh SQLITE_DB POSTGRESQL_URL
# fill_results.sh builds each record in PostgreSQL's jsonb, one backend on one core: about 170
# results/s here, 100 minutes for 1,000,000. This streams the SQLite rows through COPY instead,
# with the results indexes dropped during the load and rebuilt from their own definitions after
# it (one CREATE INDEX each is far cheaper than a million index insertions). The copied rows are
# the generated ones only (clients labelled fill-*): the real templates are submitted to the
# PostgreSQL database the real way first (fill_results.sh POSTGRESQL_URL 0 STORE...).
set -euo pipefail
src=${1:?usage: bench/fleet/copy_to_pg.sh SQLITE_DB POSTGRESQL_URL}
db=${2:?usage: bench/fleet/copy_to_pg.sh SQLITE_DB POSTGRESQL_URL}
for tool in sqlite3 psql; do
  command -v $tool >/dev/null || { echo "copy_to_pg: $tool is not installed" >&2; exit 1; }
done
[ -f "$src" ] || { echo "copy_to_pg: no SQLite database at $src" >&2; exit 1; }
pq() { psql -X -q -t -A -v ON_ERROR_STOP=1 "$db" "$@"; }
# CSV both ways: sqlite3 writes NULL as an empty field and an empty text as "", as COPY reads them.
sq() { sqlite3 -csv "$src" "$1"; }
csv="(FORMAT csv)"
fill_clients="SELECT client_id FROM clients WHERE label LIKE 'fill-%'"
start=$(date +%s)

# Clients first (the copied results name them), skipping those the PostgreSQL database holds.
sq "SELECT client_id, public_key, status, label, labels, profile, capabilities,
                            created_at FROM clients WHERE label LIKE 'fill-%'" |
  pq -c "CREATE TEMP TABLE c (LIKE clients); COPY c FROM STDIN $csv;
         INSERT INTO clients SELECT * FROM c ON CONFLICT DO NOTHING"

defs=$(pq -c "SELECT indexdef FROM pg_indexes WHERE tablename = 'results'
                AND indexname LIKE 'results\_by\_%'")
names=$(pq -c "SELECT string_agg(indexname, ', ') FROM pg_indexes WHERE tablename = 'results'
                 AND indexname LIKE 'results\_by\_%'")
[ -n "$names" ] && pq -c "DROP INDEX $names"
echo "copy_to_pg: indexes dropped ($names)" >&2

columns="result_id, client_id, received_at, config_id, status, benchmark_id, benchmark_type,
  model_file, model_sha256, quant, quant_label, runtime, device_id, label, started_at, threads,
  headline_metric, headline_unit, headline, ci_low, ci_high, headline_n, ci_reached,
  profile_mismatch, settings, record"
# PostgreSQL keeps each record's metrics in a column of their own (src/fleet_store/pg/pg_schema.cc).
sq "SELECT $columns, json_extract(record, '\$.metrics') FROM results
     WHERE client_id IN ($fill_clients)" |
  pq -c "COPY results ($columns, metrics) FROM STDIN $csv"
echo "copy_to_pg: rows copied in $(( $(date +%s) - start )) s" >&2

while IFS= read -r def; do
  [ -n "$def" ] && pq -c "SET maintenance_work_mem = '1GB'; $def"
done <<<"$defs"
pq -c "UPDATE result_counts SET n = CASE WHEN shard = 0 THEN (SELECT count(*) FROM results) ELSE 0 END;
       ANALYZE results"
echo "copy_to_pg: done in $(( $(date +%s) - start )) s; $(pq -c "SELECT sum(n) FROM result_counts") results in $db" >&2
