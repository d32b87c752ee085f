# Prometheus metrics for a policy (README.md, docs/observability.md "Exporters").
from prometheus_client import generate_latest

import retrycore
from retrycore.metrics import PrometheusExporter
policy = retrycore.RetryPolicy(name="payments", max_attempts=4).with_metrics(PrometheusExporter())

calls = []


def charge() -> str:
    calls.append(1)
    if len(calls) < 2:
        raise ConnectionRefusedError("refused")  # never reached the server: retried
    return "charged"


print(policy.call(charge))
print(generate_latest().decode())  # retry_attempts_total{attempt="2",operation="payments"} 1.0, …
