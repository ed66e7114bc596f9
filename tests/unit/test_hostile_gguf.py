"""Model files from strangers: broken headers are refused in pure Python, fast, before any
native code runs; a header fuzz never takes the parent process down."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from gguf_factory import (
    build_gguf,
    gguf_string,
    header,
    isolate,
    kv,
    sample_metadata,
    tensor_info,
    tiny_llama_gguf,
    u32,
    u64,
    write_gguf,
)

from edgebench.cli.app import main
from edgebench.errors import UserError
from edgebench.models.gguf import kv_cache_bytes_per_token, read_gguf
from edgebench.runner.prepare import model_under_test


def hostile_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """name -> (file, what the error says)"""
    good = build_gguf(sample_metadata())
    files = {
        "zero-byte": (b"", "not a GGUF file"),
        "wrong magic": (b"GGML" + good[4:], "not a GGUF file"),
        "version 99": (b"GGUF" + u32(99) + good[8:], "GGUF version 99 is not supported"),
        "tensor count overflow": (
            header(n_tensors=2**63, n_kv=0),
            "tensor count 9223372036854775808 is impossible",
        ),
        "key/value count overflow": (
            header(n_tensors=0, n_kv=2**40),
            "key/value count 1099511627776 is impossible",
        ),
        "string longer than the file": (
            header(0, 1) + u64(2**62) + b"general.name",
            "string length 4611686018427387904 is impossible",
        ),
        "array longer than the file": (
            header(0, 1) + gguf_string("a") + u32(9) + u32(4) + u64(2**40),
            "array length 1099511627776 is impossible",
        ),
    }
    out = {}
    for name, (data, message) in files.items():
        path = tmp_path / (name.replace(" ", "_").replace("/", "_") + ".gguf")
        path.write_bytes(data)
        out[name] = (path, message)
    return out


@pytest.mark.parametrize(
    "name",
    [
        "zero-byte",
        "wrong magic",
        "version 99",
        "tensor count overflow",
        "key/value count overflow",
        "string longer than the file",
        "array longer than the file",
    ],
)
def test_broken_header_is_refused_in_under_a_second_without_native_code(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import edgebench.runner.run as run_module

    def no_worker(*args: object, **kwargs: object) -> None:
        raise AssertionError("a worker (native code) was started for a broken model file")

    monkeypatch.setattr(run_module, "BackendWorker", no_worker)
    isolate(monkeypatch, tmp_path)
    path, message = hostile_files(tmp_path)[name]
    (tmp_path / "schemas" / "simple").mkdir(parents=True)
    (tmp_path / "schemas" / "simple" / "s.json").write_text('{"type": "object"}')
    row = '{"id": "r1", "schema_id": "s", "prompt": "p", "expected_output": {}}\n'
    (tmp_path / "data.jsonl").write_text(row)
    start = time.perf_counter()
    with pytest.raises(UserError, match=message):
        model_under_test(str(path))
    assert time.perf_counter() - start < 1.0
    # The same through the CLI: one line, exit code 2.
    start = time.perf_counter()
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--model", str(path), "--dataset", str(tmp_path / "data.jsonl")])
    assert time.perf_counter() - start < 1.0
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "Traceback" not in err
    assert message in " ".join(err.split()) and str(path.name) in err


def table_file(tmp_path: Path, tensors: bytes, n_tensors: int, data: bytes) -> Path:
    head = header(n_tensors, 1) + kv("general.architecture", "llama") + tensors
    path = tmp_path / "t.gguf"
    path.write_bytes(head + bytes(-len(head) % 32) + data)
    return path


@pytest.mark.parametrize(
    ("infos", "n", "data", "message"),
    [
        (tensor_info("w", (8,), 0, 0), 1, bytes(16), r"needs bytes .* past the end of the"),
        (tensor_info("w", (8,), 0, 64), 1, bytes(128), "at data offset 64, expected 0"),
        (
            tensor_info("a", (8,), 0, 0) + tensor_info("b", (8,), 0, 0),
            2,
            bytes(64),
            "tensor 'b' at data offset 0, expected 32",
        ),
        (tensor_info("w", (8,), 4, 0), 1, bytes(64), "tensor type 4 is no longer supported"),
        (tensor_info("w", (33,), 2, 0), 1, bytes(64), "not a multiple of the block size 32"),
        (tensor_info("x" * 64, (8,), 0, 0), 1, bytes(64), "tensor name of 64 characters"),
        (
            tensor_info("w", (8,), 0, 0) + tensor_info("w", (8,), 0, 32),
            2,
            bytes(64),
            "duplicate tensor name 'w'",
        ),
        (tensor_info("w", (2**63, 1), 0, 0), 1, bytes(64), "overflows"),
    ],
)
def test_tensor_table_is_held_to_llama_cpp_rules(
    tmp_path: Path, infos: bytes, n: int, data: bytes, message: str
) -> None:
    with pytest.raises(UserError, match=message):
        read_gguf(table_file(tmp_path, infos, n, data))


def test_a_well_formed_tensor_table_passes(tmp_path: Path) -> None:
    infos = tensor_info("a", (8,), 0, 0) + tensor_info("b", (32,), 8, 32)  # F32, Q8_0
    gguf = read_gguf(table_file(tmp_path, infos, 2, bytes(32 + 64)))
    assert [t.name for t in gguf.tensors] == ["a", "b"]


def test_kv_cache_estimate_from_metadata() -> None:
    meta = {
        "general.architecture": "llama",
        "llama.block_count": 30,
        "llama.embedding_length": 576,
        "llama.attention.head_count": 9,
        "llama.attention.head_count_kv": 3,
    }
    assert kv_cache_bytes_per_token(meta) == 30 * 3 * (64 + 64) * 2  # SmolLM2-135M
    per_layer = {**meta, "llama.block_count": 2, "llama.attention.head_count_kv": [3, 1]}
    assert kv_cache_bytes_per_token(per_layer) == (3 + 1) * 128 * 2
    keyed = {**meta, "llama.attention.key_length": 256, "llama.attention.value_length": 256}
    assert kv_cache_bytes_per_token(keyed) == 30 * 3 * 512 * 2
    assert kv_cache_bytes_per_token({"general.architecture": "llama"}) is None
    assert kv_cache_bytes_per_token({**meta, "llama.attention.head_count": 0}) is None


def test_memory_estimate_of_a_file_with_absurd_metadata_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate(monkeypatch, tmp_path)
    meta = sample_metadata() | {"llama.block_count": 2**31, "llama.attention.head_count": 1}
    model = model_under_test(str(write_gguf(tmp_path / "m.gguf", meta)))
    # 2**31 layers x 1 head x (4 + 4) x 2 bytes: 32 GiB per token of context
    assert model.kv_bytes_per_token == 2**31 * 16


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
    from edgebench.models.check import CRASHED, OK, REFUSED, REJECTED, TIMEOUT, check_models

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
    from edgebench.models.check import CRASHED, check_models

    path = tmp_path / "no-bytes.gguf"
    path.write_bytes(tiny_llama_gguf(byte_tokens=False))
    (result,) = check_models([path])
    assert result.verdict == CRASHED
    assert result.detail.startswith("llama.cpp crashed: the worker was killed by SIGABRT")
    # A run on it: the worker dies counting the prompt tokens; one line, no traceback.
    (tmp_path / "schemas" / "simple").mkdir(parents=True)
    (tmp_path / "schemas" / "simple" / "s.json").write_text('{"type": "object"}')
    row = '{"id": "r1", "schema_id": "s", "prompt": "Hello", "expected_output": {}}\n'
    (tmp_path / "data.jsonl").write_text(row)
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "run",
                "--model",
                str(path),
                "--dataset",
                str(tmp_path / "data.jsonl"),
                "--out",
                str(out),
            ]
        )
    err = " ".join(capsys.readouterr().err.split())
    assert exit_info.value.code == 2 and "Traceback" not in err
    assert "was killed by SIGABRT (Aborted) during count_tokens (no-bytes)" in err
    assert '"status": "crashed"' in (out / "manifest.json").read_text()
