"""`card` and `report` given what `edgebench bench` wrote (`--out`) or printed
(`--format json`): a speed table (tok/s per pp/tg row, peak RSS, quantization, device),
not an error; alone or next to run folders; a file that is neither is one line."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from edgebench.bench.execute import BenchSettings, execute_bench
from edgebench.cli.app import main
from edgebench.report import plots
from edgebench.report.bench_table import rows_json, speed_rows
from edgebench.report.plots import speed_over_time
from edgebench.runfolder.records import BenchRecord
from tests.helpers.bench_fakes import SpeedWorkers, TimedWorker, bench_model
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.inline_prompts import chat_templates_in_process
from tests.helpers.report_runs import make_run
from tests.helpers.waits import FakeTime


@contextlib.contextmanager
def patch_savefig(drawn: list[Any]) -> Iterator[None]:
    """Keep each figure `plots` turns into PNG bytes, to read its labels."""
    png = plots._png

    def keep(plt: Any, figure: Any) -> bytes:
        drawn.append(figure)
        return png(plt, figure)

    plots._png = keep  # type: ignore[assignment]
    try:
        yield
    finally:
        plots._png = png  # type: ignore[assignment]


def bench_file(tmp_path: Path, *, status: str | None = None) -> Path:
    """A bench of two models (Q4_1 and Q8_0) at 1 thread: pp8 and tg2 each."""
    out = tmp_path / "speed-bench.json"
    models = [bench_model(label="alpha"), bench_model(label="beta", quantization="Q8_0")]
    settings = BenchSettings(
        threads=(1,), prompt_tokens=(8,), gen_tokens=(2,), repetitions=2, out=out
    )
    execute_bench(settings, models, worker_factory=SpeedWorkers(), root=tmp_path)
    if status is not None:  # as a stopped bench leaves it
        report = json.loads(out.read_text())
        report["status"] = status
        out.write_text(json.dumps(report))
    return out


def table_rows(markdown: str) -> list[list[str]]:
    return [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in markdown.splitlines()
        if line.startswith("|")
    ]


def test_card_of_a_bench_file_is_a_speed_table(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = bench_file(tmp_path)
    code, err = run_cli(capsys, "card", str(path))
    assert code == 0, err
    card = path.with_suffix(".md").read_text()
    header, _, *rows = table_rows(card)
    assert header == ["model", "quant", "threads", "test", "tok/s", "peak RSS MiB"]
    assert [(r[0], r[1], r[3]) for r in rows] == [
        ("alpha", "Q4_1", "pp8"),
        ("alpha", "Q4_1", "tg2"),
        ("beta", "Q8_0", "pp8"),
        ("beta", "Q8_0", "tg2"),
    ]
    assert all(re.fullmatch(r"\d+\.\d\d ± \d+\.\d\d", r[4]) for r in rows)
    assert all(r[5].isdigit() for r in rows)
    assert card.startswith("# Speed of alpha, beta")
    # one device: said once above the table
    assert "\nDevice: " in card and "over 2 repetitions after 1 warm-up" in card


def test_rows_from_several_devices_get_a_device_column(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = speed_rows(BenchRecord.from_json(json.loads(bench_file(tmp_path).read_text())))
    pi = "Raspberry Pi 5 · 4 cores"
    rows[2:4] = [replace(row, device=pi) for row in rows[2:4]]
    printed = tmp_path / "two-devices.json"
    printed.write_text(rows_json(rows))
    assert run_cli(capsys, "card", str(printed))[0] == 0
    header, _, *cells = table_rows(printed.with_suffix(".md").read_text())
    assert header[2] == "device"
    assert [c[2] for c in cells][1:3] == [rows[1].device, "Raspberry Pi 5 · 4 cores"]


def test_card_of_one_model_of_a_bench_and_of_the_printed_rows(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = bench_file(tmp_path)
    card = tmp_path / "beta.md"
    assert run_cli(capsys, "card", str(path), "--model", "beta", "-o", str(card))[0] == 0
    assert {r[0] for r in table_rows(card.read_text())[2:]} == {"beta"}
    code, err = run_cli(capsys, "card", str(path), "--model", "gamma")
    assert_one_line_error(code, err, "'gamma'", "alpha, beta")
    # what `bench --format json` prints is read as well
    printed = tmp_path / "rows.json"
    printed.write_text(rows_json(speed_rows(BenchRecord.from_json(json.loads(path.read_text())))))
    assert run_cli(capsys, "card", str(printed))[0] == 0
    assert len(table_rows(printed.with_suffix(".md").read_text())) == 2 + 4


def test_a_stopped_bench_says_its_rows_are_partial(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = bench_file(tmp_path, status="interrupted")
    assert run_cli(capsys, "card", str(path))[0] == 0
    assert "The bench ended interrupted" in path.with_suffix(".md").read_text()


def test_report_of_bench_files_alone_and_next_to_a_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = bench_file(tmp_path)
    alone = tmp_path / "speed.html"
    code, err = run_cli(capsys, "report", str(path), "--html", str(alone))
    assert code == 0, err
    page = alone.read_text()
    assert "<h2>Speed · speed-bench.json</h2>" in page and "Q8_0" in page and "tg2" in page
    assert page.count("<tr>") == 1 + 4

    with chat_templates_in_process():
        run = make_run(tmp_path / "run", modes="none", n=1)
    both = tmp_path / "both.html"
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(run), str(path), "--html", str(both)])
    assert not exit_info.value.code
    page = both.read_text()
    assert "Leaderboard" in page and "<h2>Speed · speed-bench.json</h2>" in page
    assert page.index("Leaderboard") < page.index("Speed ·") < page.index("</body>")
    assert "1 run, 1 bench file" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ('{"kind": "something-else"}', "not a run folder or a JSON file of `edgebench bench`"),
        ('{"kind": "edgebench-bench", "status": "done"}', "not a bench record"),
        ('[{"threads": "two"}]', "not the rows of `edgebench bench`"),
        ('{"kind": "edgebench-bench", "schema_version": "9.0"}', "format 9.0"),
    ],
)
def test_a_file_that_is_not_a_bench_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, fragment: str
) -> None:
    path = tmp_path / "x.json"
    path.write_text(text)
    for command in (["card", str(path)], ["report", str(path), "--html", str(tmp_path / "r.html")]):
        code, err = run_cli(capsys, *command)
        assert_one_line_error(code, err, str(path), fragment)


def test_compare_given_a_bench_file_says_what_reads_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = bench_file(tmp_path)
    code, err = run_cli(capsys, "compare", str(path), str(path))
    assert_one_line_error(code, err, str(path), "not a run folder", "`card` and `report`")


def sustained_file(tmp_path: Path) -> Path:
    """A `--duration 3m` bench of tg100: 100 tok/s for a minute, 80 after (fake clock)."""
    out = tmp_path / "sustained-bench.json"
    time = FakeTime()
    settings = BenchSettings(
        threads=(1,), prompt_tokens=(0,), gen_tokens=(100,), duration_s=180.0, out=out
    )
    execute_bench(
        settings,
        [bench_model(label="alpha")],
        worker_factory=lambda model, threads: TimedWorker(
            time, lambda t: 100.0 if t < 60 else 80.0
        ),
        root=tmp_path,
        waits=time.waits(),
    )
    return out


def test_card_and_report_of_a_duration_bench_show_the_drop_and_plot_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = sustained_file(tmp_path)
    code, err = run_cli(capsys, "card", str(path))
    assert code == 0, err
    card = path.with_suffix(".md").read_text()
    header, _, row = table_rows(card)
    at = header.index("tok/s")  # (no device line from a fake tree: a device column)
    assert header[at:] == ["tok/s", "1st min t/s", "last min t/s", "drop", "peak RSS MiB"]
    assert row[at + 1 : at + 4] == ["100.00", "80.00", "20.0%"]
    assert "the repetitions of 180 s after 1 warm-up" in card
    assert "first and last minute" in card

    page_path = tmp_path / "speed.html"
    code, err = run_cli(capsys, "report", str(path), "--html", str(page_path))
    assert code == 0, err
    page = page_path.read_text()
    assert '<img src="data:image/png;base64,' in page and 'alt="Tokens/s over time"' in page
    assert "img-src data:" in page  # the page's policy lets its own plot show
    assert "shaded bands are the first and last minute" in page


def test_the_speed_plot_is_labelled(tmp_path: Path) -> None:
    report = BenchRecord.from_json(json.loads(sustained_file(tmp_path).read_text()))
    rows = speed_rows(report)
    drawn: list[Any] = []
    with patch_savefig(drawn):
        plot = speed_over_time(rows, "a test device")
    assert plot is not None and plot.name == "speed-over-time"
    (figure,) = drawn
    (ax,) = figure.axes
    assert ax.get_ylabel() == "tokens/s, higher is better"
    assert ax.get_xlabel() == "seconds since the row's first timed repetition"
    title = figure._suptitle.get_text()
    assert title.startswith("Tokens/s over time\nalpha (Q4_1) · a test device · n=")
    labels = [t.get_text() for t in figure.legends[0].get_texts()]
    assert labels == ["tg100 · 1 thread, drop 20.0%", "first minute", "last minute"]


def test_a_bench_without_duration_has_no_speed_plot(tmp_path: Path) -> None:
    rows = speed_rows(BenchRecord.from_json(json.loads(bench_file(tmp_path).read_text())))
    assert speed_over_time(rows, None) is None
