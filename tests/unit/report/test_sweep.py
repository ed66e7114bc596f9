"""The sweep of a run of several quantized variants: one row per variant and mode with
scores, fidelity, speed, memory and size, the Pareto front marked; in the terminal at
80 columns, in the card (table and plot) and in the HTML report."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from edgebench.analysis.sweep import build_sweep, is_sweep
from edgebench.errors import UserError
from edgebench.report.card import write_card
from edgebench.report.fit import Fitted
from edgebench.report.html import render_report
from edgebench.report.sweep_plot import sweep_plots
from edgebench.report.sweep_view import sweep_json, sweep_table
from edgebench.runfolder.records import SCHEMA_VERSION
from edgebench.summary import load_run
from tests.helpers.sweep_runs import REQUANTIZED, make_sweep_run, variant


def one_model_run(tmp_path: Path) -> Path:
    return make_sweep_run(tmp_path / "one", "none", 2, (variant("Q4_K_M"),), fidelity=False)


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_sweep_run(tmp_path_factory.mktemp("sweep") / "sweep")


def rows_by_key(run_dir: Path, **options: str) -> dict[str, dict]:
    rows = sweep_json(build_sweep(load_run(run_dir), **options))  # type: ignore[arg-type]
    return {f"{r['quantization']} · {r['constraint']}": r for r in rows}


def test_one_row_per_variant_and_mode_with_every_figure(sweep_dir: Path) -> None:
    rows = rows_by_key(sweep_dir)
    assert list(rows) == [  # most precise first, modes in run order
        "Q8_0 · none", "Q8_0 · mask", "Q4_K_M · none", "Q4_K_M · mask",
        "Q4_0 · none", "Q4_0 · mask", "Q2_K · none", "Q2_K · mask",
    ]  # fmt: skip
    q4 = rows["Q4_K_M · mask"]
    assert q4["scores"]["field_f1"] == pytest.approx(0.75)  # 3 of 4 answered exactly
    assert q4["ci95"]["field_f1"] is not None
    assert q4["kl_mean"] == pytest.approx(0.0412) and q4["top1_agreement"] == 0.91
    assert rows["Q8_0 · none"]["kl_mean"] == 0.0  # the reference against itself
    assert rows["Q8_0 · none"]["top1_agreement"] == 1.0
    assert q4["decode_tok_s_p50"] == pytest.approx(100.0)  # 0.01 s per token
    assert q4["decode_tok_s_p50_ci95"] == [pytest.approx(100.0)] * 2  # the same on every example
    assert q4["prefill_tok_s_p50"] == pytest.approx(1000.0)
    assert q4["peak_rss_mib"] == 230.0 and q4["size_mb"] == pytest.approx(105.0)
    assert q4["note"] == REQUANTIZED


def test_the_front_excludes_the_dominated_variant_and_keeps_ties(sweep_dir: Path) -> None:
    rows = rows_by_key(sweep_dir)
    on_front = [k for k, r in rows.items() if r["on_front"]]
    # Q4_0 is bigger, slower, hungrier and less accurate than Q4_K_M; the two modes of a
    # variant answer alike here: ties, both on the front
    assert on_front == [k for k in rows if not k.startswith("Q4_0")]
    assert rows["Q4_0 · none"]["dominated_by"] == [
        "smollm2-135m-instruct@Q4_K_M · none",
        "smollm2-135m-instruct@Q4_K_M · mask",
    ]


def test_one_mode_and_another_metric(sweep_dir: Path) -> None:
    rows = rows_by_key(sweep_dir, constraint="mask", metric="json_exact")
    assert list(rows) == ["Q8_0 · mask", "Q4_K_M · mask", "Q4_0 · mask", "Q2_K · mask"]
    assert rows["Q2_K · mask"]["accuracy"] == pytest.approx(0.25)
    with pytest.raises(UserError, match=r"--metric nope: not a figure of this run \(it has"):
        build_sweep(load_run(sweep_dir), metric="nope")
    with pytest.raises(UserError, match=r"--arm gbnf: not a constraint mode of this run"):
        build_sweep(load_run(sweep_dir), constraint="gbnf")


def test_without_fidelity_the_columns_say_so(tmp_path: Path) -> None:
    run_dir = make_sweep_run(tmp_path / "run", modes="none", fidelity=False)
    sweep = build_sweep(load_run(run_dir))
    assert all(r.kl_mean is None and r.top1 is None for r in sweep.rows)
    console = Console(file=io.StringIO(), width=200)
    console.print(sweep_table(sweep))
    assert "no fidelity.json in this run" in console.file.getvalue()  # type: ignore[attr-defined]


def test_the_terminal_table_keeps_names_and_numbers_whole_at_80_columns(
    sweep_dir: Path,
) -> None:
    console = Console(file=io.StringIO(), width=80, color_system=None)
    console.print(Fitted(sweep_table(build_sweep(load_run(sweep_dir)))))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text
    assert "smollm2-135m-instruct@Q4_K_M" in text and "0.0412" in text


def test_a_run_of_one_model_is_no_sweep(tmp_path: Path) -> None:
    run = load_run(one_model_run(tmp_path))
    assert not is_sweep(run)


def test_the_plot_draws_every_row(sweep_dir: Path) -> None:
    (plot,) = sweep_plots(build_sweep(load_run(sweep_dir)))
    assert plot.name == "sweep-pareto" and plot.png.startswith(b"\x89PNG")
    assert "Pareto front" in plot.caption and "peak RSS" in plot.caption


def test_the_card_shows_the_sweep_table_the_plot_and_the_requantized_note(
    sweep_dir: Path, tmp_path: Path
) -> None:
    files = write_card(load_run(sweep_dir), tmp_path / "card.md", "smollm2-135m-instruct@Q2_K")
    text = files.card.read_text()
    assert tmp_path / "card-sweep-pareto.png" in files.plots
    assert "## Sweep: every variant of this run" in text
    assert "![Which variant: accuracy vs file size" in text
    assert "(card-sweep-pareto.png)" in text
    rows = [line for line in text.splitlines() if line.startswith("| smollm2-135m-instruct@")]
    sweep_rows = [
        r for r in rows if r.count("|") == 17
    ]  # the sweep table's 16 columns (runtime, engine)
    assert len(sweep_rows) == 8
    assert sum(r.rstrip(" |").endswith("no") for r in sweep_rows) == 2  # Q4_0's two modes
    assert "> **Note**: requantized from Q4\\_1: the ceiling is the source's quality." in text
    pi = text[text.index("### Raspberry Pi 4/5: does it fit? (memory)") :]
    assert "| smollm2-135m-instruct@Q8\\_0 · none | 310 | fits | fits | fits |" in pi


def test_the_report_shows_the_sweep_table_and_plot(sweep_dir: Path) -> None:
    page = render_report([load_run(sweep_dir)])
    section = page[page.index('<section class="sweep">') :]
    section = section[: section.index("</section>")]
    assert "<h2>Sweep · sweep</h2>" in section
    table = section[: section.index("</table>")]
    assert table.count("<tr>") == 9  # the header and 8 rows
    assert re.search(r'alt="Which variant: accuracy vs file size[^"]*"', section)
    assert "requantized from Q4_1" in section and "0.0412" in section
    assert "<h3>Raspberry Pi 4/5: does it fit? (memory)</h3>" in section
    assert section.count('<td data-value="fits">fits</td>') == 24  # 8 rows x 3 boards


def test_the_report_of_one_model_has_no_sweep(tmp_path: Path) -> None:
    page = render_report([load_run(one_model_run(tmp_path))])
    assert '<section class="sweep">' not in page


def test_a_fidelity_file_that_is_not_a_record_is_a_one_line_error(tmp_path: Path) -> None:
    run_dir = make_sweep_run(tmp_path / "run", modes="none")
    broken = {"schema_version": SCHEMA_VERSION, "variants": {}}  # no reference, no counts
    (run_dir / "fidelity.json").write_text(json.dumps(broken))
    with pytest.raises(UserError, match=r"fidelity.json: not a run record"):
        build_sweep(load_run(run_dir))


HOSTILE_BASE = "[bold]x[/bold]|<script>$y$"


def test_hostile_variant_names_stay_text_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.helpers.cli import stdout_of

    run_dir = make_sweep_run(tmp_path / "run", "none", 2, base=HOSTILE_BASE)
    out = stdout_of(capsys, "recommend", str(run_dir))
    assert f"{HOSTILE_BASE}@Q4_K_M · none" in " ".join(out.split())
    card = write_card(load_run(run_dir), tmp_path / "card.md", f"{HOSTILE_BASE}@Q2_K")
    text = card.card.read_text()
    sweep = text[text.index("## Sweep") : text.index("## Device")]  # Markdown, not YAML
    assert "<script>" not in sweep and "&lt;script&gt;" in sweep
    rows = [line for line in sweep.splitlines() if line.startswith("| ")]
    # the pipe never splits a cell: 14 columns in the sweep table, 5 in the Pi one
    assert {line.count(" | ") for line in rows} == {15, 4}  # 16 columns with runtime and engine
    page = render_report([load_run(run_dir)])
    section = page[page.index('<section class="sweep">') :]
    assert "<script>$y$" not in section and "&lt;script&gt;$y$" in section


def test_a_sweep_stopped_before_its_first_score_still_renders(tmp_path: Path) -> None:
    run_dir = make_sweep_run(tmp_path / "run", "none", 2)
    (run_dir / "samples.jsonl").write_text("")
    run = load_run(run_dir)
    assert not is_sweep(run)
    files = write_card(run, tmp_path / "card.md", "smollm2-135m-instruct@Q2_K")
    assert "## Sweep" not in files.card.read_text()
    assert '<section class="sweep">' not in render_report([run])
