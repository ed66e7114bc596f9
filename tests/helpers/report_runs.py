"""Run folders for report tests: the real EdgeJSON task on built-in examples, a fake
backend, and hostile text everywhere a run carries untrusted strings (model output, the
GGUF name and chat template, the dataset text)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from edgebench.backends.fake import FakeBackend, FakeTimings
from edgebench.backends.worker import InProcessWorker
from edgebench.constraints import parse_modes
from edgebench.prompts import PromptFormat
from edgebench.runfolder.records import DatasetRecord, RunSettings
from edgebench.runner.engine import execute
from edgebench.runner.request import RunEnvironment, RunRequest
from edgebench.runner.spec import ModelUnderTest
from edgebench.system.records import Device
from edgebench.tasks import get_task

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
TEMPLATE_INJECTION = "{{7*7}}"
PIPE = "left | right"
FENCE = "```json\n{}\n```"
REMOTE_IMAGE = "![pixel](https://tracker.example/p.png)"
PAYLOADS = (SCRIPT, IMG, TEMPLATE_INJECTION, PIPE, "```", REMOTE_IMAGE)
# What a browser would do if any of it ran: the page must never get these attributes.
BROWSER_SCRIPT = "<script>document.documentElement.setAttribute('data-pwned','script')</script>"
BROWSER_IMG = "\"><img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">"

HOSTILE_OUTPUTS = [
    # Valid JSON whose values carry the payloads.
    json.dumps({"note": f"{SCRIPT} {IMG} {TEMPLATE_INJECTION} {PIPE} ``` {REMOTE_IMAGE}"}),
    # Free text around a fenced answer, with a longer backtick run inside.
    f"Sure! {BROWSER_SCRIPT}\n{FENCE}\n```` four {BROWSER_IMG}",
    f"{TEMPLATE_INJECTION} | {IMG}\nline two | {REMOTE_IMAGE}",
]
CHAT_TEMPLATE = (
    "{# " + SCRIPT + " ``` | " + REMOTE_IMAGE + " #}"
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}<|assistant|>"
)
MODEL_LABEL = "evil|model"


def hostile_model(label: str = MODEL_LABEL) -> ModelUnderTest:
    return ModelUnderTest(
        label=label,
        path=Path("/nonexistent/evil.gguf"),
        sha256="0" * 64,
        size_bytes=1,
        prompt_format=PromptFormat(style="chat", chat_template=CHAT_TEMPLATE),
        n_ctx_train=8192,
        backend="llama",
        details={
            "gguf_name": f"{SCRIPT} {IMG} {PIPE}",
            "quantization": "Q4_1",
            "license": "apache-2.0",
            "base_model": "HuggingFaceTB/SmolLM2-135M-Instruct",
        },
    )


def make_run(
    out: Path,
    modes: str = "none,gbnf,mask",
    n: int = 3,
    outputs: list[str] | None = None,
    device: dict | None = None,
    depth: bool = False,
    parse: str = "lenient",
    first_id: str | None = None,
    model_label: str = MODEL_LABEL,
    dataset_path: str = "data/edgejson/test.jsonl",
    metrics: tuple[str, ...] = (),
    slowdown: float = 1.0,
) -> Path:
    """A completed run folder of `n` built-in EdgeJSON examples (the first one's text
    made hostile, and its id `first_id` when given) under each mode; `mask` decodes twice
    as fast as the others; `slowdown` scales every token's time (a slower device)."""
    task = get_task("edgejson")
    examples = task.load(*task.resolve_paths(None, None))
    first = dataclasses.replace(
        examples[0],
        text=f"{examples[0].text} {SCRIPT} {PIPE}",
        id=first_id or examples[0].id,
    )
    examples = [first, *examples[1:]]
    if depth:  # a breakdown the built-in task does not have, as a depth task would add
        examples = [
            dataclasses.replace(ex, groups={**ex.groups, "depth": str(3 + i % 3)})
            for i, ex in enumerate(examples)
        ]
    modes_list = parse_modes(modes)

    def backend(mode: str) -> FakeBackend:
        per_token = (0.005 if mode == "mask" else 0.01) * slowdown
        return FakeBackend(
            list(outputs if outputs is not None else HOSTILE_OUTPUTS),
            timings=FakeTimings(per_output_token=per_token),
        )

    settings = RunSettings(
        out=out,
        warmup=False,
        limit=n,
        constraints=tuple(modes_list),
        parse=parse,
        metrics=metrics,
    )
    dataset = DatasetRecord(path=dataset_path, sha256="ab" * 32, n_examples=200)
    execute(
        RunRequest(settings, [hostile_model(model_label)], task, examples, dataset),
        RunEnvironment(worker_factory=lambda model, mode: InProcessWorker(backend(mode))),
    )
    if device is not None:  # the device block of another machine
        manifest_path = out / "manifest.json"
        manifest = json.loads(manifest_path.read_text())
        manifest["device"] = Device.from_json(device).to_json()
        manifest_path.write_text(json.dumps(manifest))
    return out
