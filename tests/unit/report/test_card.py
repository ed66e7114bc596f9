"""`edgebench card` from fake-backend runs: Hub metadata that huggingface_hub parses back
with the run's numbers, every section, plots next to the card, hostile text inert and
intact, generic breakdowns, metric families and device fields, and clear errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from huggingface_hub import EvalResult, ModelCard, metadata_load

from edgebench.cli.app import main
from edgebench.errors import UserError
from edgebench.report.card import pick_model, write_card
from edgebench.report.facts import device_rows, public_path
from edgebench.report.html import render_report, write_report
from edgebench.summary import load_run
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.contention import with_contention
from tests.helpers.fakes import RIGHT, WRONG, fake_model
from tests.helpers.inline_prompts import chat_templates_in_process
from tests.helpers.pages import Page, render_markdown
from tests.helpers.report_runs import (
    CHAT_TEMPLATE,
    HOSTILE_OUTPUTS,
    IMG,
    MODEL_LABEL,
    PIPE,
    REMOTE_IMAGE,
    SCRIPT,
    TEMPLATE_INJECTION,
    make_run,
)
from tests.helpers.run_fake import RunFake

PI_DEVICE = {
    "cpu_model": "Cortex-A76",
    "threads_used": 4,
    "board_model": "Raspberry Pi 5 Model B Rev 1.0",
    "cpu_temp_c": 63.0,
    "throttling": {"throttled_now": False, "soft_temp_limit_occurred": True},
}
# The model-index metric types of what a mode cost, and how to read each from a summary.
COST = {
    "decode_tokens_per_second_p50": lambda a: a.perf.decode_tok_s.p50,
    "prefill_tokens_per_second_p50": lambda a: a.perf.prefill_tok_s.p50,
    "time_to_first_token_seconds_p50": lambda a: a.perf.ttft_s.p50,
    "latency_seconds_p50": lambda a: a.perf.latency_s.p50,
    "peak_rss_mib": lambda a: a.perf.peak_rss_mb,
}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with chat_templates_in_process():
        return make_run(tmp_path_factory.mktemp("card") / "run", depth=True, device=PI_DEVICE)


@pytest.fixture(scope="module")
def card_path(run_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("out") / "card.md"
    write_card(with_contention(load_run(run_dir), speed_clean=True), out, examples=3)
    return out


def result_config(result: EvalResult) -> dict[str, str]:
    """A result's `config` (`constraint=mask; backend=...`) as a dict."""
    return dict(part.split("=", 1) for part in (result.metric_config or "").split("; "))


def test_metadata_parses_and_holds_the_runs_numbers(run_dir: Path, card_path: Path) -> None:
    summary = load_run(run_dir).summary
    card = ModelCard.load(card_path, ignore_metadata_errors=False)
    assert card.data.model_name == MODEL_LABEL
    assert card.data.license == "apache-2.0"
    assert card.data.base_model == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert card.data.pipeline_tag == "text-generation"
    results = {(result_config(r)["constraint"], r.metric_type): r for r in card.data.eval_results}
    expected = set()
    for arm in summary.arms:
        config = arm.constraint
        # Every figure of the task (counts aside), then what the mode cost.
        figures = {k: v for k, v in arm.metrics.items() if k not in ("n", "n_skipped")}
        assert {"json_exact", "field_f1", "schema_compliance", "valid_json"} <= set(figures)
        figures.update({metric: read(arm) for metric, read in COST.items()})
        for metric, value in figures.items():
            got = results[(config, metric)]
            assert value is not None and got.metric_value == pytest.approx(value, abs=1e-4)
            assert got.task_type == "text-generation" and got.dataset_split == "test"
            assert got.dataset_revision == "ab" * 32
            assert got.metric_name.endswith(f"({arm.constraint})")
            # Each number keeps the runtime and device it was measured with.
            assert result_config(got) == {
                "constraint": arm.constraint,
                "backend": "fake",
                "threads": "4",
                "quantization": "Q4_1",
                "device": "Raspberry Pi 5 Model B Rev 1.0 (Cortex-A76)",
            }
        expected |= {(config, metric) for metric in figures}
    # Nothing else, nothing twice.
    assert set(results) == expected and len(card.data.eval_results) == len(expected)
    # The fake decodes `mask` twice as fast: the card says so in numbers.
    decode = {
        m: results[(m, "decode_tokens_per_second_p50")].metric_value for m in ("none", "mask")
    }
    assert decode["mask"] == pytest.approx(2 * decode["none"], rel=1e-3)
    metadata = metadata_load(card_path)
    assert metadata["model-index"][0]["name"] == MODEL_LABEL
    # Where the numbers were measured travels with them.
    assert metadata["edgebench"] == {
        "tool": metadata["edgebench"]["tool"],
        "run": "run",
        # a device block without an identity (before format 2.8): named by its model
        "device_name": "Raspberry Pi 5 Model B Rev 1.0",
        "device_fingerprint": metadata["edgebench"]["device_fingerprint"],
        "device": "Cortex-A76",
        "threads": 4,
        "runtime": "fake",
        "dataset_sha256": "ab" * 32,
        "examples": 3,
    }
    assert metadata["edgebench"]["tool"].startswith("edgebench ")
    assert re.fullmatch(r"d[0-9a-f]{12}", metadata["edgebench"]["device_fingerprint"])


def test_card_has_every_section_and_its_plots_next_to_it(card_path: Path) -> None:
    text = card_path.read_text()
    for heading in (
        "## Device",
        "## How it was run",
        "### Prompt",
        "## Accuracy",
        "### By complexity",
        "### By depth",
        "### By schema",
        "## Performance",
        "## Plots",
        "## Sample outputs",
    ):
        assert f"\n{heading}" in text, heading
    for plot in (
        "accuracy-by-complexity",
        "accuracy-by-depth",
        "constraint-modes",
        "latency",
        "accuracy-speed-memory",
    ):
        png = card_path.parent / f"card-{plot}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", plot
        assert f"](card-{plot}.png)" in text
    assert "accuracy-by-schema" not in text  # per-schema results are a table
    # Device facts, nested ones as `a.b`, the runtime, TTFT and decode p50/p95.
    assert "| board\\_model | Raspberry Pi 5 Model B Rev 1.0 |" in text
    assert "| cpu\\_temp\\_c | 63.000 |" in text
    # (a dot before a letter is escaped: no renderer takes `a.b` for a domain)
    assert "| throttling\\.soft\\_temp\\_limit\\_occurred | yes |" in text
    assert "| runtime\\.name | fake |" in text
    assert "decode tok/s p50" in text and "TTFT p50 (s)" in text
    # How the scored JSON was taken from the answers, in the intro and the dataset table.
    assert "constraint modes none, gbnf, mask, JSON extraction lenient." in text
    assert "| JSON extraction (--parse) | lenient |" in text
    assert not list(card_path.parent.glob(".*tmp"))  # atomic writes leave no temp files


def rendered(card_path: Path) -> Page:
    body = card_path.read_text().split("\n---\n", 1)[1]  # the Markdown after the metadata
    return render_markdown(body)


def test_hostile_text_is_inert_and_intact_in_the_card(card_path: Path) -> None:
    page = rendered(card_path)
    # The only elements with a source are the card's own local plots.
    images = [attrs for tag, attrs in page.tags if tag == "img"]
    assert images and all(
        a["src"].startswith("card-") and a["src"].endswith(".png") for a in images
    )
    assert "script" not in page.names()
    assert not any(k.startswith("on") for _, attrs in page.tags for k in attrs)
    assert not any(tag == "a" for tag, _ in page.tags)
    # Model outputs come back verbatim, newlines, fences and all.
    for output in HOSTILE_OUTPUTS:
        assert output in page.text
    # The GGUF name (a table cell), the chat template (a code block), the dataset text.
    assert f"{SCRIPT} {IMG} {PIPE}" in page.text
    assert CHAT_TEMPLATE in page.text
    assert REMOTE_IMAGE in page.text and TEMPLATE_INJECTION in page.text
    assert MODEL_LABEL in page.text


def test_no_examples_leaves_out_the_section(run_dir: Path, tmp_path: Path) -> None:
    write_card(load_run(run_dir), tmp_path / "c.md", examples=0)
    assert "## Sample outputs" not in (tmp_path / "c.md").read_text()


def test_metric_families_appear_in_tables_and_model_index(
    run_fake: RunFake, tmp_path: Path
) -> None:
    result = run_fake([RIGHT, WRONG, RIGHT], metrics=("sted",))
    run = load_run(result.run_dir)
    (arm,) = run.summary.arms
    sted = arm.families["sted"]
    assert sted.role == "extra" and 0 < sted.overall["sted"] < 1
    write_card(run, tmp_path / "card.md")
    card = ModelCard.load(tmp_path / "card.md", ignore_metadata_errors=False)
    values = {r.metric_type: r.metric_value for r in card.data.eval_results}
    for figure in ("sted", "sted_structural", "sted_semantic"):
        assert values[f"sted.{figure}"] == pytest.approx(sted.overall[figure], abs=1e-4)
    assert values["json_exact"] == pytest.approx(2 / 3, abs=1e-4)  # the task's, unprefixed
    text = (tmp_path / "card.md").read_text()
    assert "| sted STED |" in text and "| sted STED struct |" in text


def test_a_run_of_several_models_needs_model(
    run_fake: RunFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run_fake([RIGHT, WRONG, RIGHT] * 2, models=[fake_model("a"), fake_model("b")])
    run = load_run(result.run_dir)
    with pytest.raises(UserError, match="holds 2 models \\(a, b\\); choose one with --model"):
        pick_model(run, None)
    assert pick_model(run, "b") == "b"
    with pytest.raises(UserError, match="no model 'c'"):
        pick_model(run, "c")
    code, err = run_cli(capsys, "card", str(result.run_dir))
    assert_one_line_error(code, err, "choose one with --model")
    # The card of one model holds that model's results only.
    write_card(run, tmp_path / "b.md", model="b")
    card = ModelCard.load(tmp_path / "b.md", ignore_metadata_errors=False)
    assert card.data.model_name == "b"
    b_arm = run.summary.arm("b", "none")
    assert b_arm is not None
    values = {r.metric_type: r.metric_value for r in card.data.eval_results}
    assert values["json_exact"] == pytest.approx(b_arm.metrics["json_exact"], abs=1e-4)
    assert len(card.data.eval_results) == len(values)  # one mode of one model


def test_cli_writes_the_card_into_the_run_folder(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["card", str(run_dir)])
    assert not done.value.code
    out = capsys.readouterr().out
    assert f"card: {run_dir / 'card.md'}" in out and out.count("plot: ") == 5
    ModelCard.load(run_dir / "card.md", ignore_metadata_errors=False)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["nope"], "no such run folder"),
        (["."], "not a run folder (no manifest.json)"),
        (["RUN", "--out", "card.txt"], "expected a .md file name"),
        (["RUN", "--out", "missing/card.md"], "does not exist"),
    ],
)
def test_card_errors_are_one_line(
    args: list[str],
    fragment: str,
    run_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    args = [str(run_dir) if a == "RUN" else a for a in args]
    code, err = run_cli(capsys, "card", *args)
    assert_one_line_error(code, err, fragment)


@pytest.mark.parametrize(
    ("samples", "fragments"),
    [
        ('{"id": 1}\n{oops\n{"id": 2}\n', ("samples.jsonl: line 2: not valid JSON",)),
        ('{"id": 1}\n', ("not a run record of this edgebench", "samples.jsonl:1")),
    ],
)
def test_corrupt_samples_are_a_one_line_error(
    samples: str,
    fragments: tuple[str, ...],
    run_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "manifest.json").write_text((run_dir / "manifest.json").read_text())
    (broken / "samples.jsonl").write_text(samples)
    code, err = run_cli(capsys, "card", str(broken))
    assert_one_line_error(code, err, *fragments)


def test_a_run_killed_before_its_first_example_still_renders(run_dir: Path, tmp_path: Path) -> None:
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest.update(status="running", arms=[])
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_text(json.dumps(manifest))
    files = write_card(load_run(tmp_path / "run"), tmp_path / "card.md")
    assert files.plots == [] and "## Device" in files.card.read_text()
    ModelCard.load(files.card, ignore_metadata_errors=False)
    assert 'id="leaderboard"' in render_report([load_run(tmp_path / "run")])


def test_device_rows_show_the_runtime_once(run_fake: RunFake) -> None:
    # The device block's `runtime` is the arm's runtime `build`: not listed twice.
    run = load_run(run_fake([RIGHT], n=1).run_dir)
    names = [name for name, _ in device_rows(run)]
    assert run.manifest.device.runtime == {"name": "fake"}
    assert run.manifest.arms[0].runtime == {"name": "fake", "build": {"name": "fake"}}
    assert names.count("runtime.name") == 1
    assert not any(name.startswith("runtime.build") for name in names)


# A device as `edgebench run` records it on a virtual machine: flags, paths and all.
VM_DEVICE = {
    "cpu_model": "AMD EPYC",
    "cpu_flags": ["fpu", "vme", "avx2", "flag_only_in_the_full_dump"],
    "cpu_simd": ["avx2"],
    "hypervisor": True,
    "logical_cores": 2,
    "physical_cores": 2,
    "threads_used": 2,
    "ram_total_mb": 24106,
    "os": "Debian GNU/Linux 12 (bookworm)",
    "kernel": "6.1.0",
}
LOCAL_DATASET = "/home/someone/private/edgejson/test.jsonl"


def outside_details(text: str) -> str:
    """The card as a reader sees it before expanding anything."""
    return re.sub(r"<details>.*?</details>", "", text, flags=re.S)


def kv_rows(text: str, heading: str) -> dict[str, str]:
    """The first two-column table after `heading`, as label -> value."""
    lines = text.split(f"\n{heading}\n", 1)[1].splitlines()
    start = lines.index("|   | value |") + 2  # past the header and its rule
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append(line.strip("| ").split(" | "))
    return {label: value for label, value in rows}


@pytest.fixture(scope="module")
def vm_card(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("vm")
    with chat_templates_in_process():
        run_dir = make_run(
            root / "run", modes="none,mask", n=4, device=VM_DEVICE, dataset_path=LOCAL_DATASET
        )
    write_card(load_run(run_dir), root / "card.md", examples=1)
    return (root / "card.md").read_text()


def test_a_four_example_card_says_it_is_indicative_before_any_number(vm_card: str) -> None:
    body = vm_card.split("\n---\n", 1)[1]
    warning = "> **⚠ n < 50: indicative only**: 4 examples scored; the intervals are wide."
    assert warning in body
    assert body.index(warning) < body.index("| constraint |")
    assert "n < 50: indicative only" in rendered_text(body)


def rendered_text(markdown: str) -> str:
    return render_markdown(markdown).text


def test_short_device_and_run_tables_and_the_full_record_collapsed(vm_card: str) -> None:
    device = kv_rows(vm_card, "## Device")
    # its name (a run without an identity: its kind) and short fingerprint
    assert re.fullmatch(r"AMD EPYC · 24 GB · d[0-9a-f]{7}", device.pop("device"))
    assert device == {
        "CPU": "AMD EPYC",
        "cores": "2 physical, 2 logical",
        "RAM": "24 GB",
        "OS": "Debian GNU/Linux 12 (bookworm) · 6.1.0",
        "virtual machine": "yes",
        "SIMD": "avx2",
    }
    run_rows = kv_rows(vm_card, "## How it was run")
    assert run_rows["backend"] == "fake" and run_rows["threads"] == "2"
    assert run_rows["model file"] == "evil\\.gguf (Q4\\_1)"
    assert run_rows["constraint modes"] == "none, mask"
    assert run_rows["examples scored per mode"] == "4"
    assert run_rows["dataset"] == "edgejson · test\\.jsonl (4 of 200 examples)"
    assert run_rows["dataset sha256"] == "ab" * 32
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", run_rows["date (UTC)"])
    # No CPU flag list until the reader opens the full record; no local path anywhere.
    shown = outside_details(vm_card)
    for private in ("flag_only_in_the_full_dump", "cpu\\_flags"):
        assert private not in shown, private
    assert all(not arg.startswith("/") for arg in shown.split("```bash\n", 1)[1].split()[:40])
    (full,) = [
        block
        for block in re.findall(r"<details>.*?</details>", vm_card, flags=re.S)
        if "Full record" in block
    ]
    assert "flag\\_only\\_in\\_the\\_full\\_dump" in full
    for local in ("/home/someone", "/nonexistent/"):  # the model file and dataset by name
        assert local not in vm_card, local
    assert "| path | evil\\.gguf |" in full and "| path | test\\.jsonl |" in full
    # The collapsed record renders as tables (blank lines around it).
    page = render_markdown(vm_card.split("\n---\n", 1)[1])
    assert "summary" in page.names() and "table" in page.names()


def test_cost_headers_say_which_way_is_better(vm_card: str) -> None:
    for header in (
        "TTFT p50 (s) ↓",
        "decode tok/s p50 ↑",
        "latency (s) ↓",
        "peak RSS (MiB) ↓",
        "load (s) ↓",
        "decode (tokens/s) ↑",
        "ttft (s) ↓",
    ):
        assert header in vm_card, header
    assert "↓ lower is better, ↑ higher is better" in vm_card


def test_the_first_figure_is_accuracy_speed_memory_with_a_caption(vm_card: str) -> None:
    images = re.findall(r"!\[([^\]]*)\]\(([^)]*)\)\n\n\*([^\n]*)\*", vm_card)
    assert images[0][:2] == (
        "Accuracy vs decode speed vs peak RSS",
        "card-accuracy-speed-memory.png",
    )
    # It comes with the headline table, before the device; the rest under Plots.
    assert vm_card.index("card-accuracy-speed-memory.png") < vm_card.index("## Device")
    assert [name for _, name, _ in images[1:]] == [
        "card-accuracy-by-complexity.png",
        "card-constraint-modes.png",
        "card-latency.png",
    ]
    for title, _, caption in images:
        assert caption and md_plain(title) not in caption


def md_plain(text: str) -> str:
    return text.replace("\\", "")


def test_each_results_config_round_trips_through_the_hub(vm_card: str, tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(vm_card)
    card = ModelCard.load(tmp_path / "README.md", ignore_metadata_errors=False)
    configs = {result_config(r)["constraint"]: result_config(r) for r in card.data.eval_results}
    assert configs["mask"] == {
        "constraint": "mask",
        "backend": "fake",
        "threads": "2",
        "quantization": "Q4_1",
        "device": "AMD EPYC · 24 GB RAM · VM",
    }
    metadata = metadata_load(tmp_path / "README.md")
    metrics = metadata["model-index"][0]["results"][0]["metrics"]
    assert {m["config"] for m in metrics} == {r.metric_config for r in card.data.eval_results}
    assert metadata["edgebench"]["vm"] is True


@pytest.mark.parametrize(
    ("arg", "shown"),
    [
        ("/tmp/unc/real/runs", "runs"),
        ("--out=/home/me/runs/smollm2", "--out=smollm2"),
        ("~/models/m.gguf", "m.gguf"),
        ("data/edgejson/test.jsonl", "data/edgejson/test.jsonl"),  # relative: as typed
        ("none,mask", "none,mask"),
        ("/", "/"),
    ],
)
def test_public_paths_keep_only_the_last_part_of_local_ones(arg: str, shown: str) -> None:
    assert public_path(arg) == shown


def test_card_and_report_of_a_run_holding_lone_surrogates(
    run_fake: RunFake, tmp_path: Path
) -> None:
    """An expected answer holding "\\ud800" (valid JSON) is shown escaped: the card and
    the report are written, as the run's own files are."""
    from tests.helpers.fakes import example

    result = run_fake(['{"a": "\\ud800"}'], examples=[example(0, expected={"a": "\ud800"})])
    run = load_run(result.run_dir)
    write_card(run, tmp_path / "card.md", examples=1)
    assert '"\\ud800"' in (tmp_path / "card.md").read_text(encoding="utf-8")
    write_report([run], tmp_path / "report.html")
    assert "ud800" in (tmp_path / "report.html").read_text(encoding="utf-8")
