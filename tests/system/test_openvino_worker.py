"""The openvino backend in a real worker process on the fake `openvino_genai`
(tests/helpers/openvino_fakes.py): a pipeline whose native code dies costs that request,
reported as a SIGSEGV, and a fresh worker answers again."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.backends.base import DecodeSettings
from edgebench.backends.worker import BackendWorker
from edgebench.isolation import WorkerDied
from tests.helpers.openvino_fakes import fake_packages

PROMPT = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_a_crash_in_the_pipeline_costs_one_request_and_a_fresh_worker_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The spawned worker inherits sys.path: it imports the fakes as openvino_genai.
    monkeypatch.syspath_prepend(str(fake_packages(tmp_path / "fakes", crash_marker="CRASH")))
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    options = {"model_path": str(model), "n_threads": 1, "constraint_mode": "none"}
    worker = BackendWorker("openvino", options)
    try:
        worker.load(256)
        assert worker.generate(PROMPT, DecodeSettings(max_tokens=16)).text == '{"a": 1}'
        with pytest.raises(WorkerDied, match="SIGSEGV"):
            worker.generate("CRASH " + PROMPT, DecodeSettings(max_tokens=16))
    finally:
        worker.close()
    fresh = BackendWorker("openvino", options)
    try:
        fresh.load(256)
        gen = fresh.generate(PROMPT, DecodeSettings(max_tokens=16))
        assert gen.text == '{"a": 1}' and gen.finish_reason == "stop"
    finally:
        fresh.close()
