"""Review limits the code keeps (STYLE.md): module and function sizes, and a core that imports no plugin."""

import ast
from pathlib import Path

ROOT = Path(__file__).parents[1]
SOURCES = sorted([*ROOT.glob("core/src/**/*.py"), *ROOT.glob("plugins/*/src/**/*.py")])
LOOP_DRIVER = ("_loop.py", "run")  # the loop's driver may run to 120 lines, read top to bottom


def test_sources_are_found():
    assert len(SOURCES) > 40


def test_no_module_is_over_600_lines():
    assert [str(p.relative_to(ROOT)) for p in SOURCES if len(p.read_text().splitlines()) > 600] == []


def test_no_function_is_over_60_lines():
    long = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                limit = 120 if (path.name, node.name) == LOOP_DRIVER else 60
                if length > limit:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({length} lines)")
    assert long == []


def test_core_never_imports_a_plugin():
    offenders = []
    for path in ROOT.glob("core/src/**/*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{path.name}: {n}" for n in names if n.startswith("openagent_")]
    assert offenders == []
