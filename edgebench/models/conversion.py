"""What every `models convert` target does around its own export steps
(models/convert.py for ONNX, models/openvino_convert.py for OpenVINO): the work in a
private folder beside the destination, the provenance blocks the source GGUF gives, and
the folder renamed into place once its provenance file is written, so a failed
conversion leaves nothing behind."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edgebench.errors import UserError
from edgebench.io import WriteFailed, write_json_atomic, write_text_atomic
from edgebench.models.fetch import cache_workdir
from edgebench.models.gguf import GGUFFile
from edgebench.models.hf_folder import offline, quiet_tools, set_threads

if TYPE_CHECKING:
    from edgebench.models.resolve import ResolvedModel


def already_converted(label: str, target: Path) -> str:
    """What a conversion says when a verified folder of the same settings is there."""
    return f"{label}: already converted: {target} (--force converts again)"


def require_registry(name: str, source: ResolvedModel) -> None:
    """Only a registry model converts (`source`: `name` resolved); else one line."""
    if source.entry is None:
        raise UserError(f"{name!r}: only registry models can be converted (see `models list`)")


@contextlib.contextmanager
def private_workdir(target: Path, threads: int | None, quiet: tuple[str, ...]) -> Iterator[Path]:
    """A private folder beside `target` (same disk, so `publish`'s rename is atomic),
    removed on exit whatever happens; the hub offline, the `quiet` loggers muted and
    torch at `threads` while the block runs."""
    with cache_workdir(target.parent, ".convert-") as tmp, offline(), quiet_tools(quiet):
        set_threads(threads)
        yield Path(tmp)


def publish(out_dir: Path, target: Path, provenance_file: str, provenance: dict[str, Any]) -> None:
    """`out_dir` given its provenance file last, then renamed to `target` (an older
    conversion there removed first)."""
    write_json_atomic(out_dir / provenance_file, provenance)
    if target.exists():
        shutil.rmtree(target)
    os.replace(out_dir, target)


def converted_line(label: str, size_bytes: int, steps: dict[str, float], target: Path) -> str:
    """The last progress line: the size, the seconds of all steps, the folder."""
    return f"{label}: {size_bytes / 1e6:.1f} MB in {sum(steps.values()):.0f} s: {target}"


def copy_into(item: Path, out_dir: Path) -> None:
    """`item` copied into `out_dir`; a failure (a full disk) is one line naming the file."""
    try:
        shutil.copy2(item, out_dir / item.name)
    except OSError as exc:
        raise WriteFailed(out_dir / item.name, exc) from None


def write_chat_template(path: Path, header: GGUFFile) -> None:
    """The GGUF's chat template beside the weights, when it has one."""
    if header.chat_template:
        write_text_atomic(path, header.chat_template)


def gguf_source(source: ResolvedModel, header: GGUFFile) -> dict[str, Any]:
    """The provenance's `source`: the GGUF converted."""
    return {
        "file": source.path.name,
        "sha256": source.sha256,
        "size_bytes": source.size_bytes,
        "quantization": header.quantization,
        "architecture": header.architecture,
        "parameters": header.parameter_count,
    }


def gguf_prompt(source: ResolvedModel, header: GGUFFile) -> dict[str, Any]:
    """The provenance's `prompt`: how the GGUF is prompted."""
    specials = header.special_tokens()
    return {
        "style": source.prompt_style,
        "chat_template": header.chat_template,
        "bos_token": specials["bos_token"],
        "eos_token": specials["eos_token"],
        "stop": list(source.stop),
    }


def gguf_tokens(header: GGUFFile) -> dict[str, Any]:
    """The provenance's `tokens`: the GGUF's special token ids."""
    return {
        # Tokenized like llama.cpp reads the GGUF: BOS only when the GGUF asks for it.
        "add_bos": bool(header.add_bos_token),
        "bos_id": header.token_id("bos"),
        "eos_id": header.token_id("eos"),
        "eog_ids": header.end_of_generation_ids(),
        "vocab_size": header.vocabulary.size if header.vocabulary else None,
    }
