"""Every arm in every table of `run`: in a run of two models and two constraint modes the
task's table, each metric family's table and the performance table show every (model,
mode), each labelled, with that arm's own figures (once only the first model's rows,
unlabelled, and only the first mode)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.report.table import render_summary
from edgebench.runfolder.records import Summary
from edgebench.runner.spec import ModelUnderTest
from tests.helpers.fakes import RIGHT, WRONG, fake_model
from tests.helpers.run_fake import RunFake
from tests.helpers.tables import plain, tables_in

MODELS = ("first-model-q4_k_m", "second-model-q8_0")
MODES = ("none", "mask")
# The first model gets two of three right, the second one: their JSONExact differ.
OUTPUTS = {MODELS[0]: [RIGHT, RIGHT, WRONG], MODELS[1]: [RIGHT, WRONG, WRONG]}
EXACT = {MODELS[0]: "0.667", MODELS[1]: "0.333"}


def two_by_two(run_fake: RunFake) -> Summary:
    def factory(model: ModelUnderTest, mode: str) -> InProcessWorker:
        return InProcessWorker(FakeBackend(list(OUTPUTS[model.label])))

    models = [fake_model(label) for label in MODELS]
    return run_fake(
        models=models, constraints=MODES, factory=factory, metrics=("structure",)
    ).summary


def column(table: Table, header: str) -> list[str]:
    (found,) = [c for c in table.columns if plain(c.header) == header]
    return [plain(cell) for cell in found._cells]


def arm_rows(table: Table) -> dict[tuple[str, str], list[int]]:
    """(model, mode) -> the table's rows of that arm (its labels are on its first row)."""
    rows: dict[tuple[str, str], list[int]] = {}
    arm: tuple[str, str] = ("", "")
    for index, (model, mode) in enumerate(
        zip(column(table, "model"), column(table, "constraint"), strict=True)
    ):
        if model or mode:
            arm = (model, mode)
        rows.setdefault(arm, []).append(index)
    return rows


def overall(table: Table, header: str) -> dict[tuple[str, str], str]:
    """Each arm's value of `header` on its overall row."""
    groups = [plain(cell) for cell in table.columns[2]._cells]  # after model and constraint
    values = column(table, header)
    return {
        arm: next(values[i] for i in rows if groups[i] == "overall")
        for arm, rows in arm_rows(table).items()
    }


def every_arm() -> list[tuple[str, str]]:
    return [(model, mode) for model in MODELS for mode in MODES]


def titled(tables: list[Table], start: str) -> Table:
    return next(t for t in tables if plain(t.title or "").startswith(start))


def test_task_and_family_tables_show_every_model_and_mode(run_fake: RunFake) -> None:
    summary = two_by_two(run_fake)
    tables = tables_in(render_summary(summary))
    accuracy = tables[0]
    assert list(arm_rows(accuracy)) == every_arm()
    exact = overall(accuracy, "JSONExact")
    assert exact == {(model, mode): EXACT[model] for model, mode in every_arm()}
    family = titled(tables, "metric family structure")
    assert list(arm_rows(family)) == every_arm()
    # Each arm's own figure: the family's overall CSA of that arm in summary.json.
    csa = overall(family, "CSA")
    for arm in summary.arms:
        assert csa[arm.model, arm.constraint] == f"{arm.families['structure'].overall['csa']:.3f}"


def test_performance_table_labels_each_arm(run_fake: RunFake) -> None:
    tables = tables_in(render_summary(two_by_two(run_fake)))
    perf = titled(tables, "performance")
    rows = arm_rows(perf)
    assert list(rows) == every_arm()
    assert all(len(r) == 4 for r in rows.values())  # TTFT, latency, prefill, decode


def test_one_arm_keeps_its_labels_in_the_title(run_fake: RunFake) -> None:
    summary = run_fake([RIGHT, WRONG, RIGHT]).summary
    accuracy = tables_in(render_summary(summary))[0]
    assert "fake-model" in plain(accuracy.title) and "constraint none" in plain(accuracy.title)
    assert [plain(c.header) for c in accuracy.columns][:3] == ["complexity", "n", "skipped"]


def test_totals_line_per_arm(run_fake: RunFake) -> None:
    console = Console(width=300, record=True)
    console.print(render_summary(two_by_two(run_fake)))
    text = console.export_text()
    for model, mode in every_arm():
        assert f"{model} · {mode}: load" in text
