"""The command line starts at once: `edgebench --help` (and a command's `--help`) loads
typer, rich's help rendering and the command modules' option declarations, never what a
command does (runner, report, summary, backends, numpy, jsonschema ...); a lone
`--version` loads not even typer. Modules imported, not the clock: each command runs in a
fresh interpreter that then lists `sys.modules` (benchmarks/startup.py times it). The
help texts' values that make this possible are checked in tests/unit/cli/test_choices.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# What a command loads when it runs, never to print a help or the version.
HEAVY = (
    "numpy",
    "scipy",
    "jsonschema",
    "regex",
    "psutil",
    "sqlite3",
    "jinja2",
    "rapidfuzz",
    "apted",
    "llama_cpp",
    "onnxruntime",
    "tokenizers",
    "llguidance",
    "outlines",
    "matplotlib",
    "huggingface_hub",
    "edgebench.runner",
    "edgebench.report",
    "edgebench.summary",
    "edgebench.constraints",
    "edgebench.backends",
    "edgebench.metrics",
    "edgebench.scoring",
    "edgebench.runfolder",
    "edgebench.models",
    "edgebench.datagen",
    "edgebench.db",
    "edgebench.plan",
    "edgebench.fleet",
    "edgebench.cli.output",
)
# The edgebench modules `--help` may load: the command line and the two light registries
# whose names the help texts list (tasks, prompt styles), with their leaves.
HELP_BUDGET = 40

# Run `entry()` as the `edgebench` script does, then write the loaded modules to a file.
_PROBE = """
import json, sys
from edgebench.__main__ import entry
out, sys.argv = sys.argv[1], ["edgebench", *sys.argv[2:]]
try:
    entry()
except SystemExit:
    pass
with open(out, "w") as f:
    json.dump(sorted(sys.modules), f)
"""


def loaded_by(tmp_path: Path, *args: str) -> set[str]:
    """The modules a fresh `edgebench ARGS` has imported when it ends."""
    out = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(out), *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "100"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(out.read_text()))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"]])
def test_help_loads_no_command_implementation(tmp_path: Path, args: list[str]) -> None:
    modules = loaded_by(tmp_path, *args)
    assert _heavy(modules) == []
    own = sorted(m for m in modules if m.split(".")[0] == "edgebench")
    assert len(own) <= HELP_BUDGET, own


def test_version_loads_neither_typer_nor_rich(tmp_path: Path) -> None:
    modules = loaded_by(tmp_path, "--version")
    assert _heavy(modules) == []
    assert not {m.split(".")[0] for m in modules} & {"typer", "click", "rich"}
    own = {m for m in modules if m.split(".")[0] == "edgebench"}
    assert own <= {
        "edgebench",
        "edgebench.__main__",
        "edgebench.cli",
        "edgebench.cli.version",
        "edgebench.resources",
        "edgebench.runtimes",
        "edgebench.system",
        "edgebench.system.versions",
    }, own


def test_the_version_fast_path_prints_what_the_option_prints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from edgebench.cli.app import main

    fast = subprocess.run(
        [sys.executable, "-m", "edgebench", "--version"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (fast.returncode, fast.stderr) == (0, "")
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert not exit_info.value.code
    assert fast.stdout == capsys.readouterr().out
    assert fast.stdout.startswith("edgebench ")
