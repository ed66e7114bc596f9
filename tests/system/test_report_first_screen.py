"""The leaderboard at first sight, in a real browser: at 1280x800 and at 1920x1080 the
row's identity, the task's headline scores and every cost column (TTFT, decode tok/s,
latency, peak RSS) lie inside the viewport without scrolling; the other columns wait in
the column chooser and appear when ticked. Headless Chromium is driven over its
DevTools pipe (tests/helpers/browser.py) and its screenshots are checked too."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from edgebench.report.html import write_report
from edgebench.summary import load_run
from tests.helpers.browser import DevTools, find_chromium
from tests.helpers.report_runs import make_run

pytestmark = pytest.mark.browser

IDENTITY = ["run", "device", "model", "quant", "runtime", "constraint", "engine", "n"]
HEADLINE = ["metric:json_exact", "metric:field_f1", "metric:schema_compliance"]
COST = ["perf.ttft_s.p50", "perf.decode_tok_s.p50", "perf.latency_s.p50", "perf.peak_rss_mb"]
FIRST_SCREEN = IDENTITY + HEADLINE + COST
# A long but real-looking row: a laptop CPU name, a VM, a long model label.
DEVICE = {
    "cpu_model": "11th Gen Intel(R) Core(TM) i7-1185G7 @ 3.00GHz",
    "hypervisor": True,
    "ram_total_mb": 15_872,
    "threads_used": 4,
}
LONG_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"

# Each leaderboard header: its key, whether it is hidden, and its box in the viewport.
HEADERS = """Array.from(document.querySelectorAll('#leaderboard thead th')).map(th => {
  const box = th.getBoundingClientRect();
  return {key: th.dataset.key, hidden: th.hidden,
          left: box.left, right: box.right, top: box.top, bottom: box.bottom};
})"""
FIRST_ROW = """Array.from(document.querySelector('#leaderboard tbody tr').cells)
  .filter(td => !td.hidden).map(td => {
  const box = td.getBoundingClientRect();
  return {left: box.left, right: box.right, top: box.top, bottom: box.bottom};
})"""


@pytest.fixture(scope="module")
def chromium() -> str:
    return find_chromium()


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two run folders of the same name (a run and its copy elsewhere) and a third run
    with a long folder name and a long model label on a VM: six rows."""
    base = tmp_path_factory.mktemp("first-screen")
    runs = [
        make_run(base / "laptop" / "two", modes="none,mask", outputs=["{}"]),
        make_run(base / "copy" / "two", modes="none,mask", outputs=["{}"]),
        # A folder named as `run` names it by default: long, with no space to wrap at.
        make_run(
            base / f"20261126T003657-{LONG_MODEL}-edgejson",
            modes="none,gbnf",
            model_label=LONG_MODEL,
            device=DEVICE,
        ),
    ]
    return write_report([load_run(run) for run in runs], base / "report.html")


@pytest.mark.parametrize(
    ("width", "height"),
    # At 1280 px the runtime and engine wrap at their spaces and the cells are
    # narrower (report.css), so peak RSS, the last cost column, still fits.
    [(1280, 800), (1920, 1080)],
)
def test_headline_and_cost_columns_are_on_the_first_screen(
    width: int, height: int, chromium: str, page: Path, tmp_path: Path
) -> None:
    with DevTools(chromium, tmp_path / "profile", width, height) as browser:
        browser.open(page.as_uri())
        assert browser.evaluate("[innerWidth, innerHeight]") == [width, height]
        headers = browser.evaluate(HEADERS)
        first_row = browser.evaluate(FIRST_ROW)
        shot = browser.screenshot(tmp_path / f"report-{width}x{height}.png")
    shown = [h["key"] for h in headers if not h["hidden"]]
    assert shown == FIRST_SCREEN  # and nothing else until the chooser shows it
    for header in headers:
        if header["hidden"]:
            continue
        inside = (
            0 <= header["left"] < header["right"] <= width
            and 0 <= header["top"] < header["bottom"] <= height
        )
        assert inside, json.dumps(header)
    # The first row's figures are on screen too, under their headers.
    assert len(first_row) == len(FIRST_SCREEN)
    for box in first_row:
        assert 0 <= box["left"] < box["right"] <= width and box["bottom"] <= height, box
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (width, height)


def test_the_column_chooser_shows_a_hidden_column(
    chromium: str, page: Path, tmp_path: Path
) -> None:
    with DevTools(chromium, tmp_path / "profile", 1280, 800) as browser:
        browser.open(page.as_uri())
        hidden = browser.evaluate(
            "Array.from(document.querySelectorAll('#leaderboard td:nth-child(20)'))"
            ".every(td => td.hidden)"
        )
        browser.evaluate(
            "document.querySelector('#column-chooser input[data-key=\"perf.load_s\"]').click()"
        )
        headers = {h["key"]: h for h in browser.evaluate(HEADERS)}
        # A hidden column asked for by the address (#sort=KEY) is shown and sorted.
        browser.open("about:blank")  # a new load: a changed #hash alone loads nothing
        browser.open(page.as_uri() + "#sort=-perf.wall_s")
        sorted_by = browser.evaluate(
            "[document.querySelector('#leaderboard th[data-key=\"perf.wall_s\"]').hidden,"
            " document.querySelector('#leaderboard th[aria-sort]').dataset.key,"
            " document.querySelector('#column-chooser input[data-key=\"perf.wall_s\"]').checked]"
        )
    assert hidden
    assert not headers["perf.load_s"]["hidden"] and headers["perf.load_s"]["right"] > 0
    assert headers["perf.prefill_tok_s.p50"]["hidden"]  # the others stay hidden
    assert sorted_by == [False, "perf.wall_s", True]
