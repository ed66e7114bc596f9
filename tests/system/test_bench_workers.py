"""`edgebench bench` with real worker processes (on the fake backend): the OpenMP pinning
reaches each worker's environment, unless the user set the variables or passed
--no-pin, and never leaks into edgebench's own environment."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.worker import BackendWorker
from edgebench.bench.execute import BenchSettings, execute_bench, pin_environment
from tests.helpers.bench_fakes import bench_model

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/environ").exists(), reason="reads /proc/PID/environ"
)
OMP = ("OMP_PROC_BIND", "OMP_PLACES", "OMP_WAIT_POLICY", "GOMP_CPU_AFFINITY")


def environ_of(pid: int) -> dict[str, str]:
    items = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in items if b"=" in item)


def bench_in_workers(tmp_path: Path, pin: bool) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """A bench at 1 and 2 threads in real worker processes; the report and what each
    worker's environment held of the OpenMP variables."""
    seen: list[dict[str, str]] = []

    def factory(model: Any, threads: int) -> BackendWorker:
        worker = BackendWorker("fake", {})
        seen.append({k: v for k, v in environ_of(worker.pid).items() if k in OMP})
        return worker

    settings = BenchSettings(
        threads=(1, 2),
        prompt_tokens=(8,),
        gen_tokens=(2,),
        repetitions=1,
        pin=pin,
        out=tmp_path / f"bench-{pin}.json",
    )
    report = execute_bench(settings, [bench_model()], worker_factory=factory, root=tmp_path).report
    assert report["status"] == "completed"
    assert all(w["memory"]["peak_rss_mb"] > 0 for w in report["workers"])
    return report, seen


def test_pinning_reaches_the_worker_unless_the_user_set_the_variables(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in OMP:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OMP_PLACES", "threads")  # the user's choice wins over "cores"
    assert pin_environment(True) == {"OMP_PROC_BIND": "close"}
    report, seen = bench_in_workers(tmp_path, pin=True)
    expected = {"OMP_PROC_BIND": "close", "OMP_PLACES": "threads"}
    assert report["settings"]["thread_environment"] == expected
    assert seen == [expected, expected]
    assert "OMP_PROC_BIND" not in os.environ  # set only while each worker starts


def test_no_pin_leaves_the_worker_environment_alone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in OMP:
        monkeypatch.delenv(name, raising=False)
    assert pin_environment(False) == {}
    report, seen = bench_in_workers(tmp_path, pin=False)
    assert report["settings"]["thread_environment"] == {}
    assert seen == [{}, {}]
