"""How much memory does `edgebench models info` take on a hostile GGUF header?

Usage: python benchmarks/gguf_header_memory.py [--mb 64] [--old-commit COMMIT] [--json]

Writes a GGUF file whose header is `--mb` MB of metadata arrays of u16 values (each array
2^22 items, inside every documented cap; values above 256, so a reader that builds Python
ints pays for an object per value), no tensors, to a temporary file, then runs
`python -m edgebench models info FILE --json` in a child process and prints that child's
peak RSS (its own `ru_maxrss` from `os.wait4`, the figure `RUSAGE_CHILDREN` reports for
one child). With `--old-commit`, the reader of that git commit reads the same file in a
second child, for comparison (an edgebench checkout with git is needed).
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

from edgebench.system.device import SystemTree, cpu_facts

BOUND_MB = 200  # the acceptance bound of issue 25
ARRAY_ITEMS = 1 << 22  # 8 MB of u16 per key; MAX_ARRAY_LEN is 2^23
_UINT16, _ARRAY = 2, 9


def write_hostile_header(path: Path, mb: int = 64) -> Path:
    """A valid GGUF v3 file: `mb` MB of u16 metadata arrays, no tensors."""
    n_keys = max(1, mb * (1 << 20) // (2 * ARRAY_ITEMS))
    payload = struct.pack("<H", 0x0101) * ARRAY_ITEMS  # 257 everywhere
    with open(path, "wb") as f:
        f.write(b"GGUF" + struct.pack("<IQQ", 3, 0, n_keys))
        for i in range(n_keys):
            key = f"hostile.array_{i}".encode()
            f.write(struct.pack("<Q", len(key)) + key)
            f.write(struct.pack("<IIQ", _ARRAY, _UINT16, ARRAY_ITEMS) + payload)
    return path


def peak_rss_mb(command: list[str], env: dict[str, str] | None = None, stdin: bytes = b"") -> float:
    """Run `command` (given `stdin`); its peak RSS in MB (Linux: ru_maxrss is in KiB)."""
    with tempfile.TemporaryFile() as given:
        given.write(stdin)
        given.seek(0)
        child = subprocess.Popen(
            command, stdin=given, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
        )
        _, status, usage = os.wait4(child.pid, 0)  # this child's own rusage
    child.returncode = os.waitstatus_to_exitcode(status)
    assert child.stderr is not None
    with child.stderr:
        error = child.stderr.read().decode(errors="replace").strip()
    if child.returncode:
        raise SystemExit(f"{' '.join(command)} failed ({child.returncode}): {error}")
    return usage.ru_maxrss / 1024


def models_info_peak_mb(path: Path, cache: Path) -> float:
    """Peak RSS of `edgebench models info PATH --json`, with its cache in `cache`."""
    env = {**os.environ, "EDGEBENCH_CACHE": str(cache)}
    return peak_rss_mb(
        [sys.executable, "-m", "edgebench", "models", "info", str(path), "--json"], env
    )


def old_reader_peak_mb(path: Path, commit: str) -> float:
    """Peak RSS of the GGUF reader of `commit` (from git) reading PATH."""
    repo = Path(__file__).resolve().parent.parent
    show = ["git", "-C", str(repo), "show", f"{commit}:edgebench/models/gguf.py"]
    source = subprocess.run(show, check=True, capture_output=True).stdout
    script = (
        "import sys, types\n"
        "m = sys.modules['old_gguf'] = types.ModuleType('old_gguf')\n"
        "exec(compile(sys.stdin.read(), 'old_gguf.py', 'exec'), m.__dict__)\n"
        f"m.read_gguf({str(path)!r})\n"
    )
    return peak_rss_mb([sys.executable, "-c", script], stdin=source)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=64, help="size of the hostile header")
    parser.add_argument("--old-commit", help="also measure the reader of this git commit")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = write_hostile_header(Path(tmp) / "hostile.gguf", args.mb)
        result: dict[str, object] = {
            "file_mb": round(path.stat().st_size / (1 << 20), 1),
            "models_info_peak_rss_mb": round(models_info_peak_mb(path, Path(tmp) / "cache"), 1),
            "bound_mb": BOUND_MB,
        }
        if args.old_commit:
            old = old_reader_peak_mb(path, args.old_commit)
            result[f"reader_at_{args.old_commit}_peak_rss_mb"] = round(old, 1)
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
