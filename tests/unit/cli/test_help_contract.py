"""Every `--help` keeps its word: walked over every command and subcommand of the app,
each documented list of values is exactly what the code accepts (every listed value is
accepted, every accepted value is listed), every "comma-separated" option takes several
values, no placeholder is a Python type, and the top-level help starts with the workflow."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from edgebench.cli.app import WORKFLOW, app, main
from edgebench.cli.bench_cmd import parse_int_list
from edgebench.cli.command_tree import build, params
from edgebench.cli.consistency_cmd import parse_temperatures
from edgebench.cli.data_cmd import DATASET_FORMATS
from edgebench.cli.options import CLOSING_ARMS
from edgebench.cli.run_cmd import parse_model_list
from edgebench.constraints import MODES, parse_modes
from edgebench.errors import UserError
from edgebench.metrics import family_names, parse_metrics
from edgebench.models.onnx_model import PRECISIONS
from edgebench.models.openvino_convert import PRECISIONS as OPENVINO_PRECISIONS
from edgebench.scoring.extract import PARSE_MODES, check_parse_mode
from edgebench.tasks import get_task, task_names
from edgebench.tasks.base import PROMPT_STYLES, prompt_template_for
from tests.helpers.cli import assert_one_line_error, run_cli, stdout_of


def commands() -> Iterator[tuple[tuple[str, ...], Any]]:
    """(command path, click command) for the app and everything under it."""

    def under(path: tuple[str, ...], command: Any) -> Iterator[tuple[tuple[str, ...], Any]]:
        yield path, command
        for name, child in getattr(command, "commands", {}).items():
            yield from under((*path, name), child)

    yield from under((), build(app, WORKFLOW))


def options() -> Iterator[tuple[tuple[str, ...], str, str]]:
    """(command path, long option name, help text) of every visible option."""
    for path, command in commands():
        for param in params(command):
            long = [opt for opt in param.opts if opt.startswith("--")]
            if long and not param.hidden:
                yield path, long[0], param.help or ""


def listed_values(help_text: str) -> set[str]:
    """The values a help text lists: after its first colon, up to the sentence's end,
    notes in parentheses left out ("Task: a (x), b or c (default: a)." -> {a, b, c})."""
    bare = help_text
    while re.search(r"\([^()]*\)", bare):
        bare = re.sub(r"\s*\([^()]*\)", "", bare)
    listing = bare.split(": ", 1)[1].split(".")[0]
    return {item.strip() for item in re.split(r",| or ", listing) if item.strip()}


def _accepts(check: Callable[[str], Any]) -> Callable[[str], bool]:
    def accepted(value: str) -> bool:
        try:
            check(value)
        except UserError:
            return False
        return True

    return accepted


def _one_mode(value: str) -> None:
    if len(parse_modes(value)) != 1:
        raise UserError("one mode")


def _precision(value: str) -> None:
    """A precision some `models convert --to` target takes."""
    if value not in (*PRECISIONS, *OPENVINO_PRECISIONS):
        raise UserError(value)


# (command, option) -> (every value the code accepts, the code's own check). An option of
# the same name means the same in every command unless the command is named.
VALUE_LISTS: dict[tuple[str, str], tuple[set[str], Callable[[str], bool]]] = {
    ("*", "--task"): (set(task_names()), _accepts(get_task)),
    ("*", "--metrics"): (set(family_names()), _accepts(parse_metrics)),
    ("*", "--parse"): (set(PARSE_MODES), _accepts(check_parse_mode)),
    (
        "*",
        "--prompt",
    ): (set(PROMPT_STYLES), _accepts(lambda s: prompt_template_for(get_task("edgejson"), s))),
    ("run", "--constraint"): ({*MODES, *CLOSING_ARMS}, _accepts(parse_modes)),
    ("consistency", "--constraint"): (set(MODES), _accepts(_one_mode)),
    ("convert", "--precision"): ({*PRECISIONS, *OPENVINO_PRECISIONS}, _accepts(_precision)),
    ("validate", "--task"): (set(DATASET_FORMATS), lambda value: value in DATASET_FORMATS),
}

# (command, option) -> a check that takes the comma list "A,B" and returns how many values
# it read; every option whose help says "comma-separated" must be here.
SEVERAL = {
    ("run", "--model"): lambda: len(parse_model_list("smollm2-135m-instruct,gemma3-270m")),
    ("run", "--constraint"): lambda: len(parse_modes("none,mask")),
    ("run", "--metrics"): lambda: len(parse_metrics("sted,sobench")),
    ("score", "--metrics"): lambda: len(parse_metrics("structure,deepjson")),
    ("consistency", "--temperatures"): lambda: len(parse_temperatures("0.2,0.8")),
    ("bench", "--model"): lambda: len(parse_model_list("smollm2-135m-instruct,gemma3-270m")),
    ("bench", "--threads"): lambda: len(parse_int_list("1,2", "--threads", 1)),
    ("bench", "--prompt-tokens"): lambda: len(parse_int_list("64,128", "--prompt-tokens", 0)),
    ("bench", "--gen-tokens"): lambda: len(parse_int_list("16,32", "--gen-tokens", 0)),
    ("bench", "--depth"): lambda: len(parse_int_list("0,512", "--depth", 0)),
}


def _value_list(path: tuple[str, ...], option: str) -> tuple[set[str], Callable[[str], bool]]:
    command = path[-1] if path else ""
    return VALUE_LISTS.get((command, option)) or VALUE_LISTS[("*", option)]


def _has_value_list(path: tuple[str, ...], option: str) -> bool:
    command = path[-1] if path else ""
    return (command, option) in VALUE_LISTS or ("*", option) in VALUE_LISTS


LISTED = [(p, o, h) for p, o, h in options() if _has_value_list(p, o)]


def test_the_walk_finds_every_listed_option() -> None:
    found = {(p[-1], o) for p, o, _ in LISTED}
    assert {("run", "--task"), ("consistency", "--task"), ("score", "--metrics")} <= found
    assert {("run", "--constraint"), ("consistency", "--constraint")} <= found
    assert {("convert", "--precision"), ("run", "--parse"), ("consistency", "--prompt")} <= found


@pytest.mark.parametrize(("path", "option", "help_text"), LISTED, ids=lambda v: str(v)[:30])
def test_a_documented_list_is_exactly_what_is_accepted(
    path: tuple[str, ...], option: str, help_text: str
) -> None:
    accepted, accepts = _value_list(path, option)
    documented = listed_values(help_text)
    refused = sorted(value for value in documented if not accepts(value))
    assert not refused, f"{' '.join(path)} {option} documents {refused}, which it refuses"
    missing = sorted(accepted - documented)
    assert not missing, f"{' '.join(path)} {option} accepts {missing}, not in its help"


def test_the_deepjson_gaps_of_the_issue_are_closed() -> None:
    helps = {(p[-1] if p else "", o): h for p, o, h in options()}
    assert "deepjson" in listed_values(helps[("consistency", "--task")])
    assert "deepjson" in listed_values(helps[("run", "--metrics")])


@pytest.mark.parametrize(
    ("path", "option"),
    [(p, o) for p, o, h in options() if "comma-separated" in h],
    ids=lambda v: str(v),
)
def test_every_comma_separated_option_takes_several(path: tuple[str, ...], option: str) -> None:
    check = SEVERAL.get((path[-1], option))
    assert check is not None, f"{' '.join(path)} {option} says comma-separated: add its check"
    assert check() == 2


def test_an_option_for_one_model_says_so_and_refuses_a_list() -> None:
    helps = {(p[-1] if p else "", o): h for p, o, h in options()}
    assert "one model" in helps[("consistency", "--model")]
    assert "comma-separated" not in helps[("consistency", "--model")]


# What Typer prints for a parameter without a metavar: a Python type.
PYTHON_TYPE = re.compile(r"<(?:bool|str|int|float|path|list\[[^\]]*\]|[a-z]+ range)>|list\[")


def help_text(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *path: str
) -> str:
    """`edgebench PATH --help` in this process, at a width that wraps nothing."""
    monkeypatch.setenv("COLUMNS", "220")
    return stdout_of(capsys, *path, "--help")


@pytest.mark.parametrize("path", [p for p, _ in commands()], ids=lambda p: " ".join(p) or "-")
def test_help_placeholders_are_ones_a_user_can_act_on(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, path: tuple[str, ...]
) -> None:
    out = help_text(capsys, monkeypatch, *path)
    assert PYTHON_TYPE.search(out) is None, PYTHON_TYPE.search(out)


def test_the_top_level_help_starts_with_an_example_and_the_workflow(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = help_text(capsys, monkeypatch)
    assert out.index("Start here: edgebench models pull") < out.index("Commands")
    listed = re.findall(r"^│ (\w+) ", out.split("Commands", 1)[1], flags=re.MULTILINE)
    assert (
        tuple(listed[: len(WORKFLOW)]) == WORKFLOW == ("models", "run", "compare", "card", "report")
    )
    assert set(listed) == set(build(app, WORKFLOW).commands)


@pytest.mark.parametrize("group", ["models", "data"])
def test_a_group_help_names_what_each_of_its_commands_does(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, group: str
) -> None:
    """`models --help` once omitted convert and check from its own description."""
    description = build(app, WORKFLOW).commands[group].help
    verbs = {
        "list": "list",
        "pull": "pull",
        "add": "add",
        "info": "show",
        "convert": "convert",
        "quantize": "quantize",
        "check": "check",
        "validate": "check",
        "grammars": "grammars",
        "generate": "generate",
    }
    for name in build(app, WORKFLOW).commands[group].commands:
        assert verbs[name].lower() in description.lower(), (group, name, description)


def test_version_names_the_package_and_the_runtimes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert not exit_info.value.code
    line = capsys.readouterr().out.strip()
    runtimes = r"llama-cpp-python \S+, onnxruntime \S+, openvino-genai (\S+|not installed)"
    assert re.fullmatch(rf"edgebench \S+ \({runtimes}\)", line), line


USAGE_ERRORS = [
    (["run", "--limit", "0"], "--limit", "run"),
    (["run", "--limit", "many"], "--limit", "run"),
    (["run", "--threads", "0"], "--threads", "run"),
    (["run", "--timeout", "0"], "--timeout", "run"),
    (["run", "--no-such-option"], "--no-such-option", "run"),
    (["run", "--limit"], "--limit", ""),  # found while parsing: no command context yet
    (["consistency", "--samples", "1"], "--samples", "consistency"),
    (["card", "--examples", "-1"], "--examples", "card"),
    (["compare"], "RUN_DIR", "compare"),
    (["models", "pull"], "NAME", "models pull"),
    (["models", "nope"], "nope", "models"),
    (["nope"], "nope", ""),
]


@pytest.mark.parametrize(("args", "fragment", "command"), USAGE_ERRORS, ids=str)
def test_a_usage_error_is_the_house_one_line_error(
    capsys: pytest.CaptureFixture[str], args: list[str], fragment: str, command: str
) -> None:
    code, err = run_cli(capsys, *args)
    see = f"(see {' '.join(['edgebench', *command.split()])} --help)"
    assert_one_line_error(code, err, "error:", fragment, see)
    assert "╭" not in err and "Usage:" not in err  # no Typer box
