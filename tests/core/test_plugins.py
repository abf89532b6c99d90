"""Plugins found through entry points: a real third-party-style package and broken ones, installed in the
test environment (tests/plugins/*)."""

import logging

import pytest

from openagent import AgentOptions, run
from openagent.errors import ConfigError
from openagent.models import Stop, TextDelta
from openagent.plugins import list_plugins, load_plugins, registry

pytestmark = pytest.mark.anyio


@pytest.fixture
def all_plugins(monkeypatch):
    monkeypatch.delenv("OPENAGENT_PLUGINS", raising=False)


async def test_a_third_party_provider_works_by_model_string_alone(all_plugins):
    result = await run("hello", AgentOptions(model="echo:tiny"))
    assert result.text == "tiny: hello"
    assert (await run("hi", AgentOptions(model="parrot:p"))).text == "p: hi"


def test_broken_plugins_are_reported_by_name_and_the_rest_work(all_plugins, caplog):
    caplog.set_level(logging.WARNING, "openagent.plugins")
    found = load_plugins()
    plugins = found.plugins
    assert plugins["echo"].error is None and plugins["echo"].providers == ["echo", "parrot", "lazyecho"]
    assert plugins["echo"].version == "0.3.0"
    assert "a_module_that_is_not_installed" in plugins["broken_import"].error
    assert "license server" in plugins["broken_hook"].error
    assert "register_provider" in plugins["misspelled"].error
    assert "never" not in found.providers
    assert {"broken_import", "broken_hook", "misspelled"} <= {r.args[0] for r in caplog.records}


def test_the_allowlist_limits_which_plugins_load(monkeypatch):
    monkeypatch.setenv("OPENAGENT_PLUGINS", "echo")
    names = {p.name for p in list_plugins()}
    assert names == {"openagent", "echo"}


def test_an_empty_allowlist_loads_only_the_builtin_provider():
    assert {p.name for p in list_plugins()} == {"openagent"}
    assert set(registry().providers) == {"test"}


def test_unknown_provider_names_the_installed_ones_and_the_broken_ones(all_plugins):
    with pytest.raises(ConfigError) as raised:
        registry().provider_factory("nope")
    message = str(raised.value)
    assert "'nope'" in message and "echo" in message and "test" in message
    assert "broken_import" in message


def test_extra_plugins_register_like_entry_points():
    class Local:
        @staticmethod
        def register_providers(register):
            class Fixed:
                def __init__(self, model, **_):
                    self.model = model

                async def stream(self, request):
                    yield TextDelta("fixed")
                    yield Stop("end_turn")

            register("fixed", Fixed)

    from openagent.hookspecs import hookimpl

    Local.register_providers = hookimpl(Local.register_providers)
    found = load_plugins(extra=[("local", Local)])
    assert found.plugins["local"].providers == ["fixed"]


def test_lazy_registrations_import_nothing_until_first_use(all_plugins):
    code = (
        "import sys\n"
        "from openagent.plugins import load_plugins\n"
        "found = load_plugins()\n"
        "print('openagent_echo._slow' in sys.modules, sorted(found.plugins['echo'].tools))\n"
        "print(found.providers['lazyecho']('m').model, 'openagent_echo._slow' in sys.modules)\n"
        "print(found.tools['Shout'].name)\n"
    )
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "OPENAGENT_PLUGINS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.splitlines() == ["False ['Shout']", "lazy-m True", "Shout"]


async def test_a_lazy_provider_runs_by_model_string(all_plugins):
    assert (await run("hi", AgentOptions(model="lazyecho:x"))).text == "lazy-x: hi"
    assert (await run("hi", AgentOptions(model="echo:x", tools=["Shout"]))).text == "x: hi"


def test_a_lazy_registration_that_fails_to_import_reports_its_plugin(all_plugins, caplog):
    caplog.set_level(logging.WARNING, "openagent.plugins")
    found = load_plugins()
    assert found.plugins["broken_lazy"].error is None, "registering is cheap and cannot fail"
    assert "ghost" in found.providers
    with pytest.raises(ConfigError) as raised:
        found.provider_factory("ghost")
    message = str(raised.value)
    assert "'broken_lazy'" in message and "not_a_module" in message
    assert "not_a_module" in found.plugins["broken_lazy"].error
    assert "ghost" not in found.providers
    assert found.tools.get("Ghost") is None and "Ghost" not in found.tools
    assert any(r.args[0] == "broken_lazy" for r in caplog.records)
    assert found.provider_factory("echo"), "the other plugins keep working"


def test_a_lazy_registration_must_name_module_and_attribute():
    from openagent.hookspecs import lazy

    with pytest.raises(ValueError, match="package.module:attribute"):
        lazy("openagent_echo")
    with pytest.raises(ValueError):
        lazy(":thing")


def test_a_lazy_tool_without_a_name_breaks_only_its_plugin():
    from openagent.hookspecs import hookimpl, lazy

    class Nameless:
        @staticmethod
        @hookimpl
        def register_tools(register):
            register(lazy("openagent_echo._slow:shout"))

    found = load_plugins(extra=[("nameless", Nameless)])
    assert "needs its name" in found.plugins["nameless"].error
