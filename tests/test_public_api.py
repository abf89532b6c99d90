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
