// retrycore/metrics: exporters to prom-client and @opentelemetry/api (docs/observability.md,
// "Exporters"). Both are optional peer dependencies: install the one you use.
import type { MetricSample, RetryPolicy } from './index';

/** A name map: retrycore's own names, resilience4j-micrometer's or Polly's. */
export type NameMap = 'default' | 'resilience4j' | 'polly';

/** What records samples: a prom-client registry's metrics, an OpenTelemetry meter's instruments. */
export interface Exporter {
    /** The name map whose samples it records. */
    readonly names: NameMap;
    /** Records samples (what `metricSamples` answers for events under `names`). */
    record(samples: MetricSample[]): void;
}

/**
 * Registers the map's instruments in a prom-client `Registry` (default: prom-client's global
 * `register`) and records samples into them: counters `inc`, gauges `set`, histograms `observe`.
 */
export declare class PrometheusExporter implements Exporter {
    readonly names: NameMap;
    constructor(options?: { registry?: unknown; names?: NameMap; client?: unknown });
    record(samples: MetricSample[]): void;
}

/**
 * Creates the map's instruments with an OpenTelemetry `Meter` (default: the global
 * MeterProvider's `retrycore` meter) and records samples into them.
 */
export declare class OpenTelemetryExporter implements Exporter {
    readonly names: NameMap;
    constructor(options?: { meter?: unknown; names?: NameMap });
    record(samples: MetricSample[]): void;
}

/**
 * Reports each retry and the end of each operation of `policy` (its attempts, outcome,
 * duration and the last attempt's duration) to `exporters`, labelled `operation` (default: the policy's `name`, else
 * `default`), and its breaker's transitions (its state and failure rate now at once),
 * labelled with the breaker's name, else the operation. Returns the policy.
 */
export declare function instrument(policy: RetryPolicy, exporters: Exporter | Exporter[], options?: { operation?: string }): RetryPolicy;

/** The span attribute of a resent request (OpenTelemetry's HTTP semantic conventions). */
export declare const RESEND_COUNT: 'http.request.resend_count';

/**
 * Sets `http.request.resend_count` (`attempt - 1`) on `span` (default: `@opentelemetry/api`'s
 * active span) for attempt 2 and later; true when it did. Does nothing without
 * `@opentelemetry/api` or on a span that is not recording. The HTTP integrations of
 * `retrycore/integrations` call it at each attempt.
 */
export declare function markResend(attempt: number, span?: { isRecording(): boolean; setAttribute(key: string, value: number): unknown }): boolean;
