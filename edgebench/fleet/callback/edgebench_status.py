"""Ansible stdout callback for `edgebench fleet run`: one JSON line per task result on a
host (and one at the end with each host's recap), which `fleet run` reads from
ansible-playbook's stdout to print its own status lines and table (fleet/status.py).
Ansible loads this file itself (ANSIBLE_STDOUT_CALLBACK=edgebench_status); it imports
nothing of edgebench."""

from __future__ import annotations

import json
import sys
from typing import Any

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: edgebench_status
type: stdout
short_description: JSON lines for edgebench fleet run
description: One JSON object per task result on a host, for edgebench fleet run to read.
"""


def _line(text: Any) -> str:
    """What went wrong, in one line: the last line saying `error`, else the last line."""
    lines = [line.strip() for line in str(text or "").splitlines() if line.strip()]
    errors = [line for line in lines if line.lower().startswith(("error", "fatal"))]
    return (errors or lines or [""])[-1][:300]


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "edgebench_status"

    def _emit(self, event: str, result: Any, **extra: Any) -> None:
        outcome = result._result
        failed_items = [r for r in outcome.get("results") or [] if r.get("failed")]
        if failed_items:  # a loop: the first item that failed says why
            outcome = failed_items[0]
        record = {
            "event": event,
            "host": result._host.get_name(),
            "task": result._task.get_name(),
            "rc": outcome.get("rc"),
            "msg": _line(outcome.get("stderr")) or _line(outcome.get("msg")),
            **extra,
        }
        sys.stdout.write(json.dumps(record) + "\n")
        sys.stdout.flush()

    def v2_runner_on_ok(self, result: Any) -> None:
        self._emit("ok", result, changed=bool(result._result.get("changed")))

    def v2_runner_on_failed(self, result: Any, ignore_errors: bool = False) -> None:
        self._emit("failed", result, ignored=ignore_errors)

    def v2_runner_on_unreachable(self, result: Any) -> None:
        self._emit("unreachable", result)

    def v2_runner_on_skipped(self, result: Any) -> None:
        self._emit("skipped", result)

    def v2_playbook_on_stats(self, stats: Any) -> None:
        for host in sorted(stats.processed):
            summary = stats.summarize(host)
            sys.stdout.write(json.dumps({"event": "recap", "host": host, **summary}) + "\n")
        sys.stdout.flush()
