"""Session ids and store keys: what the entry points accept, and a file name for any part of a key.

Ids reach file names and store keys, so the entry points (`AgentOptions.session_id` and ``resume``, the
session functions) accept only plain ids, the stores check every key they are given, and the JSONL store
turns each part of a key into a file name of its own: nothing in a key leads out of the store's folder.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .errors import SessionError

if TYPE_CHECKING:
    from .sessions import SessionKey

__all__ = ["check_key", "check_session_id", "file_name", "id_of"]


_SESSION_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")


def check_session_id(session_id: object, what: str = "session id") -> str:
    """``session_id`` when it is a valid id: letters, digits, ``.``, ``_`` and ``-`` (at most 128, not
    starting with a dot), as uuids are; ids reach file names and store keys, so nothing else is accepted.

    Raises:
        SessionError: Anything else (``../x``, an empty string, a path, a non-string), naming it.
    """  # noqa: D205
    if isinstance(session_id, str) and _SESSION_ID.fullmatch(session_id):
        return session_id
    raise SessionError(
        f"invalid {what} {session_id!r}: use letters, digits, '.', '_' and '-' (at most 128 characters, "
        "not starting with '.'), as uuid4 strings are"
    )


def check_key(key: object) -> SessionKey:
    """``key`` when a store can use it: ``project_key`` and ``session_id`` non-empty strings, ``subpath`` a
    string, none with a NUL character or over 1,024 characters (stores call this on every key).

    Raises:
        SessionError: The key is not such a mapping.
    """  # noqa: D205
    if not isinstance(key, dict):
        raise SessionError(f"a session key must be a dict with project_key and session_id, got {key!r}")
    for name in ("project_key", "session_id", "subpath"):
        value = key.get(name, "x" if name == "subpath" else None)
        if (
            not isinstance(value, str)
            or not value
            and name != "subpath"
            or "\x00" in value
            or len(value) > 1024
        ):
            raise SessionError(f"invalid {name} in session key {key!r}")
    return key  # type: ignore[return-value]


def file_name(value: str) -> str:
    """A file name for any key part: characters other than letters, digits, ``_.-~`` percent-encoded, and a
    leading dot too, so no id names a parent folder, a hidden file or a path, and two ids never share one.
    Plain ids (uuids) are their own file name.
    """  # noqa: D205
    if _SESSION_ID.fullmatch(value):  # the common case (uuids): its own name
        return value
    from urllib.parse import quote

    name = quote(value, safe="") or "%00"
    return "%2E" + name[1:] if name.startswith(".") else name


def id_of(file_name: str) -> str:
    from urllib.parse import unquote

    return unquote(file_name)
