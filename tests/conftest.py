"""Shared fixtures and the test tiers. Tests marked `model` need the real SmolLM2 file in
the model cache; outside CI they skip when it is missing, in CI (CI=true) they fail
instead, so a missing install step can never turn into a silently green run.

Layout: tests/unit mirrors the package and runs no model, no browser and no real
subprocess; tests/system starts real processes (workers, the CLI, a browser);
tests/integration runs the real SmolLM2 (marker `model`). Shared code lives in
tests/helpers; this file holds only fixtures and hooks, and no test module imports
another or a conftest (tests/unit/test_tests_hygiene.py).

Tiers: `python -m pytest` runs the fast tier, tests/unit without the tests marked `slow`
(a couple of minutes on two cores); `python -m pytest --all` runs everything (what CI
runs). Every test in tests/system and tests/integration is marked `slow` here, and the
fast tier does not even import those folders. The slow tier still runs, without `--all`,
when the command line asks for it:
- a path inside tests/system or tests/integration (a folder, a file or a test id), or
  the file of a `slow` test in tests/unit, runs what it names (`tests` or `tests/unit`
  names a whole tier, not the slow tests in it);
- any `-m` expression selects by marker across all tiers: `-m browser`, `-m model`,
  `-m "not model"` (everything but the real model), `-m slow` (only the slow tier),
  `-m "not slow"` (the fast tier again)."""

from __future__ import annotations

import gc
import signal
import socket
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.runfolder.records import DatasetRecord, RunSettings
from edgebench.runner.cooling import Waits
from edgebench.runner.engine import RunResult, execute
from edgebench.runner.jobs import GreedyRun
from edgebench.runner.request import RunEnvironment, RunRequest
from edgebench.system.power import PowerChoice
from tests.helpers.cpu_times import CLEAN, always
from tests.helpers.fakes import EchoTask, fake_model, in_process
from tests.helpers.fakes import examples as make_examples
from tests.helpers.needs import smollm2_path, unavailable
from tests.helpers.run_fake import NOTHING_READABLE, RunFake
from tests.helpers.tiers import (
    HINT,
    folder_named,
    named_paths,
    names_test,
    reaches,
    slow_folder,
    slow_unit_tests,
    unit_id,
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--all",
        action="store_true",
        dest="all_tiers",
        help="run every tier: tests/system, tests/integration and the tests marked `slow` "
        "too (default: the fast tier; see tests/conftest.py)",
    )


def _named(config: pytest.Config) -> list[Path]:
    """Paths typed on the command line (none when pytest fell back to `testpaths`)."""
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        return []
    return named_paths(config.args, config.invocation_params.dir)


def _every_tier(config: pytest.Config) -> bool:
    return bool(config.getoption("all_tiers") or config.getoption("markexpr"))


# what the fast tier left out, for the closing line
_LEFT_OUT = pytest.StashKey[dict[str, int]]()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The fast tier does not even import tests/system and tests/integration."""
    folder = slow_folder(collection_path)
    named = _named(config)
    if folder is None or _every_tier(config) or folder_named(folder, named):
        return None
    if reaches(folder, named):
        config.stash.setdefault(_LEFT_OUT, {})[f"tests/{folder.name}"] = 1
    return True


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark `slow` the slow folders' tests and those tests/slow_tests.txt lists; leave out
    the ones the command line did not name."""
    slow_units = slow_unit_tests()
    for item in items:
        in_slow_folder = slow_folder(item.path) is not None
        if in_slow_folder or unit_id(item.path, item.name) in slow_units:
            item.add_marker(pytest.mark.slow)
    if _every_tier(config):
        return
    named = _named(config)
    keep, left_out = [], []
    for item in items:
        slow = item.get_closest_marker("slow") and not names_test(item.path, named)
        (left_out if slow else keep).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = keep
        config.stash.setdefault(_LEFT_OUT, {})["slow"] = len(left_out)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collection built (imported modules, the collected items): it lives for
    the whole session, and without this every full collection of the cyclic GC walks it
    again (seconds of the fast tier's CPU time)."""
    gc.freeze()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    left_out = config.stash.get(_LEFT_OUT, {})
    if left_out:
        parts = [name for name in left_out if name != "slow"]
        if "slow" in left_out:
            parts.append(f"{left_out['slow']} tests marked `slow`")
        terminalreporter.write_line(f"fast tier, left out: {', '.join(parts)}; {HINT}")


# What a command started from a terminal finds: Python's Ctrl-C handler, SIGTERM and SIGHUP
# left to the system. Each test starts from it, so a handler one test (or a library it
# drives) leaves behind cannot change what the next test's run installs.
_TERMINAL_SIGNALS = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
if hasattr(signal, "SIGHUP"):
    _TERMINAL_SIGNALS[signal.SIGHUP] = signal.SIG_DFL


@pytest.fixture(autouse=True)
def _signals_as_in_a_terminal() -> Iterator[None]:
    previous = {signum: signal.signal(signum, h) for signum, h in _TERMINAL_SIGNALS.items()}
    yield
    for signum, handler in previous.items():
        signal.signal(signum, handler)


@pytest.fixture(scope="session")
def smollm2() -> Path:
    path = smollm2_path()
    if path is None:
        message = (
            "SmolLM2 is not in the model cache: run `edgebench models pull smollm2-135m-instruct`"
        )
        unavailable(message)
    return path


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Connections allowed to the loopback only (a local fake Hub); the test fails if it
    reached anything else."""
    from tests.helpers.fake_hub import loopback_only

    calls = loopback_only(monkeypatch)
    yield calls
    assert calls == [], "a test reached beyond the loopback fake hub"


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record any attempt to open a connection or URL; a test asserts the list stays empty.

    Recording (rather than only raising) matters: an exception raised here could be
    swallowed by a reference resolver and look like a proper refusal.
    """
    calls: list[str] = []

    def refuse(*args: object, **kwargs: object) -> None:
        calls.append(repr(args))
        raise OSError("network used in a test")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    return calls


@pytest.fixture
def run_fake(tmp_path: Path) -> RunFake:
    """`run_fake(outputs_or_backend, n=3, **settings)`: a whole run of the fake model on
    `n` echo examples (or `examples=`), in this process, into tmp_path/run (or `out=`).
    Keywords that are not RunSettings: `models`, `task_impl` (the Task; `task` is the
    setting), `examples`, `dataset_record`, `kind`, `factory` (a worker factory instead
    of the in-process fake), `progress`, `resume`, `waits` (runner/cooling.Waits),
    `power` (a PowerChoice; default: no source), `timeline_interval`, `heat` (the
    timeline's heat reader; default: nothing readable), `fidelity_factory` (teacher
    forcing for the fidelity phase of a run with variants), `device_name` (--device-name),
    `cpu_times` (a factory of CPU-time sources; default: a quiet fake machine)."""

    def run(
        outputs: list[str] | FakeBackend | None = None,
        n: int = 3,
        *,
        models: list[Any] | None = None,
        task_impl: Any = None,
        examples: list[Any] | None = None,
        dataset_record: DatasetRecord | None = None,
        kind: Any = None,
        factory: Any = None,
        progress: Any = None,
        resume: bool = False,
        waits: Any = None,
        power: Any = None,
        timeline_interval: float = 1.0,
        heat: Any = None,
        fidelity_factory: Any = None,
        device_name: str | None = None,
        cpu_times: Any = None,
        **settings: Any,
    ) -> RunResult:
        backend = outputs if isinstance(outputs, FakeBackend) else FakeBackend(outputs)
        settings = {"out": tmp_path / "run", "warmup": False, **settings}
        request = RunRequest(
            RunSettings(**settings),
            models or [fake_model()],
            task_impl or EchoTask(),
            examples if examples is not None else make_examples(n),
            dataset_record or DatasetRecord(path="mem"),
            kind=kind or GreedyRun(),
            resume=resume,
            device_name=device_name,
        )
        environment = RunEnvironment(
            worker_factory=factory or in_process(backend),
            progress=progress,
            waits=waits or Waits(),
            # no machine's power source (nor its idle baseline) in a fake run, unless given
            power=power or PowerChoice(None, None, "no power source in tests"),
            timeline_interval=timeline_interval,
            # the timeline reads no machine in a fake run (same figures everywhere)
            heat=heat or (lambda: dict(NOTHING_READABLE)),
            fidelity_factory=fidelity_factory,
            # a quiet machine unless a test says otherwise (tests/helpers/cpu_times.py)
            cpu_times=cpu_times or always(CLEAN),
        )
        return execute(request, environment)

    return run
