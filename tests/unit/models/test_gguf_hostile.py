"""Model files from strangers: a hostile, truncated or damaged file is a one-line error
naming it; a broken header is refused by the pure-Python reader at the header, before any
native code runs; the tensor table is held to llama.cpp's rules; absurd metadata gives a
memory estimate the pre-check refuses.
(The native side, real workers on fuzzed and crashing files: tests/system.)"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.models import gguf
from edgebench.models.gguf import kv_cache_bytes_per_token, read_gguf
from edgebench.runner.preflight import check_memory, estimate_memory
from edgebench.runner.prepare import model_under_test
from tests.helpers.cli import assert_one_line_error, run_one_row
from tests.helpers.gguf_factory import (
    ARRAY,
    UINT64,
    Typed,
    build_gguf,
    gguf_string,
    header,
    isolate,
    kv,
    sample_metadata,
    tensor_info,
    u32,
    u64,
    write_gguf,
)

_GOOD = build_gguf(sample_metadata())
# name -> (the file's bytes, what the error says)
HOSTILE: dict[str, tuple[bytes, str]] = {
    "zero-byte": (b"", "not a GGUF file"),
    "wrong magic": (b"GGML" + _GOOD[4:], "not a GGUF file"),
    "version 99": (b"GGUF" + u32(99) + _GOOD[8:], "GGUF version 99 is not supported"),
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
# After the broken header: a megabyte a reader that trusted the header would walk into.
PADDING = 1 << 20
# The furthest byte any of these headers needs read to be refused (header + one entry).
HEADER_BYTES = 64


def hostile_file(tmp_path: Path, name: str) -> tuple[Path, str]:
    data, message = HOSTILE[name]
    path = tmp_path / (name.replace(" ", "_").replace("/", "_") + ".gguf")
    path.write_bytes(data + bytes(PADDING) if data else data)
    return path, message


@pytest.fixture
def parsers(monkeypatch: pytest.MonkeyPatch) -> list[gguf._Parser]:
    """Every parser `read_gguf` makes. A parser reads only at its cursor `pos`, so the
    cursor where it stopped bounds the bytes it read."""
    made: list[gguf._Parser] = []
    real_init = gguf._Parser.__init__

    def init(self: gguf._Parser, *args: object) -> None:
        real_init(self, *args)  # type: ignore[arg-type]
        made.append(self)

    monkeypatch.setattr(gguf._Parser, "__init__", init)
    return made


@pytest.mark.parametrize("name", list(HOSTILE))
def test_broken_header_is_refused_at_the_header(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch, parsers: list[gguf._Parser]
) -> None:
    isolate(monkeypatch, tmp_path)
    path, message = hostile_file(tmp_path, name)
    with pytest.raises(UserError, match=message) as info:
        model_under_test(str(path))
    assert "\n" not in str(info.value) and str(path) in str(info.value)
    # Refused from the header alone: no parser read past its first bytes into the
    # megabyte behind it (and the empty file is refused before one is made).
    assert all(parser.pos <= HEADER_BYTES for parser in parsers)
    if name != "zero-byte":
        assert parsers


@pytest.mark.parametrize("name", list(HOSTILE))
def test_run_on_a_broken_header_is_one_line_and_starts_no_worker(
    tmp_path: Path,
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    workers_started: list[object],
) -> None:
    isolate(monkeypatch, tmp_path)
    path, message = hostile_file(tmp_path, name)
    code, err, out = run_one_row(capsys, tmp_path, path, "p")
    assert_one_line_error(code, err, message, path.name)
    assert workers_started == []
    assert not out.exists()  # refused before a run folder was made


# --- hostile and corrupt files: always a UserError naming the file ----------------------

HUGE = 2**63


def _tail(*parts: bytes) -> bytes:
    return b"".join(parts) + bytes(64)  # some slack so only the field under test is wrong


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "not a GGUF file"),
        (b"GG", "not a GGUF file"),
        (b"PK\x03\x04" + bytes(60), "not a GGUF file"),
        (b"GGUF\x03\x00", "truncated"),
        (header()[:-3], "truncated"),
        (_tail(header(version=1)), "version 1"),
        (_tail(b"GGUF", (3).to_bytes(4, "big"), u64(0), u64(0)), "big-endian"),
        (_tail(header(n_tensors=HUGE)), "tensor count"),
        (_tail(header(n_kv=2**40)), "key/value count"),
        (_tail(header(n_kv=1000)), "key/value count"),
        (_tail(header(n_kv=1), u64(HUGE), b"key"), "string length"),
        (_tail(header(n_kv=1), gguf_string("k"), u32(8), u64(10**12)), "string length"),
        (header(n_kv=1) + gguf_string("k") + u32(8) + u64(5) + b"ab", "string length"),
        (_tail(header(n_kv=1), gguf_string("k"), u32(77)), "unknown value type 77"),
        (_tail(header(n_kv=1), gguf_string("k"), u32(9), u32(42), u64(1)), "element type 42"),
        (_tail(header(n_kv=1), gguf_string("k"), u32(9), u32(4), u64(HUGE)), "array length"),
        (_tail(header(n_kv=1), gguf_string("k"), u32(9), u32(8), u64(2**30)), "array length"),
        (_tail(header(n_kv=1), gguf_string("k"), u32(9), u32(8), u64(3), u64(HUGE)), "length"),
        (_tail(header(n_kv=2), kv("k", 1), kv("k", 2)), "duplicate key"),
        (_tail(header(n_tensors=1), tensor_info("w", (1, 2, 3, 4, 5))), "5 dimensions"),
        (_tail(header(n_tensors=1), tensor_info("w", (2**40, 2**40))), "overflows"),
        (_tail(header(n_tensors=1), tensor_info("w", (4,), offset=10**9)), "past the end"),
        (_tail(header(n_kv=1), kv("general.alignment", 3)), "alignment"),
        (_tail(header(n_kv=1), kv("general.alignment", "32")), "stored as string"),
        (_tail(header(n_kv=1), kv("general.alignment", Typed(UINT64, 32))), "stored as uint64"),
        (_tail(header(n_kv=1), kv("general.alignment", [32])), "stored as array"),
        (_tail(header(n_tensors=2**16 + 1)), "tensor count 65537 is impossible"),
    ],
)
def test_hostile_files_give_user_errors(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "evil.gguf"
    path.write_bytes(content)
    with pytest.raises(UserError) as info:
        read_gguf(path)
    message = str(info.value)
    assert str(path) in message
    assert problem in message
    assert "\n" not in message


def test_deep_nesting_is_refused(tmp_path: Path) -> None:
    nested: bytes = u32(4) + u64(0)  # innermost: empty array of uint32
    for _ in range(20):
        nested = u32(ARRAY) + u64(1) + nested
    path = tmp_path / "deep.gguf"
    path.write_bytes(_tail(header(n_kv=1), gguf_string("k"), u32(ARRAY), nested))
    with pytest.raises(UserError, match="nested deeper"):
        read_gguf(path)


def test_every_truncation_and_random_damage_is_a_user_error(tmp_path: Path) -> None:
    good = build_gguf(sample_metadata(), [("w", (4, 8))])
    path = tmp_path / "damaged.gguf"
    rng = random.Random(1234)
    variants = [good[:cut] for cut in range(len(good))]
    for _ in range(300):
        damaged = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            damaged[rng.randrange(4, len(damaged))] = rng.randrange(256)
        variants.append(bytes(damaged))
    for content in variants:
        path.write_bytes(content)
        try:
            read_gguf(path)
        except UserError as exc:
            assert str(path) in str(exc)


def test_missing_file_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="cannot read"):
        read_gguf(tmp_path / "absent.gguf")


def test_a_fifo_or_folder_is_refused_without_being_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "model.gguf"
    os.mkfifo(fifo)  # opening it would block until a writer came
    for path in (fifo, tmp_path):
        with pytest.raises(UserError, match="not a regular file"):
            read_gguf(path)


def test_metadata_over_the_memory_cap_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Many short strings, each kept: what they would cost is charged before it is read.
    monkeypatch.setattr(gguf, "MAX_METADATA_MEMORY", 64 << 10)
    meta = {f"general.note_{i}": "x" * 1000 for i in range(100)}
    path = write_gguf(tmp_path / "m.gguf", meta)
    with pytest.raises(UserError) as info:
        read_gguf(path)
    message = str(info.value)
    assert str(path) in message and "\n" not in message
    assert "its metadata needs more than the 0.0625 MiB edgebench keeps" in message
    assert "key 'general.note_" in message


def test_a_huge_chat_template_is_refused_before_it_is_read(
    tmp_path: Path, parsers: list[gguf._Parser]
) -> None:
    template = "x" * (gguf.MAX_METADATA_MEMORY + 1)
    path = write_gguf(tmp_path / "m.gguf", {"tokenizer.chat_template": template})
    with pytest.raises(UserError, match="16 MiB edgebench keeps of a header"):
        read_gguf(path)
    assert parsers[0].window_start + len(parsers[0].window) < 1 << 20  # never read


def test_a_vocabulary_of_end_tokens_is_bounded_by_the_memory_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gguf, "MAX_METADATA_MEMORY", 64 << 10)
    path = write_gguf(tmp_path / "m.gguf", {"tokenizer.ggml.tokens": ["<|im_end|>"] * 5000})
    with pytest.raises(UserError, match="metadata needs more than"):
        read_gguf(path)


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
        (tensor_info("x" * 64, (8,), 0, 0), 1, bytes(64), "tensor name of 64 bytes"),
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
    # ... which the pre-check refuses even on a machine with a terabyte free.
    estimate = estimate_memory(model, 512, available=2**40)
    assert estimate.kv_bytes == 2**31 * 16 * 512 and not estimate.fits
    with pytest.raises(UserError, match="not enough memory for m: it needs about"):
        check_memory(model, estimate)
