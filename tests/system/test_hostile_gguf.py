"""Model files from strangers, on the native side: a header fuzz never takes the parent
process down (each file ends in a rejection by the pure-Python reader or a reported
worker outcome), and a file that really crashes llama.cpp is reported, not inherited.
Real worker processes and llama.cpp; skipped without llama_cpp."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from edgebench.cli.app import main
from edgebench.models.gguf import read_gguf
from tests.helpers.cli import assert_one_line_error, run_one_row
from tests.helpers.gguf_factory import isolate, tiny_llama_gguf

INTERESTING = (0, 1, 0x7F, 0xFF, 0xFFFF, 2**31 - 1, 2**32 - 1, 2**32, 2**63 - 1, 2**64 - 1)


def mutate(data: bytes, header_end: int, rng: random.Random) -> bytes:
    """One random change inside the header: a byte, or a boundary value over 4 or 8 bytes."""
    out = bytearray(data)
    at = rng.randrange(header_end)
    if rng.random() < 0.5:
        out[at] = rng.randrange(256)
    else:
        width = rng.choice((4, 8))
        value = rng.choice(INTERESTING) % (1 << (8 * width))
        out[at : at + width] = value.to_bytes(width, "little")[: len(out) - at]
    return bytes(out)


def test_fuzzed_headers_end_in_a_rejection_or_a_reported_worker_outcome(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    from edgebench.doctor.model_check import CRASHED, OK, REFUSED, REJECTED, TIMEOUT, check_models

    original = tiny_llama_gguf()
    base = tmp_path / "tiny.gguf"
    base.write_bytes(original)
    # The base model itself loads and decodes.
    assert check_models([base])[0].verdict == OK
    parsed = read_gguf(base)
    tensor_bytes = sum(4 * t.n_elements for t in parsed.tensors)
    header_end = len(original) - tensor_bytes
    rng = random.Random(8)
    paths = []
    for i in range(500):
        path = tmp_path / f"m{i:03d}.gguf"
        path.write_bytes(mutate(original, header_end, rng))
        paths.append(path)
    results = check_models(paths, timeout=30)
    verdicts = [r.verdict for r in results]
    assert set(verdicts) <= {OK, REJECTED, REFUSED, CRASHED, TIMEOUT}
    assert all(r.detail and "\n" not in r.detail for r in results if r.verdict != OK)
    assert verdicts.count(REJECTED) > 100  # many broken headers never reach native code
    counts = {v: verdicts.count(v) for v in (OK, REJECTED, REFUSED, CRASHED, TIMEOUT)}
    print(f"fuzz outcomes over 500 mutated headers: {counts}")


def test_a_file_that_crashes_llama_cpp_is_reported_not_inherited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real native crash: SPM without byte tokens makes llama.cpp abort on "Hello"."""
    pytest.importorskip("llama_cpp")
    isolate(monkeypatch, tmp_path)
    from edgebench.doctor.model_check import CRASHED, check_models

    path = tmp_path / "no-bytes.gguf"
    path.write_bytes(tiny_llama_gguf(byte_tokens=False))
    (result,) = check_models([path])
    assert result.verdict == CRASHED
    assert result.detail.startswith("llama.cpp crashed: the worker was killed by SIGABRT")
    # A run on it: the worker dies counting the prompt tokens. Not the user's mistake: a
    # run failure (exit 1) in one line naming the run folder, no traceback.
    code, err, out = run_one_row(capsys, tmp_path, path, "Hello")
    assert_one_line_error(
        code,
        err,
        "was killed by SIGABRT (Aborted) during count_tokens (no-bytes)",
        f"run folder {out}",
        exit_code=1,
    )
    assert '"status": "crashed"' in (out / "manifest.json").read_text()


def test_models_check_loads_each_file_in_a_worker_and_reports_the_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("llama_cpp")
    good = tmp_path / "tiny.gguf"
    good.write_bytes(tiny_llama_gguf())
    crashing = tmp_path / "no-bytes.gguf"
    crashing.write_bytes(tiny_llama_gguf(byte_tokens=False))
    with pytest.raises(SystemExit) as exit_info:
        main(["models", "check", "--json", str(good), str(crashing), str(good)])
    assert exit_info.value.code == 1  # not every file is ok
    verdicts = json.loads(capsys.readouterr().out)
    assert [v["verdict"] for v in verdicts] == ["ok", "crashed", "ok"]  # a fresh worker after
    assert verdicts[0]["detail"].startswith("loads and decodes")
    assert "SIGABRT" in verdicts[1]["detail"]
