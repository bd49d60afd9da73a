# Sourced by the bench/fleet scripts: start_serve PIPETTE DB LOG starts `pipette serve` on a free
# loopback port over DB (rate limit off: one client sends everything), waits until /health
# answers, and sets $port and $server (its pid). Exits 1 with the server's log when it dies first.
# SERVE_ARGS: more options for serve (e.g. "--page-cache 0": every dashboard page rendered anew).
start_serve() {
  local pipette=$1 db=$2 log=$3
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$pipette" serve --listen 127.0.0.1:$port --db "$db" --rate-limit 1000000 ${SERVE_ARGS:-} 2>"$log" &
  server=$!
  for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && return 0
    kill -0 $server 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.2
  done
}
