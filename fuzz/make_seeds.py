#!/usr/bin/env python3
"""Writes the seed corpora of fuzz/corpus/ (run from anywhere; rewrites them).

Seeds are small valid inputs of each harness's format, written by pipette's authors (no
third-party data): the fuzzer mutates from them. Kept in the repository with this script.
"""
import json
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(HERE, "corpus")


def write(harness, name, data):
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def http(body, status="200 OK", headers=""):
    b = body.encode() if isinstance(body, str) else body
    return ("HTTP/1.1 %s\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n"
            % (status, headers, len(b))).encode() + b


def gguf(kvs, tensors):
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs))
    for key, (vtype, value) in kvs:
        out += struct.pack("<Q", len(key)) + key.encode() + struct.pack("<I", vtype)
        if vtype == 8:  # string
            out += struct.pack("<Q", len(value)) + value.encode()
        elif vtype == 4:  # uint32
            out += struct.pack("<I", value)
        elif vtype == 9:  # array of strings
            out += struct.pack("<IQ", 8, len(value))
            for s in value:
                out += struct.pack("<Q", len(s)) + s.encode()
    offset = 0
    for name, dims, ttype, nbytes in tensors:
        out += struct.pack("<Q", len(name)) + name.encode() + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", ttype, offset)
        offset += (nbytes + 31) // 32 * 32
    out += b"\0" * ((32 - len(out) % 32) % 32)
    return out + b"\0" * offset


def main():
    if os.path.isdir(CORPUS):
        shutil.rmtree(CORPUS)
    record_path = os.path.join(ROOT, "src/server/testdata/stories260k_prefill_record.json")
    with open(record_path) as f:
        record = f.read()

    write("fuzz_record_schema", "record.json", record)
    write("fuzz_record_schema", "empty_object.json", "{}")
    write("fuzz_record_schema", "nested.json", '{"a":[[[{"b":[1,2,{"c":null}]}]]]}')

    for name in os.listdir(os.path.join(ROOT, "examples/suites")):
        with open(os.path.join(ROOT, "examples/suites", name)) as f:
            write("fuzz_suite_toml", name, f.read())

    write("fuzz_scorers", "math_boxed", "\x001/2\x00So the answer is $\\boxed{\\frac{1}{2}}$.")
    write("fuzz_scorers", "math_upstream", "\x01\\sqrt{2}\x00The answer is \\boxed{\\sqrt 2}")
    write("fuzz_scorers", "math_matrix", "\x00\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}\x00"
          "Final Answer: $\\begin{pmatrix}1\\\\2\\end{pmatrix}$")
    write("fuzz_scorers", "math_text", "\x00(3, \\frac{\\pi}{2})\x00<think>hmm</think>"
          "Thus $x = 3^{2}\\cdot 10^\\circ$, answer: $\\left(3,\\dfrac{\\pi}{2}\\right)$")
    write("fuzz_scorers", "gpqa", "\x02C\x00Answer: (C)")
    write("fuzz_scorers", "gpqa_upstream", "\x03B\x00The correct answer is B")
    write("fuzz_scorers", "think", "\x04\x00<think>a</think>b<think>c")
    # IFBench: two bytes pick an instruction list of the data set, the rest is the response.
    write("fuzz_ifbench", "sentences", "\x00\x07Dr. Smith went home. Was it late? Yes! It was.\n"
          "* one\n  - two\n* three\n")
    write("fuzz_ifbench", "quotes_csv", "\x01\x0f\"a\"\t\t\"b\"\n'x \"y (z [w {v}])\" u'\n"
          "ID,Country,City\n1,\"A, B\",C\n")
    write("fuzz_ifbench", "unicode", "\x00\x2a\u00c9t\u00e9 \U0001F600 caf\u00e9 \u00bd \u3053\u3093 "
          "Imagine a world. <em>x</em> after.")

    write("fuzz_completions_jsonl", "lines.jsonl",
          '{"id": "e7b7a0f871c3", "completion": "\\\\boxed{\\\\frac12}"}\n'
          '{"id": "0123456789ab#1", "completion": "Answer: C"}\n\n'
          '{"id": 5, "completion": []}\n')

    tiny = gguf([("general.architecture", (8, "llama")), ("general.alignment", (4, 32)),
                 ("llama.context_length", (4, 128)), ("llama.embedding_length", (4, 8)),
                 ("llama.block_count", (4, 1)),
                 ("tokenizer.ggml.tokens", (9, ["<s>", "</s>", "a", "b"]))],
                [("token_embd.weight", [8, 4], 0, 128), ("output_norm.weight", [8], 0, 32)])
    write("fuzz_gguf_header", "tiny.gguf.bin", tiny)
    write("fuzz_gguf_header", "truncated.gguf.bin", tiny[:60])

    for name, reply in {
        "load": {"ok": True, "effective": {"n_batch": 2048, "n_ubatch": 512, "n_ctx": 512},
                 "runtime": {"backends": [{"name": "CPU"}], "system_info": "AVX2 = 1",
                             "supports_gpu_offload": False}, "warnings": ["w"]},
        "tokenize": {"ok": True, "tokens": [1, 345, 2]},
        "prefill": {"ok": True, "prefill_ns": 1234567},
        "decode": {"ok": True, "step_ns": [100, 200], "tokens": [5, 6]},
        "generate": {"ok": True, "tokenize_ns": 1, "prefill_ns": 2, "token_ns": [3, 4],
                     "n_prompt_tokens": 7, "prompt_tokens": [1, 2], "text": "hi"},
        "complete": {"ok": True, "text": "x", "tokens": 1, "done": True, "stop": "eos",
                     "prompt_tokens": 3, "prompt_format": "raw", "first_token_ns": 10},
        "error": {"ok": False, "error": "context too small", "stage": "context"},
    }.items():
        write("fuzz_driver_reply", name + ".json", json.dumps(reply))

    profile = {"id": "d" * 16, "cpu": {"model": "x"}, "memory_bytes": 1 << 30}
    spec = {"benchmark": "prefill_throughput_8",
            "model": {"sha256": "a" * 64, "file_name": "m.gguf"},
            "runtime": "llamacpp", "settings": {"threads": 1},
            "harness": {"warmup_runs": 0, "min_reps": 2, "max_reps": 2},
            "requires": {"labels": ["x86"], "arch": "x86_64", "runtimes": ["llamacpp"],
                         "models": ["a" * 64]}}
    bodies = [
        ("register", 0, {"public_key": "ab" * 32, "label": "x", "labels": ["a"],
                         "profile": profile}),
        ("results", 1, json.loads(record)),
        ("plans", 2, {"name": "p", "jobs": [spec], "expires_at": 0}),
        ("claim", 3, {"labels": ["x86"], "arch": "x86_64", "memory_bytes": 1 << 30,
                      "runtimes": ["llamacpp"], "models": ["a" * 64]}),
        ("heartbeat", 4, {}),
        ("job_result", 5, json.loads(record)),
        ("fail", 6, {"reason": "out of memory", "retriable": True}),
    ]
    for name, selector, body in bodies:
        write("fuzz_server_requests", name, bytes([selector]) + json.dumps(body).encode())
    write("fuzz_server_requests", "listing", b"\x07benchmark=prefill_throughput_8&limit=5&"
          b"setting=threads=1&since=2026-01-01&cursor=abc")
    write("fuzz_server_requests", "get", b"\x080123456789abcdef")

    row = {"result_id": "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "benchmark": "prefill_throughput_8",
           "status": "ok", "model": "m.gguf", "quant": "Q8_0", "runtime": "llamacpp"}
    answers = [
        ("health", 0, http('{"status":"ok","store":"sqlite"}')),
        ("register", 1, http('{"client_id":"pc_' + "0" * 32 + '","status":"approved"}',
                             "201 Created")),
        ("results", 2, http(json.dumps({"results": [row], "next": "c2", "total": 1}))),
        ("records", 3, http(json.dumps({"records": [json.loads(record)], "total": 1}))),
        ("claim", 4, http(json.dumps({"job": {"job_id": "job_1", "spec": spec},
                                      "lease_expires_at": 5}))),
        ("heartbeat", 5, http('{"lease_expires_at": 99}')),
        ("refused", 6, http('{"error":"rate limit"}', "429 Too Many Requests",
                            "Retry-After: 3\r\n")),
        ("chunked", 2, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                       b"5\r\n{\"res\r\n0\r\n\r\n"),
        ("openai_models", 7, http('{"object":"list","data":[{"id":"m"}]}',
                                  headers="Server: llama.cpp\r\n")),
        ("openai_stream", 8, b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
                             b'data: {"data":[{"id":"m"}],"tokens":[1,2],'
                             b'"choices":[{"text":"a","finish_reason":null}]}\n\n'
                             b'data: {"choices":[{"text":"b","finish_reason":"length"}],'
                             b'"usage":{"completion_tokens":4}}\n\ndata: [DONE]\n\n'),
    ]
    for name, selector, answer in answers:
        write("fuzz_http_replies", name, bytes([selector]) + answer)


if __name__ == "__main__":
    main()
