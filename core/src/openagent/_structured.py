"""Structured output: the schema a run's final answer must match, and the check of that answer.

``output_format`` is ``{"type": "json_schema", "schema": {...}}`` or a pydantic model type. Endpoints that
enforce a JSON schema natively get it in the request; the others are told in the system prompt. The loop
re-asks with the validation error when the answer does not match.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from ._errors import ConfigError

__all__ = ["OutputSchema"]

_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n\s*```\s*$", re.DOTALL)


class OutputSchema:
    """One run's output format, normalised to a JSON schema (and the model type when one was given)."""

    def __init__(self, output_format: Mapping[str, Any] | type[BaseModel]) -> None:
        self.model: type[BaseModel] | None = None
        if isinstance(output_format, type) and issubclass(output_format, BaseModel):
            self.model = output_format
            self.schema: dict[str, Any] = output_format.model_json_schema()
            self.name = output_format.__name__
        elif isinstance(output_format, Mapping) and isinstance(output_format.get("schema"), Mapping):
            self.schema = dict(output_format["schema"])
            self.name = str(output_format.get("name") or self.schema.get("title") or "output")
        else:
            raise ConfigError(
                "output_format must be {'type': 'json_schema', 'schema': {...}} or a pydantic model type"
            )

    def request_format(self) -> dict[str, Any]:
        """What `ModelRequest.output_format` carries to a provider."""
        return {"type": "json_schema", "name": self.name, "schema": self.schema}

    def instructions(self) -> str:
        """The system-prompt addition for endpoints that cannot enforce a schema."""
        return (
            "Give your final answer as a single JSON value, with no other text, that matches this JSON "
            f"schema:\n{json.dumps(self.schema)}"
        )

    def parse(self, text: str) -> tuple[Any, str | None]:
        """The answer as a value (a model instance for a model type), or None and what is wrong with it."""
        match = _FENCE.match(text)
        raw = match.group(1) if match else text.strip()
        if self.model is not None:
            try:
                return self.model.model_validate_json(raw), None
            except ValidationError as exc:
                return None, _errors(exc)
        try:
            value = json.loads(raw)
        except ValueError as exc:
            return None, f"the answer is not valid JSON ({exc})"
        import jsonschema  # lazily: only runs that ask for a JSON-schema answer pay for it

        problems = sorted(jsonschema.Draft202012Validator(self.schema).iter_errors(value), key=str)
        if problems:
            return None, "; ".join(f"{'/'.join(map(str, p.path)) or 'answer'}: {p.message}" for p in problems)
        return value, None


def _errors(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}" for e in exc.errors(include_url=False)
    )
