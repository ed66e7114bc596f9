"""A file in the public DeepJSONEval .xlsx layout (columns schema, text, json, category,
true_depth; no id; ordered by depth; Chinese texts; ground truths that break their own
schema), run end to end through the CLI on the fake model: the broken rows are left out
with a warning line and listed in the manifest (or refused with --strict-data), and
`--sample 25 --stratify depth` runs 5 examples per depth with the budgets of the whole
file, drawn from the rows that fit the context."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.io import read_jsonl
from edgebench.runner.budget import plan_budget, reference_text
from edgebench.tasks.deepjson import load_deepjson
from tests.helpers.cli import assert_one_line_error, cli_error, run_cli
from tests.helpers.cli_model import use_fake_model
from tests.helpers.dataset_files import NO_MODEL
from tests.helpers.run_folder import manifest_of

openpyxl = pytest.importorskip("openpyxl")

DEPTHS = (3, 4, 5, 6, 7)
PER_DEPTH = 10  # valid rows per depth
COLUMNS = ["schema", "text", "json", "category", "true_depth"]


def schema(depth: int, *, closed: bool = False) -> dict[str, Any]:
    """Objects nested to `depth` (the root is level 1) ending in 名称 and 可用; `closed`
    sets additionalProperties false on every object."""
    node: dict[str, Any] = {
        "type": "object",
        "properties": {"名称": {"type": "string"}, "可用": {"type": "boolean"}},
        "required": ["名称", "可用"],
    }
    for _ in range(depth - 2):
        node = {"type": "object", "properties": {"内部": node}, "required": ["内部"]}
    if closed:
        inner: Any = node
        while inner is not None:
            inner["additionalProperties"] = False
            inner = inner["properties"].get("内部")
    return {"title": f"深度{depth}", **node}


def truth(depth: int, name: str, **extra: Any) -> dict[str, Any]:
    value: dict[str, Any] = {"名称": name, "可用": True, **extra}
    for _ in range(depth - 2):
        value = {"内部": value}
    return value


def cells(depth: int, index: int, value: Any, *, closed: bool = False) -> list[Any]:
    text = f"这台 设备 的 名称 是 {index} 号 ， 目前 可用 。 深度 {depth} 的 记录 。"
    if (depth, index) == (7, 2):  # the longest prompt: it sets n_ctx
        text += " 词" * 300
    return [
        json.dumps(schema(depth, closed=closed), ensure_ascii=False, indent=2),
        text,
        json.dumps(value, ensure_ascii=False, indent=2),
        "设备",
        depth,
    ]


def public_rows() -> tuple[list[list[Any]], dict[int, str]]:
    """The sheet's data rows in depth order and, by data-row index (1-based), what is wrong
    with each broken one. Row 1 of each depth has a long name: it sets the depth's budget."""
    rows: list[list[Any]] = []
    broken: dict[int, str] = {}
    for depth in DEPTHS:
        for i in range(PER_DEPTH):
            name = " ".join(["长名称"] * (8 * depth)) if i == 1 else f"名称{depth}-{i}"
            # one depth-4 row carries a key its (open) schema does not declare: valid
            extra = {"备注": "多余"} if (depth, i) == (4, 3) else {}
            rows.append(cells(depth, i, truth(depth, name, **extra)))
        if depth == 5:  # a required key missing, twice
            for i in range(2):
                value = truth(depth, f"坏{i}")
                del value["内部"]["内部"]["内部"]["可用"]
                rows.append(cells(depth, 90 + i, value))
                broken[len(rows)] = "$['内部']['内部']['内部']: '可用' is a required property"
        if depth == 6:  # an undeclared key where the schema has additionalProperties false
            rows.append(cells(depth, 92, truth(depth, "坏", 备注="多余"), closed=True))
            broken[len(rows)] = (
                "$['内部']['内部']['内部']['内部']: Additional properties are not allowed"
            )
        if depth == 7:  # a required key missing, three times
            for i in range(3):
                value = truth(depth, f"坏{i}")
                del value["内部"]["内部"]["内部"]["内部"]["内部"]["名称"]
                rows.append(cells(depth, 93 + i, value))
                broken[len(rows)] = "'名称' is a required property"
    return rows, broken


@pytest.fixture
def public(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """DeepJSONEval.xlsx and, by example id (file stem + data-row index), the expected
    start of each broken row's error."""
    rows, broken = public_rows()
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(COLUMNS)
    for row in rows:
        sheet.append(row)
    path = tmp_path / "DeepJSONEval.xlsx"
    workbook.save(path)
    return path, {f"DeepJSONEval-{index:04d}": error for index, error in broken.items()}


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, public: Any) -> Any:
    """`edgebench run --task deepjson --dataset DeepJSONEval.xlsx --out OUT ARGS` on the
    fake model: (exit code, stderr)."""
    use_fake_model(monkeypatch, lambda model, mode: InProcessWorker(FakeBackend()))

    def start(out: Path, *args: str) -> tuple[int, str]:
        task = ("--task", "deepjson", "--dataset", str(public[0]), "--out", str(out))
        return run_cli(capsys, "run", *task, *args)

    return start


def plan_of(out: Path) -> dict[str, Any]:
    return manifest_of(out)["models"][0]["plan"]


def test_broken_rows_are_left_out_with_a_warning_and_listed(
    run: Any, public: Any, tmp_path: Path
) -> None:
    path, broken = public
    code, err = run(tmp_path / "full")
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    first = ", ".join(sorted(broken)[:5])
    assert warnings == [
        f"warning: 6 row(s) of {path} left out: their expected output fails their own "
        f"schema ({first}, ...; each id and error in manifest.json; --strict-data refuses "
        "the file)"
    ]
    dataset = manifest_of(tmp_path / "full")["dataset"]
    assert dataset["n_examples"] == 50 and dataset["n_invalid_data"] == 6
    listed = {row["id"]: row["error"] for row in dataset["invalid_rows"]}
    assert sorted(listed) == sorted(broken)
    for example_id, error in broken.items():
        assert error in listed[example_id], listed[example_id]
    ran = [s["id"] for s in read_jsonl(tmp_path / "full" / "samples.jsonl")]
    assert len(ran) == 50 and not set(ran) & set(broken)  # never scored, not even as 0
    assert "DeepJSONEval-0024" in ran  # the undeclared key under an open schema is valid


def test_sample_stratified_by_depth_keeps_the_whole_files_budgets(
    run: Any, public: Any, tmp_path: Path
) -> None:
    for out, args in (
        ("full", ()),
        ("sample", ("--sample", "25", "--stratify", "depth", "--seed", "3")),
        ("limit", ("--limit", "10")),
    ):
        code, err = run(tmp_path / out, *args)
        assert code == 0, err
    samples = read_jsonl(tmp_path / "sample" / "samples.jsonl")
    depths = Counter(s["groups"]["depth"] for s in samples)
    assert depths == {"3": 5, "4": 5, "5": 5, "6": 5, "7": 5}
    record = manifest_of(tmp_path / "sample")["dataset"]["sample"]
    ids = [s["id"] for s in samples]
    assert record == {
        "n": 25,
        "stratify": "depth",
        "seed": 3,
        "ids": ids,
        "n_unfit": 0,
        "unfit_ids": [],
    }
    assert ids == sorted(ids)  # in the file's order
    full = plan_of(tmp_path / "full")
    assert full["decoding"]["max_tokens_by_schema"] == {
        "depth-3": 96,
        "depth-4": 96,
        "depth-5": 128,
        "depth-6": 128,
        "depth-7": 128,
    }
    assert full["n_ctx"] == 768  # the long depth-7 prompt; the depth-3 rows alone fit 256
    for subset in ("sample", "limit"):  # --limit 10 runs depth 3 only
        assert plan_of(tmp_path / subset)["decoding"] == full["decoding"]
    # The context is sized from the examples decoded: the depth-3 rows fit 256.
    assert plan_of(tmp_path / "limit")["n_ctx"] == 256
    assert plan_of(tmp_path / "sample")["n_ctx"] <= full["n_ctx"]
    # Sized from the sample alone, some depth would have had a smaller budget.
    chosen = [e for e in load_deepjson(public[0]) if e.id in ids]
    alone = plan_budget(None, chosen, [len(reference_text(e).split()) for e in chosen])
    assert alone.by_schema != full["decoding"]["max_tokens_by_schema"]


def test_a_sample_is_drawn_from_the_rows_that_fit_and_says_how_many_do_not(
    run: Any, public: Any, tmp_path: Path
) -> None:
    """The long depth-7 row needs 768 tokens: under --max-context 512 it is left out of the
    draw (said in one line, listed in the manifest), so the whole sample is scored and
    every depth is in it."""
    long_row = next(e for e in load_deepjson(public[0]) if " 词 词" in e.text)
    code, err = run(
        tmp_path / "fit", "--sample", "25", "--stratify", "depth", "--max-context", "512"
    )
    assert code == 0, err
    notes = [line for line in err.splitlines() if line.startswith("--sample:")]
    assert len(notes) == 1, err
    assert notes[0].startswith(
        f"--sample: 1 of 50 examples cannot fit the context and are not drawn from (the "
        f"first, '{long_row.id}': prompt of "
    )
    assert "+ max tokens 128 = " in notes[0] and "does not fit --max-context (512)" in notes[0]
    record = manifest_of(tmp_path / "fit")["dataset"]["sample"]
    assert record["n_unfit"] == 1 and record["unfit_ids"] == [long_row.id]
    samples = read_jsonl(tmp_path / "fit" / "samples.jsonl")
    assert long_row.id not in {s["id"] for s in samples}
    assert not [s for s in samples if s["finish_reason"] == "skipped"]
    depths = Counter(s["groups"]["depth"] for s in samples)
    assert depths == {"3": 5, "4": 5, "5": 5, "6": 5, "7": 5}
    assert plan_of(tmp_path / "fit")["n_ctx"] <= 512


def test_a_sample_larger_than_the_rows_that_fit_is_a_one_line_error(
    run: Any, tmp_path: Path
) -> None:
    code, err = run(tmp_path / "big", "--sample", "50", "--max-context", "512")
    assert code == 2, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: --sample 50: only 49 of the 50 examples fit the context")
    assert "give a smaller --sample or a larger --max-context" in last


def test_strict_data_refuses_the_file_at_the_first_broken_row(
    capsys: pytest.CaptureFixture[str], public: Any
) -> None:
    path, broken = public
    first = sorted(broken)[0]
    args = ["--task", "deepjson", "--dataset", str(path), "--model", NO_MODEL, "--strict-data"]
    assert cli_error(capsys, "run", *args) == (
        f"error: {path}: row 32: example '{first}': the expected output does not match its "
        f"schema ({broken[first]}) (--strict-data)"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sample", "0"], "--sample: 0 is below the minimum of 1"),
        (["--sample", "-4"], "--sample: -4 is below the minimum of 1"),
        (["--sample", "51"], "--sample 51: the dataset has only 50 examples"),
        (
            ["--sample", "5", "--stratify", "level"],
            "--stratify level: the dataset has no such group (its groups: depth, "
            "difficulty, domain)",
        ),
        (["--sample", "5", "--limit", "5"], "--limit and --sample exclude each other"),
        (["--stratify", "depth"], "--stratify depth: give the sample size with --sample N"),
    ],
)
def test_bad_sample_options_are_one_line_errors_before_any_model(
    capsys: pytest.CaptureFixture[str], public: Any, args: list[str], message: str
) -> None:
    base = ["--task", "deepjson", "--dataset", str(public[0]), "--model", NO_MODEL]
    code, err = run_cli(capsys, "run", *base, *args)
    assert_one_line_error(code, err, message)


def test_resume_refuses_another_sample(
    run: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "run"
    code, err = run(out, "--sample", "10", "--stratify", "depth")
    assert code == 0, err
    for args, message in (
        (["--sample", "12"], "setting --sample differs (run: 10, now: 12)"),
        (["--seed", "1"], "setting --seed differs (run: 0, now: 1)"),
        (["--stratify", "domain"], "setting --stratify differs (run: depth, now: domain)"),
    ):
        code, err = run_cli(capsys, "run", "--resume", str(out), *args)
        warning, error = err.strip().splitlines()  # the file's broken rows, then the refusal
        assert code == 2 and warning.startswith("warning: 6 row(s)")
        assert error == f"error: cannot resume {out}: {message}"
    assert manifest_of(out)["resumes"] == []
    code, err = run_cli(capsys, "run", "--resume", str(out))  # the same sample: accepted
    assert code == 0, err


def test_a_resumed_sample_draws_the_same_fitting_rows(
    run: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The sample drawn from the rows that fit is drawn again on --resume: the same ids,
    so the kept records stay and nothing is decoded twice."""
    out = tmp_path / "run"
    code, err = run(out, "--sample", "25", "--stratify", "depth", "--max-context", "512")
    assert code == 0, err
    before = manifest_of(out)["dataset"]["sample"]
    code, err = run_cli(capsys, "run", "--resume", str(out))
    assert code == 0, err
    manifest = manifest_of(out)
    assert manifest["dataset"]["sample"] == before and before["n_unfit"] == 1
    assert manifest["resumes"][0]["samples_kept"] == 25
    assert len(read_jsonl(out / "samples.jsonl")) == 25
