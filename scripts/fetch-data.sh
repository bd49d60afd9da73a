#!/usr/bin/env bash
# Fetches the third-party data the tests read (docs/data.md) into DIR, from the public URLs in
# scripts/data-manifest.txt: stories260K and its tokenizer, MATH-500, IFBench and its checkers'
# model data. Each file is downloaded to a temporary file inside DIR, checked against its size and
# SHA-256 and only then renamed into place: a 404, a download cut short or a wrong digest is one
# line on stderr, nothing of that file is kept, and the script exits 1 after trying the rest.
# Files already in DIR with the right digest are not fetched again. Then the tests read DIR:
#   export PIPETTE_DATA_DIR=DIR
#
# GPQA Diamond is gated by its authors (accept their terms, download gpqa_diamond.csv, give it
# with --gpqa FILE); the scorer verdict corpus is the project's own and unpublished. Tests that
# need either skip, saying so. PIPETTE_DATA_MIRROR=URL fetches every file, those included, as is
# from URL/PATH (a copy of another data folder served over HTTP: a team's mirror, or the test's
# local server). Needs curl; python3 for the files cut from zips or derived.
set -euo pipefail
usage() {
  echo "usage: scripts/fetch-data.sh [--gpqa gpqa_diamond.csv] DIR"
  echo "       (PIPETTE_DATA_MIRROR=URL: every file from URL/PATH instead; docs/data.md)"
}
gpqa=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --gpqa) [ $# -ge 2 ] || { usage >&2; exit 2; }; gpqa=$2; shift 2 ;;
    -*) usage >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -eq 1 ] || { usage >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
manifest=${PIPETTE_DATA_MANIFEST:-$root/scripts/data-manifest.txt}
mirror=${PIPETTE_DATA_MIRROR:-}
mkdir -p "$1"
dir=$(cd "$1" && pwd)
tmp=$(mktemp -d "$dir/.fetch-data.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

failed=0 fetched=0 present=0
fail() { echo "fetch-data: $1" >&2; failed=$((failed + 1)); }

# Downloads $1 to $2; on failure prints why (one line, no newline at the end) and returns 1.
download() {
  local code rc=0
  code=$(curl -sSL --connect-timeout 20 --retry 2 -o "$2" -w '%{http_code}' "$1" \
    2>"$tmp/curl.err") || rc=$?
  if [ "$rc" -eq 0 ] && [ "$code" = 200 ]; then return 0; fi
  if [ "$rc" -eq 18 ] || [ "$rc" -eq 56 ]; then
    printf 'download cut short after %s bytes from %s' "$(stat -c %s "$2" 2>/dev/null || echo 0)" \
      "$1"
  elif [ "$rc" -eq 0 ]; then
    printf 'HTTP %s from %s' "$code" "$1"
  else
    printf 'download failed (%s) from %s' "$(head -n1 "$tmp/curl.err")" "$1"
  fi
  return 1
}

# The archive or source file at URL $1, downloaded once per run; its path on stdout.
source_file() {
  local cached="$tmp/src-$(printf '%s' "$1" | sha256sum | cut -c1-16)"
  if [ ! -f "$cached" ]; then
    download "$1" "$cached.part" || { rm -f "$cached.part"; return 1; }
    mv "$cached.part" "$cached"
  fi
  echo "$cached"
}

# Makes $3 from the downloaded $2 as manifest method $1 says (python3: zip members, gzip, emoji).
derive() {
  python3 - "$1" "$2" "$3" <<'EOF'
import json, struct, sys, zipfile, zlib
how, src, out = sys.argv[1:]
if how.startswith("zip:") or how.startswith("zip-gzip:"):
    data = zipfile.ZipFile(src).read(how.split(":", 1)[1])
    if how.startswith("zip-gzip:"):  # gzip -9, mtime 0, no name, OS unknown: as stored upstream's
        c = zlib.compressobj(9, zlib.DEFLATED, -15, 8, 0)
        data = (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + c.compress(data) + c.flush() +
                struct.pack("<II", zlib.crc32(data) & 0xffffffff, len(data) & 0xffffffff))
elif how == "emoji-keys":  # emoji.is_emoji(s) is `s in EMOJI_DATA`, the keys of emoji.json
    with open(src, encoding="utf-8") as f:
        rows = sorted(tuple(ord(c) for c in key) for key in json.load(f))
    data = "".join(" ".join("%04X" % c for c in r) + "\n" for r in rows).encode("ascii")
else:
    sys.exit("unknown method " + how)
with open(out, "wb") as f:
    f.write(data)
EOF
}

# Checks $1 (made for PATH $2) against size $3 and digest $4; on a mismatch prints why.
verify() {
  local size digest
  size=$(stat -c %s "$1")
  if [ "$size" != "$3" ]; then
    printf '%s bytes, expected %s (cut short or changed upstream)' "$size" "$3"
    return 1
  fi
  digest=$(sha256sum "$1" | cut -d' ' -f1)
  if [ "$digest" != "$4" ]; then
    printf 'wrong SHA-256 %s, expected %s' "$digest" "$4"
    return 1
  fi
}

# GPQA Diamond from the file its authors hand out: their CSV, gzip -9 -n as the tests read it.
gpqa_from_file() {
  local want_csv=41d1213cd7a4998605a26c2798500652572007161b3a92817ba46b35befcd305
  if [ "$(sha256sum "$gpqa" | cut -d' ' -f1)" != "$want_csv" ]; then
    fail "$gpqa: not GPQA Diamond's gpqa_diamond.csv as published (SHA-256 $want_csv); nothing kept"
    return 1
  fi
  gzip -9 -n -c "$gpqa" >"$2"
}

gated_note="" unpublished=0
while read -r path size sha how url; do
  case "$path" in ''|'#'*) continue ;; esac
  dest="$dir/$path"
  if [ -f "$dest" ] && verify "$dest" "$path" "$size" "$sha" >/dev/null; then
    present=$((present + 1))
    continue
  fi
  part="$tmp/part"
  rm -f "$part"
  if [ -n "$mirror" ]; then
    url="${mirror%/}/$path"
    why=$(download "$url" "$part") || { fail "$path: $why; nothing kept"; continue; }
  elif [ "$how" = unpublished ]; then
    unpublished=$((unpublished + 1))
    continue
  elif [ "$how" = gated ]; then
    if [ -z "$gpqa" ]; then
      gated_note="GPQA Diamond ($path) is gated by its authors: accept their terms at $url,"
      gated_note+=" download gpqa_diamond.csv and rerun with --gpqa FILE"
      continue
    fi
    gpqa_from_file "$path" "$part" || continue
  elif [ "$how" = file ]; then
    why=$(download "$url" "$part") || { fail "$path: $why; nothing kept"; continue; }
  else
    src=$(source_file "$url") || { fail "$path: $src; nothing kept"; continue; }
    derive "$how" "$src" "$part" 2>"$tmp/derive.err" ||
      { fail "$path: cannot make it from $url ($(tail -n1 "$tmp/derive.err")); nothing kept"
        continue; }
  fi
  why=$(verify "$part" "$path" "$size" "$sha") ||
    { fail "$path: $why, from $url; nothing kept"; continue; }
  mkdir -p "$(dirname "$dest")"
  mv -f "$part" "$dest"
  fetched=$((fetched + 1))
done <"$manifest"

echo "fetch-data: $fetched fetched, $present already there, $failed failed, in $dir"
[ -n "$gated_note" ] && echo "fetch-data: $gated_note (tests that need it skip)"
[ "$unpublished" -gt 0 ] &&
  echo "fetch-data: the scorer verdict corpus ($unpublished files under evals/scoring/) is the" \
    "project's own and unpublished (tests that need it skip)"
if [ "$failed" -gt 0 ]; then
  echo "fetch-data: $failed files failed; rerun to fetch them (the rest is kept)" >&2
  exit 1
fi
echo "tests read it with: export PIPETTE_DATA_DIR=$dir"
