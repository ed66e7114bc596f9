"""Report views and the runner read records, not raw dicts of them: no `.get("FIELD")`
in edgebench/report, analysis, runner, bench or doctor where FIELD is a field of a record
class (the run folder's, bench.json's, the device block's). A `.get` whose receiver is a
genuinely free-form dict (options as given, figures keyed by the families' own names, a
runtime's own facts, files a model ships) is allowed by module and receiver name, each
with why.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import edgebench
from edgebench.record import Record
from edgebench.runfolder import records
from edgebench.system import records as device_records

PACKAGE_ROOT = Path(edgebench.__file__).parent
CHECKED = ("report", "analysis", "runner", "bench", "doctor")

# Figures keyed by the names metric families and the summary declare (`n`, `n_skipped`,
# `valid_json`, `decode_tok_s` ...): dicts by design, their keys not record fields.
_FIGURES = "figures keyed by the names the families and the summary declare"
# (module under edgebench/, the receiver's name) -> why its `.get` reads a free-form dict
ALLOWED: dict[tuple[str, str], str] = {
    ("report/bench_table.py", "settings"): "BenchRecord.settings: the options as recorded",
    ("report/card.py", "packages"): "Manifest.packages: package name -> version",
    ("report/card.py", "scores"): _FIGURES,
    ("report/table.py", "scores"): _FIGURES,
    ("report/html.py", "scores"): _FIGURES,
    ("report/html.py", "overall"): _FIGURES,
    ("report/plots.py", "figures"): _FIGURES,
    ("report/coverage.py", "task"): _FIGURES,
    ("report/facts.py", "p50_ci95"): "Perf.p50_ci95: figure name -> interval (empty before 2.9)",
    ("report/facts.py", "ci"): "Perf.p50_ci95: figure name -> interval (empty before 2.9)",
    ("analysis/recommend.py", "p50_ci95"): "Perf.p50_ci95: figure name -> interval",
    ("report/recommend_view.py", "p50_ci95"): "Perf.p50_ci95: figure name -> interval",
    ("report/sweep_view.py", "p50_ci95"): "Perf.p50_ci95: figure name -> interval",
    ("report/facts.py", "runtime"): "a runtime's own facts, as the backend reports them",
    ("report/facts.py", "build"): "a runtime's build, as the backend reports it",
    ("report/compare.py", "row"): "compare's own table row (a view's dict, not a record)",
    ("bench/execute.py", "runtime"): "a runtime's own facts, as the backend reports them",
    ("bench/execute.py", "details"): "ModelUnderTest.details: what the model file's header says",
    ("runner/prepare.py", "source"): "a model file's metadata (GGUF header, ONNX sidecar)",
    ("runner/prepare.py", "provenance"): "an ONNX model's conversion sidecar, as written",
    ("runner/prepare.py", "prompt"): "a model's prompt format as its sidecar gives it",
    ("runner/resume.py", "given"): "the options the user gave to --resume (field -> value)",
    ("runner/timeline.py", "heat"): "system.device's thermal state of the moment (a dict)",
}


def record_fields() -> set[str]:
    """Every field name of every record class of the published formats."""
    names: set[str] = set()
    for module in (records, device_records):
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Record) and value is not Record:
                names |= {f.name for f in dataclasses.fields(value)}  # type: ignore[arg-type]
    return names


def _receiver(node: ast.expr) -> str:
    """The name a `.get` is called on: `row` of `row.get`, `perf` of `a.perf.get`,
    `runtime` of `(runtime or {}).get`."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.BoolOp):
        return _receiver(node.values[0])
    if isinstance(node, ast.Subscript | ast.Call):
        return _receiver(node.value if isinstance(node, ast.Subscript) else node.func)
    return ast.unparse(node)


def _reads(root: Path, fields: set[str]) -> list[tuple[str, int, str, str]]:
    """(module, line, receiver, FIELD) of every `receiver.get("FIELD")` under CHECKED."""
    reads = []
    for package in CHECKED:
        for path in sorted((root / package).rglob("*.py")):
            module = path.relative_to(root).as_posix()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "get"
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and node.args[0].value in fields
                ):
                    field = str(node.args[0].value)
                    reads.append((module, node.lineno, _receiver(node.func.value), field))
    return reads


def field_reads(root: Path, fields: set[str]) -> list[str]:
    """`module:line: receiver.get("FIELD")` for every such read not in ALLOWED."""
    return [
        f"{module}:{line}: {receiver}.get({field!r})"
        for module, line, receiver, field in _reads(root, fields)
        if (module, receiver) not in ALLOWED
    ]


def test_report_and_runner_read_record_attributes_not_dict_fields() -> None:
    assert field_reads(PACKAGE_ROOT, record_fields()) == []


def test_a_dict_read_of_a_record_field_is_caught(tmp_path: Path) -> None:
    """The check itself: a view that reads a bench row as a dict is named."""
    view = tmp_path / "report" / "view.py"
    view.parent.mkdir()
    (tmp_path / "runner").mkdir()
    view.write_text("def rate(row):\n    return row.get('tok_s_mean')\n")
    assert field_reads(tmp_path, record_fields()) == ["report/view.py:2: row.get('tok_s_mean')"]


def test_every_allowance_is_still_needed() -> None:
    """An allowance no read needs any more is dropped, not kept for later."""
    used = {(module, receiver) for module, _, receiver, _ in _reads(PACKAGE_ROOT, record_fields())}
    assert set(ALLOWED) <= used, set(ALLOWED) - used
