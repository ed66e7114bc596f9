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

    python scripts/docs_outputs.py                # rewrite every marked block
    python scripts/docs_outputs.py --check        # exit 1 when a block is out of date
    python scripts/docs_outputs.py --example-run  # rebuild docs/examples/runs/none-vs-mask

The example run is made with the fake backend (queued answers, a virtual clock: no
model), so its figures are made up; it exists to show what the commands print.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
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


def output_of(command: str, run: Callable[[list[str], dict[str, str]], str] = run_edgebench) -> str:
    """What `command` prints, run from the repository root as a user would type it:
    leading `NAME=value` words set the environment, a trailing `| head -N` keeps the
    first N lines (then `...`)."""
    shown, _, head = command.partition(" | head -")
    argv = shlex.split(shown)
    env = {"COLUMNS": "100"}
    while argv and re.fullmatch(r"[A-Z_]+=\S*", argv[0]):
        name, _, value = argv.pop(0).partition("=")
        env[name] = value
    if argv[:1] != ["edgebench"]:
        raise SystemExit(f"not an edgebench command: {command}")
    lines = [line.rstrip() for line in run(argv[1:], env).rstrip().splitlines()]
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
    """The stored example run: 10 built-in EdgeJSON examples, a fake model under `none`
    (it writes the schema back, as small models do) and `mask` (the expected answer for
    most examples, one field wrong for the others), `mask` decoding faster."""
    import hashlib
    import json
    import shutil

    from edgebench.backends.fake import FakeBackend, FakeTimings
    from edgebench.backends.worker import InProcessWorker
    from edgebench.constraints import parse_modes
    from edgebench.prompts import PromptFormat
    from edgebench.runfolder.records import DatasetRecord, RunSettings
    from edgebench.runner.engine import execute
    from edgebench.runner.spec import ModelUnderTest
    from edgebench.tasks import get_task

    task = get_task("edgejson")
    dataset_path, schemas = task.resolve_paths(None, None)
    examples = task.load(dataset_path, schemas)
    n = 10
    free, masked = [], []
    for i, example in enumerate(examples[:n]):
        expected = dict(example.expected)
        free.append('{"type": "object", "properties": {' if i % 3 else json.dumps(expected))
        if i % 4 == 3:  # one field wrong
            key = sorted(expected)[0]
            expected[key] = "?"
        masked.append(json.dumps(expected))

    def backend(mode: str) -> FakeBackend:
        outputs = masked if mode == "mask" else free
        per_token = 0.008 if mode == "mask" else 0.011
        return FakeBackend(list(outputs), timings=FakeTimings(per_output_token=per_token))

    model = ModelUnderTest(
        label="fake-model",
        path=Path("fake-model.gguf"),
        sha256="0" * 64,
        size_bytes=98_000_000,
        prompt_format=PromptFormat(style="completion"),
        n_ctx_train=8192,
        details={"quantization": "Q4_1"},
    )
    if out.exists():
        shutil.rmtree(out)
    settings = RunSettings(
        out=out, warmup=False, limit=n, constraints=tuple(parse_modes("none,mask"))
    )
    dataset = DatasetRecord(
        path=str(dataset_path.resolve().relative_to(ROOT)),
        sha256=hashlib.sha256(dataset_path.read_bytes()).hexdigest(),
        n_examples=len(examples),
    )
    execute(
        settings,
        [model],
        task,
        examples,
        dataset,
        worker_factory=lambda model, mode: InProcessWorker(backend(mode)),
        device_name="example-device",
    )


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
