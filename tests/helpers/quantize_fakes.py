"""Stand-ins for llama.cpp's quantizer (models/quantize.py `Quantizer`): one that writes a
small GGUF of the type asked for, and ones that fail, are interrupted or write garbage
midway, to show the model cache never keeps a partial file."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from edgebench.errors import UserError
from edgebench.models.quant_types import QUANT_TYPES
from edgebench.models.quantize import QuantizeJob
from tests.helpers.gguf_factory import (
    build_gguf,
    gguf_string,
    header,
    kv,
    sample_metadata,
    u32,
    u64,
)


def gguf_of_type(quant_type: str, *, chat: bool = True) -> bytes:
    """A small GGUF whose file type is `quant_type` (its tensors stay F32)."""
    meta = {**sample_metadata(chat=chat), "general.file_type": QUANT_TYPES[quant_type]}
    return build_gguf(meta, [("token_embd.weight", (4, 8)), ("output_norm.weight", (4,))])


def quantized_source_gguf() -> bytes:
    """A GGUF that is really Q4_1: one Q4_1 tensor (a block of 32 weights, 20 bytes)."""
    meta = sample_metadata()
    body = b"".join(kv(k, v) for k, v in meta.items())
    info = gguf_string("blk.0.ffn_up.weight") + u32(1) + u64(32) + u32(3) + u64(0)
    head = header(1, len(meta)) + body + info
    return head + bytes(-len(head) % 32) + bytes(32)


class FakeQuantizer:
    """Writes `gguf_of_type(job.quant_type)` to the destination; records every job."""

    def __init__(self) -> None:
        self.jobs: list[QuantizeJob] = []

    def __call__(self, job: QuantizeJob) -> None:
        self.jobs.append(job)
        Path(job.destination).write_bytes(gguf_of_type(job.quant_type))


def half_then(error: BaseException):
    """A quantizer that writes half a file, then raises `error`."""

    def run(job: QuantizeJob) -> None:
        Path(job.destination).write_bytes(gguf_of_type(job.quant_type)[:100])
        raise error

    return run


def writes(content: bytes):
    """A quantizer that 'succeeds' having written `content`."""

    def run(job: QuantizeJob) -> None:
        Path(job.destination).write_bytes(content)

    return run


def dies_midway(job: QuantizeJob) -> None:
    """For a real child process: half a file, then SIGKILL (as the OOM killer would)."""
    Path(job.destination).write_bytes(gguf_of_type(job.quant_type)[:100])
    os.kill(os.getpid(), signal.SIGKILL)


def refuses(job: QuantizeJob) -> None:
    """For a real child process: llama.cpp's refusal, as quantize_in_child words it."""
    raise UserError(f"llama.cpp could not quantize {Path(job.source).name}: bad magic")
