"""Project settings: memory files, skills, slash commands and agents, read from the same files as Claude Code.

Nothing is read unless ``AgentOptions.setting_sources`` names a source (the Claude Agent SDK's default
loads all; openagent's loads none, so a run never picks up files implicitly):

- ``"user"``: ``~/.claude/`` and the openagent user config directory;
- ``"project"``: every directory from the repository root (the nearest parent with ``.git``) down to ``cwd``;
- ``"local"``: ``CLAUDE.local.md`` and ``.claude/settings.local.json`` / ``.openagent/settings.local.toml``.

Workspace trust: what a project folder says can be the work of whoever wrote the repository. Prompts load
from any source (memory, skills, commands, agents: they are text for the model, not power), and so do deny
and ask rules (they only narrow). What changes where requests and keys go, widens permissions or starts
processes — ``permissions.allow``, ``permissions.defaultMode``, ``permissions.additionalDirectories``,
``env``, the MCP servers of ``.mcp.json``, a subagent's model naming a provider — takes effect only with
``AgentOptions(trust_project=True)`` (or the `project_digest` the user approved); otherwise it is listed in
`ProjectSettings.untrusted`, logged, and reported in the init message as ``ignored_settings``.

Memory files (``CLAUDE.md``, ``.claude/CLAUDE.md``, ``AGENTS.md``; ``CLAUDE.local.md`` for ``local``) are
appended to the system prompt in that order — user first, then the project from its root down to ``cwd``,
then local — each under a heading naming its path. ``@path`` imports inside them are inlined (five levels
deep at most, never from outside the directory the source reads). Skills (``.claude/skills/<name>/SKILL.md``),
commands (``.claude/commands/*.md``) and agents (``.claude/agents/*.md``) found nearer ``cwd`` override those
found further away. A malformed file is skipped with a warning naming it and the line; the rest loads.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, get_args

from .errors import masked
from .tools import Tool, tool

__all__ = [
    "SETTINGS_FILES",
    "Command",
    "ProjectSettings",
    "Skill",
    "load_settings",
    "project_digest",
    "untrusted_settings",
]

logger = logging.getLogger("openagent.settings")

MEMORY_FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "AGENTS.md")
SETTINGS_FILES = {
    "project": (".claude/settings.json", ".mcp.json"),
    "local": (".claude/settings.local.json", ".openagent/settings.local.toml"),
}
"""The settings files each source reads in every project folder (the CLI also reads
``.openagent/settings.toml``)."""
MAX_IMPORT_DEPTH = 5
_IMPORT = re.compile(r"(?<![\w`])@((?:~|\.{1,2})?/?[\w./-]+\.\w+)")


@dataclass
class Skill:
    """A skill: only its name and description go into the prompt; the ``Skill`` tool loads the rest."""

    name: str
    description: str
    path: Path
    body: str


@dataclass
class Command:
    """A slash command: ``/name args`` expands to its text, with ``$ARGUMENTS`` and ``$1``… filled in."""

    name: str
    description: str
    body: str
    path: Path
    argument_hint: str | None = None
    allowed_tools: list[str] = field(default_factory=list)

    def expand(self, arguments: str) -> str:
        """The command's text for these arguments."""
        words = arguments.split()
        text = self.body.replace("$ARGUMENTS", arguments)
        return re.sub(r"\$(\d+)", lambda m: words[int(m[1]) - 1] if 0 < int(m[1]) <= len(words) else "", text)


@dataclass
class ProjectSettings:
    """What the setting sources provided, and what could not be loaded."""

    memory: list[tuple[Path, str]] = field(default_factory=list)
    skills: dict[str, Skill] = field(default_factory=dict)
    commands: dict[str, Command] = field(default_factory=dict)
    agents: dict[str, Any] = field(default_factory=dict)
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    ask_tools: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    overrides: dict[str, Any] = field(default_factory=dict)
    """What a trusted project sets for the run: ``permission_mode``, ``add_dirs``, ``env``,
    ``mcp_servers``."""
    untrusted: list[str] = field(default_factory=list)
    """The settings ignored because the project is not trusted, as ``"file: key = value"`` lines."""

    def apply(self, options: Any) -> Any:
        """``options`` with a trusted project's settings filled in where the code left the defaults (the
        options themselves are never changed: a copy is returned when there is anything to apply).
        """  # noqa: D205
        found = self.overrides
        changes: dict[str, Any] = {}
        if "permission_mode" in found and options.permission_mode == "default":
            changes["permission_mode"] = found["permission_mode"]
        if "add_dirs" in found:
            changes["add_dirs"] = [*options.add_dirs, *found["add_dirs"]]
        if "env" in found:
            changes["env"] = {**found["env"], **options.env}
        if "mcp_servers" in found:
            changes["mcp_servers"] = {**found["mcp_servers"], **(options.mcp_servers or {})}
        return replace(options, **changes) if changes else options

    def system_prompt(self, base: str | None) -> str | None:
        """``base`` followed by the memory files and the skill catalogue."""
        parts = [base] if base else []
        parts += [f"# Memory from {path}\n\n{text.strip()}" for path, text in self.memory]
        if self.skills:
            catalogue = "\n".join(f"- {s.name}: {s.description}" for s in self.skills.values())
            parts.append(f"# Skills\n\nLoad a skill with the Skill tool before using it.\n{catalogue}")
        return "\n\n".join(parts) or None

    def describe(self) -> dict[str, Any]:
        """What ``SystemMessage(subtype="init").data`` lists."""
        described = {
            "memory_files": [str(p) for p, _ in self.memory],
            "skills": list(self.skills),
            "slash_commands": list(self.commands),
            "agents": list(self.agents),
        }
        return {**described, "ignored_settings": list(self.untrusted)} if self.untrusted else described

    def expand(self, prompt: str) -> str:
        """A ``/name args`` prompt expanded to its command's text; `ValueError` for an unknown command."""
        match = re.match(r"^/([\w:.-]+)(?:\s+(.*))?$", prompt.strip(), re.DOTALL)
        if not match:
            return prompt
        command = self.commands.get(match[1])
        if command is None:
            known = ", ".join(f"/{name}" for name in sorted(self.commands)) or "none"
            raise ValueError(f"unknown command /{match[1]}; known commands: {known}")
        return command.expand(match[2] or "")

    def tools(self) -> list[Tool]:
        """The ``Skill`` and ``SlashCommand`` tools, when there are skills or commands."""
        made: list[Tool] = []
        if self.skills:
            skills = self.skills

            @tool(is_read_only=True)
            def Skill(skill: str) -> str:
                """Load a skill's instructions by name (the names are listed in the system prompt)."""
                found = skills.get(skill)
                if found is None:
                    return f"Unknown skill {skill!r}. Available skills: {', '.join(sorted(skills))}"
                folder = found.path.parent
                siblings = (
                    sorted(p.name for p in folder.iterdir() if p.name != "SKILL.md")
                    if folder.is_dir()
                    else []
                )
                files = f"\n\nFiles in {found.path.parent}: {', '.join(siblings)}" if siblings else ""
                return found.body + files

            made.append(Skill)
        if self.commands:
            expand = self.expand

            @tool(is_read_only=True)
            def SlashCommand(command: str) -> str:
                """Run a slash command of this project ("/review src/app.py"); returns its instructions."""
                try:
                    return expand(command if command.startswith("/") else "/" + command)
                except ValueError as exc:
                    return str(exc)

            made.append(SlashCommand)
        return made


def _front_matter(path: Path, settings: ProjectSettings) -> tuple[dict[str, Any], str] | None:
    """Split YAML front matter from the body; None (with a warning naming file and line) when malformed."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if not text.startswith("---"):
        return {}, text
    end = text.find("\n---", 3)
    if end == -1:
        settings.warnings.append(f"{path}:1: front matter opened with '---' is never closed")
        return None
    import yaml  # lazily: only projects with such files pay for it

    try:
        meta = yaml.safe_load(text[3:end]) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1  # the snippet's line 0 is the file's '---' line
        settings.warnings.append(f"{path}:{line}: malformed front matter: {getattr(exc, 'problem', exc)}")
        return None
    if not isinstance(meta, dict):
        settings.warnings.append(f"{path}:2: front matter must be a mapping of keys to values")
        return None
    return meta, text[end + 4 :].lstrip("\n")


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value] if isinstance(value, list) else []


def _imports(text: str, origin: Path, root: Path, settings: ProjectSettings, depth: int = 0) -> str:
    """Inline ``@path`` imports, bounded in depth and confined to ``root``."""

    def replace(match: re.Match[str]) -> str:
        line = text.count("\n", 0, match.start()) + 1
        target = (origin.parent / Path(match[1]).expanduser()).resolve()
        if depth >= MAX_IMPORT_DEPTH:
            settings.warnings.append(f"{origin}:{line}: @{match[1]} not imported: imports nest too deep")
        elif not target.is_relative_to(root):
            settings.warnings.append(f"{origin}:{line}: @{match[1]} not imported: outside {root}")
        elif not target.is_file():
            settings.warnings.append(f"{origin}:{line}: @{match[1]} not imported: no such file")
        else:
            inner = target.read_text(encoding="utf-8", errors="replace")
            return _imports(inner, target, root, settings, depth + 1)
        return match[0]

    return _IMPORT.sub(replace, text)


def _read_folder(
    folder: Path,
    claude: Path | None,
    root: Path,
    settings: ProjectSettings,
    memory_files: Sequence[str],
    trusted: bool = True,
) -> None:
    """Memory files in ``folder``; skills, commands and agents under ``claude``; imports confined to root."""
    for name in memory_files:
        path = folder / name
        if path.is_file():
            text = _imports(path.read_text(encoding="utf-8", errors="replace"), path, root, settings)
            settings.memory.append((path, text))
    if claude is None:
        return
    for path in sorted(claude.glob("skills/*/SKILL.md")):
        if (parsed := _front_matter(path, settings)) is not None:
            meta, body = parsed
            name = str(meta.get("name") or path.parent.name)
            if name in settings.skills and settings.skills[name].path.parent.parent == path.parent.parent:
                settings.warnings.append(
                    f"{path}:1: skill {name!r} is also defined in {settings.skills[name].path}"
                )
            settings.skills[name] = Skill(name, str(meta.get("description", "")), path, body)
    for path in sorted(claude.glob("commands/**/*.md")):
        if (parsed := _front_matter(path, settings)) is not None:
            meta, body = parsed
            name = ":".join(path.relative_to(claude / "commands").with_suffix("").parts)
            settings.commands[name] = Command(
                name, str(meta.get("description", "")), body, path, meta.get("argument-hint"),
                _names(meta.get("allowed-tools")),
            )  # fmt: skip
    _read_agents(claude, settings, trusted)


def _read_agents(claude: Path, settings: ProjectSettings, trusted: bool) -> None:
    """Agent definitions; an untrusted one keeps its prompt and tools, not a model naming a provider (that
    would send the conversation, and a key, to an endpoint the user did not pick).
    """  # noqa: D205
    from .agents import AgentDefinition

    for path in sorted(claude.glob("agents/*.md")):
        if (parsed := _front_matter(path, settings)) is not None:
            meta, body = parsed
            name = str(meta.get("name") or path.stem)
            model = meta.get("model")
            if isinstance(model, str) and ":" in model and not trusted:
                settings.untrusted.append(f"{path}: model = {model!r}")
                model = None
            tools = _names(meta.get("tools")) or None
            settings.agents[name] = AgentDefinition(str(meta.get("description", "")), body, tools, model)


def _parse(path: Path, settings: ProjectSettings) -> dict[str, Any] | None:
    """A JSON or TOML settings file as a mapping; None (with a warning naming file and line) otherwise."""
    import tomllib  # lazily, like yaml: only projects with these files pay for it

    try:
        raw = path.read_text(encoding="utf-8")
        data = tomllib.loads(raw) if path.suffix == ".toml" else json.loads(raw)
    except (OSError, ValueError) as exc:  # JSON, TOML and UTF-8 decoding errors are ValueErrors
        settings.warnings.append(f"{path}:{getattr(exc, 'lineno', 1)}: not loaded: {exc}")
        return None
    if not isinstance(data, dict):
        settings.warnings.append(f"{path}:1: not loaded: not a mapping of settings")
        return None
    return data


def _permissions(data: Mapping[str, Any]) -> dict[str, Any]:
    found = data.get("permissions")
    return found if isinstance(found, dict) else {}


def _powerful(data: Mapping[str, Any], folder: Path) -> dict[str, Any]:
    """The settings of a file that change where requests go, widen permissions or start processes."""
    from .permissions import PermissionMode

    permissions = _permissions(data)
    mode = permissions.get("defaultMode")
    env, servers = data.get("env"), data.get("mcpServers")
    dirs = [str(folder / Path(d).expanduser()) for d in _names(permissions.get("additionalDirectories"))]
    return {
        "permissions.allow": _names(permissions.get("allow", [])),
        "permissions.defaultMode": mode if mode in get_args(PermissionMode) else None,
        "permissions.additionalDirectories": dirs,
        "env": {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else None,
        "mcpServers": {str(k): v for k, v in servers.items()} if isinstance(servers, dict) else None,
    }


def _settings_file(path: Path, folder: Path, settings: ProjectSettings, trusted: bool) -> None:
    """Deny and ask rules always; the powerful settings only when trusted (else listed as ignored)."""
    data = _parse(path, settings)
    if data is None:
        return
    permissions = _permissions(data)
    settings.disallowed_tools += _names(permissions.get("deny", []))
    settings.ask_tools += _names(permissions.get("ask", []))
    found = settings.overrides
    for key, value in _powerful(data, folder).items():
        if not value:
            continue
        if not trusted:
            shown = json.dumps(masked(value), ensure_ascii=False, default=str)
            settings.untrusted.append(f"{path}: {key} = {shown[:300]}{'…' if len(shown) > 300 else ''}")
        elif key == "permissions.allow":
            settings.allowed_tools += value
        elif key == "permissions.defaultMode":
            found["permission_mode"] = value
        elif key == "permissions.additionalDirectories":
            found.setdefault("add_dirs", []).extend(value)
        else:
            found.setdefault("env" if key == "env" else "mcp_servers", {}).update(value)


def _settings_files(
    folders: Sequence[Path], sources: Sequence[str], settings: ProjectSettings, trusted: bool
) -> None:
    for folder in folders:
        for source in ("project", "local"):
            for name in SETTINGS_FILES[source] if source in sources else ():
                if (folder / name).is_file():
                    _settings_file(folder / name, folder, settings, trusted)


def project_digest(cwd: str | Path) -> str:
    """A hash of every file of the project whose settings need trust (settings files, ``.mcp.json``, agent
    definitions, the CLI's ``.openagent/settings.toml``) from the repository root down to ``cwd``: what a
    user trusted is the folder as it was, and any change to these files needs trust again.
    """  # noqa: D205
    digest = hashlib.sha256()
    folders = _project_folders(Path(cwd).resolve())
    names = (*SETTINGS_FILES["project"], *SETTINGS_FILES["local"], ".openagent/settings.toml")
    for folder in folders:
        for path in [*(folder / n for n in names), *sorted((folder / ".claude").glob("agents/*.md"))]:
            if path.is_file():
                digest.update(f"{path.relative_to(folders[0]).as_posix()}\0".encode())
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def untrusted_settings(cwd: str | Path, sources: Sequence[str] = ("project", "local")) -> list[str]:
    """The settings of the project at ``cwd`` that would take effect only if it were trusted, as
    ``"file: key = value"`` lines (what a trust prompt shows).
    """  # noqa: D205
    settings = ProjectSettings()
    folders = _project_folders(Path(cwd).resolve())
    _settings_files(folders, sources, settings, trusted=False)
    if "project" in sources:
        for folder in folders:
            if (folder / ".claude" / "agents").is_dir():
                _read_agents(folder / ".claude", settings, trusted=False)
    return settings.untrusted


def _project_folders(cwd: Path) -> list[Path]:
    """From the repository root (the nearest parent holding ``.git``) down to ``cwd``; else just ``cwd``."""
    chain = [cwd, *cwd.parents]
    root = next((p for p in chain if (p / ".git").exists()), cwd)
    return list(reversed(chain[: chain.index(root) + 1]))


def _read_user(settings: ProjectSettings) -> None:
    import platformdirs

    for home in (Path.home() / ".claude", Path(platformdirs.user_config_dir("openagent", appauthor=False))):
        if home.is_dir():
            _read_folder(home, home, home, settings, ("CLAUDE.md",))


def _plugin_skills(settings: ProjectSettings) -> None:
    from .plugins import registry

    for name, (description, body) in registry().skills.items():
        settings.skills[name] = Skill(name, description, Path("<plugin>") / name / "SKILL.md", body)


def load_settings(
    sources: Sequence[str],
    cwd: Path,
    skills: Sequence[str] | str = "all",
    *,
    trust_project: bool | str = False,
) -> ProjectSettings:
    """Read what ``sources`` (``user``, ``project``, ``local``) provide, for a run in ``cwd``.

    ``trust_project`` is the option: ``True``, or the `project_digest` a user approved (then
    only while the files are unchanged). Without it the project's powerful settings are not applied but
    listed in `ProjectSettings.untrusted` (see the module's docstring).
    """
    settings = ProjectSettings()
    cwd = cwd.resolve()
    folders = _project_folders(cwd)
    trust = trust_project
    trusted = trust is True or (isinstance(trust, str) and trust == project_digest(cwd))
    if isinstance(trust, str) and not trusted:
        settings.warnings.append(f"the settings of {folders[0]} changed since they were trusted: not trusted")
    _plugin_skills(settings)  # installed plugins' skills come first: project files override them
    if "user" in sources:
        _read_user(settings)
    if "project" in sources:
        for folder in folders:
            _read_folder(folder, folder / ".claude", folders[0], settings, MEMORY_FILES, trusted)
    if "local" in sources:
        for folder in folders:
            _read_folder(folder, None, folders[0], settings, ("CLAUDE.local.md",))
    _settings_files(folders, sources, settings, trusted)
    if skills != "all":
        unknown = set(skills) - set(settings.skills)
        if unknown:
            settings.warnings.append(f"skills not found: {', '.join(sorted(unknown))}")
        settings.skills = {n: s for n, s in settings.skills.items() if n in skills}
    if settings.untrusted:
        settings.warnings.append(
            f"ignored until the project is trusted (AgentOptions(trust_project=True), or openagent's trust "
            f"prompt): {'; '.join(settings.untrusted)}"
        )
    for warning in settings.warnings:
        logger.warning("%s", warning)
    return settings
