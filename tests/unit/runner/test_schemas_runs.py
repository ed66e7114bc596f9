"""JSONSchemaBench runs with the fake backend on a folder laid out like the release: two
subsets, a schema the engine refuses, one whose compile kills the worker and one whose
compile raises; coverage and compliance per subset in summary.json and the tables, the
fixed budget for unlabelled examples, and `edgebench score` on the stored outputs."""

from __future__ import annotations

import json
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.constraints import CompileReport, ConstraintRequest
from edgebench.io import read_jsonl
from edgebench.isolation import WorkerDied, WorkerError
from edgebench.report.card import render_card
from edgebench.report.compare import compare_rows
from edgebench.report.coverage import coverage_rows
from edgebench.report.html import render_report
from edgebench.report.table import render_summary
from edgebench.rescore import rescore
from edgebench.runfolder.records import RunSettings
from edgebench.runner.budget import UNLABELLED_BUDGET
from edgebench.runner.prepare import load_examples
from edgebench.summary import load_run
from edgebench.tasks.schemas import SchemasTask
from tests.helpers.cli import run_cli
from tests.helpers.cli_model import use_fake_model
from tests.helpers.run_fake import RunFake
from tests.helpers.run_folder import manifest_of

PERSON = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
COUNT = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}
# subset/name -> schema; every file's content differs, so each compiles on its own
SCHEMAS: dict[str, dict[str, Any]] = {
    "Github_easy/person": PERSON,
    "Github_easy/count": COUNT,
    "Github_easy/refused": {**PERSON, "title": "refused"},
    "Kubernetes/pod": {**PERSON, "title": "pod"},
    "Kubernetes/killer": {**PERSON, "title": "killer"},
    "Kubernetes/raiser": {**PERSON, "title": "raiser"},
}


class CompileTrouble(InProcessWorker):
    """The fake in this process, whose compile of `killer` fails as a worker that died
    does, and of `raiser` as an engine exception does (a WorkerError)."""

    def compile_constraint(
        self, request: ConstraintRequest, timeout: float | None = None
    ) -> CompileReport:
        if request.label.endswith("killer"):
            raise WorkerDied(-signal.SIGSEGV, "compile_constraint")
        if request.label.endswith("raiser"):
            raise WorkerError("KeyError", "'#/definitions/n'", "")
        return super().compile_constraint(request, timeout)


@pytest.fixture
def release(tmp_path: Path) -> Path:
    """A repository root with data/<Subset>/<name>.json, as published on GitHub."""
    for name, schema in SCHEMAS.items():
        path = tmp_path / "jsonschemabench" / "data" / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(schema))
    return tmp_path / "jsonschemabench"


def schemas_run(run_fake: RunFake, release: Path, outputs: list[str], **settings: Any) -> Any:
    task = SchemasTask()
    run_settings = RunSettings(task="schemas", dataset=release)
    examples, record = load_examples(task, run_settings)
    backend = FakeBackend(outputs, unsupported={"Github_easy/refused": "no title support"})
    return run_fake(
        backend,
        task_impl=task,
        examples=examples,
        dataset_record=record,
        factory=lambda model, mode: CompileTrouble(backend),
        task="schemas",
        dataset=release,
        **settings,
    )


SUBSETS = ("Github_easy", "Kubernetes")

# Run order is the folder's: count, person, refused | killer, pod, raiser.
OUTPUTS = ['{"n": -1}', '{"name": "Ada"}', '{"name": "Pod-1"}']


def test_coverage_and_compliance_per_subset(run_fake: RunFake, release: Path) -> None:
    result = schemas_run(run_fake, release, OUTPUTS, constraints=("gbnf",))
    arm = result.summary.arm("fake-model", "gbnf")
    assert arm.status == "completed"
    coverage = arm.coverage
    easy, kube = coverage.groups["subset"]["Github_easy"], coverage.groups["subset"]["Kubernetes"]
    assert (easy.n, easy.compiled, easy.refused, easy.crashed) == (3, 2, 1, 0)
    assert easy.refusals == {"no title support": 1}
    assert (kube.n, kube.compiled, kube.refused, kube.crashed) == (3, 1, 0, 2)
    assert easy.compile_s.n == 2 and easy.compile_s.p50 == pytest.approx(0.005)
    # count's answer breaks its minimum: 1 of 2 compiled answers complies
    assert easy.compliant_when_compiled == 0.5 and kube.compliant_when_compiled == 1.0
    assert (coverage.overall.compiled, coverage.overall.refused, coverage.overall.crashed) == (
        3,
        1,
        2,
    )
    # The family's figures are over every row: a refused or crashed schema scores 0.
    task = arm.groups["subset"]
    assert task["Github_easy"]["schema_compliance"] == pytest.approx(1 / 3)
    assert task["Kubernetes"]["schema_compliance"] == pytest.approx(1 / 3)
    assert set(arm.metrics) == {"n", "schema_compliance", "valid_json"}


def test_samples_say_how_their_schema_compiled(run_fake: RunFake, release: Path) -> None:
    result = schemas_run(run_fake, release, OUTPUTS, constraints=("none", "gbnf"))
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    outcome = {(s["constraint"], s["id"]): s["compile_outcome"] for s in samples}
    assert {v for (mode, _), v in outcome.items() if mode == "none"} == {None}
    assert outcome["gbnf", "Kubernetes/killer"] == "crashed"
    assert outcome["gbnf", "Kubernetes/raiser"] == "crashed"
    assert outcome["gbnf", "Github_easy/refused"] == "refused"
    raiser = next(s for s in samples if (s["constraint"], s["id"]) == ("gbnf", "Kubernetes/raiser"))
    assert raiser["finish_reason"] == "unsupported"
    assert "compiling it raised KeyError" in raiser["error"]
    assert result.summary.arm("fake-model", "none").coverage is None


def test_unlabelled_examples_get_the_fixed_budget(run_fake: RunFake, release: Path) -> None:
    result = schemas_run(run_fake, release, OUTPUTS, constraints=("gbnf",))
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    decoding = manifest["models"][0]["plan"]["decoding"]
    assert decoding["max_tokens"] == UNLABELLED_BUDGET == 500
    assert decoding["max_tokens_rule"].startswith("fixed 500: no example has an expected answer")
    assert manifest["task"]["name"] == "schemas"
    assert manifest["dataset"]["sha256"]  # a folder of schemas hashes like a dataset file


def test_tables_show_coverage_per_subset(run_fake: RunFake, release: Path) -> None:
    result = schemas_run(run_fake, release, OUTPUTS, constraints=("none", "gbnf"))
    rows = coverage_rows([result.summary])
    assert [(r["constraint"], r["group"]) for r in rows] == [
        ("gbnf", "Github_easy"),
        ("gbnf", "Kubernetes"),
        ("gbnf", "overall"),
    ]
    assert rows[1]["crashed"] == 2 and rows[0]["refusals"] == {"no title support": 1}
    console = Console(width=220, record=True)
    console.print(render_summary(result.summary))
    text = console.export_text()
    assert "schema engine coverage" in text and "Kubernetes" in text
    compared = {r["constraint"]: r for r in compare_rows([result.summary])}
    assert compared["gbnf"]["refused"] == 1 and compared["gbnf"]["crashed"] == 2
    assert "json_exact" not in compared["gbnf"]


def test_card_and_report_show_coverage_per_subset(run_fake: RunFake, release: Path) -> None:
    result = schemas_run(run_fake, release, OUTPUTS, constraints=("none", "gbnf"))
    run = load_run(result.run_dir)
    card = render_card(run, None, [], examples=0)
    section = card.split("### Schema engine coverage", 1)[1]
    assert "| gbnf | Kubernetes | 3 | 1 | 0 | 2 |" in section
    page = render_report([run])
    assert "group · schema engine coverage" in page and 'data-key="coverage:crashed"' in page


def test_score_again_reproduces_the_summary(run_fake: RunFake, release: Path) -> None:
    result = schemas_run(run_fake, release, OUTPUTS, constraints=("gbnf",))
    before = (result.run_dir / "summary.json").read_text()
    rescore(result.run_dir)
    assert (result.run_dir / "summary.json").read_text() == before


def test_sample_stratified_by_subset_through_the_cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The issue's command on a release-shaped folder: `--sample 4 --stratify subset` takes
    2 schemas of each subset, and coverage and compliance come per subset."""
    root = tmp_path / "jsonschemabench"
    for subset in ("Github_easy", "Kubernetes"):
        for index in range(5):
            path = root / "data" / subset / f"o{index}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({**PERSON, "title": f"{subset}-{index}"}))
    use_fake_model(
        monkeypatch,
        lambda model, mode: InProcessWorker(FakeBackend(default_output='{"name": "A"}')),
    )
    out = tmp_path / "run"
    code, err = run_cli(
        capsys,
        *("run", "--task", "schemas", "--dataset", str(root), "--out", str(out)),
        *("--constraint", "gbnf,mask", "--sample", "4", "--stratify", "subset"),
    )
    assert code == 0, err
    samples = read_jsonl(out / "samples.jsonl")
    picked = Counter((s["constraint"], s["groups"]["subset"]) for s in samples)
    assert picked == {(mode, subset): 2 for mode in ("gbnf", "mask") for subset in SUBSETS}
    summary = json.loads((out / "summary.json").read_text())
    for arm in summary["arms"]:
        by_subset = arm["coverage"]["groups"]["subset"]
        assert {name: row["compiled"] for name, row in by_subset.items()} == dict.fromkeys(
            SUBSETS, 2
        )
        by_family = arm["families"]["schemas"]["groups"]["subset"]
        assert by_family["Kubernetes"]["schema_compliance"] == 1.0
    assert manifest_of(out)["dataset"]["sample"]["stratify"] == "subset"
