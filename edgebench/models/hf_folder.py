"""What every `models convert` target starts with: the registry GGUF de-quantized to a
float32 transformers folder, offline, with the exporters' noise muted, each step timed
and announced (models/convert.py for ONNX, models/openvino_convert.py for OpenVINO)."""

from __future__ import annotations

import contextlib
import io
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from edgebench.environ import temporary_environ
from edgebench.errors import UserError

Say = Callable[[str], None]


@contextlib.contextmanager
def timed_step(steps: dict[str, float], key: str, say: Say, message: str) -> Iterator[None]:
    """Say `message`, run the block, record its seconds in `steps[key]`."""
    say(message)
    start = time.perf_counter()
    yield
    steps[key] = round(time.perf_counter() - start, 2)


def offline() -> contextlib.AbstractContextManager[None]:
    """Local files only: the hub libraries must never reach for the network."""
    return temporary_environ({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})


@contextlib.contextmanager
def quiet_tools(loggers: tuple[str, ...] = ()) -> Iterator[None]:
    """The exporters print pages of tracer warnings and per-node INFO lines (`loggers`
    held at WARNING); a failure still surfaces as the exception, which the caller turns
    into one line."""
    import warnings

    saved = {name: logging.getLogger(name).level for name in loggers}
    for name in loggers:
        logging.getLogger(name).setLevel(logging.WARNING)
    sink = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(sink):
            warnings.simplefilter("ignore")
            yield
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


def set_threads(threads: int | None) -> None:
    if threads:
        import torch

        torch.set_num_threads(threads)


def gguf_model(gguf: Path) -> Any:
    """transformers' model read from the GGUF, weights de-quantized to float32 (what
    `gguf_to_transformers` saves; benchmarks/openvino_parity.py decodes on it as is)."""
    import torch
    from transformers import AutoModelForCausalLM

    with _readable(gguf):
        return AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, dtype=torch.float32
        )


def gguf_to_transformers(gguf: Path, hf_dir: Path) -> None:
    """transformers reads the GGUF (weights de-quantized to float32, its tokenizer) and
    saves it as a plain transformers folder."""
    from transformers import AutoTokenizer

    with _readable(gguf):
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = gguf_model(gguf)
    model.save_pretrained(hf_dir)
    tokenizer.save_pretrained(hf_dir)


@contextlib.contextmanager
def _readable(gguf: Path) -> Iterator[None]:
    """transformers' own messages muted; its refusals as one line."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    except (ValueError, KeyError, NotImplementedError, RuntimeError) as exc:
        raise UserError(f"transformers cannot read {gguf.name}: {first_line(exc)}") from None


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
