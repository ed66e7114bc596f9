"""Regenerate the command outputs the docs show, from real commands.

A block to regenerate is an HTML comment naming the command, then a fenced block:

    <!-- output: edgebench compare docs/examples/runs/none-vs-mask -->
    ```
    ... replaced by what the command prints ...
    ```

The command runs from the repository root (COLUMNS=100 unless it sets its own, no
colour), and its stdout and stderr replace the block's body, under a `$ COMMAND` line; a
trailing `| head -N` keeps its first N lines. Commands read stored run
folders (docs/examples/runs/), never a model, so the outputs are the same on any machine.

A command that writes files writes them under `$TMP`, a fresh temporary folder per block
(shown as `$TMP` in the output), and `&&` chains it with a look at what it wrote:
`cat FILE`, `head -N FILE` or `sed -n A,Bp FILE`, each part under its own `$ ` line:

    <!-- output: edgebench card RUN --out $TMP/card.md && sed -n 1,20p $TMP/card.md -->

    python scripts/docs_outputs.py                # rewrite every marked block
    python scripts/docs_outputs.py --check        # exit 1 when a block is out of date
    python scripts/docs_outputs.py --example-run  # rebuild docs/examples/runs/none-vs-mask

The example run is a real run of the default model (`--example-run` needs it pulled and
takes about two minutes on 2 cores); its manifest names no local path.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_RUN = Path("docs/examples/runs/none-vs-mask")
MARK = re.compile(
    r"^<!-- output: (?P<cmd>.+?) -->\n(?P<fence>`{3,})[^\n]*\n.*?^(?P=fence)$", re.M | re.S
)


def pages() -> list[Path]:
    """Every markdown file that may hold a marked block."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def run_edgebench(args: list[str], env: dict[str, str]) -> str:
    """`edgebench ARGS` of this checkout in a process of its own: stdout, then stderr."""
    env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", "PYTHONPATH": str(ROOT), **env}
    argv = [sys.executable, "-m", "edgebench", *args]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    return done.stdout + done.stderr


def show_file(argv: list[str]) -> str:
    """What `cat FILE`, `head -N FILE` or `sed -n A,Bp FILE` prints."""

    def lines(name: str) -> list[str]:
        return Path(name).read_text(encoding="utf-8").splitlines(True)

    match argv:
        case ["cat", name]:
            return "".join(lines(name))
        case ["head", count, name] if re.fullmatch(r"-\d+", count):
            return "".join(lines(name)[: -int(count)])
        case ["sed", "-n", span, name] if re.fullmatch(r"\d+,\d+p", span):
            first, last = (int(n) for n in span[:-1].split(","))
            return "".join(lines(name)[first - 1 : last])
    raise SystemExit(f"not an edgebench command nor cat/head/sed -n of a file: {shlex.join(argv)}")


def output_of(command: str, run: Callable[[list[str], dict[str, str]], str] = run_edgebench) -> str:
    """What `command` prints, run from the repository root as a user would type it:
    leading `NAME=value` words set the environment, a trailing `| head -N` keeps the
    first N lines (then `...`); `$TMP` is a fresh temporary folder, and `A && B` runs
    A, then B (each under its own `$ ` line)."""
    with tempfile.TemporaryDirectory() as tmp:
        shown = [output_of_part(part, run, tmp) for part in command.split(" && ")]
    return "\n".join(shown)


def output_of_part(command: str, run: Callable[[list[str], dict[str, str]], str], tmp: str) -> str:
    """One command of a `&&` chain, `$TMP` meaning `tmp` (and shown as `$TMP`)."""
    shown, _, head = command.partition(" | head -")
    argv = shlex.split(shown.replace("$TMP", tmp))
    env = {"COLUMNS": "100"}
    while argv and re.fullmatch(r"[A-Z_]+=\S*", argv[0]):
        name, _, value = argv.pop(0).partition("=")
        env[name] = value
    printed = run(argv[1:], env) if argv[:1] == ["edgebench"] else show_file(argv)
    lines = [line.rstrip() for line in printed.replace(tmp, "$TMP").rstrip().splitlines()]
    if head and len(lines) > int(head):
        lines = [*lines[: int(head)], "..."]
    return "\n".join([f"$ {shown}", *lines])


def regenerate(text: str, run: Callable[[list[str], dict[str, str]], str] = run_edgebench) -> str:
    """`text` with every marked block's body replaced by its command's output."""

    def block(match: re.Match[str]) -> str:
        fence = match["fence"]
        body = output_of(match["cmd"], run)
        return f"<!-- output: {match['cmd']} -->\n{fence}\n{body}\n{fence}"

    return MARK.sub(block, text)


def make_example_run(out: Path) -> None:
    """The stored example run: the real default model (SmolLM2-135M-Instruct, pulled) on
    the first 10 built-in EdgeJSON examples under `none` and `mask`, 2 threads. Local
    paths in its manifest are made portable (the repository's relative, the home folder
    `~`), so the folder names nobody's machine."""
    import json
    import shutil

    if out.exists():
        shutil.rmtree(out)
    command = [
        "edgebench", "run", "--limit", "10", "--constraint", "none,mask", "--threads", "2",
        "--device-name", "2-core-vm", "--out", str(out),
    ]  # fmt: skip
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    manifest = out / "manifest.json"
    text = manifest.read_text(encoding="utf-8")
    for local, portable in (
        (f"{ROOT}/", ""),
        (str(out.resolve()), str(out)),
        (str(Path.home()), "~"),
    ):
        text = text.replace(json.dumps(local)[1:-1], json.dumps(portable)[1:-1])
    manifest.write_text(text, encoding="utf-8")


def main(argv: list[str]) -> int:
    os.chdir(ROOT)
    if "--example-run" in argv:
        make_example_run(EXAMPLE_RUN)
        print(f"wrote {EXAMPLE_RUN}")
        return 0
    stale = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new = regenerate(text)
        if new == text:
            continue
        stale.append(page.relative_to(ROOT))
        if "--check" not in argv:
            page.write_text(new, encoding="utf-8")
    for page in stale:
        print(f"{'out of date' if '--check' in argv else 'rewrote'}: {page}")
    return 1 if stale and "--check" in argv else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
