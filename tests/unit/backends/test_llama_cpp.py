"""The llama.cpp backend's pure parts (no model): cutting the output at a stop string."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from edgebench.backends.llama_cpp import _cut_at_stop, build_info
from edgebench.system.build_flags import write_stamp


@pytest.mark.parametrize(
    ("text", "start", "expected", "found"),
    [
        (b'{"a": 1}\n```', 0, b'{"a": 1}\n', True),
        (b'{"a": 1}\n``', 0, b'{"a": 1}\n``', False),
        (b"``` earlier ``` later", 10, b"``` earlier ", True),
    ],
)
def test_stop_string_cut(text: bytes, start: int, expected: bytes, found: bool) -> None:
    out = bytearray(text)
    assert _cut_at_stop(out, [b"```"], start) is found
    assert bytes(out) == expected


def fake_llama_cpp(package: Path) -> SimpleNamespace:
    (package / "lib").mkdir(parents=True)
    (package / "lib" / "libggml-cpu.so").write_bytes(b"kernels")
    return SimpleNamespace(
        __file__=str(package / "__init__.py"),
        __version__="0.3.36",
        llama_version=lambda: b"0.5.0-dev",
        llama_print_system_info=lambda: b"CPU : AVX2 = 1 | AVX512 = 1 | ",
    )


def test_the_runtime_build_names_the_flags_install_sh_built_it_with(tmp_path: Path) -> None:
    L = fake_llama_cpp(tmp_path / "llama_cpp")
    write_stamp(tmp_path / "llama_cpp", "-DGGML_NATIVE=OFF -DGGML_AVX512=ON", "native")
    info = build_info(L)
    assert info["cmake_args"] == "-DGGML_NATIVE=OFF -DGGML_AVX512=ON"
    assert info["edgebench_build"] == "native"
    assert info["system_info"] == "CPU : AVX2 = 1 | AVX512 = 1 |"


def test_a_llama_cpp_installed_some_other_way_has_no_flags(tmp_path: Path) -> None:
    info = build_info(fake_llama_cpp(tmp_path / "llama_cpp"))
    assert info["cmake_args"] is None and info["edgebench_build"] is None
