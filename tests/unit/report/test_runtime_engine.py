"""The runtime that decoded each arm and the engine that enforced its constraint mode, as
columns of `compare`, the card and the HTML report: declared once (runtimes.py),
recorded by the arm (format 2.10), derived for run folders made before, and a runtime a
newer edgebench names shown by its recorded name. A mode a runtime cannot apply says
why in one line wherever skipped arms are shown."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pytest

from edgebench.analysis.sweep import build_sweep
from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.report.card import write_card
from edgebench.report.compare import compare_rows
from edgebench.report.html import render_report
from edgebench.report.sweep_view import sweep_json, sweep_table
from edgebench.runtimes import (
    ENGINES,
    NO_ENGINE,
    RUNTIMES,
    engine_of,
    engine_version,
    label_of,
)
from edgebench.summary import load_run
from tests.helpers.cli import stdout_of
from tests.helpers.fakes import RIGHT, WRONG, fake_model
from tests.helpers.pages import leaderboard_rows
from tests.helpers.run_fake import RunFake
from tests.helpers.run_folder import manifest_of

MODES = ("none", "json", "gbnf")
GBNF_SKIP = "constraint 'gbnf' is not available for onnx models"


# -- the declaration -------------------------------------------------------------------
def test_every_mode_a_runtime_decodes_has_an_engine() -> None:
    for runtime in RUNTIMES.values():
        for mode in runtime.modes:
            assert engine_of(runtime.name, mode), (runtime.name, mode)
        assert engine_of(runtime.name, "none") == NO_ENGINE


def test_engines_name_what_enforces_each_mode() -> None:
    assert engine_of("llama", "json") == engine_of("llama", "gbnf") == "llama.cpp GBNF"
    assert engine_of("llama", "mask") == engine_of("onnx", "mask") == "llguidance"
    assert engine_of("onnx", "json") == "llguidance"  # the JSON grammar, in llguidance
    assert engine_of("llama", "outlines") == "Outlines"
    assert engine_of("fake", "mask") == "fake"
    # a mode the runtime cannot decode has no engine; nor has a runtime not known here
    assert engine_of("onnx", "gbnf") is None
    assert engine_of("tensorrt", "mask") is None
    # a runtime that declares `xgrammar` needs no engine of its own for it
    assert ENGINES["xgrammar"] == "XGrammar"


def test_labels_and_engine_versions() -> None:
    assert label_of("llama") == "llama.cpp" and label_of("onnx") == "onnxruntime"
    assert label_of("tensorrt") == "tensorrt"  # a newer edgebench's runtime: its name
    assert engine_version("llguidance", {"llguidance": "1.3.0"}) == "1.3.0"
    assert engine_version("Outlines", {"outlines": "1.2.3"}) == "1.2.3"
    assert engine_version("llama.cpp GBNF", {"llama_cpp_python": "0.3.36"}) is None
    assert engine_version(None, {"llguidance": "1.3.0"}) is None


# -- a run of two runtimes ---------------------------------------------------------------
def two_runtimes(run_fake: RunFake, **kw: Any) -> Path:
    """`tiny` on the fake runtime and `tiny@onnx-int4` on onnxruntime (its workers are
    fakes too), under none, json and gbnf: onnxruntime cannot apply gbnf."""

    def factory(model: Any, mode: str) -> InProcessWorker:
        return InProcessWorker(FakeBackend([RIGHT, WRONG, RIGHT]))

    models = [fake_model("tiny"), fake_model("tiny@onnx-int4", backend="onnx")]
    return run_fake(constraints=MODES, factory=factory, models=models, **kw).run_dir


@pytest.fixture
def run_dir(run_fake: RunFake) -> Path:
    return two_runtimes(run_fake)


EXPECTED = {
    ("tiny", "none"): ("fake", "-"),
    ("tiny", "json"): ("fake", "fake"),
    ("tiny", "gbnf"): ("fake", "fake"),
    ("tiny@onnx-int4", "none"): ("onnxruntime", "-"),
    ("tiny@onnx-int4", "json"): ("onnxruntime", "llguidance"),
    ("tiny@onnx-int4", "gbnf"): ("onnxruntime", None),  # skipped: no engine
}


def test_each_arm_records_its_engine(run_dir: Path) -> None:
    arms = {(a["model"], a["constraint"]): a for a in manifest_of(run_dir)["arms"]}
    assert {key: arm["engine"] for key, arm in arms.items()} == {
        key: engine for key, (_, engine) in EXPECTED.items()
    }
    assert manifest_of(run_dir)["schema_version"] == "2.11"


def test_compare_rows_name_runtime_and_engine(run_dir: Path) -> None:
    summary = load_run(run_dir).summary
    rows = {(r["model"], r["constraint"]): r for r in compare_rows([summary])}
    assert {key: (r["runtime"], r["engine"]) for key, r in rows.items()} == EXPECTED
    assert rows[("tiny@onnx-int4", "gbnf")]["skipped"].startswith(GBNF_SKIP)


def table_rows(out: str) -> dict[tuple[str, str], list[str]]:
    """The compare table's rows by (model, mode): its label cells, split on spaces."""
    rows = {}
    for line in out.splitlines():
        cells = line.split()
        if len(cells) > 4 and cells[0] in ("tiny", "tiny@onnx-int4") and cells[2] in MODES:
            rows[(cells[0], cells[2])] = cells
    return rows


def test_compare_table_has_runtime_and_engine_columns(
    run_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    out = stdout_of(capsys, "compare", str(run_dir))
    header = next(line for line in out.splitlines() if "constraint" in line and "TTFT" in line)
    assert header.split()[:4] == ["model", "runtime", "constraint", "engine"]
    rows = table_rows(out)
    assert {key: (cells[1], cells[3]) for key, cells in rows.items()} == {
        key: (runtime, engine or "—") for key, (runtime, engine) in EXPECTED.items()
    }
    assert rows[("tiny@onnx-int4", "gbnf")][4] == "skip"
    # the reason, in one line under the table, though the `skipped` count column (its
    # legend line starts "skipped: ") is left out at this width
    assert "not shown at this width: skipped" in " ".join(out.split())
    flat = " ".join(out.split())
    assert f"skipped arm: tiny@onnx-int4 · gbnf: {GBNF_SKIP}" in flat
    assert "runtime: what decoded the model" in flat
    assert max(len(line) for line in out.splitlines()) <= 200


def test_compare_md_and_csv_have_the_columns(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    md = stdout_of(capsys, "compare", str(run_dir), "--format", "md")
    assert "| model | runtime | constraint | engine | n |" in md
    assert "| tiny@onnx-int4 | onnxruntime | json | llguidance |" in md
    csv = stdout_of(capsys, "compare", str(run_dir), "--format", "csv")
    assert csv.splitlines()[0].startswith("model,runtime,constraint,engine,n,")
    rows = json.loads(stdout_of(capsys, "compare", str(run_dir), "--json"))
    assert [(r["runtime"], r["engine"]) for r in rows][3:5] == [
        ("onnxruntime", "-"),
        ("onnxruntime", "llguidance"),
    ]


def test_the_terminal_says_a_runtime_every_row_shares_in_the_title(
    run_fake: RunFake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run_fake([RIGHT, WRONG, RIGHT] * 2, constraints=("none", "mask"))
    monkeypatch.setenv("COLUMNS", "200")
    out = stdout_of(capsys, "compare", str(result.run_dir))
    assert " · runtime fake · " in out.splitlines()[0]
    header = next(line for line in out.splitlines() if "constraint" in line and "TTFT" in line)
    assert header.split()[:3] == ["constraint", "engine", "n"]
    # Markdown and CSV keep the column: a row read alone says its runtime
    md = stdout_of(capsys, "compare", str(result.run_dir), "--format", "md")
    assert "| runtime | constraint | engine | n |" in md and "runtime fake" not in md


def test_card_headline_table_has_the_columns_and_the_skip(run_dir: Path, tmp_path: Path) -> None:
    run = load_run(run_dir)
    write_card(run, tmp_path / "card.md", model="tiny@onnx-int4", examples=0)
    text = (tmp_path / "card.md").read_text()
    assert "| runtime | constraint | engine | n |" in text
    assert "| onnxruntime | json | llguidance | 3 |" in text
    assert "| onnxruntime | gbnf | — | 0 |" in text
    assert f"> **Skipped**: gbnf: {GBNF_SKIP}" in text
    # the run's sweep of both models, in the card, has them too
    assert "| variant | quant | runtime | mode | engine | n |" in text


def test_report_leaderboard_and_sweep_have_the_columns(run_dir: Path) -> None:
    run = load_run(run_dir)
    page = render_report([run])
    rows = leaderboard_rows(page)
    assert [(r["runtime"][0], r["engine"][0]) for r in rows] == list(
        (runtime, engine or "—") for runtime, engine in EXPECTED.values()
    )
    assert f"skipped: tiny@onnx-int4 · gbnf: {GBNF_SKIP}" in html.unescape(page)
    sweep = {(r["model"], r["constraint"]): r for r in sweep_json(build_sweep(run))}
    assert (sweep["tiny@onnx-int4", "json"]["runtime"], sweep["tiny", "none"]["engine"]) == (
        "onnxruntime",
        "-",
    )


def test_engine_versions_come_from_the_runtime_block(run_dir: Path) -> None:
    manifest = manifest_of(run_dir)
    for arm in manifest["arms"]:
        if arm["engine"] == "llguidance":
            arm["runtime"] = {**(arm["runtime"] or {}), "llguidance": "1.3.0"}
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    rows = {(r["model"], r["constraint"]): r for r in compare_rows([load_run(run_dir).summary])}
    assert rows[("tiny@onnx-int4", "json")]["engine_version"] == "1.3.0"
    assert rows[("tiny", "json")]["engine_version"] is None
    board = leaderboard_rows(render_report([load_run(run_dir)]))
    assert board[4]["engine"][0] == "llguidance 1.3.0"  # the version under the name


# -- run folders of other versions ---------------------------------------------------
def rewrite(run_dir: Path, **changes: Any) -> None:
    """The manifest as another edgebench wrote it: `schema_version`, `engine` dropped
    from the arms (`engine=None`) or a model's `backend` renamed (`backend=(label, name)`)."""
    manifest = manifest_of(run_dir)
    manifest["schema_version"] = changes.get("schema_version", manifest["schema_version"])
    if changes.get("drop_engine"):
        for arm in manifest["arms"]:
            arm.pop("engine")
    if "backend" in changes:
        label, name = changes["backend"]
        next(m for m in manifest["models"] if m["label"] == label)["backend"] = name
    (run_dir / "manifest.json").write_text(json.dumps(manifest))


def test_a_run_before_2_10_derives_the_engine_from_runtime_and_mode(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rewrite(run_dir, schema_version="2.9", drop_engine=True)
    rows = {(r["model"], r["constraint"]): r for r in compare_rows([load_run(run_dir).summary])}
    assert {key: (r["runtime"], r["engine"]) for key, r in rows.items()} == EXPECTED
    md = stdout_of(capsys, "compare", str(run_dir), "--format", "md")
    assert "| tiny@onnx-int4 | onnxruntime | json | llguidance |" in md


def test_a_runtime_this_edgebench_does_not_know_shows_its_name(
    run_dir: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # a newer edgebench: its runtime's name and the engine it recorded
    rewrite(run_dir, schema_version="2.11", backend=("tiny@onnx-int4", "tensorrt"))
    manifest = manifest_of(run_dir)
    for arm in manifest["arms"]:
        if arm["model"] == "tiny@onnx-int4" and arm["constraint"] == "json":
            arm["engine"] = "TRT grammar"
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    md = stdout_of(capsys, "compare", str(run_dir), "--format", "md")
    assert "| tiny@onnx-int4 | tensorrt | json | TRT grammar |" in md
    assert "| tiny@onnx-int4 | tensorrt | none | \\- |" in md  # "-", escaped
    run = load_run(run_dir)
    assert [r["runtime"][0] for r in leaderboard_rows(render_report([run]))][3:] == ["tensorrt"] * 3
    write_card(run, tmp_path / "card.md", model="tiny@onnx-int4", examples=0)
    assert "| tensorrt | json | TRT grammar |" in (tmp_path / "card.md").read_text()


def test_recommends_sweep_keeps_the_runtime_column_when_runtimes_differ(run_dir: Path) -> None:
    sweep = build_sweep(load_run(run_dir))
    table = sweep_table(sweep, fold_runtime=True)  # as the terminal shows it
    headers = [str(column.header) for column in table.columns]
    assert headers[:5] == ["variant", "quant", "runtime", "mode", "engine"]
    assert "runtime" not in str(table.title)
