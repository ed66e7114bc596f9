"""Regenerate the command outputs the docs show, from real commands.

A block to regenerate is an HTML comment naming the command, then a fenced block:

    <!-- output: edgebench compare docs/examples/runs/none-vs-mask -->
    ```
    ... replaced by what the command prints ...
    ```

The command runs from the repository root (COLUMNS=100 unless it sets its own, no
colour), and its stdout and stderr replace the block's body, under a `$ COMMAND` line; a
trailing `| head -N` keeps its first N lines. Commands read what docs/examples/ stores
(run folders, plans, queries, a broken dataset) and the built-in data, never a model, so
the outputs are the same on any machine.

A command that writes files writes them under `$TMP`, a fresh temporary folder per block
(shown as `$TMP` in the output), and `&&` chains it with a look at what it wrote:
`cat FILE`, `head -N FILE` or `sed -n A,Bp FILE`, each part under its own `$ ` line:

    <!-- output: edgebench card RUN --out $TMP/card.md && sed -n 1,20p $TMP/card.md -->

`cp -r DIR $TMP/NAME` copies a stored run first (for a command that rewrites its run,
such as `edgebench score`); `sqlite3 -header -column DB < FILE.sql` prints what the
sqlite3 shell prints for a query file (here through Python's sqlite3, so no shell is
needed); `| sed -n A,Bp` keeps lines A to B of what a command printed, as `| head -N`
keeps the first N.

A file the docs show verbatim (a plan, a query) lives under docs/examples/ and is
marked the same way; its block is the file, under no `$ ` line:

    <!-- file: docs/examples/plans/plan.toml -->

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
    r"^<!-- (?P<kind>output|file): (?P<cmd>.+?) -->\n"
    r"(?P<fence>`{3,})(?P<info>[^\n]*)\n.*?^(?P=fence)$",
    re.M | re.S,
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
    first N lines (then `...`) and `| sed -n A,Bp` lines A to B; `$TMP` is a fresh
    temporary folder, and `A && B` runs A, then B (each under its own `$ ` line)."""
    # under /tmp, not $TMPDIR: a path of the same length everywhere wraps the same
    with tempfile.TemporaryDirectory(dir="/tmp" if Path("/tmp").is_dir() else None) as tmp:
        shown = [output_of_part(part, run, tmp) for part in command.split(" && ")]
    return "\n".join(shown)


def copy_tree(argv: list[str]) -> str:
    """`cp -r SRC DST`: prints nothing."""
    import shutil

    shutil.copytree(argv[2], argv[3])
    return ""


def sqlite_columns(argv: list[str], query_file: str) -> str:
    """What `sqlite3 -header -column DB < FILE` prints: each column as wide as its widest
    cell, two spaces apart, a dashed line under the header, NULL empty, a REAL as the
    shell's `%!.15g` (always with a `.`)."""
    import sqlite3

    def cell(value: object) -> str:
        if value is None:
            return ""
        if isinstance(value, float):
            text = f"{value:.15g}"
            mantissa, e, exponent = text.partition("e")
            if "." not in mantissa and mantissa.lstrip("-").isdigit():
                mantissa += ".0"
            return mantissa + e + exponent
        return str(value)

    conn = sqlite3.connect(f"file:{argv[-1]}?mode=ro", uri=True)
    try:
        cursor = conn.execute(Path(query_file).read_text(encoding="utf-8"))
        header = [column[0] for column in cursor.description]
        rows = [[cell(value) for value in row] for row in cursor.fetchall()]
    except (OSError, sqlite3.Error) as exc:
        raise SystemExit(f"{query_file}: {exc}") from None
    finally:
        conn.close()
    widths = [max(len(text) for text in column) for column in zip(header, *rows, strict=False)]
    table = [header, ["-" * width for width in widths], *rows]
    return "".join(
        "  ".join(text.ljust(width) for text, width in zip(row, widths, strict=True)) + "\n"
        for row in table
    )


def cut(lines: list[str], keep: str) -> list[str]:
    """A `| head -N` or `| sed -n A,Bp` after a command: the lines it keeps (`...` where
    some were cut before or after them)."""
    if match := re.fullmatch(r"head -(\d+)", keep):
        first, last = 1, int(match[1])
    elif match := re.fullmatch(r"sed -n (\d+),(\d+)p", keep):
        first, last = int(match[1]), int(match[2])
    else:
        raise SystemExit(f"a command may be followed by `| head -N` or `| sed -n A,Bp`: {keep}")
    before, after = (["..."] if cut else [] for cut in (first > 1, len(lines) > last))
    return [*before, *lines[first - 1 : last], *after]


def output_of_part(command: str, run: Callable[[list[str], dict[str, str]], str], tmp: str) -> str:
    """One command of a `&&` chain, `$TMP` meaning `tmp` (and shown as `$TMP`)."""
    shown, _, keep = command.partition(" | ")
    shown, _, query_file = shown.partition(" < ")
    argv = shlex.split(shown.replace("$TMP", tmp))
    env = {"COLUMNS": "100"}
    while argv and re.fullmatch(r"[A-Z_]+=\S*", argv[0]):
        name, _, value = argv.pop(0).partition("=")
        env[name] = value
    if argv[:1] == ["edgebench"]:
        printed = run(argv[1:], env)
    elif argv[:2] == ["cp", "-r"] and len(argv) == 4:
        printed = copy_tree(argv)
    elif argv[:3] == ["sqlite3", "-header", "-column"] and len(argv) == 4 and query_file:
        printed = sqlite_columns(argv, query_file)
    else:
        printed = show_file(argv)
    lines = [line.rstrip() for line in printed.replace(tmp, "$TMP").rstrip().splitlines()]
    if keep:
        lines = cut(lines, keep)
    if query_file:
        shown = f"{shown} < {query_file}"
    return "\n".join([f"$ {shown}", *lines])


def block(
    match: re.Match[str], run: Callable[[list[str], dict[str, str]], str] = run_edgebench
) -> str:
    """A marked block as it should read: its marker, then the file or the command's output."""
    fence, kind, command = match["fence"], match["kind"], match["cmd"]
    if kind == "file":
        body = (ROOT / command).read_text(encoding="utf-8").rstrip("\n")
    else:
        body = output_of(command, run)
    return f"<!-- {kind}: {command} -->\n{fence}{match['info']}\n{body}\n{fence}"


def regenerate(text: str, run: Callable[[list[str], dict[str, str]], str] = run_edgebench) -> str:
    """`text` with every marked block's body replaced by its command's output."""
    return MARK.sub(lambda match: block(match, run), text)


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
