"""How much memory does `edgebench models info` take on a hostile GGUF header?

Usage: python benchmarks/gguf_header_memory.py [--mb 64] [--old-commit COMMIT] [--json]

Writes a GGUF file whose header is `--mb` MB of metadata arrays of u16 values (each array
2^22 items, inside every documented cap; values above 256, so a reader that builds Python
ints pays for an object per value), no tensors, to a temporary file, then runs the CLI's
`edgebench models info FILE --json` in a child process and prints that child's peak RSS
(VmHWM from its /proc/self/status as it exits). The same for a header holding a
vocabulary of one-byte tokens (a reader must walk every length). With `--old-commit`, the
reader of that git commit reads the same files in a child each, for comparison (needs an
edgebench checkout with git).
tests/system/test_gguf_memory.py asserts the bound through the same functions.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import struct
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from edgebench.system.device import cpu_facts
from edgebench.system.tree import SystemTree

BOUND_MB = 200  # the acceptance bound of issue 25
ARRAY_ITEMS = 1 << 22  # 8 MB of u16 per key; MAX_ARRAY_LEN is 2^23
_UINT16, _STRING, _ARRAY = 2, 8, 9
KINDS = ("uint16", "strings")


def write_hostile_header(path: Path, mb: int = 64, kind: str = "uint16") -> Path:
    """A valid GGUF v3 file of about `mb` MB of metadata arrays, no tensors, written in
    chunks. `kind` "uint16": arrays of 2^22 u16 values; "strings": vocabularies of
    one-byte tokens (a reader must walk every length)."""
    if kind == "uint16":
        etype, n_items, item = _UINT16, ARRAY_ITEMS, struct.pack("<H", 0x0101)
    else:
        etype, n_items, item = _STRING, min(mb * (1 << 20) // 9, 1 << 23), b"\x01" + bytes(7) + b"a"
    n_keys = max(1, mb * (1 << 20) // (n_items * len(item)))
    chunk = item * (1 << 16)
    with open(path, "wb") as f:
        f.write(b"GGUF" + struct.pack("<IQQ", 3, 0, n_keys))
        for i in range(n_keys):
            key = b"tokenizer.ggml.tokens" if i == 0 else f"hostile.array_{i}".encode()
            f.write(struct.pack("<Q", len(key)) + key + struct.pack("<IIQ", _ARRAY, etype, n_items))
            whole, rest = divmod(n_items, 1 << 16)
            for _ in range(whole):
                f.write(chunk)
            f.write(item * rest)
    return path


# The child reports its own high-water mark as it exits. Not ru_maxrss: Linux carries the
# pre-exec memory's high-water mark (a copy of the parent's, a large pytest process's
# too) into the child's ru_maxrss; /proc/self/status's VmHWM is that of the exec'd program.
_REPORT_PEAK = """
import sys
code, sys.argv = sys.argv[1], sys.argv[1:]
try:
    exec(compile(code, "<measured>", "exec"), {"__name__": "__measured__"})
finally:
    with open("/proc/self/status") as status:
        peak = next(line for line in status if line.startswith("VmHWM:"))
    print("\\n" + peak.strip(), file=sys.stderr)
"""


def peak_rss_mb(code: str, args: list[str], env: dict[str, str] | None = None) -> float:
    """Run Python `code` in a child (`sys.argv[1:]` = `args`); its peak RSS in MB."""
    command = [sys.executable, "-c", _REPORT_PEAK, code, *args]
    done = subprocess.run(
        command,
        stdout=subprocess.DEVNULL,
        capture_output=False,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
        check=False,
    )
    last = (done.stderr.strip().splitlines() or [""])[-1]
    if done.returncode or not last.startswith("VmHWM:"):
        raise SystemExit(f"the measured child failed ({done.returncode}): {done.stderr.strip()}")
    return int(last.split()[1]) / 1024  # kB


def models_info_peak_mb(path: Path, cache: Path) -> float:
    """Peak RSS of `edgebench models info PATH --json`, with its cache in `cache`."""
    env = {**os.environ, "EDGEBENCH_CACHE": str(cache)}
    code = "from edgebench.cli.app import main\nmain(sys.argv[1:])"
    return peak_rss_mb("import sys\n" + code, ["models", "info", str(path), "--json"], env)


def old_reader_peak_mb(path: Path, commit: str) -> float:
    """Peak RSS of the GGUF reader of `commit` (from git) reading PATH."""
    repo = Path(__file__).resolve().parent.parent
    show = ["git", "-C", str(repo), "show", f"{commit}:edgebench/models/gguf.py"]
    source = subprocess.run(show, check=True, capture_output=True, text=True).stdout
    code = (
        "import sys, types\n"
        "m = sys.modules['old_gguf'] = types.ModuleType('old_gguf')\n"
        f"exec(compile({source!r}, 'old_gguf.py', 'exec'), m.__dict__)\n"
        "m.read_gguf(sys.argv[1])\n"
    )
    return peak_rss_mb(code, [str(path)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=64, help="size of the hostile header")
    parser.add_argument("--old-commit", help="also measure the reader of this git commit")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    result: dict[str, object] = {"bound_mb": BOUND_MB}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in KINDS:
            path = write_hostile_header(Path(tmp) / f"{kind}.gguf", args.mb, kind)
            result[f"{kind}_file_mb"] = round(path.stat().st_size / (1 << 20), 1)
            peak = models_info_peak_mb(path, Path(tmp) / "cache")
            result[f"{kind}_models_info_peak_rss_mb"] = round(peak, 1)
            if args.old_commit:
                old = old_reader_peak_mb(path, args.old_commit)
                result[f"{kind}_reader_at_{args.old_commit}_peak_rss_mb"] = round(old, 1)
            path.unlink()
    cpu = cpu_facts(SystemTree())
    result["machine"] = f"{cpu['cpu_model'] or platform.machine()}, {cpu['logical_cores']} cores"
    result["date"] = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    if args.json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        print(f"{key:>32}: {value}")


if __name__ == "__main__":
    main()
