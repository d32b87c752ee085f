"""Adapters from the core's metric samples to the metrics libraries users run
(``prometheus_client``, ``opentelemetry-api``): :mod:`retrycore.exporters.metrics`, public
as :mod:`retrycore.metrics` (docs/observability.md, "Exporters")."""
