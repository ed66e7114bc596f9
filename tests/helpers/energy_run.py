"""A labelled FAKE run with energy and heat, for the card excerpt and plot of docs/energy.md:
the fake backend (fixed timings that slow as the fake CPU heats), a fake Raspberry Pi 5
/sys tree whose temperature climbs and whose firmware caps the clock at 80 °C, and a
fake power meter (a known function of time). No model, no real sensor: every figure it
produces is the fake's.

    python -m tests.helpers.energy_run OUT_DIR      # then: edgebench card OUT_DIR/run

Reproducible in shape (the same examples, answers, tree and power law); the wall-clock
times are those of the moment it runs.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from edgebench.backends.base import DecodeSettings, Generation
from edgebench.backends.fake import FakeBackend, FakeTimings
from edgebench.runfolder.records import DatasetRecord, RunSettings
from edgebench.runner.engine import RunResult, execute
from edgebench.runner.request import RunEnvironment, RunRequest
from edgebench.system.heat import heat_sample
from edgebench.system.tree import SystemTree
from tests.helpers.device_trees import cpu_files, pi5_tree, write
from tests.helpers.fakes import RIGHT, WRONG, EchoTask, fake_model, in_process
from tests.helpers.fakes import examples as make_examples
from tests.helpers.power import FakePower

CAP_C = 80.0  # the Pi 5 firmware's soft limit: the clock is capped from here
ANSWERS = [RIGHT, RIGHT, WRONG, RIGHT, "not json", RIGHT] * 8


class WarmingPi:
    """The fake Pi's /sys as time passes: 45 °C rising 5 °C a second to 85 °C; at
    CAP_C the firmware caps the clock from 2400 to 1500 MHz and sets its bits."""

    def __init__(self, root: Path) -> None:
        self.root = pi5_tree(root)
        self.t0 = time.time()

    def temp_c(self) -> float:
        return min(45.0 + 5.0 * (time.time() - self.t0), 85.0)

    def capped(self) -> bool:
        return self.temp_c() >= CAP_C

    def read(self) -> dict[str, object]:
        capped = self.capped()
        mhz = 1500 if capped else 2400
        write(
            self.root,
            {
                "sys/class/thermal/thermal_zone0/temp": f"{round(self.temp_c() * 1000)}\n",
                # freq_capped_now + soft_temp_limit_now, and their "occurred" bits
                "sys/devices/platform/soc/soc:firmware/get_throttled": "a000a\n"
                if capped
                else "0\n",
                **cpu_files([0, 1, 2, 3], "ondemand", 2_400_000, mhz * 1000),
            },
        )
        return heat_sample(SystemTree(self.root))


class SlowingBackend(FakeBackend):
    """The fake backend, its decode slower while the fake Pi's clock is capped."""

    def __init__(self, pi: WarmingPi) -> None:
        super().__init__(ANSWERS, timings=FakeTimings(per_output_token=0.02), delay_s=0.15)
        self.pi = pi

    def generate(self, prompt: str, settings: DecodeSettings) -> Generation:
        per_token = 0.032 if self.pi.capped() else 0.02
        self.timings = FakeTimings(per_output_token=per_token)
        return super().generate(prompt, settings)


def fake_energy_run(out: Path) -> RunResult:
    pi = WarmingPi(Path(tempfile.mkdtemp(prefix="edgebench-fake-pi-")))
    # the fake meter: 2.6 W idle, more while the fake CPU is hot
    meter = FakePower(
        lambda t: 2.6 + 3.4 * min(max(t - pi.t0 - 2.0, 0.0), 1.0) + 0.02 * (pi.temp_c() - 45)
    )
    settings = RunSettings(out=out, warmup=False, idle_baseline=2.0, constraints=("none", "mask"))
    request = RunRequest(
        settings,
        [fake_model("fake-model")],
        EchoTask(),
        make_examples(24),
        DatasetRecord(path="fake-examples"),
    )
    environment = RunEnvironment(
        worker_factory=in_process(SlowingBackend(pi)),
        power=meter.choice(),
        timeline_interval=1.0,
        heat=pi.read,
    )
    return execute(request, environment)


if __name__ == "__main__":
    result = fake_energy_run(Path(sys.argv[1]) / "run")
    print(result.run_dir)
