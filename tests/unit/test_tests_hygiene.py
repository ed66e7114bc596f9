"""Rules of the tests themselves, read from their source (docs/contributing/tests.md):

- No test module imports another test module (`test_*`) or a conftest: what tests share
  lives in tests/helpers, and a conftest keeps fixtures and hooks, which pytest hands out
  by name. Importing a test module runs its tests' module-level set-up twice and ties
  one file's tests to another's internals.
- No wall-clock assertion under 10 s: a test asserts behaviour (what was called, how
  often, how much was built or read), never that the machine was fast enough. A timing
  bound under 10 s fails on a busy CPU while proving nothing a count would not; a
  linear, not quadratic, cost is shown by counting calls or steps. The check: an
  `assert` comparing a time read from the `time` module (`perf_counter`, `monotonic`,
  `time`, ...; directly or through a variable computed from one) with a number under 10,
  written as a literal or a constant of the module.
"""

from __future__ import annotations

import ast
import itertools
import operator
from collections.abc import Iterator
from pathlib import Path

TESTS_ROOT = Path(__file__).resolve().parents[1]
CLOCKS = {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns"}
LIMIT_S = 10
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}
_ARITHMETIC[ast.Div] = operator.truediv


# -- no test imports another test ------------------------------------------------------
def _test_module(name: str) -> bool:
    return any(part.startswith("test_") or part == "conftest" for part in name.split("."))


def imports_of_tests(root: Path) -> list[str]:
    """Every import, in any .py under `root`, of a test module or a conftest."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = "." * node.level + (node.module or "")
                names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            else:
                continue
            if any(_test_module(name) for name in names):
                where = path.relative_to(root).as_posix()
                found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_test_module_imports_another_or_a_conftest() -> None:
    assert imports_of_tests(TESTS_ROOT) == []


def test_an_import_of_a_test_module_or_conftest_is_caught(tmp_path: Path) -> None:
    (tmp_path / "unit").mkdir()
    (tmp_path / "unit" / "test_a.py").write_text(
        "from tests.conftest import RunFake\n"
        "from tests.helpers.fakes import fake_model\n"
        "\n\ndef test_x():\n    from tests.unit.test_b import helper\n"
    )
    (tmp_path / "unit" / "test_c.py").write_text("from . import test_b\nimport conftest\n")
    assert imports_of_tests(tmp_path) == [
        "unit/test_a.py:1: from tests.conftest import RunFake",
        "unit/test_a.py:6: from tests.unit.test_b import helper",
        "unit/test_c.py:1: from . import test_b",
        "unit/test_c.py:2: import conftest",
    ]


# -- no wall-clock assertion under 10 s --------------------------------------------------
def _clock_names(tree: ast.Module) -> set[str]:
    """Names a bare call of which reads the clock: `from time import perf_counter`."""
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "time"
        for alias in node.names
        if alias.name in CLOCKS
    }


def _reads_clock(node: ast.AST, clocks: set[str], timed: set[str]) -> bool:
    """Whether an expression reads the wall clock, or a variable computed from it."""
    for part in ast.walk(node):
        if isinstance(part, ast.Call):
            func = part.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in CLOCKS
                and isinstance(func.value, ast.Name)
                and func.value.id == "time"
            ):
                return True
            if isinstance(func, ast.Name) and func.id in clocks:
                return True
        if isinstance(part, ast.Name) and part.id in timed:
            return True
    return False


def _number(node: ast.AST, constants: dict[str, float]) -> float | None:
    """A number written in the source: a literal, a module constant, or arithmetic of them."""
    if isinstance(node, ast.Constant):
        value = node.value
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operand = _number(node.operand, constants)
        return -operand if operand is not None else None
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _number(node.left, constants), _number(node.right, constants)
        if left is None or right is None or (isinstance(node.op, ast.Div) and right == 0):
            return None
        return _ARITHMETIC[type(node.op)](left, right)
    return None


def _scopes(tree: ast.Module) -> Iterator[list[ast.AST]]:
    """The nodes of each scope a variable lives in: the module's own, then each
    function's (a nested function is a scope of its own, not its parent's)."""
    bodies: list[list[ast.stmt]] = [tree.body]
    bodies += [node.body for node in ast.walk(tree) if isinstance(node, _FUNCTIONS)]
    for body in bodies:
        nodes: list[ast.AST] = []
        stack: list[ast.AST] = list(body)
        while stack:
            node = stack.pop()
            nodes.append(node)
            if not isinstance(node, _FUNCTIONS):
                stack.extend(ast.iter_child_nodes(node))
        yield nodes


def wall_clock_bounds(root: Path) -> list[str]:
    """Every assert, in any .py under `root`, of a wall-clock time under LIMIT_S."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        clocks = _clock_names(tree)
        constants: dict[str, float] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], _number(node.value, constants)
                if isinstance(target, ast.Name) and value is not None:
                    constants[target.id] = value
        for nodes in _scopes(tree):
            timed: set[str] = set()
            for _ in range(3):  # `started = time.monotonic()`, then `took = ... - started`
                for node in nodes:
                    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and (
                        node.value is not None and _reads_clock(node.value, clocks, timed)
                    ):
                        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                        timed |= {t.id for t in targets if isinstance(t, ast.Name)}
            for node in nodes:
                if isinstance(node, ast.Assert) and _bounds_time(node, clocks, timed, constants):
                    where = path.relative_to(root).as_posix()
                    found.append((where, node.lineno, ast.unparse(node.test)))
    return [f"{where}:{line}: {test}" for where, line, test in sorted(found)]


def _bounds_time(
    node: ast.Assert, clocks: set[str], timed: set[str], constants: dict[str, float]
) -> bool:
    for compare in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
        operands = [compare.left, *compare.comparators]
        for (left, right), op in zip(itertools.pairwise(operands), compare.ops, strict=True):
            if isinstance(op, ast.Gt | ast.GtE):
                left, right = right, left
            elif not isinstance(op, ast.Lt | ast.LtE):
                continue
            bound = _number(right, constants)
            if _reads_clock(left, clocks, timed) and bound is not None and bound < LIMIT_S:
                return True
    return False


def test_no_wall_clock_assertion_under_ten_seconds() -> None:
    assert wall_clock_bounds(TESTS_ROOT) == []


def test_a_wall_clock_assertion_under_ten_seconds_is_caught(tmp_path: Path) -> None:
    (tmp_path / "test_fast.py").write_text(
        "import time\n"
        "from time import perf_counter as clock\n"
        "GENEROUS_S = 2.0\n"
        "\n\n"
        "def test_direct():\n"
        "    start = time.perf_counter()\n"
        "    assert time.perf_counter() - start < 0.5\n"
        "\n\n"
        "def test_through_variables():\n"
        "    started = clock()\n"
        "    elapsed = clock() - started\n"
        "    assert elapsed < GENEROUS_S * 2, elapsed\n"
        "    assert 3 > elapsed\n"
        "\n\n"
        "def test_allowed(fake_clock):\n"
        "    start = time.monotonic()\n"
        "    assert time.monotonic() - start < 30\n"
        "    assert fake_clock.monotonic() - 1 < 0.5\n"
        "    count = 3\n"
        "    assert count < 5\n"
    )
    assert wall_clock_bounds(tmp_path) == [
        "test_fast.py:8: time.perf_counter() - start < 0.5",
        "test_fast.py:14: elapsed < GENEROUS_S * 2",
        "test_fast.py:15: 3 > elapsed",
    ]
