"""The core's structure: no import cycle, one exit from a run, state written only by its owner.

These read the source (ast), so they hold for every path, not only the ones a run happens to take.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import openagent

CORE = Path(openagent.__file__).parent
MUTATORS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "remove",
        "pop",
        "popitem",
        "clear",
        "update",
        "setdefault",
        "add",
        "discard",
    }
)


def _modules() -> dict[str, Path]:
    found = {}
    for path in CORE.rglob("*.py"):
        parts = path.relative_to(CORE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _source(module: str, node: ast.Import | ast.ImportFrom, alias: ast.alias) -> str | None:
    """The core module one imported name comes from (``from . import x`` names module ``x`` itself)."""
    if isinstance(node, ast.Import):
        return alias.name if alias.name in MODULES else None
    is_package = module in MODULES and MODULES[module].name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    base = node.module or ""
    if node.level:
        parts = package.split(".")
        base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
    name = f"{base}.{alias.name}"
    return name if name in MODULES else base if base in MODULES else None


def _imported(module: str, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """The core modules an import statement names."""
    for alias in node.names:
        if (found := _source(module, node, alias)) is not None:
            yield found


def import_graph() -> dict[str, set[str]]:
    """Module → the core modules it imports anywhere: at the top, under TYPE_CHECKING, inside functions."""
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        edges = graph.setdefault(module, set())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges.update(name for name in _imported(module, node) if name != module)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_import_walk_sees_every_kind_of_import() -> None:
    graph = import_graph()
    assert "openagent._runtime" in graph["openagent._steps"]  # under TYPE_CHECKING
    assert "openagent._compaction" in graph["openagent._options"]  # inside a function
    assert "openagent._loop" in graph["openagent._agents"]  # at the top
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_among_core_modules() -> None:
    assert cycles(import_graph()) == []


# --- one exit ----------------------------------------------------------------------------------------------


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    yield from (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))


def _calls(node: ast.AST, name: str) -> list[ast.Call]:
    def called(call: ast.Call) -> str | None:
        func = call.func
        return (
            func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        )

    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and called(n) == name]


def test_a_run_has_one_exit_where_the_result_message_is_built() -> None:
    builders = [
        f"{module}.{function.name}"
        for module, path in MODULES.items()
        for function in _functions(ast.parse(path.read_text()))
        if _calls(function, "ResultMessage")
    ]
    assert builders == ["openagent._steps.result_message"]
    callers = [
        (module, function.name, len(_calls(function, "result_message")))
        for module, path in MODULES.items()
        for function in _functions(ast.parse(path.read_text()))
        if _calls(function, "result_message")
    ]
    assert callers == [("openagent._loop", "run", 1)]
    run = next(f for f in _functions(ast.parse(MODULES["openagent._loop"].read_text())) if f.name == "run")
    assert not [n for n in ast.walk(run) if isinstance(n, ast.Return)], "Conversation.run returns early"


# --- who writes what ---------------------------------------------------------------------------------------


class _Writes(ast.NodeVisitor):
    """Attribute writes (``x.a = …``, ``x.a[k] = …``, ``x.a += …``, ``x.a.append(…)``) on objects of classes
    defined in another core module, and writes through more than one attribute (``self.a.b = …``).
    """

    def __init__(self, module: str, tree: ast.Module) -> None:
        self.module = module
        self.own = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        self.returns = {f.name: _type_name(f.returns) for f in _functions(tree)}
        self.foreign: dict[str, str] = {}  # a name imported from another core module → that module
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (found := _source(module, node, alias)) is not None and found != module:
                        self.foreign[alias.asname or alias.name] = found
        self.types: dict[str, str | None] = {}
        self.found: list[str] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer = self.types
        self.types = dict(outer)
        for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
            self.types[arg.arg] = _type_name(arg.annotation)
        self.generic_visit(node)
        self.types = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._write(target, node)
            if isinstance(target, ast.Name) and isinstance(node.value, ast.Call):
                made = _type_name(node.value.func)
                self.types[target.id] = self.returns.get(made or "", made) if made not in self.own else made
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._write(node.target, node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in MUTATORS
            and isinstance(func.value, ast.Attribute)
        ):
            self._write(func.value, node)
        if isinstance(func, ast.Name) and func.id in ("setattr", "delattr") and node.args:
            self._check(node.args[0], ast.unparse(node), node, hops=1)
        self.generic_visit(node)

    def _write(self, target: ast.expr, node: ast.AST) -> None:
        while isinstance(target, ast.Subscript):
            target = target.value
        if isinstance(target, ast.Attribute):
            hops, root = 1, target.value
            while isinstance(root, ast.Attribute | ast.Subscript):
                hops, root = hops + isinstance(root, ast.Attribute), root.value
            self._check(root, ast.unparse(target), node, hops)

    def _check(self, root: ast.expr, written: str, node: ast.AST, hops: int) -> None:
        where = f"{self.module}:{node.lineno} {written}"  # type: ignore[attr-defined]
        if hops > 1:
            self.found.append(f"{where} (through another object)")
        elif isinstance(root, ast.Name) and root.id not in ("self", "cls"):
            kind = self.types.get(root.id)
            if kind is not None and kind not in self.own and kind in self.foreign:
                self.found.append(f"{where} (a {kind} of {self.foreign[kind]})")


def _type_name(node: ast.expr | None) -> str | None:
    """The class an annotation or a call names: ``Conversation``, ``loop.Conversation``, ``X | None`` → X."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _type_name(ast.parse(node.value, mode="eval").body)
    if isinstance(node, ast.BinOp):
        return _type_name(node.left)
    if isinstance(node, ast.Subscript):
        return _type_name(node.value)
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def writes(module: str, source: str) -> list[str]:
    """What ``module``'s code writes that belongs to another module's objects."""
    tree = ast.parse(source)
    visitor = _Writes(module, tree)
    visitor.visit(tree)
    return visitor.found


def test_the_write_check_catches_each_form() -> None:
    source = """
from ._loop import Conversation
from ._options import AgentOptions

class Mine:
    def __init__(self, conversation: Conversation) -> None:
        self.items = []
        self.conversation = conversation

    def change(self, conversation: Conversation, options: AgentOptions | None) -> None:
        self.items.append(1)
        conversation.history = []
        conversation.pending["x"] = 1
        conversation.turns += 1
        conversation.listeners.append(1)
        options.model = "m"
        self.conversation.model = "m"
        made = Conversation(options)
        made.tools = {}
        mine = Mine(conversation)
        mine.items = []
"""
    found = writes("openagent.example", source)
    assert [f.split(" ", 1)[1] for f in found] == [
        "conversation.history (a Conversation of openagent._loop)",
        "conversation.pending (a Conversation of openagent._loop)",
        "conversation.turns (a Conversation of openagent._loop)",
        "conversation.listeners (a Conversation of openagent._loop)",
        "options.model (a AgentOptions of openagent._options)",
        "self.conversation.model (through another object)",
        "made.tools (a Conversation of openagent._loop)",
    ]


def test_no_module_writes_another_modules_objects() -> None:
    found = [w for module, path in MODULES.items() for w in writes(module, path.read_text())]
    assert found == []
