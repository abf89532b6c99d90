"""Pins the public API: `openagent.__all__` and the signatures of the public callables."""

import inspect
import json
import os
from pathlib import Path

import openagent

SNAPSHOT = Path(__file__).with_name("public_api.json")


def test_all_is_sorted_and_is_the_public_namespace():
    assert openagent.__all__ == sorted(openagent.__all__)
    public = {name for name in vars(openagent) if not name.startswith("_")}
    submodules = {name for name in public if inspect.ismodule(getattr(openagent, name))}
    lazy = {"hookimpl"}  # resolved on first access, so that `import openagent` does not import pluggy
    assert set(openagent.__all__) == public - submodules - {"annotations", "Any", "TYPE_CHECKING"} | lazy
    assert all(getattr(openagent, name) is not None for name in lazy)


def signatures():
    out = {}
    for name in openagent.__all__:
        obj = getattr(openagent, name)
        if inspect.isfunction(obj):
            out[name] = str(inspect.signature(obj))
        elif inspect.isclass(obj) and name in {
            "AgentOptions",
            "Client",
            "Tool",
            "ToolContext",
            "HookMatcher",
            "RunResult",
        }:
            members = {
                m: str(inspect.signature(f))
                for m, f in vars(obj).items()
                if inspect.isfunction(f) and not m.startswith("_")
            }
            fields = getattr(obj, "__dataclass_fields__", {})
            out[name] = {"fields": sorted(fields), "methods": members}
    return out


def test_public_signatures_match_the_snapshot():
    current = signatures()
    if os.environ.get("OPENAGENT_UPDATE_SNAPSHOT"):  # changing the public API is done on purpose
        SNAPSHOT.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
    assert current == json.loads(SNAPSHOT.read_text())


# --- the two namespaces -----------------------------------------------------------------------------------

PUBLIC_MODULES = {
    "openagent",  # for writing agents
    "openagent.plugin",  # for writing plugins
    "openagent.testing",
    "openagent.sync",
    "openagent.compat",
    "openagent.compat.claude",
    "openagent.compat.claude.types",
}
ROOT = Path(__file__).resolve().parents[1]


def _module_names() -> set[str]:
    core = Path(openagent.__file__).parent
    names = set()
    for path in core.rglob("*.py"):
        parts = path.relative_to(core.parent).with_suffix("").parts
        names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_every_other_module_is_private():
    public = {name for name in _module_names() if not any(p.startswith("_") for p in name.split("."))}
    assert public == PUBLIC_MODULES


def test_the_plugin_namespace_is_sorted_and_every_name_resolves():
    import openagent.plugin as plugin

    assert plugin.__all__ == sorted(plugin.__all__)
    assert all(getattr(plugin, name) is not None for name in plugin.__all__)
    assert plugin.hookimpl is openagent.hookimpl


def test_plugins_in_this_repository_use_only_the_two_namespaces():
    import ast

    offenders = []
    for path in ROOT.glob("plugins/*/src/**/*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            offenders += [
                f"{path.relative_to(ROOT)}: {n}"
                for n in names
                if n.split(".")[0] == "openagent" and n not in ("openagent", "openagent.plugin")
            ]
    assert offenders == []
