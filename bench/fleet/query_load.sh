#!/usr/bin/env bash
# Query latency of `pipette serve` under load (issue 10 "Load"): starts the server on a filled
# fleet database, then drives each read endpoint and dashboard page with wrk (Debian `wrk`) on
# loopback and prints requests/s and the p50/p99 latency of each, one table row per URL.
#   bench/fleet/query_load.sh DB [SECONDS] [CONNECTIONS]
# DB: an SQLite fleet file or a postgresql:// URL, filled e.g. by bench/fleet/fill_results.sh.
# Target (issue 10): p99 <= 50 ms with 1,000,000 stored results. The server keeps rendered pages
# until a result is added (serve --page-cache), so wrk, asking for one URL again and again, times
# the kept page after its first request: SERVE_ARGS="--page-cache 0" times rendering every time.
set -euo pipefail
db=${1:?usage: bench/fleet/query_load.sh DB [SECONDS] [CONNECTIONS]}
seconds=${2:-10}
connections=${3:-4}
root=$(cd "$(dirname "$0")/../.." && pwd)
pipette=${PIPETTE:-$root/build/src/cli/pipette}
command -v wrk >/dev/null || { echo "query_load: wrk is not installed (scripts/deps.sh --test)" >&2; exit 1; }
[ -x "$pipette" ] || { echo "query_load: no pipette binary at $pipette (scripts/build.sh)" >&2; exit 1; }

log=$(mktemp)
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$log"' EXIT
. "$root/bench/fleet/serve_lib.sh"
start_serve "$pipette" "$db" "$log"
base=http://127.0.0.1:$port

# Names seen in the data, so the filtered URLs select real rows.
first=$(curl -fsS "$base/api/results?limit=1")
pick() { python3 -c "import json,sys; r=json.loads(sys.argv[1])['results']; print(r[0]['$1'] if r else '')" "$first"; }
id=$(pick result_id)
bench=$(pick benchmark_id)
# A second result on the same benchmark, for the compare page; a plan when there is one.
other=$(curl -fsS "$base/api/results?benchmark=$bench&limit=2" | python3 -c "import json,sys; r=json.load(sys.stdin)['results']; print(r[-1]['result_id'] if r else '')")
plan=$(curl -fsS "$base/fleet" | python3 -c "import re,sys; m=re.search(r'href=\"/plans/([^\"]+)\"', sys.stdin.read()); print(m.group(1) if m else '')")
quant=$(pick quant)
device=$(pick device_id)
# The cursor of a filtered listing's second page (paging), URL-encoded.
cursor=$(curl -fsS "$base/api/results?benchmark=$bench" | python3 -c "import json,sys,urllib.parse; print(urllib.parse.quote(json.load(sys.stdin).get('next') or '', safe=''))")
total=$(python3 -c "import json,sys; print(json.loads(sys.argv[1]).get('total', '?'))" "$first")
[ -n "$id" ] || { echo "query_load: $db holds no results; fill it first (bench/fleet/fill_results.sh)" >&2; exit 1; }

echo "pipette serve on $db: $total results; wrk ${seconds}s, $connections connections, 2 threads"
printf '%-64s %10s %9s %9s\n' "URL" "req/s" "p50 ms" "p99 ms"
worst=0
for path in \
  "/api/results" \
  "/api/results?benchmark=$bench" \
  "/api/results?benchmark=$bench&quant=$quant&limit=50" \
  "/api/results?device=${device:0:12}" \
  ${cursor:+"/api/results?benchmark=$bench&cursor=$cursor"} \
  "/api/results/$id" \
  "/api/records" \
  "/api/records?benchmark=$bench&limit=200" \
  "/" \
  "/?benchmark=$bench" \
  "/?benchmark=$bench&quant=$quant&sort=median&order=desc" \
  "/scaling" \
  "/quality" \
  "/results/$id" \
  "/devices" \
  "/devices/$device" \
  "/compare?a=$id&b=$other" \
  "/fleet" \
  ${plan:+"/plans/$plan"}; do
  code=$(curl -s -o /dev/null -w '%{http_code}' "$base$path")
  if [ "$code" != 200 ]; then
    printf '%-64s %s\n' "${path:0:64}" "HTTP $code (skipped)"
    continue
  fi
  out=$(wrk -t2 -c"$connections" -d"${seconds}s" --latency "$base$path")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  ms() { python3 -c "import sys,re; v=sys.argv[1]; m=re.match(r'([0-9.]+)(us|ms|s)',v); f={'us':1e-3,'ms':1,'s':1e3}[m.group(2)]; print(f'{float(m.group(1))*f:.2f}')" "$1"; }
  p50ms=$(ms "$p50"); p99ms=$(ms "$p99")
  printf '%-64s %10s %9s %9s\n' "${path:0:64}" "$rps" "$p50ms" "$p99ms"
  worst=$(python3 -c "print(max($worst, $p99ms))")
done
echo "worst p99: $worst ms (target <= 50 ms)"
