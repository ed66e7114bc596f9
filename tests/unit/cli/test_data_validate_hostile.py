"""Hostile schemas and files through `edgebench data validate`, which validates as `run`
does (scoring/schema.py `get_checker`): remote and file `$ref`s are refused without a
request or an open, a catastrophic pattern stops through the bounded matcher, a schema
nested too deeply, one jsonschema cannot handle and a byte order mark are one line each
(docs/reliability.md, "Hostile schemas")."""

from __future__ import annotations

import http.server
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from edgebench.cli.app import main
from edgebench.datagen.edgejson.structure_checks import outputs_valid
from edgebench.errors import UserError
from edgebench.scoring import patterns
from edgebench.tasks.formats.edgejson import EdgeJSONDataset, EdgeJSONRow, SchemaFile
from tests.helpers.cli import assert_one_line_error, run_cli

DEPENDENCIES = {"type": "object", "dependencies": {"a": {}, "b": ["a"]}}


def nested(levels: int) -> dict[str, Any]:
    """A schema `levels` deep in `properties` (2 JSON levels each)."""
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def write_dataset(folder: Path, schema: dict[str, Any], expected: Any = None) -> Path:
    """An EdgeJSON folder with one row of schema `s`; returns the folder."""
    (folder / "schemas" / "simple").mkdir(parents=True)
    (folder / "schemas" / "simple" / "s.json").write_text(json.dumps(schema))
    row = {"id": "r1", "schema_id": "s", "prompt": "a is x", "expected_output": expected or {}}
    (folder / "test.jsonl").write_text(json.dumps(row) + "\n")
    return folder


def validate(capsys: pytest.CaptureFixture[str], folder: Path) -> tuple[int, str]:
    return run_cli(capsys, "data", "validate", str(folder))


def checks_output(capsys: pytest.CaptureFixture[str], folder: Path) -> tuple[int, str]:
    """`data validate FOLDER` that runs its checks: the exit code and the table printed
    (words joined by single spaces)."""
    with pytest.raises(SystemExit) as exit_info:
        main(["data", "validate", str(folder)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return int(exit_info.value.code or 0), " ".join(captured.out.split())


class _Requests(http.server.BaseHTTPRequestHandler):
    seen: list[str]

    def do_GET(self) -> None:
        self.seen.append(self.path)
        body = json.dumps({"type": "integer"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    """A schema server on the loopback address: its base URL and the paths requested."""
    seen: list[str] = []
    handler = type("Handler", (_Requests,), {"seen": seen})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    finally:
        httpd.shutdown()
        httpd.server_close()


_OPENED: list[str] = []


def _record_open(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and args and isinstance(args[0], str | bytes | Path):
        _OPENED.append(str(args[0]))


sys.addaudithook(_record_open)  # audit hooks cannot be removed: it only records


@pytest.fixture
def opened() -> Iterator[list[str]]:
    """Every file path this process opens while the test runs (the interpreter's audit
    events, so an open through urllib's file handler counts too)."""
    _OPENED.clear()
    yield _OPENED
    _OPENED.clear()


def test_a_remote_ref_sends_no_request_to_a_live_server(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, server: tuple[str, list[str]]
) -> None:
    base, seen = server
    ref = f"{base}/evil.json"
    folder = write_dataset(tmp_path, {"properties": {"a": {"$ref": ref}}}, {"a": 1})
    code, err = validate(capsys, folder)
    assert_one_line_error(code, err, "s.json", f"$ref '{ref}' points outside the schema")
    assert seen == []


def test_the_outputs_check_itself_builds_no_fetching_validator(
    tmp_path: Path, server: tuple[str, list[str]]
) -> None:
    """The check behind `data validate` on a dataset that skipped the reader's check:
    it validates through the same checker, so the schema is refused, nothing fetched."""
    base, seen = server
    path = tmp_path / "s.json"
    schema = {"properties": {"a": {"$ref": f"{base}/evil.json"}}}
    row = EdgeJSONRow(1, "r1", "s", "simple", "a is x", {"a": "not an integer"})
    schemas = {"s": SchemaFile("s", "simple", path, schema)}
    dataset = EdgeJSONDataset(tmp_path / "t.jsonl", [row], schemas, 1)
    with pytest.raises(UserError, match="points outside the schema"):
        outputs_valid(dataset)
    assert seen == []


def test_a_file_ref_is_refused_without_opening_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, opened: list[str]
) -> None:
    target = tmp_path / "secret.json"
    target.write_text(json.dumps({"type": "integer"}))
    ref = f"file://{target}"
    folder = write_dataset(tmp_path / "ds", {"properties": {"a": {"$ref": ref}}}, {"a": 1})
    opened.clear()  # what the test itself wrote
    code, err = validate(capsys, folder)
    assert_one_line_error(code, err, f"$ref '{ref}' points outside the schema")
    assert str(target) not in opened
    assert any(path.endswith("s.json") for path in opened)  # the hook does see opens


def test_an_unreachable_ref_is_one_line_and_no_connection(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, no_network: list[str]
) -> None:
    ref = "https://unreachable.invalid/schema.json#/definitions/a"
    folder = write_dataset(tmp_path, {"properties": {"a": {"$ref": ref}}})
    code, err = validate(capsys, folder)
    assert_one_line_error(code, err, "points outside the schema")
    assert no_network == []


def test_a_catastrophic_pattern_stops_through_the_bounded_matcher(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`^(a+)+$` against 100,000 a's and a "!": the regex engine's own stop (its timeout,
    raised as TimeoutError inside the bounded matcher) ends the match, and the check
    reports it as the row's problem."""
    stops: list[str] = []
    search = patterns.pattern_search

    def watched(pattern: str, text: str) -> bool:
        try:
            return search(pattern, text)
        except patterns.PatternStopped as stopped:
            stops.append(str(stopped))
            raise

    monkeypatch.setattr(patterns, "pattern_search", watched)
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a+)+$"}}}
    folder = write_dataset(tmp_path, schema, {"a": "a" * 100_000 + "!"})
    code, out = checks_output(capsys, folder)
    assert code == 1  # a failed check, not a hang or a crash
    assert len(stops) == 1 and "matching stopped after" in stops[0]
    assert "expected outputs match schemas" in out and "matching stopped after" in out
    assert "a" * 100 not in out  # the value is shortened in every problem line


def test_a_schema_nested_too_deeply_is_one_line_with_depth_and_limit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = write_dataset(tmp_path, nested(170))
    code, err = validate(capsys, folder)
    assert_one_line_error(code, err, "s.json", "nested too deeply: 341 levels, limit 100")


def test_the_dependencies_schema_loads_and_validates(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A Draft 7 `dependencies` mixing a schema and a property list crashed referencing's
    subschema walk (a 64-line traceback); it is a valid schema and is checked as one."""
    folder = write_dataset(tmp_path, DEPENDENCIES, {"b": 1})
    code, out = checks_output(capsys, folder)
    assert code == 1
    assert "'a' is a dependency of 'b'" in out


def test_a_schema_the_libraries_cannot_handle_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The same `dependencies` with an anchor to find: referencing crawls every subschema
    and fails inside; that is one line naming the file, not a traceback."""
    schema = {**DEPENDENCIES, "$id": "http://x.example/s", "properties": {"c": {"$ref": "#q"}}}
    schema["dependencies"] = {"a": {"$anchor": "q"}, "b": ["a"]}
    schema["$schema"] = "https://json-schema.org/draft/2019-09/schema"
    folder = write_dataset(tmp_path, schema)
    code, err = validate(capsys, folder)
    assert_one_line_error(code, err, "s.json")


def test_a_byte_order_mark_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = write_dataset(tmp_path, {"type": "object"})
    data = folder / "test.jsonl"
    data.write_bytes(b"\xef\xbb\xbf" + data.read_bytes())
    code, err = validate(capsys, folder)
    assert_one_line_error(code, err, f"{data}:1:", "byte order mark")
    schema = folder / "schemas" / "simple" / "s.json"
    data.write_bytes(data.read_bytes()[3:])
    schema.write_bytes(b"\xef\xbb\xbf" + schema.read_bytes())
    code, err = validate(capsys, folder)
    assert_one_line_error(code, err, str(schema), "byte order mark")
