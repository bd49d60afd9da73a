#!/usr/bin/env bash
# A throwaway PostgreSQL server for shell-level tests and the load script (the same set-up as
# tests/support/postgres_server.cc): initdb into DIR, a free TCP port on 127.0.0.1, trust
# authentication, fsync off. As root it runs as the `postgres` user (PostgreSQL refuses root).
#
#   scripts/pg-test-server.sh start DIR   # prints the URL of database "pipette"
#   scripts/pg-test-server.sh stop DIR    # stops it (immediate) and deletes DIR
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
dir=$2

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb); install the postgresql package (scripts/deps.sh --test)" >&2
  exit 1
fi

as_user() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

case "$cmd" in
  start)
    if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
      echo "pg-test-server: $dir exists and is not empty; give a new folder" >&2
      exit 1
    fi
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ "$(id -u)" -eq 0 ]; then
      id postgres >/dev/null 2>&1 || {
        echo "pg-test-server: running as root and there is no 'postgres' user; install the postgresql package" >&2
        exit 1
      }
      chown postgres: "$dir"
    fi
    as_user "$bin/initdb" -D "$dir/data" -U pipette -A trust --no-sync -E UTF8 --no-locale \
      >"$dir/initdb.log" 2>&1 || { tail -n 3 "$dir/initdb.log" >&2; exit 1; }
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_user "$bin/pg_ctl" start -w -t 30 -D "$dir/data" -l "$dir/server.log" \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=300" \
      >"$dir/pg_ctl.log" 2>&1 || { tail -n 3 "$dir/server.log" >&2; exit 1; }
    as_user "$bin/createdb" -h 127.0.0.1 -p "$port" -U pipette pipette
    echo "$port" >"$dir/port"
    echo "postgresql://pipette@127.0.0.1:$port/pipette"
    ;;
  stop)
    [ -d "$dir/data" ] || { echo "pg-test-server: no server in $dir" >&2; exit 1; }
    as_user "$bin/pg_ctl" stop -w -m immediate -D "$dir/data" >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  *) usage ;;
esac
