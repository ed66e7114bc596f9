"""What `fleet run` stages before any host is touched, for a plan naming ONNX models: with
--push-models their converted folders are pushed, or a missing one is one line and nothing
is written; without, one warning line says that hosts cannot convert them. Either way the
hosts install the onnx extra."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.fleet.drive import stage
from tests.helpers.onnx_fakes import fake_converted

PLAN = 'models = ["smollm2-135m-instruct", "smollm2-135m-instruct@onnx-int4"]\n'


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("EDGEBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def plan_file(folder: Path, text: str = PLAN) -> Path:
    plan = folder / "plan.toml"
    plan.write_text(text)
    return plan


def test_push_models_pushes_the_converted_folder(cache: Path, tmp_path: Path) -> None:
    fake_converted(cache)
    (cache / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"GGUF")
    said: list[str] = []
    variables = stage(plan_file(tmp_path), tmp_path / "out", push_models=True, say=said.append)
    pushed = [name for name, _ in variables["fleet_push_models"]]  # type: ignore[attr-defined]
    assert pushed == [
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        "onnx/smollm2-135m-instruct-int4/edgebench-onnx.json",
        "onnx/smollm2-135m-instruct-int4/model.onnx",
    ]
    assert variables["fleet_pull_models"] == []
    assert variables["fleet_install_extras"] == "onnx"
    assert said == []


def test_an_onnx_model_not_converted_here_stops_before_anything_is_staged(
    cache: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    with pytest.raises(UserError, match=r"edgebench models convert smollm2-135m-instruct --to"):
        stage(
            plan_file(tmp_path, PLAN.replace('"smollm2-135m-instruct", ', "")),
            out,
            push_models=True,
            say=print,
        )
    assert not out.exists()


def test_without_push_models_one_warning_line_names_the_onnx_models(
    cache: Path, tmp_path: Path
) -> None:
    said: list[str] = []
    variables = stage(plan_file(tmp_path), tmp_path / "out", push_models=False, say=said.append)
    (warning,) = said
    assert "\n" not in warning
    assert warning.startswith("warning: hosts do not convert smollm2-135m-instruct@onnx-int4 (")
    assert warning.endswith("--push-models copies them from this machine")
    assert variables["fleet_push_models"] == []
    assert variables["fleet_pull_models"] == ["smollm2-135m-instruct"]
    assert variables["fleet_install_extras"] == "onnx"


def test_a_plan_without_onnx_models_installs_no_extra(cache: Path, tmp_path: Path) -> None:
    plan = plan_file(tmp_path, 'models = ["smollm2-135m-instruct@Q8_0"]\n')
    said: list[str] = []
    variables = stage(plan, tmp_path / "out", push_models=False, say=said.append)
    assert (variables["fleet_install_extras"], said) == ("", [])
