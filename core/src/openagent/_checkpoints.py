"""File checkpoints (``enable_file_checkpointing``): what the edit tools changed, and how to undo it.

Before an edit tool (Write, Edit, MultiEdit, NotebookEdit) changes a file for the first time after a user
message, the file's bytes (or its absence) are kept under that message. `FileCheckpoints.rewind` puts every
file changed after a user message back as it was when that message was sent, and deletes the files that
did not exist then. Files changed by Bash are not tracked: only the edit tools say which file they change.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from .errors import ConfigError

__all__ = ["EDIT_TOOLS", "FileCheckpoints"]

logger = logging.getLogger("openagent.checkpoints")

EDIT_TOOLS = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
"""The tools whose changes are tracked, and the argument that names the file."""


class FileCheckpoints:
    """The files' earlier contents, by the user message after which they first changed."""

    def __init__(self) -> None:
        self._marks: list[str] = []
        self._saved: dict[tuple[int, Path], bytes | None] = {}

    def mark(self, user_message_id: str) -> None:
        """A user message was sent: later changes belong to it."""
        self._marks.append(user_message_id)

    def save(self, path: str | os.PathLike[str], cwd: Path) -> None:
        """Keep ``path``'s current contents, unless already kept since the last user message."""
        target = Path(path).expanduser()
        target = Path(os.path.abspath(cwd / target if not target.is_absolute() else target))
        key = (len(self._marks) - 1, target)
        if key in self._saved:
            return
        try:
            self._saved[key] = target.read_bytes() if target.is_file() else None
        except OSError as exc:  # unreadable: nothing can be restored, say so instead of pretending
            logger.warning("cannot checkpoint %s: %s", target, exc)

    def rewind(self, user_message_id: str) -> list[Path]:
        """Restore every file changed after ``user_message_id`` to its state then; returns the files.

        Raises:
            ConfigError: No user message has that id.
        """
        if user_message_id not in self._marks:
            raise ConfigError(
                f"no user message {user_message_id!r} to rewind to (checkpoints: {len(self._marks)})"
            )
        since = self._marks.index(user_message_id)
        earliest: dict[Path, bytes | None] = {}
        for (mark, path), content in sorted(self._saved.items(), key=lambda item: item[0][0]):
            if mark >= since:
                earliest.setdefault(path, content)
        for path, content in earliest.items():
            if path.is_symlink() or (content is None and path.exists()):
                path.unlink()
            if content is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
        self._saved = {key: value for key, value in self._saved.items() if key[0] < since}
        del self._marks[since + 1 :]
        return sorted(earliest)
