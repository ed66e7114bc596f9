"""How long does the `edgebench` command take to start?

Usage: python benchmarks/startup.py [--runs 10] [--baseline DIR] [--no-bytecode-cache]

Times `edgebench --version`, `edgebench --help` and `edgebench run --help` as whole
processes (wall clock, start to exit), the median of --runs each, next to `python -c pass`
(the interpreter's own start-up, which no change to edgebench can remove). Each process
runs the installed `edgebench` console script (what a user types; the same entry point
as `python -m edgebench`) with this interpreter and PYTHONPATH set to the source tree
under test: this checkout, and with --baseline DIR another checkout side by side (a git
worktree of another revision), the runs of both interleaved so that a load that comes
and goes hits them alike. Compiled bytecode is cached in a temporary folder
(PYTHONPYCACHEPREFIX, one warm-up run per command) as an installed package has it, and
no source folder is written to; the processes run in that folder, so that no checkout is
imported through the current directory. --no-bytecode-cache: every edgebench module is
compiled again by every process (PYTHONDONTWRITEBYTECODE=1 on a checkout that has no
__pycache__, as on this project's VMs), the installed packages keep their own bytecode.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
COMMANDS = {
    "python -c pass": None,
    "edgebench --version": ["--version"],
    "edgebench --help": ["--help"],
    "edgebench run --help": ["run", "--help"],
}


def launcher() -> list[str]:
    """The `edgebench` console script of this interpreter, run by this interpreter (a
    pyenv shim in front of it would add its own start-up); its equivalent when the
    package is not installed."""
    script = Path(sysconfig.get_path("scripts")) / "edgebench"
    if script.is_file():
        return [sys.executable, str(script)]
    return [sys.executable, "-c", "import sys; from edgebench.__main__ import entry; entry()"]


def seconds(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.decode()[-400:]}")
    return elapsed


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="timed runs per command")
    parser.add_argument(
        "--baseline", type=Path, help="another source tree to time side by side (its root)"
    )
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="compile edgebench's modules in every process (PYTHONDONTWRITEBYTECODE=1)",
    )
    args = parser.parse_args()
    trees = {"this tree": HERE}
    if args.baseline is not None:
        if not (args.baseline / "edgebench" / "__main__.py").is_file():
            sys.exit(f"--baseline {args.baseline}: no edgebench/__main__.py there")
        trees = {"baseline": args.baseline.resolve(), **trees}
    script = launcher()
    cache = Path(tempfile.mkdtemp(prefix="edgebench-startup-"))
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if args.no_bytecode_cache:
        base_env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        base_env["PYTHONPYCACHEPREFIX"] = str(cache)
    envs = {name: {**base_env, "PYTHONPATH": str(root)} for name, root in trees.items()}

    def argv(command: list[str] | None) -> list[str]:
        return [sys.executable, "-c", "pass"] if command is None else [*script, *command]

    try:
        for name in trees:  # warm-up: bytecode compiled and cached
            for command in COMMANDS.values():
                seconds(argv(command), envs[name], cache)
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.runs):
            for label, command in COMMANDS.items():
                for name in trees:
                    took = seconds(argv(command), envs[name], cache)
                    times.setdefault((label, name), []).append(took)
    finally:
        shutil.rmtree(cache, ignore_errors=True)

    print(
        f"{time.strftime('%Y-%m-%d')} · {cpu_model()} · {os.cpu_count()} CPUs · "
        f"Python {platform.python_version()} · load average {os.getloadavg()[0]:.2f} at the end"
    )
    cached = "not cached" if args.no_bytecode_cache else "cached"
    print(
        f"command: {' '.join(script)} ARGS; edgebench's bytecode {cached}; "
        f"median of {args.runs} runs (min-max), seconds"
    )
    print("| command | " + " | ".join(f"{name} ({trees[name]})" for name in trees) + " |")
    print("|---|" + "---|" * len(trees))
    for label in COMMANDS:
        cells = []
        for name in trees:
            runs = times[(label, name)]
            cells.append(f"{statistics.median(runs):.3f} ({min(runs):.3f}-{max(runs):.3f})")
        print(f"| `{label}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
