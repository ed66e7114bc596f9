"""SmolLM2's OpenVINO int4 folder for the real-model tests: converted from the cached GGUF,
offline, into a model cache of the test's own (about 1 minute on 2 cores)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.needs import unavailable


def convert_int4(smollm2: Path, cache: Path) -> Path:
    """The int4 folder converted into the model cache under `cache` (the GGUF linked in);
    skipped, or failed in CI, without the convert extras."""
    from edgebench.errors import UserError
    from edgebench.models.openvino_convert import check_openvino_extras, convert

    try:
        check_openvino_extras()
    except UserError as exc:
        unavailable(str(exc))
    (cache / "models").mkdir(parents=True, exist_ok=True)
    (cache / "models" / smollm2.name).symlink_to(smollm2)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EDGEBENCH_CACHE", str(cache))
        return convert("smollm2-135m-instruct", "int4", threads=2, say=lambda _: None).folder
