"""plan.toml: what a plan expands to, and every mistake in it as one line naming the file,
the key and, where it can be found, the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.plan.cells import expand
from edgebench.plan.file import load_plan
from tests.helpers.cli import cli_error
from tests.helpers.plan_runs import MODEL, PLAN, write_plan


def cells_of(plan: Path) -> list[str]:
    return [cell.id for cell in expand(load_plan(plan, default_threads=4))]


def test_a_plan_expands_to_one_readable_cell_per_model_task_mode_threads_and_repetition(
    tmp_path: Path,
) -> None:
    plan = write_plan(
        tmp_path,
        PLAN.replace("threads = [1]", "threads = [1, 2]\nrepetitions = 2")
        + '\n[[tasks]]\ntask = "edgejson"\n',
    )
    ids = cells_of(plan)
    assert len(ids) == 1 * 2 * 2 * 2 * 2
    assert ids[0] == f"{MODEL}.roundtrip-payloads.none.t1.r1"
    assert ids[1] == f"{MODEL}.roundtrip-payloads.none.t1.r2"
    assert f"{MODEL}.edgejson.json.t2.r2" in ids
    assert len(set(ids)) == len(ids)
    assert all("/" not in cell and " " not in cell for cell in ids)
    assert cells_of(plan) == ids  # deterministic


def test_each_cell_is_the_run_command_with_the_plan_options_and_the_dataset_beside_the_plan(
    tmp_path: Path,
) -> None:
    text = PLAN + (
        "\n[run]\nmax_tokens = 64\nwarmup = false\nlimit = 5\ntimeout = 30\n"
        'retime = "none"\nretime_max = 3\n'
    )
    cell = expand(load_plan(write_plan(tmp_path, text), 4))[0]
    args = list(cell.args)
    assert args[:2] == ["run", "--model"]
    dataset = args[args.index("--dataset") + 1]
    assert dataset == str((tmp_path / "data" / "payloads.jsonl").resolve())
    assert args[args.index("--limit") + 1] == "2"  # the task's own limit wins over [run]
    sampled = PLAN.replace("limit = 2", "sample = 2") + "\n[run]\nlimit = 5\n"
    sampled_args = expand(load_plan(write_plan(tmp_path, sampled), 4))[0].args
    assert "--sample" in sampled_args and "--limit" not in sampled_args  # they exclude each other
    assert args[args.index("--max-tokens") + 1] == "64"
    assert "--no-warmup" in args
    assert args[args.index("--retime") + 1] == "none"
    assert args[args.index("--retime-max") + 1] == "3"
    assert cell.settings["retime"] == "none"  # what the timings are: a measured setting
    assert "--timeout" not in args and cell.coping == ("--timeout", "30")
    assert "timeout" not in cell.settings  # how a run copes may change between runs
    assert cell.settings["dataset"].startswith("payloads.jsonl sha256:")


def test_without_tasks_or_threads_a_plan_runs_the_built_in_set_on_the_default_threads(
    tmp_path: Path,
) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(f'models = ["{MODEL}"]\n')
    assert cells_of(plan) == [f"{MODEL}.edgejson.none.t4.r1"]


def test_quantizations_make_every_model_a_variant_and_bench_adds_one_cell_per_model(
    tmp_path: Path,
) -> None:
    text = PLAN.replace("threads", 'quantizations = ["q8_0", "Q4_K_M"]\nthreads')
    plan = load_plan(write_plan(tmp_path, text + "\n[bench]\nprompt_tokens = [64]\n"), 4)
    assert [m.spec for m in plan.models] == [f"{MODEL}@Q8_0", f"{MODEL}@Q4_K_M"]
    assert {(m.source, m.quant_type) for m in plan.models} == {
        (MODEL, "Q8_0"),
        (MODEL, "Q4_K_M"),
    }
    bench = [cell for cell in expand(plan) if cell.kind == "bench"]
    assert [cell.id for cell in bench] == [f"{MODEL}@Q8_0.bench", f"{MODEL}@Q4_K_M.bench"]
    assert list(bench[0].args) == [
        "bench", "--model", f"{MODEL}@Q8_0", "--threads", "1", "--prompt-tokens", "64"
    ]  # fmt: skip


def test_converted_and_hub_models_keep_their_spec_and_get_a_folder_safe_id(
    tmp_path: Path,
) -> None:
    models = f'["{MODEL}@onnx-int4", "hf:HuggingFaceTB/SmolLM2-360M-Instruct-GGUF/m-q8_0.gguf"]'
    plan = load_plan(write_plan(tmp_path, PLAN.replace(f'["{MODEL}"]', models)), 4)
    assert plan.models[0].spec == f"{MODEL}@onnx-int4"
    assert [m.label for m in plan.models] == [f"{MODEL}@onnx-int4", "m-q8_0"]
    assert all(m.source is None for m in plan.models)  # nothing for the plan to make


def test_openvino_models_keep_their_spec(tmp_path: Path) -> None:
    models = f'["{MODEL}@openvino", "{MODEL}@openvino-int4"]'
    plan = load_plan(write_plan(tmp_path, PLAN.replace(f'["{MODEL}"]', models)), 4)
    assert [m.spec for m in plan.models] == [f"{MODEL}@openvino", f"{MODEL}@openvino-int4"]
    assert all(m.source is None for m in plan.models)


def test_an_unknown_variant_is_named_with_the_ones_there_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = write_plan(tmp_path, PLAN.replace(f'"{MODEL}"', f'"{MODEL}@Q9"'))
    err = cli_error(capsys, "plan", "show", str(plan))
    assert f":1: models: model '{MODEL}@Q9': unknown variant '@Q9'" in err


def test_a_gguf_path_is_relative_to_the_plan_and_named_by_its_stem(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "my model.gguf").write_bytes(b"GGUF")
    plan = write_plan(tmp_path, PLAN.replace(f'"{MODEL}"', '"models/my model.gguf"'))
    model = load_plan(plan, 4).models[0]
    assert model.spec == str((tmp_path / "models" / "my model.gguf").resolve())
    assert cells_of(plan)[0].startswith("my-model.roundtrip-payloads.")


@pytest.mark.parametrize(
    ("change", "fragments"),
    [
        (("threads = [1]", "threads = [1]\nmodes = 2"), [":4: modes: unknown key"]),
        (("threads = [1]", 'threads = ["two"]'), [":3: threads: item 'two': must be a whole"]),
        (("threads = [1]", "threads = [0]"), ["threads: item 0: 0 is below the minimum of 1"]),
        (("threads = [1]", "repetitions = true"), [":3: repetitions: must be a whole number"]),
        ((f'["{MODEL}"]', '["smollm3"]'), [":1: models: unknown model 'smollm3'"]),
        ((f'["{MODEL}"]', "[]"), [":1: models: must not be empty"]),
        ((f'["{MODEL}"]', f'["{MODEL}", "{MODEL}"]'), [":1: models:", "listed twice"]),
        (('"json"', '"jsonish"'), [":2: constraints: item 'jsonish': unknown mode 'jsonish'"]),
        (('"json"', '"none"'), [":2: constraints: 'none' is listed twice"]),
        (('"roundtrip"', '"roundtrp"'), [":6: tasks[1].task: 'roundtrp' is not one of"]),
        (("payloads.jsonl", "missing.jsonl"), [":7: tasks[1].dataset: 'data/missing.jsonl'"]),
        (("limit = 2", "limit = -1"), [":8: tasks[1].limit: -1 is below the minimum of 1"]),
        (("limit = 2", "limit = 2\nwarmup = 1"), [":9: tasks[1].warmup: must be true or"]),
        (("limit = 2", "lmit = 2"), [":8: tasks[1].lmit: unknown key"]),
        (("threads = [1]", "threads = [1]\nquantizations = ['Q9']"), ["quantizations: item"]),
        (("threads = [1]", "threads = [1]\nrun = 3"), ["run: must be a table"]),
        (("threads = [1]", "threads = [1"), ["plan.toml:5: not valid TOML (Unclosed array"]),
    ],
)
def test_every_mistake_in_a_plan_is_one_line_naming_the_file_line_and_key(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: tuple[str, str],
    fragments: list[str],
) -> None:
    plan = write_plan(tmp_path, PLAN.replace(*change))
    err = cli_error(capsys, "plan", "show", str(plan))
    assert str(plan) in err
    for fragment in fragments:
        assert fragment in err


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        ('\n[run]\nprompt = "fancy"\n', "run.prompt: 'fancy' is not one of: default, reference"),
        ('\n[run]\nmetrics = "nope"\n', "run.metrics:"),
        ('\n[run]\nretime = "always"\n', "run.retime: 'always' is not one of: contended, none"),
        ("\n[run]\nretime_max = 0\n", "run.retime_max: 0 is below the minimum of 1"),
        ('\n[run]\nmodel = "x"\n', "run.model: unknown key"),
        ("\n[run]\nlimit = 3\nsample = 4\n", "run.limit: excludes sample (set one of them)"),
        (PLAN[PLAN.index("\n[[tasks]]") :], "'roundtrip-payloads' twice"),
        ("\n[bench]\nprompt_tokens = [-1]\n", "bench.prompt_tokens: item -1"),
        ("\n[bench]\nthreads = []\n", "bench.threads: must not be empty"),
        ("\n[bench]\nrepeat = 3\n", "bench.repeat: unknown key"),
        ('\n[bench]\nduration = "soon"\n', "bench.duration 'soon': give a time such as 90s"),
    ],
)  # fmt: skip
def test_run_task_and_bench_tables_refuse_what_the_commands_would(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: str, fragment: str
) -> None:
    plan = write_plan(tmp_path, PLAN + extra)
    assert fragment in cli_error(capsys, "plan", "show", str(plan))


def test_a_variant_cannot_be_quantized_again_and_a_missing_plan_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = PLAN.replace(f'"{MODEL}"', f'"{MODEL}@Q8_0"').replace(
        "threads", 'quantizations = ["Q4_K_M"]\nthreads'
    )
    err = cli_error(capsys, "plan", "show", str(write_plan(tmp_path, text)))
    assert "quantizations: model 'smollm2-135m-instruct@Q8_0' cannot be quantized here" in err
    missing = tmp_path / "nope.toml"
    assert f"{missing}: plan file not found" in cli_error(capsys, "plan", "run", str(missing))
