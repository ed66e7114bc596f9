"""The metric-family registry: names, parameters, the task's own family first, and the
families a run records and summarises."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.metrics import (
    family_names,
    get_family,
    parse_metric_params,
    parse_metrics,
    select_families,
)
from edgebench.tasks.edgejson import EdgeJSONTask
from edgebench.tasks.roundtrip import RoundtripTask
from tests.unit.test_cli_run_errors import assert_one_line_error, run_cli
from tests.unit.test_runner import run_fake


def test_every_family_declares_directions_and_parameters() -> None:
    assert family_names() == ["edgejson", "deepjson", "structure", "sted", "sobench"]
    for name in family_names():
        described = get_family(name).describe()
        assert described["higher_is_better"] and all(described["higher_is_better"].values())
        assert set(described) >= {"description", "source", "scores", "parameters"}
    assert get_family("sted").parameters() == {
        "type_coercion_weight": 0.9,
        "size_penalty": 0.1,
        "steepness": 2.0,
        "unparseable_similarity": 0.0,
    }
    assert get_family("sobench").parameters()["fuzzy_string_threshold"] == 0.8


def test_parameters_from_the_command_line_are_converted() -> None:
    params = parse_metric_params(["sted.size_penalty=0.2", "sobench.check_formats=true"])
    assert params == {"sted": {"size_penalty": "0.2"}, "sobench": {"check_formats": "true"}}
    assert get_family("sted", params["sted"]).size_penalty == 0.2
    assert get_family("sobench", params["sobench"]).check_formats is True


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: parse_metrics("structure,stedd"), "did you mean 'sted'"),
        (lambda: get_family("sted", {"lambda": "1"}), "no parameter 'lambda'"),
        (lambda: get_family("sted", {"size_penalty": "much"}), "'much' is not a float"),
        (lambda: get_family("sobench", {"check_formats": "yes"}), "not a bool"),
        (lambda: parse_metric_params(["size_penalty=0.2"]), "FAMILY.NAME=VALUE"),
        (lambda: select_families(EdgeJSONTask(), (), {"sted": {}}), "does not use"),
    ],
)
def test_bad_metric_options_are_clear_errors(call, fragment: str) -> None:
    with pytest.raises(UserError, match=fragment):
        call()


def test_the_task_family_comes_first() -> None:
    names = [f.name for f in select_families(RoundtripTask(), ("sobench", "structure"))]
    assert names == ["structure", "sobench"]
    assert [f.name for f in select_families(EdgeJSONTask(), ())] == ["edgejson"]


def test_a_run_records_and_summarises_its_families(tmp_path: Path) -> None:
    backend = FakeBackend(['{"a":1}', "nope", '{"a":"1"}'])
    result = run_fake(tmp_path, backend, metrics=("structure", "sobench"))
    samples = read_jsonl(result.run_dir / "samples.jsonl")
    assert set(samples[0]["families"]) == {"structure", "sobench"}
    assert samples[1]["families"]["structure"] == {"csa": 0.0, "nted": 0.0, "valid_json": 0}
    families = result.summary["families"]
    assert list(families) == ["edgejson", "structure", "sobench"]
    assert families["edgejson"]["role"] == "task"
    assert families["edgejson"]["overall"] == result.summary["metrics"]
    assert families["structure"]["overall"]["valid_json"] == pytest.approx(2 / 3)
    assert set(families["sobench"]["by_complexity"]) == {"simple", "complex"}


def test_cli_rejects_an_unknown_family(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(capsys, "run", "--metrics", "edgejson,nted")
    assert_one_line_error(code, err, "unknown metric family 'nted'")
    code, err = run_cli(capsys, "run", "--metric-param", "sted.size_penalty=0.3")
    assert_one_line_error(code, err, "does not use")


def test_cards_and_reports_see_the_extra_families(tmp_path: Path) -> None:
    from edgebench.report.rundata import arms, load_run, numeric_metrics

    backend = FakeBackend(['{"a":1}', "nope", '{"a":"1"}'])
    run_dir = run_fake(tmp_path, backend, metrics=("structure",)).run_dir
    (arm,) = arms(load_run(run_dir))
    flat = numeric_metrics(arm.result["metrics"])
    assert flat["structure.valid_json"] == pytest.approx(2 / 3)
    assert "json_exact" in flat and "edgejson.json_exact" not in flat
