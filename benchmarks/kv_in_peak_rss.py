"""Does a llama.cpp worker's peak RSS already hold the KV cache at its context size?

Usage: python benchmarks/kv_in_peak_rss.py [--model FILE] [--ctx 512,8192]

Loads the model (default: the registry's SmolLM2-135M-Instruct from the model cache) in a
fresh child process per context size, decodes 4 tokens, and prints the child's peak RSS
(VmHWM) and its anonymous part, next to the KV cache llama.cpp needs at that context
(K and V bytes per token from the GGUF header, as the memory pre-check counts them). If
the peak grows by the KV cache's growth, the cache is resident after load, and
`edgebench recommend` must not add it to the peak again (docs/metrics.md). Run it under
the CPU lock: flock /tmp/edgebench-cpu.lock python benchmarks/kv_in_peak_rss.py
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from edgebench.models.gguf import kv_cache_bytes_per_token, read_gguf
from edgebench.paths import model_cache_dir

CHILD = """
import sys, llama_cpp
model = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=int(sys.argv[2]), n_threads=1,
                        verbose=False)
model("Hello", max_tokens=4)
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(int(status["VmHWM"].split()[0]), int(status["RssAnon"].split()[0]))
"""
MIB = 1024 * 1024


def peak_kib(model: Path, n_ctx: int) -> tuple[int, int]:
    """(VmHWM, RssAnon) of a child that loaded `model` at `n_ctx`, in KiB."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(model), str(n_ctx)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return int(out[0]), int(out[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--ctx", default="512,8192")
    args = parser.parse_args()
    model = args.model or model_cache_dir() / "SmolLM2-135M-Instruct.Q4_1.gguf"
    per_token = kv_cache_bytes_per_token(read_gguf(model).metadata)
    sizes = [int(c) for c in args.ctx.split(",")]
    print(f"model {model.name}, KV cache {per_token} bytes per token")
    print("n_ctx  peak RSS MiB  anon MiB  KV cache MiB")
    rows = []
    for n_ctx in sizes:
        hwm, anon = peak_kib(model, n_ctx)
        kv = (per_token or 0) * n_ctx / MIB
        rows.append((n_ctx, hwm / 1024, anon / 1024, kv))
        print(f"{n_ctx:>5}  {hwm / 1024:>12.1f}  {anon / 1024:>8.1f}  {kv:>12.1f}")
    (c0, p0, _, k0), (c1, p1, _, k1) = rows[0], rows[-1]
    print(f"{c0} -> {c1}: peak RSS +{p1 - p0:.1f} MiB, KV cache +{k1 - k0:.1f} MiB")


if __name__ == "__main__":
    main()
