#!/usr/bin/env bash
# Does the transport bias a measurement? The same static x86_64 device build of the driver,
# pinned to one CPU, measured here directly (local) and through ssh to this machine (a throwaway
# sshd on 127.0.0.1), interleaved round by round, so that every ssh number has a local number
# from the same minute to be divided by. Timing stays inside the driver (DESIGN.md 4.4, 8a): the
# ratios should be 1 within the machine's noise.
#
#   bench/device_transport_bias.sh [MODEL.gguf] [ROUNDS] [P] [D] [REPS]
#
# MODEL defaults to stories260K (F32, converted from ../shared). CPUS (default 0) and THREADS
# (default 1) pin both. Prints per round the ssh/local ratio of the medians of prefill (P tokens,
# default 256) and decode (D tokens, default 100, after P), then per benchmark the median ratio
# with a 95% bootstrap interval over the rounds (default 8 rounds of REPS = 10 repetitions).
# Needs scripts/build-device.sh --target x86_64-linux, sshd (openssh-server) and the build.
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PIPETTE_BUILD_DIR:-$root/build}
pipette=$build/src/cli/pipette
cache=${PIPETTE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pipette}
driver=$cache/device-drivers/x86_64-linux/x86-64-v3/pipette-llamacpp-driver
[ -x "$driver" ] || { echo "no x86_64 device build; run scripts/build-device.sh --target x86_64-linux" >&2; exit 1; }
work=$(mktemp -d)
model=${1:-}
if [ -z "$model" ]; then
  shared=$root/../shared/data/models/stories260K
  [ -f "$shared/stories260K.bin" ] || { echo "give a model: $shared is absent" >&2; exit 1; }
  model=$work/stories260K-F32.gguf
  "$pipette" models import-llama2c --model "$shared/stories260K.bin" --tokenizer "$shared/tok512.bin" -o "$model" >/dev/null
fi
rounds=${2:-8}; P=${3:-256}; D=${4:-100}; reps=${5:-10}
cpus=${CPUS:-0}; threads=${THREADS:-1}

# A throwaway sshd with its own host key and an authorized key made here.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ssh-keygen -q -t ed25519 -N '' -f "$work/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$work/client_key"
cp "$work/client_key.pub" "$work/authorized_keys"
echo "[127.0.0.1]:$port $(cat "$work/host_key.pub")" >"$work/known_hosts"
cat >"$work/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $work/host_key
AuthorizedKeysFile $work/authorized_keys
PidFile $work/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
PermitRootLogin prohibit-password
LogLevel ERROR
EOF
cat >"$work/ssh_config" <<EOF
Host 127.0.0.1
  IdentityFile $work/client_key
  IdentitiesOnly yes
  UserKnownHostsFile $work/known_hosts
  StrictHostKeyChecking yes
EOF
mkdir -p /run/sshd
/usr/sbin/sshd -f "$work/sshd_config"
trap 'kill "$(cat "$work/sshd.pid")" 2>/dev/null; rm -rf "$work"' EXIT
export PIPETTE_SSH_CONFIG=$work/ssh_config
device="ssh://$(id -un)@127.0.0.1:$port?dir=$work/device"

median() {  # $1 benchmark, $2 metric, rest: where
  local b=$1 m=$2; shift 2
  "$pipette" --store "$work/bias.db" --json run -q --model "$model" --benchmark "$b" \
    --threads "$threads" --cpus "$cpus" --min-reps "$reps" --max-reps "$reps" \
    --no-readiness-load "$@" |
    python3 -c "import json,sys; print(json.load(sys.stdin)['metrics']['$m']['median'])"
}

rows=$work/rows
for ((r = 1; r <= rounds; r++)); do
  lp=$(median "prefill_throughput_$P" prefill_throughput --driver "$driver")
  sp=$(median "prefill_throughput_$P" prefill_throughput --device "$device")
  ld=$(median "decode_throughput_${P}_$D" decode_throughput --driver "$driver")
  sd=$(median "decode_throughput_${P}_$D" decode_throughput --device "$device")
  echo "$lp $sp $ld $sd" >>"$rows"
  python3 -c 'import sys; lp,sp,ld,sd=map(float,sys.argv[2:6]); print(f"round {sys.argv[1]}: prefill local {lp:.0f} ssh {sp:.0f} tokens/s (ratio {sp/lp:.4f})  decode local {ld:.0f} ssh {sd:.0f} tokens/s (ratio {sd/ld:.4f})")' "$r" "$lp" "$sp" "$ld" "$sd"
done
python3 - "$rows" <<'EOF'
import random, statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
rng = random.Random(1)
for name, (a, b) in (("prefill", (0, 1)), ("decode", (2, 3))):
    ratios = [r[b] / r[a] for r in rows]
    boot = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
    print(f"{name}: ssh/local median ratio {statistics.median(ratios):.4f}, 95% CI "
          f"[{boot[50]:.4f}, {boot[1949]:.4f}] over {len(ratios)} rounds; per-round spread "
          f"{min(ratios):.4f}..{max(ratios):.4f}")
EOF
