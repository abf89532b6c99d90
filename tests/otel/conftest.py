"""An SDK tracer provider exporting into memory, per test; and one global provider for the plugin path."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

_GLOBAL_EXPORTER = InMemorySpanExporter()


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider
    provider.shutdown()


@pytest.fixture
def global_exporter() -> InMemorySpanExporter:
    """The exporter behind the process-wide provider (set once: OpenTelemetry refuses to replace it)."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_GLOBAL_EXPORTER))
        trace.set_tracer_provider(provider)
    _GLOBAL_EXPORTER.clear()
    return _GLOBAL_EXPORTER
