from retrycore import RetryPolicy
from retrycore.metrics import OpenTelemetryExporter, PrometheusExporter

policy = RetryPolicy(name="payments", max_attempts=3).with_metrics(PrometheusExporter())
traced = RetryPolicy(name="payments").with_metrics(OpenTelemetryExporter(names="polly"))
