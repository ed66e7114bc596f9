"""The playbook's own "model folders" and "push the models" tasks, run by real Ansible on
this machine (a local connection, no SSH, no model): a converted ONNX folder and a GGUF
staged by `fleet run --push-models` land in the host's model cache with their folders,
byte for byte, and a second push sends nothing again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.fleet.drive import PLAYBOOK, find_playbook_command, stage
from tests.helpers.needs import unavailable
from tests.helpers.onnx_fakes import fake_converted

yaml = pytest.importorskip("yaml")
PUSH_TASKS = ("model folders", "push the models")


def playbook_command() -> Path:
    try:
        return find_playbook_command()
    except UserError as exc:  # the dev extra installs Ansible
        unavailable(str(exc))


def push_playbook(dest: Path, path: Path) -> Path:
    """A play on localhost with the shipped playbook's push tasks, the host's model cache
    at `dest` (what the "model cache" task registers)."""
    (play,) = yaml.safe_load(PLAYBOOK.read_text())
    (block,) = [task for task in play["tasks"] if "block" in task]
    tasks = [task for task in block["block"] if task["name"] in PUSH_TASKS]
    assert [task["name"] for task in tasks] == list(PUSH_TASKS)
    mini = {
        "hosts": "all",
        "gather_facts": False,
        "tasks": [{"ansible.builtin.set_fact": {"model_cache": {"stdout": str(dest)}}}, *tasks],
    }
    path.write_text(yaml.safe_dump([mini]))
    return path


def test_the_push_tasks_copy_a_converted_folder_into_the_host_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command = playbook_command()
    monkeypatch.setenv("EDGEBENCH_CACHE", str(tmp_path / "here"))
    source = fake_converted(tmp_path / "here")
    (source / "tokenizer.json").write_text('{"model": {}}')
    gguf = tmp_path / "here" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    gguf.write_bytes(b"GGUF" * 1000)
    plan = tmp_path / "plan.toml"
    plan.write_text('models = ["smollm2-135m-instruct", "smollm2-135m-instruct@onnx-int4"]\n')
    variables = stage(plan, tmp_path / "out", push_models=True, say=print)
    extra = tmp_path / "vars.json"
    extra.write_text(json.dumps(variables))
    host_cache = tmp_path / "host" / "models"
    argv = [
        str(command),
        "-i",
        "localhost,",
        "-c",
        "local",
        "-e",
        f"ansible_python_interpreter={sys.executable}",
        "--extra-vars",
        f"@{extra}",
        str(push_playbook(host_cache, tmp_path / "push.yml")),
    ]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ANSIBLE_NOCOWS": "1"}
    first = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    assert first.returncode == 0, first.stdout + first.stderr
    for relative, path in variables["fleet_push_models"]:  # type: ignore[attr-defined]
        assert (host_cache / relative).read_bytes() == Path(path).read_bytes()
    assert (host_cache / "onnx" / "smollm2-135m-instruct-int4" / "tokenizer.json").is_file()
    again = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0 and "changed=0" in again.stdout, again.stdout
