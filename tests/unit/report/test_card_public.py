"""A card is published (issue 37): it names no local path, neither the model cache under
the user's home folder nor any other absolute path (the model file by its name, sha256
and size instead); its headline table holds the key columns only; the machine's detail
is collapsed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from edgebench.report.card import public_text, render_card
from edgebench.summary import load_run
from tests.helpers.inline_prompts import chat_templates_in_process
from tests.helpers.report_runs import make_run

USER = "alice-the-user"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with chat_templates_in_process():
        return make_run(tmp_path_factory.mktemp("card") / "run", modes="none,mask")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake home folder named for its user (the card must never say it)."""
    home = tmp_path / "home" / USER
    monkeypatch.setenv("HOME", str(home))
    return home


def with_local_paths(run_dir: Path, home: Path, dest: Path) -> Path:
    """A copy of the run whose manifest names paths as a real run on `home` does: the
    model in the cache there, the dataset, the run folder, the command and its options,
    a requantized source, a power command."""
    manifest = json.loads((run_dir / "manifest.json").read_text())
    cache = home / ".cache" / "edgebench" / "models"
    model = manifest["models"][0]
    model["path"] = str(cache / "smollm2.gguf")
    model["quantized_from"] = {
        "source": str(cache / "smollm2-f16.gguf"),
        "source_quantization": "F16",
        "requantized": True,
        "note": f"requantized from {cache}/smollm2-q8.gguf: the ceiling is the source's quality",
    }
    dataset = str(home / "data" / "edgejson" / "test.jsonl")
    manifest["dataset"]["path"] = dataset
    manifest["settings"].update(
        dataset=dataset, out=str(home / "runs" / "r1"), power_command=f"{home}/bin/watts -q"
    )
    manifest["command"] = [
        f"{home}/.venv/bin/edgebench",
        "run",
        "--model",
        model["path"],
        f"--out={home}/runs/r1",
        "--dataset",
        dataset,
    ]
    dest.mkdir()
    for name in ("samples.jsonl", "summary.json"):
        (dest / name).write_bytes((run_dir / name).read_bytes())
    (dest / "manifest.json").write_text(json.dumps(manifest))
    return dest


def card_of(run: Path) -> str:
    return render_card(load_run(run), None, [], examples=1)


def test_the_card_names_no_local_path(run_dir: Path, home: Path, tmp_path: Path) -> None:
    card = card_of(with_local_paths(run_dir, home, tmp_path / "run"))
    assert USER not in card and str(home) not in card
    assert str(tmp_path) not in card  # nor the run folder's own place
    # no absolute path at all: a `/` starting a word (not `tok/s`, `GNU/Linux`, `</b>`)
    assert not re.findall(r"(?<![\w.:/<~\\-])/[\w.~-]+/[\w.~-]+", card)
    # the model file by its name, sha256 and size
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert "smollm2\\.gguf" in card and manifest["models"][0]["sha256"] in card
    assert f"| model size (MB) | {manifest['models'][0]['size_bytes'] / 1e6:.1f}" in card
    assert "edgebench run --model smollm2.gguf --out=r1 --dataset test.jsonl" in card


def test_public_text_cuts_paths_to_their_last_part() -> None:
    assert public_text("/home/u/m.gguf") == "m.gguf"
    assert public_text("cmd /home/u/bin/watts -q --out=/tmp/r") == "cmd watts -q --out=r"
    assert public_text("~/runs/r1 and tokens/s, GNU/Linux, https://hf.co/x") == (
        "r1 and tokens/s, GNU/Linux, https://hf.co/x"
    )
    assert public_text(3) == 3


def headline(card: str) -> list[str]:
    """The first table of the card's body: its lines."""
    body = card.split("\n# ", 1)[1]
    table = re.search(r"(?m)^\|.*(?:\n\|.*)*", body)
    assert table is not None
    return table.group(0).splitlines()


def test_the_headline_table_holds_the_key_columns(run_dir: Path) -> None:
    lines = headline(card_of(run_dir))
    headers = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert headers == [
        "runtime",
        "constraint",
        "engine",
        "n",
        "Field F1 ↑ (95% CI)",
        "decode tok/s p50 ↑",
        "TTFT p50 (s) ↓",
        "peak RSS (MiB) ↓",
    ]
    for line in lines[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        assert cells[4].endswith("\\]") and cells[5].endswith("\\]")  # with intervals


def test_the_machine_detail_is_collapsed(run_dir: Path) -> None:
    card = card_of(run_dir)
    device = card.split("\n## Device\n", 1)[1].split("\n## ", 1)[0]
    shown, collapsed = device.split("<details>", 1)
    assert "SIMD" not in shown and "SIMD" in collapsed and "</details>" in collapsed
    assert " · " in shown  # the device in one line: its name and short fingerprint


def test_figures_that_left_the_headline_are_still_in_the_card(run_dir: Path) -> None:
    card = card_of(run_dir)
    performance = card.split("\n## Performance\n", 1)[1]
    for figure in ("prefill (tokens/s)", "latency (s)", "decode × none", "load (s)", "wall (s)"):
        assert figure in performance, figure
