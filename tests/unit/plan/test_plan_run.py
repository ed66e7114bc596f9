"""`edgebench plan run` with each cell's process stood in for (tests/helpers/plan_runs.py):
the cells run in order into DIR/runs/<cell-id>, done cells are never run again, a half-done
one continues with --resume, a failed one is recorded while the others run, a changed
cell is refused, Ctrl-C keeps what is done, variants are made before the cells need them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.plan import execute
from tests.helpers.cli import assert_one_line_error, run_cli, stdout_of
from tests.helpers.plan_runs import MODEL, PLAN, Launches, write_plan
from tests.helpers.run_folder import manifest_of

NONE = f"{MODEL}.roundtrip-payloads.none.t1.r1"
JSON = f"{MODEL}.roundtrip-payloads.json.t1.r1"


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> Launches:
    recorder = Launches(monkeypatch)
    monkeypatch.setattr(execute, "launch", recorder)
    return recorder


def plan_run(capsys: pytest.CaptureFixture[str], plan: Path, *args: str) -> tuple[int, str]:
    return run_cli(capsys, "plan", "run", str(plan), "--out", str(plan.parent / "out"), *args)


def status_of(root: Path) -> dict[str, dict]:
    data = json.loads((root / "plan-status.json").read_text())
    return {cell["id"]: cell for cell in data["cells"]} | {"": data}


def test_every_cell_runs_once_into_its_own_run_folder_with_the_device_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], launches: Launches
) -> None:
    plan = write_plan(tmp_path)
    code, err = plan_run(capsys, plan, "--device-name", "pi5-a")
    assert code == 0, err
    root = tmp_path / "out"
    assert launches.commands() == ["run --model", "run --model"]
    assert launches.device_names == ["pi5-a", "pi5-a"]
    for cell, mode in ((NONE, "none"), (JSON, "json")):
        manifest = manifest_of(root / "runs" / cell)
        assert manifest["status"] == "completed"
        assert manifest["settings"]["constraints"] == [mode]
        assert manifest["settings"]["limit"] == 2
        assert status_of(root)[cell]["status"] == "done"
        assert status_of(root)[cell]["output"] == f"runs/{cell}"
    assert status_of(root)[""]["state"] == "finished"
    assert (root / "plan.toml").read_text() == plan.read_text()
    assert f"[2/2] {JSON}: done in" in err


def test_the_same_command_again_runs_nothing_and_lists_every_cell_as_done(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], launches: Launches
) -> None:
    plan = write_plan(tmp_path)
    assert plan_run(capsys, plan)[0] == 0
    before = (tmp_path / "out" / "runs" / NONE / "manifest.json").stat().st_mtime_ns
    launches.calls.clear()
    code, err = plan_run(capsys, plan)
    assert code == 0, err
    assert launches.calls == []
    assert f"[1/2] {NONE}: done\n" in err and f"[2/2] {JSON}: done\n" in err
    assert (tmp_path / "out" / "runs" / NONE / "manifest.json").stat().st_mtime_ns == before


def test_a_failed_cell_is_recorded_the_others_still_run_and_the_next_run_tries_it_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], launches: Launches
) -> None:
    plan = write_plan(tmp_path)
    launches.script = {"--constraint none": 1}
    code, err = plan_run(capsys, plan)
    last = err.strip().splitlines()[-1]
    assert code == 1, err
    assert last.startswith("error: plan ") and "1 of 2 cells done, 1 failed" in last
    assert NONE in last and "Traceback" not in err
    status = status_of(tmp_path / "out")
    assert status[NONE]["status"] == "failed" and status[NONE]["exit_code"] == 1
    assert status[NONE]["error"] == "scripted failure of --constraint none"
    assert status[JSON]["status"] == "done"
    launches.script, launches.calls = {}, []
    assert plan_run(capsys, plan)[0] == 0
    assert [call[call.index("--constraint") + 1] for call in launches.calls] == ["none"]


def test_a_half_done_cell_continues_with_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], launches: Launches
) -> None:
    plan = write_plan(tmp_path)
    assert plan_run(capsys, plan)[0] == 0
    folder = tmp_path / "out" / "runs" / JSON
    manifest = manifest_of(folder)
    (folder / "manifest.json").write_text(json.dumps({**manifest, "status": "interrupted"}))
    launches.calls.clear()
    code, err = plan_run(capsys, plan)
    assert code == 0, err
    assert launches.calls == [["run", "--resume", str(folder)]]
    assert f"{JSON}: continuing" in err
    assert manifest_of(folder)["status"] == "completed"
    assert len(manifest_of(folder)["resumes"]) == 1


def test_a_changed_plan_adds_new_cells_and_refuses_a_cell_whose_settings_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], launches: Launches
) -> None:
    plan = write_plan(tmp_path)
    assert plan_run(capsys, plan)[0] == 0
    plan.write_text(PLAN.replace('"json"]', '"json", "mask"]'))
    launches.calls.clear()
    code, err = plan_run(capsys, plan)
    assert code == 0, err
    assert [call[call.index("--constraint") + 1] for call in launches.calls] == ["mask"]
    plan.write_text(PLAN.replace("limit = 2", "limit = 3"))
    code, err = plan_run(capsys, plan)
    assert_one_line_error(code, err, f"cell {NONE}: its settings changed since it ran")
    assert "(limit: 2 -> 3)" in err
    # the refused plan left the folder as it was: the mask cell is still remembered
    assert f"{MODEL}.roundtrip-payloads.mask.t1.r1" in status_of(tmp_path / "out")


def test_ctrl_c_stops_the_plan_with_exit_130_and_keeps_the_done_cells(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], launches: Launches
) -> None:
    plan = write_plan(tmp_path)
    launches.script = {"--constraint json": KeyboardInterrupt()}
    code, err = plan_run(capsys, plan)
    assert code == 130, err
    assert "interrupted: 1 done cells kept" in err and "Traceback" not in err
    status = status_of(tmp_path / "out")
    assert status[""]["state"] == "interrupted"
    assert status[NONE]["status"] == "done"
    assert status[JSON]["status"] == "skipped"
    assert "plan run` again continues it" in status[JSON]["error"]


def test_missing_variants_are_quantized_once_per_source_before_the_cells(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    launches: Launches,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: set[str] = set()
    monkeypatch.setattr(
        execute, "quantized_state", lambda base, kind: "yes" if kind in made else "no"
    )

    def quantize_then_fail_cells(args: list[str], env: dict[str, str], log: Path) -> int:
        launches.calls.append(args)
        if args[:2] == ["models", "quantize"]:
            made.update(t for t in args[4].split(",") if t != "Q2_K")
            return 0
        log.write_text("error: no model in this test\n")
        return 2

    monkeypatch.setattr(execute, "launch", quantize_then_fail_cells)
    plan = write_plan(
        tmp_path, PLAN.replace("threads", 'quantizations = ["Q8_0", "Q2_K"]\nthreads')
    )
    assert plan_run(capsys, plan)[0] == 1
    assert launches.calls[0] == ["models", "quantize", MODEL, "--types", "Q8_0,Q2_K", "--force"]
    assert [call[:2] for call in launches.calls].count(["models", "quantize"]) == 1
    status = status_of(tmp_path / "out")
    q2 = f"{MODEL}@Q2_K.roundtrip-payloads.none.t1.r1"
    assert status[q2]["status"] == "failed" and "models quantize failed" in status[q2]["error"]
    assert not any(q2 in " ".join(call) for call in launches.calls)  # never started
    ran = [call[call.index("--model") + 1] for call in launches.calls if call[0] == "run"]
    assert ran == [f"{MODEL}@Q8_0", f"{MODEL}@Q8_0"]


def test_a_bench_cell_writes_its_file_and_an_unfinished_one_starts_again(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    launches: Launches,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def bench(args: list[str], env: dict[str, str], log: Path) -> int:
        launches.calls.append(args)
        out = Path(args[args.index("--out") + 1])
        assert not out.exists()  # bench refuses an existing file
        out.write_text(
            json.dumps({"status": "completed" if len(launches.calls) > 1 else "interrupted"})
        )
        return 0 if len(launches.calls) > 1 else 130

    monkeypatch.setattr(execute, "launch", bench)
    text = PLAN.replace('"none", "json"', '"none"') + "\n[bench]\ngen_tokens = [16]\n"
    plan = write_plan(tmp_path, text)
    (tmp_path / "out" / "runs" / NONE).mkdir(parents=True)  # the run cell: done already
    (tmp_path / "out" / "runs" / NONE / "manifest.json").write_text('{"status": "completed"}')
    (tmp_path / "out" / "runs" / NONE / "summary.json").write_text("{}")
    assert plan_run(capsys, plan)[0] == 1
    assert plan_run(capsys, plan)[0] == 0
    bench_file = tmp_path / "out" / "bench" / f"{MODEL}.bench.json"
    assert json.loads(bench_file.read_text())["status"] == "completed"
    assert [call[:3] for call in launches.calls] == [["bench", "--model", MODEL]] * 2
    assert launches.calls[0][launches.calls[0].index("--gen-tokens") + 1] == "16"


def test_a_cell_folder_with_files_but_no_manifest_fails_with_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], launches: Launches
) -> None:
    plan = write_plan(tmp_path)
    folder = tmp_path / "out" / "runs" / NONE
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("mine")
    assert plan_run(capsys, plan)[0] == 1
    assert status_of(tmp_path / "out")[NONE]["error"] == (
        f"{folder} holds notes.txt but no manifest.json; remove the folder"
    )
    assert status_of(tmp_path / "out")[JSON]["status"] == "done"


def test_plan_show_lists_the_cells_and_with_out_which_are_done(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], launches: Launches
) -> None:
    plan = write_plan(tmp_path)
    launches.script = {"--constraint json": 1}
    plan_run(capsys, plan)
    rows = json.loads(stdout_of(capsys, "plan", "show", str(plan), "--json"))
    assert [(row["cell"], row["state"]) for row in rows] == [(NONE, None), (JSON, None)]
    assert rows[1]["command"][:2] == ["edgebench", "run"]
    out = stdout_of(capsys, "plan", "show", str(plan), "--out", str(tmp_path / "out"), "--json")
    assert [row["state"] for row in json.loads(out)] == ["done", "new"]


def test_a_full_disk_stops_the_plan_in_one_line_that_says_the_same_command_continues(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    launches: Launches,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.helpers.full_disk import full_disk

    plan = write_plan(tmp_path)
    disk = full_disk(monkeypatch)
    disk.fill(".plan-status.json.", after=2)  # once the first cell is done
    code, err = plan_run(capsys, plan)
    root = tmp_path / "out"
    assert code == 1 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == (  # below the cells' progress lines
        f"error: {root / 'plan-status.json'}: cannot write (No space left on device); the "
        f"done cells are kept in {root}; free space, then the same command continues"
    )
    disk.free()
    code, err = plan_run(capsys, plan)
    assert code == 0, err
    assert {c["status"] for c in json.loads((root / "plan-status.json").read_text())["cells"]} == {
        "done"
    }


@pytest.mark.parametrize("code", ["EDQUOT", "EROFS", "EIO"])
def test_any_refused_write_stops_the_plan_in_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    launches: Launches,
    monkeypatch: pytest.MonkeyPatch,
    code: str,
) -> None:
    """Not only a full disk: a quota, a file system remounted read-only, a failing disk
    (before: EROFS and EIO were an OSError traceback)."""
    import errno
    import os

    from tests.helpers.full_disk import full_disk

    plan = write_plan(tmp_path)
    disk = full_disk(monkeypatch)
    disk.error = getattr(errno, code)
    disk.fill(".plan-status.json.", after=2)
    exit_code, err = plan_run(capsys, plan)
    root = tmp_path / "out"
    assert exit_code in (1, 2) and "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"error: {root / 'plan-status.json'}: cannot write ("), last
    assert os.strerror(disk.error) in last and "the same command continues" in last, last
    disk.free()
    exit_code, err = plan_run(capsys, plan)
    assert exit_code == 0, err


def test_a_cell_log_that_cannot_be_opened_stops_the_plan_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain OSError (the log opened for a cell on a file system gone read-only), not
    io's own: before, a traceback."""
    import errno

    def launch(args: list[str], env: dict[str, str], log: Path) -> int:
        raise OSError(errno.EROFS, "Read-only file system", str(log))

    monkeypatch.setattr(execute, "launch", launch)
    plan = write_plan(tmp_path)
    code, err = plan_run(capsys, plan)
    root = tmp_path / "out"
    assert code == 1 and "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"error: {root / 'logs'}"), last
    assert last.endswith(
        f": cannot write (Read-only file system); the done cells are kept in {root}; fix it, "
        "then the same command continues"
    ), last
