"""What each runtime can do, declared once: the one place that knows a runtime by name.

A model runs on a runtime (`ModelUnderTest.backend`, the manifest's model `backend`):
`llama` (llama.cpp, GGUF files), `onnx` (onnxruntime, converted ONNX folders), `openvino`
(OpenVINO GenAI: a GGUF read directly, or an exported OpenVINO folder), and the tests'
`fake`. Every module that used to check one of those names reads its `Runtime`
instead: the backend classes and the constraint modes each decodes (and why it cannot
decode the others), the engine that enforces each mode, `--prefix-cache`, the memory
the load holds, fidelity, the model card's library, the runtime block's version key, the
packages `--version` and the manifest name, the install extra a fleet host needs, the
`models convert` target that makes its files, how `edgebench bench` times its rows and
which it cannot. Pure data and a leaf of the layers, so the command line, reports and
`--version` read it without importing a runtime (docs/contributing/extending.md: adding
a backend).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

# Every constraint mode (edgebench.constraints.spec.MODES: the order help texts use).
_MODES = ("none", "json", "gbnf", "outlines", "mask", "xgrammar")

# What an arm without a constraint engine shows in the engine column (mode `none`).
NO_ENGINE = "-"
# The engine that enforces each constraint mode on any runtime that decodes it, unless
# the runtime declares its own (`Runtime.engines`: `json` differs between runtimes).
ENGINES: Mapping[str, str] = MappingProxyType(
    {
        "none": NO_ENGINE,
        "gbnf": "llama.cpp GBNF",
        "outlines": "Outlines",
        "mask": "llguidance",
        "xgrammar": "XGrammar",
    }
)
# The key of an engine's version in an arm's runtime block, for the engines whose backend
# records it at load (llama.cpp GBNF is the runtime's own: the runtime's version says it).
ENGINE_VERSION_KEYS: Mapping[str, str] = MappingProxyType(
    {"llguidance": "llguidance", "Outlines": "outlines", "XGrammar": "xgrammar"}
)


@dataclass(frozen=True)
class Runtime:
    """One runtime's capabilities. `modes` maps a constraint mode to the backend that
    decodes it and that backend's extra options; a mode missing there is a skipped arm
    with the reason in `unsupported` (or "not implemented for this runtime")."""

    name: str  # the runtime as runs record it: ModelUnderTest.backend
    label: str  # as people say it: "llama.cpp"
    model_format: str  # the files it loads: "gguf", "onnx"
    backends: Mapping[str, tuple[str, str]]  # backend name -> (module, class)
    modes: Mapping[str, tuple[str, Mapping[str, Any]]]
    unsupported: Mapping[str, str] = field(default_factory=dict)
    prefix_cache: bool = False  # keeps a shared prompt prefix's KV (--prefix-cache)
    kv_at_load: bool = False  # allocates the KV cache for n_ctx at load, inside peak RSS
    # (module, class) of its teacher-forced logits for fidelity (backends/teacher_forcing.py)
    logits: tuple[str, str] | None = None
    hub_library: str | None = None  # the model card's `library_name`
    package: str | None = None  # the pip distribution; --version and the manifest name it
    version_key: str | None = None  # the key of its version in a run's runtime block
    install_extra: str | None = None  # pyproject extra a host adds (None: always installed)
    conversion: str | None = None  # the `models convert --to` target that makes its files
    # compiled for this CPU by install.sh: a build for another CPU dies with SIGILL, so
    # run and bench check it fits before any worker starts (system/build_fit.py)
    cpu_build: bool = False
    # mode -> the engine that enforces it here, where it is not ENGINES' default
    engines: Mapping[str, str] = field(default_factory=dict)
    # (module, function) -> {label: value}: the installed runtime's versions and CPU
    # plugin, a section of `edgebench doctor` (llama.cpp's build has its own section)
    doctor_facts: tuple[str, str] | None = None
    # how `edgebench bench` times its ppN/tgN rows when not by the wall clock around
    # forward passes it asks for (the bench's record and table say it); None: that clock
    bench_timing: str | None = None
    # why its ppN @ dD rows cannot be timed (None: they can)
    no_pp_at_depth: str | None = None


def _modes(backend: str, names: tuple[str, ...], per_mode: bool) -> dict[str, Any]:
    """`names` decoded by `backend`, told the mode as `constraint_mode` if `per_mode`."""
    return {
        m: (backend, MappingProxyType({"constraint_mode": m} if per_mode else {})) for m in names
    }


_XGRAMMAR_ELSEWHERE = (
    "XGrammar runs inside OpenVINO GenAI; use `mask` (llguidance) or `gbnf` on llama.cpp models"
)

LLAMA = Runtime(
    name="llama",
    cpu_build=True,
    label="llama.cpp",
    model_format="gguf",
    backends={
        "llama": ("edgebench.backends.llama_cpp", "LlamaCppBackend"),
        "llama-outlines": ("edgebench.backends.llama_outlines", "OutlinesLlamaBackend"),
    },
    modes={
        **_modes("llama", ("none", "json", "gbnf", "mask"), per_mode=True),
        **_modes("llama-outlines", ("outlines",), per_mode=False),
    },
    unsupported={"xgrammar": _XGRAMMAR_ELSEWHERE},
    # the hand-written JSON grammar (grammars/json.gbnf) in llama.cpp's grammar sampler
    engines={"json": "llama.cpp GBNF"},
    prefix_cache=True,
    kv_at_load=True,
    logits=("edgebench.backends.teacher_forcing", "LlamaLogits"),
    hub_library="gguf",
    package="llama-cpp-python",
    version_key="llama_cpp_python",
)
ONNX = Runtime(
    name="onnx",
    label="onnxruntime",
    model_format="onnx",
    backends={"onnx": ("edgebench.backends.onnx_runtime", "OnnxBackend")},
    modes=_modes("onnx", ("none", "json", "mask"), per_mode=True),
    unsupported={
        "xgrammar": _XGRAMMAR_ELSEWHERE,
        "gbnf": "GBNF grammars run inside llama.cpp's sampler; onnxruntime has none",
        "outlines": (
            "Outlines 1.x has no onnxruntime model type (it drives transformers, llama.cpp and "
            "others itself); use `mask` for the schema on ONNX models"
        ),
    },
    # the same JSON grammar, translated to Lark and enforced by llguidance
    engines={"json": "llguidance"},
    hub_library="onnx",
    package="onnxruntime",
    version_key="onnxruntime",
    install_extra="onnx",
    conversion="onnx",
)
# After llama and onnx: runtime_for_format("gguf") stays llama.cpp (OpenVINO GenAI reads a
# GGUF only when a model spec asks for it: `NAME@openvino`).
OPENVINO = Runtime(
    name="openvino",
    label="OpenVINO GenAI",
    model_format="openvino",
    backends={"openvino": ("edgebench.backends.openvino", "OpenVinoBackend")},
    modes=_modes("openvino", ("none", "json", "xgrammar"), per_mode=True),
    unsupported={
        "mask": (
            "OpenVINO GenAI does not hand per-step logits to Python on its generation "
            "path, so llguidance cannot mask them; use `xgrammar` for the schema"
        ),
        "gbnf": "GBNF grammars run inside llama.cpp's sampler; use `xgrammar` on OpenVINO",
        "outlines": (
            "Outlines 1.x has no OpenVINO GenAI model type; use `xgrammar` for the schema"
        ),
    },
    # `json`: XGrammar's grammar for any JSON object (it rejects grammars/json.gbnf)
    engines={"json": "XGrammar"},
    hub_library="openvino",
    package="openvino-genai",
    version_key="openvino_genai",
    install_extra="openvino",
    conversion="openvino",
    doctor_facts=("edgebench.backends.openvino", "doctor_facts"),
    # LLMPipeline evaluates tokens only inside generate(): its own PerfMetrics time it
    bench_timing=(
        "OpenVINO GenAI's own PerfMetrics, not a clock around forward passes: ppN is the "
        "inference duration of a generate() of the N-token prompt with 1 new token, tgN "
        "N times the TPOT (the mean interval between new tokens, the first one's, from "
        "the prefill, left out) of a generate() of N+1 new tokens with EOS ignored; both "
        "include the pipeline's per-step work (scheduling, sampling) besides the forward "
        "pass"
    ),
    no_pp_at_depth=(
        "OpenVINO GenAI's LLMPipeline prefills a whole prompt inside one generate(), never "
        "N tokens after a kept KV cache"
    ),
)
# The tests' scripted backend: every mode, no runtime to install.
FAKE = Runtime(
    name="fake",
    label="fake",
    model_format="fake",
    backends={"fake": ("edgebench.backends.fake", "FakeBackend")},
    modes=_modes("fake", _MODES, per_mode=False),
    engines={m: "fake" for m in _MODES if m != "none"},
    logits=("edgebench.backends.fake", "FakeLogits"),
)

RUNTIMES: Mapping[str, Runtime] = MappingProxyType(
    {r.name: r for r in (LLAMA, ONNX, OPENVINO, FAKE)}
)
# The runtime of a model named without one (a GGUF: registry names, paths, hf: files).
DEFAULT_RUNTIME = LLAMA.name


def runtime_info(name: str) -> Runtime | None:
    """The declaration of runtime `name`; None for one this edgebench does not know (a
    run folder written by another version may name one)."""
    return RUNTIMES.get(name)


def runtime_for_format(model_format: str) -> Runtime:
    """The runtime that loads `model_format` files ("gguf" -> llama.cpp)."""
    return next(r for r in RUNTIMES.values() if r.model_format == model_format)


def runtime_packages() -> tuple[str, ...]:
    """The pip distributions of the runtimes a run's numbers depend on, in registry order."""
    return tuple(r.package for r in RUNTIMES.values() if r.package)


def conversions() -> tuple[str, ...]:
    """The `models convert --to` targets, in registry order."""
    return tuple(r.conversion for r in RUNTIMES.values() if r.conversion)


def version_of(runtime: Mapping[str, Any]) -> Any:
    """The runtime's version in a run's runtime block (whichever runtime wrote it)."""
    for info in RUNTIMES.values():
        if info.version_key and runtime.get(info.version_key):
            return runtime[info.version_key]
    return None


def needs_cpu_build(backends: Iterable[str]) -> bool:
    """Whether any of these backends runs a build compiled for one CPU (`cpu_build`)."""
    return any((r := RUNTIMES.get(b)) is not None and r.cpu_build for b in backends)


def bench_timing(backends: Iterable[str]) -> dict[str, str]:
    """runtime -> how bench times its rows, for the runtimes of `backends` that say
    (`bench_timing`), in the order given."""
    infos = (RUNTIMES.get(b) for b in dict.fromkeys(backends))
    return {r.name: r.bench_timing for r in infos if r is not None and r.bench_timing}


def pp_depth_refusal(runtime: str, test: str) -> str | None:
    """Why bench row `test` (a ppN @ dD) cannot be measured on `runtime`, in one line;
    None when it can."""
    info = RUNTIMES.get(runtime)
    if info is None or info.no_pp_at_depth is None:
        return None
    return f"{test} cannot be measured on {info.label}: {info.no_pp_at_depth}"


def label_of(runtime: str) -> str:
    """ "llama.cpp" for `llama`: how people name the runtime; a runtime this edgebench
    does not know (a run folder of a newer version) by its name as recorded."""
    info = RUNTIMES.get(runtime)
    return info.label if info is not None else runtime


def engine_of(runtime: str, mode: str) -> str | None:
    """The engine that enforces engine mode `mode` (`mask`, not `mask+close`) on
    `runtime` ("llguidance"; NO_ENGINE for `none`); None when the runtime does not
    decode that mode or is not known here."""
    info = RUNTIMES.get(runtime)
    if info is None or mode not in info.modes:
        return None
    return info.engines.get(mode) or ENGINES.get(mode)


def engine_version(engine: str | None, runtime: Mapping[str, Any]) -> Any:
    """The engine's version in an arm's runtime block (None: not recorded there)."""
    key = ENGINE_VERSION_KEYS.get(engine or "")
    return runtime.get(key) if key is not None else None
