"""Metrics exporters for Prometheus (``prometheus_client``) and OpenTelemetry
(``opentelemetry-api``), thin over the core (docs/observability.md, "Exporters").

    policy = RetryPolicy(name="payments").with_metrics(PrometheusExporter())

The exporters are adapters to those libraries, kept with the package's other adapters in
:mod:`retrycore.exporters.metrics`; this module is their public name.
"""

from __future__ import annotations

from .exporters.metrics import (
    NAME_MAPS, RESEND_COUNT, Exporter, OpenTelemetryExporter, PrometheusExporter, instruments, mark_resend, samples,
)

__all__ = [
    "NAME_MAPS", "RESEND_COUNT", "Exporter", "OpenTelemetryExporter", "PrometheusExporter", "instruments",
    "mark_resend", "samples",
]
