#!/usr/bin/env bash
# Fills a fleet database with N stored results (issue 10 "Load": the query figures are taken with
# 1,000,000 results), fast, straight in SQL:
#   bench/fleet/fill_results.sh DB [N] [STORE...]
# DB     the fleet database: an SQLite file (made when missing) or a postgresql:// URL.
# N      results to add (default 1000000).
# STORE  local result stores whose records are the templates (default: out/stories260k/results.db
#        and out/quickstart/results.db, those that exist). They are first submitted the real way:
#        a `pipette serve` on the database, a registered client, `pipette submit` (signed,
#        validated against the schema, columns computed by the fleet store). Already-submitted
#        records are not sent twice, so a DB that already holds real results needs no STORE.
# Each generated result copies a template (the real results in DB) with a new result_id and
# config_id, one of DEVICES devices (default 40, each a registered client with its profile),
# one of MODELS model variants (default 12: another SHA-256 and file name, same quantization),
# the prefill shape scaled by 1, 2, 4, 8 or 16 (benchmark.id follows; the headline moves with the
# shape and the device), and started_at spread over the last DAYS days (default 365). Raw
# samples are the template's, without their per-token latency lists; a stories260K record is then
# about 13 KB, so 1,000,000 take about 16 GB in SQLite. Measured here (2 busy cores): SQLite
# 100,000 in 22 s (1,000,000 in 10 min, 17 GB); PostgreSQL 50,000 in 58 s, but 100,000 in 10 min
# on a larger database: for 1,000,000 on PostgreSQL fill SQLite, then bench/fleet/copy_to_pg.sh
# (10 min here). BATCH (default 100000) rows per transaction.
# Every generated record still validates against docs/schema/pipette.result-1.schema.json.
# Needs: the sqlite3 CLI (SQLite) or psql (PostgreSQL), python3 and curl for the template step.
set -euo pipefail
db=${1:?usage: bench/fleet/fill_results.sh DB [N] [STORE...]}
n=${2:-1000000}
shift $(($# >= 2 ? 2 : 1))
root=$(cd "$(dirname "$0")/../.." && pwd)
pipette=${PIPETTE:-$root/build/src/cli/pipette}
devices=${DEVICES:-40}
models=${MODELS:-12}
days=${DAYS:-365}
batch=${BATCH:-100000}
[[ $n =~ ^[0-9]+$ ]] || { echo "fill_results: N must be a whole number, not '$n'" >&2; exit 2; }
[ -x "$pipette" ] || { echo "fill_results: no pipette binary at $pipette (scripts/build.sh, or PIPETTE=...)" >&2; exit 1; }
case "$db" in
  postgres://*|postgresql://*) kind=pg
    command -v psql >/dev/null || { echo "fill_results: psql is not installed (postgresql-client)" >&2; exit 1; } ;;
  *) kind=sqlite
    command -v sqlite3 >/dev/null || { echo "fill_results: the sqlite3 CLI is not installed (apt-get install sqlite3)" >&2; exit 1; } ;;
esac
if [ $# -eq 0 ]; then
  for s in "$root/out/stories260k/results.db" "$root/out/quickstart/results.db"; do
    [ -f "$s" ] && set -- "$@" "$s"
  done
fi

# One query's result, unadorned.
q() {
  if [ $kind = pg ]; then
    psql -X -q -t -A -v ON_ERROR_STOP=1 -c "$1" "$db"
  else
    sqlite3 -bail -batch "$db" "$1"
  fi
}

# The fleet store makes its schema when it opens the database.
"$pipette" serve clients list --db "$db" >/dev/null

# Templates: the stores' records, submitted through a real server.
if [ $# -gt 0 ]; then
  work=$(mktemp -d)
  trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
  . "$root/bench/fleet/serve_lib.sh"
  start_serve "$pipette" "$db" "$work/serve.log"
  key=$("$pipette" serve keys create --db "$db" --labels fill 2>/dev/null | head -n 1)
  export PIPETTE_IDENTITY=$work/identity.json PIPETTE_OUTBOX=$work/outbox
  "$pipette" register --server "http://127.0.0.1:$port" --preauth "$key" --label templates \
    >/dev/null
  for store in "$@"; do
    "$pipette" --store "$store" submit --server "http://127.0.0.1:$port" >/dev/null \
      || { echo "fill_results: submitting $store failed" >&2; exit 1; }
    echo "templates: submitted $store" >&2
  done
  kill $server; wait $server 2>/dev/null || true
  trap 'rm -rf "$work"' EXIT
fi

# Templates are the results not made by an earlier fill (those belong to clients labelled fill-*).
templates=$(q "SELECT count(*) FROM results WHERE client_id NOT IN
                (SELECT client_id FROM clients WHERE label LIKE 'fill-%')")
[ "${templates:-0}" -gt 0 ] || {
  echo "fill_results: $db holds no real results to copy; give a STORE (e.g. out/stories260k/results.db from bench/stories260k.sh)" >&2
  exit 1
}
run=$(( (RANDOM << 15 | RANDOM) & 0xfff ))
now=$(date +%s)
echo "fill_results: $n results from $templates templates, $devices devices, $models model variants, over $days days" >&2

if [ $kind = sqlite ]; then
  # One session: the temporary tables live as long as it does.
  {
    cat <<SQL
PRAGMA journal_mode = WAL;
PRAGMA synchronous = OFF;
PRAGMA cache_size = -262144;
PRAGMA temp_store = MEMORY;
CREATE TEMP TABLE tpl AS
  SELECT row_number() OVER (ORDER BY result_id) - 1 AS t, r.*,
         json_set(r.record, '$.samples',
                  (SELECT json_group_array(json(json_remove(s.value, '$.inter_token_latency')))
                     FROM json_each(r.record, '$.samples') s)) AS slim
    FROM results r
   WHERE r.client_id NOT IN (SELECT client_id FROM clients WHERE label LIKE 'fill-%');
CREATE TEMP TABLE dev AS
  WITH RECURSIVE k(d) AS (SELECT 0 UNION ALL SELECT d + 1 FROM k WHERE d + 1 < $devices)
  SELECT d, lower(hex(randomblob(32))) AS device_id, 'pc_' || lower(hex(randomblob(16))) AS client_id,
         printf('fill-%03x-%02d', $run, d) AS label, lower(hex(randomblob(32))) AS public_key,
         0.5 + (d % 7) * 0.25 AS speed
    FROM k;
CREATE TEMP TABLE mdl AS
  WITH RECURSIVE k(m) AS (SELECT 0 UNION ALL SELECT m + 1 FROM k WHERE m + 1 < $models)
  SELECT m, lower(hex(randomblob(32))) AS sha FROM k;
INSERT INTO clients (client_id, public_key, status, label, labels, profile, created_at)
  SELECT dev.client_id, dev.public_key, 'approved', dev.label, '["fill"]',
         json_set(json_extract((SELECT record FROM tpl WHERE t = 0), '$.device'),
                  '$.id', dev.device_id, '$.label', dev.label),
         $now - $days * 86400
    FROM dev;
SQL
    done_rows=0
    while [ $done_rows -lt "$n" ]; do
      size=$(( n - done_rows < batch ? n - done_rows : batch ))
      cat <<SQL
BEGIN;
WITH RECURSIVE seq(i) AS (SELECT $done_rows UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < $done_rows + $size),
g AS (
  SELECT i, tpl.*, dev.device_id AS new_device, dev.client_id AS new_client, dev.label AS new_label,
         dev.speed, mdl.sha AS new_sha, mdl.m,
         (i / ($templates * $devices * $models)) % 5 AS shape,
         $now - $days * 86400 + (i * $days * 86400) / $n + (i * 37) % 600 AS at
    FROM seq
    JOIN tpl ON tpl.t = i % $templates
    JOIN dev ON dev.d = (i / $templates) % $devices
    JOIN mdl ON mdl.m = (i / ($templates * $devices)) % $models),
h AS (
  SELECT g.*,
         CAST(json_extract(record, '$.benchmark.prefill_tokens') AS INTEGER) << shape AS p,
         json_extract(record, '$.benchmark.decode_tokens') AS dtok,
         strftime('%Y-%m-%dT%H:%M:%fZ', at, 'unixepoch') AS started,
         strftime('%Y-%m-%dT%H:%M:%fZ', at + 2, 'unixepoch') AS finished,
         CASE WHEN headline_unit IN ('tokens/s') THEN speed / (1 + 0.15 * shape)
              WHEN headline_unit IN ('ms', 'bytes') THEN (1 + 0.3 * shape) / speed
              ELSE 1 END AS f
    FROM g),
b AS (
  SELECT h.*,
         CASE benchmark_type
           WHEN 'prefill' THEN 'prefill_throughput_' || p
           WHEN 'decode' THEN 'decode_throughput_' || p || '_' || dtok
           WHEN 'e2e' THEN 'end_to_end_latency_' || p || '_' || dtok
           WHEN 'memory' THEN 'max_memory_usage_' || p
           ELSE benchmark_id END AS bid,
         benchmark_type IN ('prefill', 'decode', 'e2e', 'memory') AS shaped,
         printf('%08x-%04x-7%03x-%04x-%012x', (at * 1000) >> 16, (at * 1000) & 65535, $run,
                32768 + (i >> 48) % 16384, i & 281474976710655) AS rid,
         replace(model_file, '.gguf', printf('-v%02d.gguf', m)) AS new_file,
         '\$.metrics.' || headline_metric AS hm
    FROM h)
INSERT INTO results (result_id, client_id, received_at, config_id, status, benchmark_id,
    benchmark_type, model_file, model_sha256, quant, quant_label, runtime, device_id, label,
    started_at, threads, headline_metric, headline_unit, headline, ci_low, ci_high, headline_n,
    ci_reached, profile_mismatch, settings, record)
SELECT rid, new_client, at + 60,
       printf('%016x%016x%016x%016x', $run, t, m * 4096 + (i / $templates) % $devices, shape),
       status, bid, benchmark_type, new_file, new_sha, quant, quant_label, runtime, new_device,
       new_label, started, threads, headline_metric, headline_unit, headline * f, ci_low * f,
       ci_high * f, headline_n, ci_reached, 0, settings,
       CASE WHEN headline IS NULL OR headline_metric = '' OR NOT shaped THEN r0 ELSE
         json_set(r0, hm || '.median', headline * f, hm || '.ci95_low', ci_low * f,
                  hm || '.ci95_high', ci_high * f,
                  hm || '.mean', json_extract(r0, hm || '.mean') * f) END
  FROM (SELECT b.*, json_set(slim, '\$.result_id', rid,
          '\$.config_id', printf('%016x%016x%016x%016x', $run, t, m * 4096 + (i / $templates) % $devices, shape),
          '\$.started_at', started, '\$.finished_at', finished,
          '\$.device.id', new_device, '\$.device.label', new_label,
          '\$.model.sha256', new_sha, '\$.model.file_name', new_file,
          '\$.benchmark.id', bid,
          '\$.benchmark.prefill_tokens', CASE WHEN shaped THEN p ELSE json_extract(record, '\$.benchmark.prefill_tokens') END) AS r0
        FROM b);
UPDATE meta SET value = CAST(value AS INTEGER) + $size WHERE key = 'result_count';
COMMIT;
SELECT 'fill_results: ' || ($done_rows + $size) || ' of $n';
SQL
      done_rows=$(( done_rows + size ))
    done
    echo "PRAGMA synchronous = FULL; ANALYZE;"
  } | sqlite3 -bail -batch "$db" >&2
else
  {
    cat <<SQL
\set ON_ERROR_STOP 1
SET synchronous_commit = off;
CREATE TEMP TABLE tpl AS
  SELECT row_number() OVER (ORDER BY result_id) - 1 AS t, r.*,
         jsonb_set(r.record::jsonb, '{samples}',
                   COALESCE((SELECT jsonb_agg(s - 'inter_token_latency')
                               FROM jsonb_array_elements(r.record::jsonb -> 'samples') s), '[]'))
           AS slim
    FROM results r
   WHERE r.client_id NOT IN (SELECT client_id FROM clients WHERE label LIKE 'fill-%');
CREATE TEMP TABLE dev AS
  SELECT d, md5(random()::text) || md5(random()::text) AS device_id,
         'pc_' || md5(random()::text) AS client_id,
         format('fill-%s-%s', to_hex($run), lpad(d::text, 2, '0')) AS label,
         md5(random()::text) || md5(random()::text) AS public_key,
         0.5 + (d % 7) * 0.25 AS speed
    FROM generate_series(0, $devices - 1) d;
CREATE TEMP TABLE mdl AS
  SELECT m, md5(random()::text) || md5(random()::text) AS sha FROM generate_series(0, $models - 1) m;
INSERT INTO clients (client_id, public_key, status, label, labels, profile, created_at)
  SELECT dev.client_id, dev.public_key, 'approved', dev.label, '["fill"]',
         jsonb_set(jsonb_set((SELECT slim -> 'device' FROM tpl WHERE t = 0), '{id}',
                             to_jsonb(dev.device_id)), '{label}', to_jsonb(dev.label))::text,
         $now - $days * 86400
    FROM dev;
SQL
    done_rows=0
    while [ $done_rows -lt "$n" ]; do
      size=$(( n - done_rows < batch ? n - done_rows : batch ))
      cat <<SQL
BEGIN;
WITH g AS (
  SELECT i, tpl.*, dev.device_id AS new_device, dev.client_id AS new_client, dev.label AS new_label,
         dev.speed, mdl.sha AS new_sha, mdl.m,
         (i / ($templates * $devices * $models)) % 5 AS shape,
         $now - $days * 86400 + (i * $days * 86400) / $n + (i * 37) % 600 AS at
    FROM generate_series($done_rows::bigint, $done_rows + $size - 1) i
    JOIN tpl ON tpl.t = i % $templates
    JOIN dev ON dev.d = (i / $templates) % $devices
    JOIN mdl ON mdl.m = (i / ($templates * $devices)) % $models),
h AS (
  SELECT g.*,
         ((slim -> 'benchmark' ->> 'prefill_tokens')::bigint << shape::int) AS p,
         slim -> 'benchmark' ->> 'decode_tokens' AS dtok,
         to_char(to_timestamp(at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS started,
         to_char(to_timestamp(at + 2) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS finished,
         CASE WHEN headline_unit = 'tokens/s' THEN speed / (1 + 0.15 * shape)
              WHEN headline_unit IN ('ms', 'bytes') THEN (1 + 0.3 * shape) / speed
              ELSE 1 END AS f
    FROM g),
b AS (
  SELECT h.*,
         CASE benchmark_type
           WHEN 'prefill' THEN 'prefill_throughput_' || p
           WHEN 'decode' THEN 'decode_throughput_' || p || '_' || dtok
           WHEN 'e2e' THEN 'end_to_end_latency_' || p || '_' || dtok
           WHEN 'memory' THEN 'max_memory_usage_' || p
           ELSE benchmark_id END AS bid,
         benchmark_type IN ('prefill', 'decode', 'e2e', 'memory') AS shaped,
         lpad(to_hex((at * 1000) >> 16), 8, '0') || '-' || lpad(to_hex((at * 1000) & 65535), 4, '0')
           || '-7' || lpad(to_hex($run), 3, '0') || '-' || to_hex(32768 + (i >> 48) % 16384)
           || '-' || lpad(to_hex(i & 281474976710655), 12, '0') AS rid,
         replace(model_file, '.gguf', format('-v%s.gguf', lpad(m::text, 2, '0'))) AS new_file,
         lpad(to_hex($run), 16, '0') || lpad(to_hex(t), 16, '0')
           || lpad(to_hex(m * 4096 + (i / $templates) % $devices), 16, '0') || lpad(to_hex(shape), 16, '0') AS cfg
    FROM h),
r AS (
  SELECT b.*, slim || jsonb_build_object('result_id', rid, 'config_id', cfg, 'started_at', started,
                                         'finished_at', finished) AS r1
    FROM b),
s AS (
  SELECT r.*,
    jsonb_set(jsonb_set(jsonb_set(jsonb_set(jsonb_set(jsonb_set(r1,
      '{device,id}', to_jsonb(new_device)), '{device,label}', to_jsonb(new_label)),
      '{model,sha256}', to_jsonb(new_sha)), '{model,file_name}', to_jsonb(new_file)),
      '{benchmark,id}', to_jsonb(bid)),
      '{benchmark,prefill_tokens}', CASE WHEN shaped THEN to_jsonb(p) ELSE r1 -> 'benchmark' -> 'prefill_tokens' END)
      AS r2
    FROM r)
INSERT INTO results (result_id, client_id, received_at, config_id, status, benchmark_id,
    benchmark_type, model_file, model_sha256, quant, quant_label, runtime, device_id, label,
    started_at, threads, headline_metric, headline_unit, headline, ci_low, ci_high, headline_n,
    ci_reached, profile_mismatch, settings, record, metrics)
SELECT rid, new_client, at + 60, cfg, status, bid, benchmark_type, new_file, new_sha, quant,
       quant_label, runtime, new_device, new_label, started, threads, headline_metric,
       headline_unit, headline * f, ci_low * f, ci_high * f, headline_n, ci_reached, 0, settings,
       rec::text, (rec -> 'metrics')::text
  FROM (SELECT s.*, (CASE WHEN headline IS NULL OR headline_metric = '' OR NOT shaped OR
                  NOT (r2 -> 'metrics') ? headline_metric THEN r2 ELSE
         jsonb_set(r2, ARRAY['metrics', headline_metric], (r2 -> 'metrics' -> headline_metric)
           || jsonb_build_object('median', headline * f, 'ci95_low', ci_low * f,
                                 'ci95_high', ci_high * f,
                                 'mean', (r2 -> 'metrics' -> headline_metric ->> 'mean')::float8 * f))
        END) AS rec
  FROM s) AS made;
UPDATE result_counts SET n = n + $size WHERE shard = 0;
COMMIT;
SELECT 'fill_results: ' || ($done_rows + $size) || ' of $n';
SQL
      done_rows=$(( done_rows + size ))
    done
    echo "ANALYZE results;"
  } | psql -X -q -t -A -v ON_ERROR_STOP=1 "$db" >&2
fi
if [ $kind = pg ]; then
  count="SELECT sum(n) FROM result_counts"
else
  count="SELECT value FROM meta WHERE key = 'result_count'"
fi
echo "fill_results: done; $(q "$count") results in $db" >&2
