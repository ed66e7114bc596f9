"""`edgebench report --html`: one self-contained page, a restrictive CSP, autoescape for
every template, hostile text inert and intact, a leaderboard whose cells and sort keys
are the runs' figures, generic breakdowns, and clear errors."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest
from jinja2 import DictLoader

from edgebench.cli.app import main
from edgebench.report.html import environment, render_report
from edgebench.summary import LoadedRun, load_run
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.inline_prompts import chat_templates_in_process
from tests.helpers.pages import Elements, leaderboard_rows
from tests.helpers.report_runs import (
    CHAT_TEMPLATE,
    HOSTILE_OUTPUTS,
    IMG,
    MODEL_LABEL,
    PIPE,
    SCRIPT,
    make_run,
)

# The leaderboard's speed and memory columns by sort key: the keys are what a shared
# address sorts by (#sort=KEY), so they stay as they are.
PERF_KEYS = {
    "perf.ttft_s.p50": lambda a: a.perf.ttft_s.p50,
    "perf.prefill_tok_s.p50": lambda a: a.perf.prefill_tok_s.p50,
    "perf.decode_tok_s.p50": lambda a: a.perf.decode_tok_s.p50,
    "perf.decode_tok_s.p95": lambda a: a.perf.decode_tok_s.p95,
    "perf.latency_s.p50": lambda a: a.perf.latency_s.p50,
    "perf.latency_s.p95": lambda a: a.perf.latency_s.p95,
    "perf.peak_rss_mb": lambda a: a.perf.peak_rss_mb,
    "perf.load_s": lambda a: a.perf.load_s,
}


@pytest.fixture(scope="module")
def run_dirs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    base = tmp_path_factory.mktemp("html")
    with chat_templates_in_process():
        return [
            make_run(base / "first", depth=True),
            make_run(base / "second", modes="none", parse="reference"),
        ]


@pytest.fixture(scope="module")
def runs(run_dirs: list[Path]) -> list[LoadedRun]:
    return [load_run(d) for d in run_dirs]


@pytest.fixture(scope="module")
def page_html(runs: list[LoadedRun]) -> str:
    return render_report(runs)


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def test_page_is_self_contained_behind_a_restrictive_csp(page_html: str) -> None:
    page = Elements(page_html)
    meta = [a for t, a in page.tags if t == "meta" and a.get("http-equiv")]
    assert meta and meta[0]["http-equiv"] == "Content-Security-Policy"
    # Right after the charset, before anything it governs.
    assert page.tags[:4] == [
        ("html", {"lang": "en"}),
        ("head", {}),
        ("meta", {"charset": "utf-8"}),
        ("meta", meta[0]),
    ]
    csp = dict(part.strip().split(" ", 1) for part in meta[0]["content"].split(";"))
    assert csp["default-src"] == "'none'" and csp["img-src"] == "data:"
    assert csp["script-src"] == _hash(page.raw_script)  # only the page's own script runs
    assert csp["style-src"] == _hash(page.raw_style)
    assert csp["base-uri"] == "'none'" and csp["form-action"] == "'none'"
    # One script, inline; images only as data; nothing that loads from elsewhere.
    assert [t for t, _ in page.tags].count("script") == 1
    for tag, attrs in page.tags:
        assert "src" not in attrs or attrs["src"].startswith("data:image/png;base64,"), tag
        assert "href" not in attrs, tag
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)


def test_hostile_text_is_inert_and_intact_in_the_page(page_html: str) -> None:
    page = Elements(page_html)
    raw = page.by_class["raw-output"]
    for output in HOSTILE_OUTPUTS:
        assert output in raw  # verbatim: newlines, fences, quotes, pipes, braces
    assert f"{SCRIPT} {PIPE}" in page.by_class["prompt"][0]  # the dataset text
    assert f"{SCRIPT} {IMG} {PIPE}" in page.text  # the GGUF name
    assert CHAT_TEMPLATE in page.text and MODEL_LABEL in page.text
    assert "<script>alert(1)</script>" not in page_html
    assert "<img src=x" not in page_html


def test_leaderboard_has_a_row_per_model_and_mode_with_its_figures(
    page_html: str, runs: list[LoadedRun]
) -> None:
    body = page_html.split('id="leaderboard"', 1)[1].split("</table>", 1)[0]
    for column in ("JSONExact", "Field F1", "Schema", "decode tok/s p50", "peak RSS (MiB)"):
        assert f">{column}</th>" in body
    rows = leaderboard_rows(page_html)
    arms = [(run, arm) for run in runs for arm in run.summary.arms]
    assert len(rows) == len(arms) == 4  # 3 modes + 1 mode
    for row, (run, arm) in zip(rows, arms, strict=True):
        assert row["run"][0] == run.run_id and row["model"][0] == MODEL_LABEL
        assert row["constraint"][0] == arm.constraint and row["n"][1] == "3"
        for name in ("json_exact", "field_f1", "schema_compliance", "valid_json"):
            assert float(row[f"metric:{name}"][1]) == pytest.approx(arm.metrics[name])
        assert set(PERF_KEYS) <= set(row)
        for key, read in PERF_KEYS.items():
            assert float(row[key][1]) == pytest.approx(read(arm)), key
    # The fake decodes `mask` twice as fast as `none`; the page sorts on the numbers.
    first = {row["constraint"][0]: row for row in rows[:3]}
    # each p50 over its 95% interval (the fake's speed is the same on every example)
    assert first["mask"]["perf.decode_tok_s.p50"][0] == "200.0 [200.0, 200.0]"
    assert first["none"]["perf.decode_tok_s.p50"][0] == "100.0 [100.0, 100.0]"
    assert first["mask"]["decode_ratio_to_none"][0] == "2.00 [2.00, 2.00]"  # paired


def test_every_breakdown_the_runs_have_gets_a_table(page_html: str) -> None:
    for name in ("complexity", "depth", "schema"):
        assert f"<h2>By {name}</h2>" in page_html


def test_each_answer_shows_its_scores_and_details(page_html: str) -> None:
    text = Elements(page_html).text
    # Every family's scores and details, nested as `a.b`, next to the raw output.
    assert "scores.edgejson.valid_json" in text and "scores.edgejson.json_exact" in text
    assert "score_details.edgejson.schema_errors" in text
    assert "parse.path" in text and "timings.decode_tok_s" in text


def test_plots_are_inline_pngs(page_html: str) -> None:
    images = [a for t, a in Elements(page_html).tags if t == "img"]
    titles = {a["alt"] for a in images}
    assert {"Accuracy by complexity", "Accuracy by depth", "Latency distribution"} <= titles
    for attrs in images:
        png = base64.b64decode(attrs["src"].split(",", 1)[1])
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and int(attrs["width"]) > 100


@pytest.mark.parametrize("name", ["page.html", "notes.txt", "card.md", "no_suffix"])
def test_autoescape_is_on_whatever_the_template_name(name: str) -> None:
    env = environment().overlay(loader=DictLoader({name: "<p>{{ x }}</p>"}))
    rendered = env.get_template(name).render(x=IMG)
    assert rendered == "<p>&#34;&gt;&lt;img src=x onerror=alert(1)&gt;</p>"


def test_cli_writes_the_page(
    run_dirs: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.html"
    with pytest.raises(SystemExit) as done:
        main(["report", *map(str, run_dirs), "--html", str(out), "--title", SCRIPT])
    assert not done.value.code
    printed = capsys.readouterr().out
    assert printed.startswith(f"report: {out} (") and "2 runs" in printed
    text = out.read_text()
    assert "<title>&lt;script&gt;alert(1)&lt;/script&gt;</title>" in text
    assert not list(tmp_path.glob(".*tmp"))


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["nope"], "no such run folder"),
        (["RUN", "--html", "report.txt"], "expected a .html or .htm file name"),
        (["RUN", "--html", "."], "is a folder"),
        (["RUN", "--html", "missing/r.html"], "does not exist"),
    ],
)
def test_report_errors_are_one_line(
    args: list[str],
    fragment: str,
    run_dirs: list[Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    args = [str(run_dirs[0]) if a == "RUN" else a for a in args]
    code, err = run_cli(capsys, "report", *args)
    assert_one_line_error(code, err, fragment)


def test_each_run_shows_how_its_json_was_extracted(page_html: str) -> None:
    assert page_html.count("JSON extraction (--parse)") == 2
    assert "reference (edgejson-harness)" in page_html and ">lenient<" in page_html
