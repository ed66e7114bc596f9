"""doctor's section per optional runtime (doctor/runtime_facts.py): the install line
when its package is missing (nothing imported), its versions and CPU plugin from a fake
`openvino`, and a call that fails as one line."""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib import metadata

import pytest

from edgebench.doctor import runtime_facts as rf
from edgebench.errors import UserError
from edgebench.failures import WorkerDied, WorkerTimeout
from edgebench.runtimes import OPENVINO, RUNTIMES
from tests.helpers import openvino_fakes as fakes


def missing(package: str) -> str:
    raise metadata.PackageNotFoundError(package)


def in_process(function: Callable[[], dict[str, str]]) -> dict[str, str]:
    return function()


def test_only_runtimes_that_declare_facts_get_a_section() -> None:
    declared = [r.name for r in RUNTIMES.values() if r.doctor_facts is not None]
    sections = rf.runtime_facts(call=lambda function: {"version": "x"})
    assert [s.runtime for s in sections] == declared == [OPENVINO.name]


def test_a_runtime_not_installed_is_its_install_line_and_nothing_is_imported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rf.metadata, "version", missing)
    monkeypatch.delitem(sys.modules, "openvino_genai", raising=False)

    def never(function: Callable[[], dict[str, str]]) -> dict[str, str]:
        raise AssertionError("asked a runtime that is not installed")

    facts = rf.facts_of(OPENVINO, call=never)
    assert not facts.installed
    assert facts.rows == {"not installed": "pip install 'edgebench[openvino]'"}
    assert "openvino_genai" not in sys.modules
    assert facts.to_dict()["installed"] is False


def test_an_installed_runtime_shows_its_versions_and_cpu_plugin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fakes.install(monkeypatch)
    monkeypatch.setattr(rf.metadata, "version", lambda package: "2026.4.1")
    facts = rf.facts_of(OPENVINO, call=in_process)
    assert facts.installed and facts.label == "OpenVINO GenAI"
    assert facts.rows == {
        "version": "openvino-genai 2026.4.1.0-fake, OpenVINO 2026.4.1-fake",
        "CPU plugin": "Fake CPU",
        "capabilities": "FP32 INT8",
    }


def test_a_plugin_that_answers_nothing_is_not_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    fakes.install(monkeypatch)

    def refuse(self: object, device: str, name: str) -> object:
        raise RuntimeError("no such property")

    monkeypatch.setattr(fakes.Core, "get_property", refuse)
    monkeypatch.setattr(rf.metadata, "version", lambda package: "2026.4.1")
    rows = rf.facts_of(OPENVINO, call=in_process).rows
    assert rows["CPU plugin"] == rows["capabilities"] == "not reported"


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (UserError("the openvino backend needs openvino-genai"), "the openvino backend needs"),
        (WorkerDied(-11, "the call"), "loading OpenVINO GenAI"),
        (WorkerTimeout("the call", 60), "loading OpenVINO GenAI failed: the model worker"),
    ],
)
def test_a_failed_call_is_one_error_line(
    monkeypatch: pytest.MonkeyPatch, error: Exception, line: str
) -> None:
    monkeypatch.setattr(rf.metadata, "version", lambda package: "2026.4.1")

    def fail(function: Callable[[], dict[str, str]]) -> dict[str, str]:
        raise error

    facts = rf.facts_of(OPENVINO, call=fail)
    assert list(facts.rows) == ["error"]
    assert line in facts.rows["error"] and "\n" not in facts.rows["error"]
