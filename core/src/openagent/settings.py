"""Project settings: memory files, skills, slash commands and agents, read from the same files as Claude Code.

Nothing is read unless ``AgentOptions.setting_sources`` names a source (the Claude Agent SDK's default
loads all; openagent's loads none, so a run never picks up files implicitly):

- ``"user"``: ``~/.claude/`` and the openagent user config directory;
- ``"project"``: every directory from the repository root (the nearest parent with ``.git``) down to ``cwd``;
- ``"local"``: ``CLAUDE.local.md`` and ``.claude/settings.local.json`` / ``.openagent/settings.local.toml``.

Memory files (``CLAUDE.md``, ``.claude/CLAUDE.md``, ``AGENTS.md``; ``CLAUDE.local.md`` for ``local``) are
appended to the system prompt in that order — user first, then the project from its root down to ``cwd``,
then local — each under a heading naming its path. ``@path`` imports inside them are inlined (five levels
deep at most, never from outside the directory the source reads). Skills (``.claude/skills/<name>/SKILL.md``),
commands (``.claude/commands/*.md``) and agents (``.claude/agents/*.md``) found nearer ``cwd`` override those
found further away. A malformed file is skipped with a warning naming it and the line; the rest loads.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .tools import Tool, tool

__all__ = ["Command", "ProjectSettings", "Skill", "load_settings"]

logger = logging.getLogger("openagent.settings")

MEMORY_FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "AGENTS.md")
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
        return {
            "memory_files": [str(p) for p, _ in self.memory],
            "skills": list(self.skills),
            "slash_commands": list(self.commands),
            "agents": list(self.agents),
        }

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
    folder: Path, claude: Path | None, root: Path, settings: ProjectSettings, memory_files: Sequence[str]
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
    for path in sorted(claude.glob("agents/*.md")):
        if (parsed := _front_matter(path, settings)) is not None:
            meta, body = parsed
            from .agents import AgentDefinition

            name = str(meta.get("name") or path.stem)
            tools = _names(meta.get("tools")) or None
            settings.agents[name] = AgentDefinition(
                str(meta.get("description", "")), body, tools, meta.get("model")
            )


_PERMISSION_FILES = (".claude/settings.local.json", ".openagent/settings.local.toml")


def _local_permissions(folder: Path, settings: ProjectSettings) -> None:
    for path in (folder / name for name in _PERMISSION_FILES):
        if not path.is_file():
            continue
        import tomllib  # lazily, like yaml: only projects with these files pay for it

        try:
            raw = path.read_text(encoding="utf-8")
            data = tomllib.loads(raw) if path.suffix == ".toml" else json.loads(raw)
        except (ValueError, tomllib.TOMLDecodeError) as exc:
            line = getattr(exc, "lineno", 1)
            settings.warnings.append(f"{path}:{line}: not loaded: {exc}")
            continue
        permissions = data.get("permissions", {}) if isinstance(data, dict) else {}
        settings.allowed_tools += _names(permissions.get("allow", []))
        settings.disallowed_tools += _names(permissions.get("deny", []))
        settings.ask_tools += _names(permissions.get("ask", []))


def _read_local(folders: list[Path], settings: ProjectSettings, trusted: bool) -> None:
    for folder in folders:
        _read_folder(folder, None, folders[0], settings, ("CLAUDE.local.md",))
        if trusted:
            _local_permissions(folder, settings)
        elif any((folder / name).is_file() for name in _PERMISSION_FILES):
            settings.warnings.append(f"{folder}: permission rules not loaded: the project is not trusted")


def _project_folders(cwd: Path) -> list[Path]:
    """From the repository root (the nearest parent holding ``.git``) down to ``cwd``; else just ``cwd``."""
    chain = [cwd, *cwd.parents]
    root = next((p for p in chain if (p / ".git").exists()), cwd)
    return list(reversed(chain[: chain.index(root) + 1]))


def _plugin_skills(settings: ProjectSettings) -> None:
    from .plugins import registry

    for name, (description, body) in registry().skills.items():
        settings.skills[name] = Skill(name, description, Path("<plugin>") / name / "SKILL.md", body)


def load_settings(
    sources: Sequence[str], cwd: Path, skills: Sequence[str] | str = "all", *, trust_project: bool = True
) -> ProjectSettings:
    """Read what ``sources`` (``user``, ``project``, ``local``) provide, for a run in ``cwd``.

    Without ``trust_project`` the project's permission rules are skipped (and a warning says so).
    """
    import platformdirs

    settings = ProjectSettings()
    cwd = cwd.resolve()
    folders = _project_folders(cwd)
    _plugin_skills(settings)  # installed plugins' skills come first: project files override them
    if "user" in sources:
        for home in (
            Path.home() / ".claude",
            Path(platformdirs.user_config_dir("openagent", appauthor=False)),
        ):
            if home.is_dir():
                _read_folder(home, home, home, settings, ("CLAUDE.md",))
    if "project" in sources:
        for folder in folders:
            _read_folder(folder, folder / ".claude", folders[0], settings, MEMORY_FILES)
    if "local" in sources:
        _read_local(folders, settings, trust_project)
    if skills != "all":
        unknown = set(skills) - set(settings.skills)
        if unknown:
            settings.warnings.append(f"skills not found: {', '.join(sorted(unknown))}")
        settings.skills = {n: s for n, s in settings.skills.items() if n in skills}
    for warning in settings.warnings:
        logger.warning("%s", warning)
    return settings
