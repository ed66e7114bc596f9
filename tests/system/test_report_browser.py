"""The HTML report in a real browser: Debian's headless Chromium loads the page from a
file, runs its script under the page's own CSP, and takes a screenshot. The leaderboard
rows must be there and sortable, and none of the hostile model output may run.

Chromium comes from the test set-up (`./install.sh dev` installs Debian's `chromium`);
a machine without it skips this test, saying why, except in CI (CI=true) with apt-get,
where it fails (tests/helpers/browser.py)."""

from __future__ import annotations

import re
import struct
import subprocess
from pathlib import Path

import pytest

from edgebench.report.html import write_report
from edgebench.summary import load_run
from tests.helpers.browser import FLAGS, find_chromium
from tests.helpers.device_runs import LAPTOP, PI5, make_fleet
from tests.helpers.pages import Elements, leaderboard_rows, table_cells
from tests.helpers.report_runs import BROWSER_IMG, BROWSER_SCRIPT, TEMPLATE_INJECTION, make_run

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def chromium() -> str:
    return find_chromium()


def browse(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [chromium, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("browser")
    outputs = [f"{BROWSER_SCRIPT} {TEMPLATE_INJECTION}", BROWSER_IMG, "{}"]
    run = make_run(base / "run", modes="none,gbnf,mask", outputs=outputs)
    return write_report([load_run(run)], base / "report.html")


@pytest.mark.parametrize(
    ("sort", "column", "first"),
    [
        ("constraint", "constraint", "gbnf"),
        # A speed column by its key, highest first: `mask` decodes twice as fast.
        ("-perf.decode_tok_s.p50", "perf.decode_tok_s.p50", "mask"),
    ],
)
def test_leaderboard_rows_appear_sortable_and_nothing_injected_runs(
    sort: str, column: str, first: str, chromium: str, page: Path, tmp_path: Path
) -> None:
    # #sort=KEY asks the page's script to sort the leaderboard by that column.
    done = browse(chromium, tmp_path / "profile", "--dump-dom", f"{page.as_uri()}#sort={sort}")
    assert done.returncode == 0, done.stderr[-2000:]
    dom = Elements(done.stdout)
    html_attrs = next(attrs for tag, attrs in dom.tags if tag == "html")
    assert "data-pwned" not in html_attrs  # neither the <script> nor onerror ran
    board = done.stdout.split('id="leaderboard"', 1)[1].split("</table>", 1)[0]
    assert 'data-sortable="ready"' in board  # the script ran: its CSP hash matched
    rows = leaderboard_rows(done.stdout)
    # Sorted by the script, not in run order (none, gbnf, mask).
    assert len(rows) == 3 and rows[0]["constraint"][0] == first
    descending = sort.startswith("-")
    value = float if column.startswith("perf.") else str
    values = [value(row[column][1]) for row in rows]
    assert values == sorted(values, reverse=descending)
    assert f'aria-sort="{"descending" if descending else "ascending"}"' in board
    raw = dom.by_class["raw-output"]
    assert f"{BROWSER_SCRIPT} {TEMPLATE_INJECTION}" in raw and BROWSER_IMG in raw


def test_screenshot_of_the_page(chromium: str, page: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    done = browse(
        chromium,
        tmp_path / "profile",
        f"--screenshot={shot}",
        "--window-size=1280,1600",
        page.as_uri(),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (1280, 1600)
    assert len(png) > 20_000  # a rendered page, not a blank one


def test_the_devices_section_of_runs_from_three_devices(chromium: str, tmp_path: Path) -> None:
    """Two units of one Raspberry Pi 5 model and a laptop: the page shows the device
    matrix grouped by model of device, the units' spread and a leaderboard per device,
    whose tables the page's script made sortable."""
    fleet = make_fleet(tmp_path / "fleet")
    runs = [load_run(path) for path in (fleet.laptop, fleet.pi_a, fleet.pi_b)]
    page = write_report(runs, tmp_path / "report.html")
    done = browse(chromium, tmp_path / "profile", "--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    section = dom.split('id="devices"', 1)[1].split("</section>", 1)[0]
    _, matrix = table_cells(section, 'id="device-matrix"')
    assert [row[0] for row in matrix] == [
        LAPTOP,
        "laptop · ucccc0000",
        PI5,
        "pi5-a · uaaaa0000",
        "pi5-b · ubbbb0000",
    ]
    assert matrix[1][2] == "—"  # the laptop never ran mask
    _, spread = table_cells(section, 'id="device-spread"')
    assert [row[:3] for row in spread] == [
        [PI5, "smollm2 · none", "2"],
        [PI5, "smollm2 · mask", "2"],
    ]
    boards = re.findall(r'<table class="sortable device-leaderboard"[^>]*>', section)
    assert len(boards) == 3 and all('data-sortable="ready"' in b for b in boards)
