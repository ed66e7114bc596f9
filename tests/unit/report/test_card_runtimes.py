"""The card of one model in a run of two runtimes (`--model tiny,tiny@openvino-int4`):
its full record shows the model's own runtime and engines first; the device block's
build, which is the runtime that loaded first (llama.cpp's), is labelled as that build
on this device, never listed as the OpenVINO model's runtime; the HTML report's run view
gives the OpenVINO model its own runtime block."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from edgebench.analysis.rundata import arms
from edgebench.backends.base import LoadInfo
from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.report.card import write_card
from edgebench.report.facts import device_rows, machine_rows, runtime_rows
from edgebench.report.html import run_view
from edgebench.summary import load_run
from tests.helpers.fakes import RIGHT, WRONG, fake_model
from tests.helpers.run_fake import RunFake

LLAMA_BUILD = {"name": "llama.cpp", "llama_cpp_python": "0.3.16", "system_info": "AVX2 = 1"}
OPENVINO_BUILD = {"openvino": "2026.4.1", "full_device_name": "AMD EPYC"}
RUNTIMES = {
    "llama": {**LLAMA_BUILD, "n_batch": 512, "build": LLAMA_BUILD},
    "openvino": {
        "name": "OpenVINO GenAI",
        "openvino_genai": "2026.4.1.0",
        "xgrammar": "0.1.25",
        "inference_num_threads": 2,
        "build": OPENVINO_BUILD,
    },
}
OPENVINO = "tiny@openvino-int4"


class RuntimeFake(FakeBackend):
    """The fake backend reporting a real runtime's block at load."""

    def __init__(self, runtime: dict[str, Any]) -> None:
        super().__init__([RIGHT, WRONG])
        self.runtime = runtime

    def load(self, n_ctx: int) -> LoadInfo:
        super().load(n_ctx)
        return LoadInfo(n_ctx=n_ctx, runtime=self.runtime)


def factory(model: Any, mode: str) -> InProcessWorker:
    """Each model's worker reports its runtime's block."""
    return InProcessWorker(RuntimeFake(RUNTIMES[model.backend]))


@pytest.fixture
def run_dir(run_fake: RunFake) -> Path:
    """llama.cpp's model first (its build becomes the device block's), then OpenVINO's."""

    models = [fake_model("tiny", backend="llama"), fake_model(OPENVINO, backend="openvino")]
    return run_fake(constraints=("none", "json"), factory=factory, models=models, n=2).run_dir


def card_block(text: str, heading: str) -> dict[str, str]:
    """A table of the card's full record (`#### Runtime`), label -> value, unescaped."""
    block = text.split(f"\n{heading}\n", 1)[1].split("\n####", 1)[0]
    rows = re.findall(r"^\| (.*?) \| (.*?) \|$", block, flags=re.M)
    return {k.replace("\\", ""): v.replace("\\", "").strip() for k, v in rows[2:]}


def test_the_openvino_models_card_shows_its_runtime_first(run_dir: Path, tmp_path: Path) -> None:
    run = load_run(run_dir)
    assert run.manifest.device.runtime == LLAMA_BUILD  # llama.cpp loaded first
    text = write_card(run, tmp_path / "card.md", model=OPENVINO, examples=0).card.read_text()
    record = text.split("Full record", 1)[1]
    assert record.index("#### Runtime") < record.index("#### Device")
    runtime = card_block(record, "#### Runtime")
    assert runtime["runtime.name"] == "OpenVINO GenAI"
    assert runtime["runtime.openvino_genai"] == "2026.4.1.0"
    assert runtime["runtime.openvino"] == "2026.4.1"  # its own build
    assert runtime["engine · none"] == "-" and runtime["engine · json"] == "XGrammar 0.1.25"
    assert not any("llama" in key or "llama" in value for key, value in runtime.items())
    device = card_block(record, "#### Device")
    assert not any(key.startswith("runtime.") for key in device)
    assert device["llama.cpp build on this device · llama_cpp_python"] == "0.3.16"
    assert device["llama.cpp build on this device · system_info"] == "AVX2 = 1"


def test_the_llama_models_card_shows_the_device_build_as_its_own(run_dir: Path) -> None:
    run = load_run(run_dir)
    rows = dict(runtime_rows(run, "tiny"))
    assert rows["runtime.name"] == "llama.cpp" and rows["runtime.n_batch"] == 512
    assert rows["runtime.system_info"] == "AVX2 = 1"
    names = [name for name, _ in device_rows(run, "tiny")]
    assert names.count("runtime.name") == 1
    assert not any("build on this device" in name for name in names)
    assert not any(name.startswith("runtime.") for name, _ in machine_rows(run, "tiny"))


def test_a_run_whose_openvino_model_loaded_first_names_its_build(run_fake: RunFake) -> None:
    models = [fake_model(OPENVINO, backend="openvino"), fake_model("tiny", backend="llama")]
    run = load_run(run_fake(constraints=("none",), factory=factory, models=models, n=1).run_dir)
    rows = dict(machine_rows(run, "tiny"))
    assert rows["OpenVINO GenAI build on this device · openvino"] == "2026.4.1"
    assert dict(runtime_rows(run, "tiny"))["runtime.llama_cpp_python"] == "0.3.16"


def test_the_reports_run_view_gives_the_openvino_model_its_runtime(run_dir: Path) -> None:
    run = load_run(run_dir)
    view = run_view(run, "run", arms(run))
    blocks = {block["title"]: dict(block["rows"]) for block in view["blocks"]}
    assert blocks["Runtime and device"]["runtime.name"] == "llama.cpp"
    assert blocks[f"Runtime · {OPENVINO}"]["runtime.name"] == "OpenVINO GenAI"
    assert "Runtime · tiny" not in blocks
