"""Plans are bounded: counted before any cell is built (at most MAX_CELLS, the error naming
the keys that multiply), cells built one at a time (counted: a big but allowed plan
builds only the cells asked for, its dataset hashed once; it shows fast),
a dataset that is a device or a FIFO refused (never a hang), the plan file itself read
boundedly (size, TOML nesting, over-long integers), and a plan-status.json of the wrong
shape one line naming the field."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from edgebench.errors import UserError
from edgebench.plan import cells as cells_module
from edgebench.plan.cells import expand
from edgebench.plan.file import MAX_CELLS, MAX_PLAN_BYTES, load_plan
from edgebench.plan.state import STATUS_FILE, STATUS_KIND, check_unchanged, found, new_status
from tests.helpers.cli import cli_error, stdout_of
from tests.helpers.plan_runs import PLAN, write_plan


def counted(monkeypatch: pytest.MonkeyPatch, name: str) -> list[tuple[Any, ...]]:
    """The calls of plan/cells.py's `name` (still made): what building cells did."""
    calls: list[tuple[Any, ...]] = []
    real = getattr(cells_module, name)

    def count(*args: Any) -> Any:
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(cells_module, name, count)
    return calls


def test_a_plan_of_too_many_cells_is_one_line_before_any_cell_is_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = write_plan(
        tmp_path, PLAN.replace("threads = [1]", "threads = [1]\nrepetitions = 1000000000")
    )
    built = counted(monkeypatch, "run_cell")
    for command in ("show", "run"):
        line = cli_error(capsys, "plan", command, str(plan))
        assert f"{plan}:4:" in line and "2,000,000,000 cells" in line, line
        assert f"more than the {MAX_CELLS:,}" in line
        assert "constraints 2" in line and "repetitions 1000000000" in line
    assert built == []


def test_a_big_but_allowed_plan_is_counted_not_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = write_plan(
        tmp_path, PLAN.replace("threads = [1]", f"threads = [1]\nrepetitions = {MAX_CELLS // 2}")
    )
    built, hashed = counted(monkeypatch, "run_cell"), counted(monkeypatch, "hash_file")
    cells = expand(load_plan(plan, 4))
    assert len(cells) == MAX_CELLS and built == []  # counted, not built
    last = cells[-1]
    assert last.id.endswith(f".json.t1.r{MAX_CELLS // 2}")
    assert cells[1].id.endswith(".none.t1.r2") and cells[MAX_CELLS // 2].id.endswith("json.t1.r1")
    assert len(built) == 3  # built one at a time, when asked for
    # the dataset is hashed once for all cells, not once per cell
    assert {cell.settings["dataset"] for cell in cells[:50]} == {cells[0].settings["dataset"]}
    assert len(built) == 3 + 51 and len(hashed) == 1


def test_plan_show_of_a_big_but_allowed_plan_is_fast(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = write_plan(tmp_path, PLAN.replace("threads = [1]", "threads = [1]\nrepetitions = 1000"))
    started = time.monotonic()
    rows = json.loads(stdout_of(capsys, "plan", "show", str(plan), "--json"))
    assert len(rows) == 2000
    lines = stdout_of(capsys, "plan", "show", str(plan)).splitlines()
    assert len(lines) == 2 + 2000 and lines[0].endswith("2000 cells")  # plain lines
    assert lines[2].split() == [rows[0]["cell"], rows[0]["output"]]
    assert time.monotonic() - started < 20


def fifo(path: Path) -> None:
    os.mkfifo(path)


def zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


@pytest.mark.parametrize(
    ("make", "fragment"),
    [(fifo, "is a FIFO"), (zero, "is a character device")],
)
def test_a_dataset_that_is_not_a_regular_file_is_one_line_not_a_hang(
    make: Callable[[Path], None],
    fragment: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    plan = write_plan(tmp_path, PLAN.replace("data/payloads.jsonl", "data/odd.jsonl"))
    make(tmp_path / "data" / "odd.jsonl")
    line = cli_error(capsys, "plan", "show", str(plan))
    assert f"{plan}:7: tasks[1].dataset:" in line and fragment in line
    direct = PLAN.replace("data/payloads.jsonl", "/dev/zero")
    line = cli_error(capsys, "plan", "show", str(write_plan(tmp_path, direct)))
    assert "tasks[1].dataset" in line and "is a character device" in line


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("x = " + "[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("x = " + "{a = " * 5000 + "1" + "}" * 5000, "nested too deeply"),
        ("[" + ".".join(["a"] * 30) + "]\nb = 1", "plan file nested too deeply (over 20 levels)"),
        ("repetitions = " + "9" * 5000, "not valid TOML"),
    ],
)
def test_a_hostile_plan_file_is_one_line(
    text: str, fragment: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = write_plan(tmp_path, text + "\n" + PLAN)
    line = cli_error(capsys, "plan", "show", str(plan))
    assert str(plan) in line and fragment in line, line


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (fifo, "is a FIFO"),
        (zero, "is a link to a character device"),
        (lambda p: os.truncate(p, MAX_PLAN_BYTES + 1), "larger than the 1 MiB limit"),
    ],
)
def test_a_plan_file_that_is_not_a_plan_file_is_one_line(
    make: Callable[[Path], None],
    fragment: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    plan = tmp_path / "plan.toml"
    if make is not fifo and make is not zero:
        plan.write_text(PLAN)
    make(plan)
    line = cli_error(capsys, "plan", "show", str(plan))
    assert str(plan) in line and fragment in line, line


def _status(cells: object, **extra: object) -> str:
    return json.dumps({"kind": STATUS_KIND, "cells": cells, **extra})


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (_status({"a": 1}), "cells: must be an array, got an object"),
        (_status([1]), "cells[0]: must be an object, got a number"),
        (_status([{"id": 5, "settings": {}}]), "cells[0].id: must be a string"),
        (_status([{"id": "x", "settings": []}]), "cells[0].settings: must be an object"),
        (_status([], retired=[]), "retired: must be an object"),
        (_status([], retired={"x": 1}), "retired.x: must be an object"),
        (json.dumps({"kind": "other", "cells": []}), "kind: not 'edgebench-plan-status'"),
        ("[1, 2]", "must be a JSON object, got an array"),
        (
            _status([{"id": "x", "settings": {"n": 1}}]).replace(": 1}", ": " + "9" * 5000 + "}"),
            "integer with 5000 digits",
        ),
        ('{"kind": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ],
)
def test_a_plan_status_of_the_wrong_shape_is_one_line(
    text: str, fragment: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = write_plan(tmp_path)
    cells = expand(load_plan(plan, 4))
    root = tmp_path / "out"
    root.mkdir()
    (root / STATUS_FILE).write_text(text)
    for check in (lambda: check_unchanged(cells, root), lambda: new_status("p", None, cells, root)):
        with pytest.raises(UserError) as exc:
            check()
        message = str(exc.value)
        assert "\n" not in message and str(root / STATUS_FILE) in message
        assert fragment in message, message


def test_a_cell_whose_manifest_is_hostile_is_partial_not_a_crash(tmp_path: Path) -> None:
    plan = write_plan(tmp_path)
    cell = expand(load_plan(plan, 4))[0]
    output = cell.output(tmp_path / "out")
    output.mkdir(parents=True)
    (output / "manifest.json").write_text('{"status": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert found(cell, tmp_path / "out") == "partial"
    (output / "manifest.json").unlink()
    os.mkfifo(output / "manifest.json")
    assert found(cell, tmp_path / "out") == "partial"


@pytest.mark.parametrize(
    ("key", "value"),
    [("dataset", "loop.jsonl"), ("model", "loop.gguf")],
)
def test_a_link_loop_in_a_plan_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: str
) -> None:
    """pathlib's resolve() raises a RuntimeError for a link loop: a traceback."""
    text = PLAN.replace("data/payloads.jsonl", value) if key == "dataset" else PLAN
    if key == "model":
        text = text.replace('models = ["smollm2-135m-instruct"]', f'models = ["./{value}"]')
    plan = write_plan(tmp_path, text)
    (tmp_path / value).symlink_to(value)
    line = cli_error(capsys, "plan", "show", str(plan))
    assert f"{plan}:" in line and "cannot follow its links" in line, line


@pytest.mark.parametrize(("key", "value"), [("timeout", "nan"), ("delay", "inf")])
def test_a_number_that_is_not_finite_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: str
) -> None:
    """TOML has nan and inf: a NaN passed every `value < minimum` check."""
    plan = write_plan(tmp_path, PLAN + f"{key} = {value}\n")
    line = cli_error(capsys, "plan", "show", str(plan))
    assert f"{plan}:9: tasks[1].{key}: must be a finite number" in line, line


def test_a_plan_saved_with_a_bom_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An editor's byte-order mark was 'not valid TOML (Invalid statement)'."""
    plan = write_plan(tmp_path, "\ufeff" + PLAN)
    assert "roundtrip" in stdout_of(capsys, "plan", "show", str(plan))


def test_a_cells_log_is_read_from_its_end_and_never_blocks(tmp_path: Path) -> None:
    """A cell's log (in a plan folder that may come from elsewhere) was read whole, and
    a FIFO in its place blocked both the read and the append of the next attempt."""
    from edgebench.plan.execute import LOG_TAIL_BYTES, last_error, launch

    log = tmp_path / "cell.log"
    with log.open("wb") as handle:  # sparse: a huge log costs nothing to make
        handle.truncate(10 * LOG_TAIL_BYTES)
        handle.seek(0, os.SEEK_END)
        handle.write(b"\nerror: the last one\nbye\n")
    assert last_error(log) == "the last one"
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    assert last_error(fifo) == "no log"
    with pytest.raises(UserError, match="the cell's log is a FIFO"):
        launch(["--version"], dict(os.environ), fifo)


def test_a_changed_setting_is_quoted_short(tmp_path: Path) -> None:
    """A hand-edited plan-status.json holding a 10 MB setting made a 10 MB error line."""
    from edgebench.plan.state import _as_json

    plan = write_plan(tmp_path)
    cells = expand(load_plan(plan, 4))
    root = tmp_path / "out"
    (cells[0].output(root)).mkdir(parents=True)
    (cells[0].output(root) / "manifest.json").write_text("{}")
    stored = {**_as_json(cells[0].settings), "model": "x" * 10_000_000}
    status = {"kind": STATUS_KIND, "cells": [{"id": cells[0].id, "settings": stored}]}
    (root / STATUS_FILE).write_text(json.dumps(status))
    with pytest.raises(UserError, match="its settings changed since it ran") as exc:
        check_unchanged(cells, root)
    assert len(str(exc.value)) < 1000 and "\n" not in str(exc.value)
