#!/usr/bin/env python3
"""Decode-step cost of parallel completions against N, straight through the driver protocol.

bench/eval_parallel.sh measures whole eval cells (prompts, scoring, the tail of the last
attempts); this measures only what batching changes: the wall time of one seq_step step with N
sequences running, so a noisy, shared machine still gives a usable number in seconds. For each N
it starts a driver loaded with n_seq N, starts N completions of a short raw prompt, runs 8
untimed steps, then times 64 steps; each N is measured ROUNDS times, interleaved, and the
fastest is kept. Prints the step time, the tokens per second of all sequences together and the
gain over N = 1.

  bench/eval_parallel_steps.py MODEL.gguf [--threads T] [--flash-attn auto|on|off]
                               [--ns 1,2,4,8] [--rounds 3] [--ctx 1024]

The driver is $PIPETTE_BUILD_DIR/src/driver/pipette-llamacpp-driver (default build/).
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def call(proc, request):
    proc.stdin.write(json.dumps(request) + "\n")
    proc.stdin.flush()
    reply = json.loads(proc.stdout.readline())
    if not reply.get("ok"):
        sys.exit("bench/eval_parallel_steps.py: %s failed: %s" % (request["cmd"], reply.get("error")))
    return reply


def step_ms(driver, args, n):
    proc = subprocess.Popen([driver], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, bufsize=1)
    try:
        proc.stdout.readline()  # the ready line
        call(proc, {"cmd": "load", "model": args.model,
                    "settings": {"threads": args.threads, "n_ctx": args.ctx, "n_seq": n,
                                 "flash_attn": args.flash_attn}})
        for slot in range(n):
            call(proc, {"cmd": "seq_start", "slot": slot, "chat_template": False,
                        "message": "Once upon a time there was a little girl",
                        "max_tokens": args.ctx - 64, "temperature": 0.6, "seed": slot,
                        "check_every": 32})
        call(proc, {"cmd": "seq_step", "n": 8})
        t0 = time.monotonic()
        reply = call(proc, {"cmd": "seq_step", "n": 64})
        elapsed = time.monotonic() - t0
        steps = min(c["tokens"] for c in reply["slots"]) if reply["slots"] else 0
        if len(reply["slots"]) != n or steps != 64:
            sys.exit("bench/eval_parallel_steps.py: a completion ended early; raise --ctx")
        call(proc, {"cmd": "quit"})
        return elapsed / 64 * 1000
    finally:
        proc.kill()
        proc.wait()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--flash-attn", default="auto", choices=["auto", "on", "off"])
    p.add_argument("--ns", default="1,2,4,8")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--ctx", type=int, default=1024)
    args = p.parse_args()
    build = os.environ.get("PIPETTE_BUILD_DIR", os.path.join(ROOT, "build"))
    driver = os.path.join(build, "src", "driver", "pipette-llamacpp-driver")
    if not os.access(driver, os.X_OK):
        sys.exit("bench/eval_parallel_steps.py: no %s; build first (scripts/build.sh)" % driver)
    ns = [int(x) for x in args.ns.split(",")]
    times = {n: [] for n in ns}
    for _ in range(args.rounds):
        for n in ns:
            times[n].append(step_ms(driver, args, n))
    base = min(times[ns[0]]) / ns[0]
    print("# %s, threads %d, flash_attn %s, load %s" % (
        os.path.basename(args.model), args.threads, args.flash_attn,
        open("/proc/loadavg").read().split()[0]))
    print("%4s %10s %12s %10s   rounds (ms)" % ("N", "step ms", "tokens/s", "gain"))
    for n in ns:
        best = min(times[n])
        print("%4d %10.2f %12.0f %9.2fx   %s" % (n, best, n / best * 1000, base * n / best,
                                              " ".join("%.1f" % t for t in times[n])))


if __name__ == "__main__":
    main()
