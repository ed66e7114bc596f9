"""What fleet run ships: the plan and the files it names (never one outside its folder),
the models it names (converted ONNX folders whole, with --push-models), and a source
tarball that is the same bytes for the same files."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.fleet.payload import (
    model_files,
    onnx_variants,
    openvino_variants,
    plan_members,
    read_plan_payload,
    registry_bases,
    source_checkout,
    source_members,
    write_tarball,
)
from edgebench.models.onnx_model import PROVENANCE
from tests.helpers.onnx_fakes import fake_converted
from tests.helpers.openvino_export_fakes import fake_openvino_converted

PLAN = """
models = ["smollm2-135m-instruct", "smollm2-135m-instruct@Q8_0"]
constraints = ["none", "mask"]
limit = 3
[[tasks]]
task = "edgejson"
dataset = "data/rows.jsonl"
schemas = "data/schemas"
"""


def write_plan(folder: Path, text: str = PLAN) -> Path:
    (folder / "data" / "schemas" / "simple").mkdir(parents=True)
    (folder / "data" / "rows.jsonl").write_text("{}\n")
    (folder / "data" / "schemas" / "simple" / "s.json").write_text("{}")
    (folder / "unrelated.txt").write_text("not named by the plan")
    plan = folder / "plan.toml"
    plan.write_text(text)
    return plan


def test_the_plan_names_its_files_and_models(tmp_path: Path) -> None:
    payload = read_plan_payload(write_plan(tmp_path))
    assert payload.files == ("data/rows.jsonl", "data/schemas")
    assert payload.models == ("smollm2-135m-instruct", "smollm2-135m-instruct@Q8_0")
    assert registry_bases(payload.models) == ["smollm2-135m-instruct"]
    names = [name for name, _ in plan_members(payload)]
    assert names == ["data/rows.jsonl", "data/schemas/simple/s.json", "plan.toml"]


def test_a_file_outside_the_plan_folder_is_refused_naming_the_key(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text("{}\n")
    (tmp_path / "p").mkdir()
    plan = write_plan(tmp_path / "p", PLAN.replace("data/rows.jsonl", "../elsewhere.jsonl"))
    outside_key = r"tasks\[0\]\.dataset = '\.\./elsewhere\.jsonl' is outside"
    with pytest.raises(UserError, match=outside_key):
        read_plan_payload(plan)
    absolute = write_plan(tmp_path / "q", PLAN.replace("data/rows.jsonl", str(outside)))
    with pytest.raises(UserError, match="outside the plan's folder"):
        read_plan_payload(absolute)


@pytest.mark.parametrize(
    ("text", "message"),
    [(None, "plan file not found"), ("models = [", "not valid TOML")],
)
def test_a_missing_or_broken_plan(tmp_path: Path, text: str | None, message: str) -> None:
    plan = tmp_path / "plan.toml"
    if text is not None:
        plan.write_text(text)
    with pytest.raises(UserError, match=message):
        read_plan_payload(plan)


def test_push_models_names_a_model_not_cached_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDGEBENCH_CACHE", str(tmp_path / "cache"))
    with pytest.raises(UserError, match="smollm2-135m-instruct is not in this machine's model"):
        model_files(("smollm2-135m-instruct",))
    with pytest.raises(UserError, match="models quantize smollm2-135m-instruct --types Q8_0"):
        model_files(("smollm2-135m-instruct@Q8_0",))


def test_push_models_lists_the_cached_file_under_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDGEBENCH_CACHE", str(tmp_path))
    cached = tmp_path / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    cached.parent.mkdir()
    cached.write_bytes(b"GGUF")
    assert model_files(("smollm2-135m-instruct",)) == [("SmolLM2-135M-Instruct.Q4_1.gguf", cached)]


def test_the_source_tarball_is_the_same_bytes_for_the_same_files(tmp_path: Path) -> None:
    root = source_checkout()
    members = source_members(root)
    names = [name for name, _ in members]
    assert {"install.sh", "pyproject.toml", "edgebench/fleet/playbook.yml"} <= set(names)
    assert not [name for name in names if "__pycache__" in name]
    first = write_tarball(members, tmp_path / "a.tar.gz")
    second = write_tarball(list(reversed(members)), tmp_path / "b.tar.gz")
    assert first.sha256 == second.sha256
    assert first.path.read_bytes() == second.path.read_bytes()
    with tarfile.open(first.path) as tar:
        assert tar.getmember("install.sh").mode & 0o111


def test_no_source_tree_to_ship_is_one_line_saying_how(tmp_path: Path) -> None:
    package = tmp_path / "site-packages" / "edgebench"
    package.mkdir(parents=True)
    with pytest.raises(UserError, match=r"without its source tree.*git clone"):
        source_checkout(package)


ONNX_PLAN = """
models = ["smollm2-135m-instruct@onnx-int4", "smollm2-135m-instruct@q8_0"]
quantizations = ["Q4_K_M"]
constraints = ["none"]
[[tasks]]
task = "edgejson"
name = "smollm2-135m-instruct"
[bench]
models = ["gemma3-270m@onnx-fp32"]
"""


def test_onnx_variants_are_models_and_only_model_keys_name_models(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(ONNX_PLAN)
    payload = read_plan_payload(plan)
    # A task named like a model and the bare quantization type are not models.
    assert payload.models == (
        "smollm2-135m-instruct@onnx-int4",
        "smollm2-135m-instruct@q8_0",
        "gemma3-270m@onnx-fp32",
    )
    assert onnx_variants(payload.models) == [
        "smollm2-135m-instruct@onnx-int4",
        "gemma3-270m@onnx-fp32",
    ]
    # Without --push-models a host pulls GGUFs only: plan run never converts.
    assert registry_bases(payload.models) == ["smollm2-135m-instruct"]


@pytest.mark.parametrize(
    "spec", ["smollm2-135m-instruct@onnx-int8", "nope@onnx-int4", "x@y", "@onnx-int4"]
)
def test_an_unknown_variant_is_not_a_model_and_no_error_here(tmp_path: Path, spec: str) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(f'models = ["{spec}"]\n')
    assert read_plan_payload(plan).models == ()  # `plan run`'s own check names it


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("EDGEBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def converted_folder(cache: Path) -> Path:
    """A converted folder as `models convert` leaves it: graph, provenance, tokenizer,
    chat template and config files (the graph's sha256 remembered outside the folder)."""
    folder = fake_converted(cache)
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "config.json"):
        (folder / name).write_text("{}")
    return folder


def test_push_models_lists_every_file_of_a_converted_folder(cache: Path) -> None:
    folder = converted_folder(cache)
    (folder / "model.onnx.sha256.json").write_text("{}")  # this machine's paths: not sent
    (folder / ".tmp-write").write_text("")
    gguf = cache / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    gguf.write_bytes(b"GGUF")
    pushed = model_files(("smollm2-135m-instruct@onnx-int4", "smollm2-135m-instruct"))
    prefix = "onnx/smollm2-135m-instruct-int4/"
    assert [name for name, _ in pushed] == [
        f"{prefix}chat_template.jinja",
        f"{prefix}config.json",
        f"{prefix}edgebench-onnx.json",
        f"{prefix}model.onnx",
        f"{prefix}tokenizer.json",
        f"{prefix}tokenizer_config.json",
        "SmolLM2-135M-Instruct.Q4_1.gguf",
    ]
    assert all(path == cache / "models" / name for name, path in pushed)


def test_push_models_lists_the_external_data_file(cache: Path) -> None:
    folder = converted_folder(cache)
    provenance = json.loads((folder / PROVENANCE).read_text())
    (folder / "model.onnx.data").write_bytes(b"\0" * 16)
    provenance["weights"]["external_data"] = ["model.onnx.data"]
    provenance["weights"]["size_bytes"] += 16
    (folder / PROVENANCE).write_text(json.dumps(provenance))
    names = [name for name, _ in model_files(("smollm2-135m-instruct@onnx-int4",))]
    assert "onnx/smollm2-135m-instruct-int4/model.onnx.data" in names


def test_push_models_names_an_onnx_model_not_converted_here(cache: Path) -> None:
    with pytest.raises(UserError) as caught:
        model_files(("smollm2-135m-instruct@onnx-fp32",))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(
        "--push-models: smollm2-135m-instruct@onnx-fp32 is not in this machine's model cache ("
    )
    assert message.endswith(
        "onnx/smollm2-135m-instruct-fp32): edgebench models convert smollm2-135m-instruct "
        "--to onnx --precision fp32 first"
    )


@pytest.mark.parametrize("damage", ["graph", "provenance"])
def test_push_models_refuses_a_damaged_onnx_model(cache: Path, damage: str) -> None:
    folder = converted_folder(cache)
    if damage == "graph":
        with open(folder / "model.onnx", "ab") as f:
            f.write(b"\0")
    else:
        (folder / PROVENANCE).write_text("{")
    with pytest.raises(UserError, match=r"int4 in this machine's model cache is damaged") as e:
        model_files(("smollm2-135m-instruct@onnx-int4",))
    assert str(e.value).endswith("--to onnx --precision int4 --force first")


# --- converted OpenVINO folders --------------------------------------------------------------


def test_openvino_variants_are_models_a_host_does_not_pull(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(
        'models = ["smollm2-135m-instruct@openvino-int4", "smollm2-135m-instruct@onnx-int4", '
        '"smollm2-135m-instruct@openvino-fp32", "gemma3-270m@openvino"]\n'
    )
    payload = read_plan_payload(plan)
    # fp32 is no OpenVINO precision: not a model here, `plan run`'s own check names it
    assert payload.models == (
        "smollm2-135m-instruct@openvino-int4",
        "smollm2-135m-instruct@onnx-int4",
        "gemma3-270m@openvino",
    )
    assert openvino_variants(payload.models) == ["smollm2-135m-instruct@openvino-int4"]
    assert onnx_variants(payload.models) == ["smollm2-135m-instruct@onnx-int4"]
    # NAME@openvino reads the registry GGUF: a host pulls it
    assert registry_bases(payload.models) == ["gemma3-270m"]


def test_push_models_sends_the_gguf_openvino_reads_directly(cache: Path) -> None:
    gguf = cache / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    gguf.parent.mkdir(parents=True)
    gguf.write_bytes(b"GGUF")
    pushed = model_files(("smollm2-135m-instruct@openvino",))
    assert pushed == [("SmolLM2-135M-Instruct.Q4_1.gguf", gguf)]


def test_push_models_lists_every_file_of_an_openvino_folder(cache: Path) -> None:
    folder = fake_openvino_converted(cache)
    (folder / "openvino_model.bin.sha256.json").write_text("{}")  # this machine's paths
    (folder / ".tmp-write").write_text("")
    pushed = model_files(("smollm2-135m-instruct@openvino-int4",))
    prefix = "openvino/smollm2-135m-instruct-int4/"
    assert [name for name, _ in pushed] == [
        f"{prefix}{name}"
        for name in (
            "config.json",
            "edgebench-openvino.json",
            "openvino_config.json",
            "openvino_detokenizer.xml",
            "openvino_model.bin",
            "openvino_model.xml",
            "openvino_tokenizer.bin",
            "openvino_tokenizer.xml",
        )
    ]
    assert all(path == cache / "models" / name for name, path in pushed)


def test_push_models_names_an_openvino_model_not_converted_here(cache: Path) -> None:
    with pytest.raises(UserError) as caught:
        model_files(("smollm2-135m-instruct@openvino-int8",))
    message = str(caught.value)
    assert "\n" not in message
    assert message.endswith(
        "openvino/smollm2-135m-instruct-int8): edgebench models convert smollm2-135m-instruct "
        "--to openvino --precision int8 first"
    )


@pytest.mark.parametrize("damage", ["weights", "provenance", "graph"])
def test_push_models_refuses_a_damaged_openvino_model(cache: Path, damage: str) -> None:
    folder = fake_openvino_converted(cache, precision="fp16")
    if damage == "weights":
        (folder / "openvino_model.bin").write_bytes(b"\3" * 64)  # same size, other bytes
    elif damage == "graph":
        (folder / "openvino_model.xml").unlink()
    else:
        (folder / "edgebench-openvino.json").write_text("{")
    with pytest.raises(UserError, match=r"fp16 in this machine's model cache is damaged") as e:
        model_files(("smollm2-135m-instruct@openvino-fp16",))
    assert str(e.value).endswith("--to openvino --precision fp16 --force first")
