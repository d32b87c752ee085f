// retrycore/metrics: exporters to prom-client and @opentelemetry/api (docs/observability.md,
// "Exporters"), thin over the core. A policy reports what its calls did (a retry, the end of an
// operation) as events; the core answers the samples — which instrument of the name map, which
// labels, which value (`metricSamples`); each exporter registers the map's instruments as the core
// lists them (`hostTables().metrics`) and records the samples. No metric name is written here.

import { hostTables, metricSamples } from './retrycore.js';
import type { MetricSample, RetryPolicy } from './api';

// The span attribute of resent requests, set by the HTTP integrations (which ship in both packages).
export { RESEND_COUNT, markResend } from './integrations/common.js';

/** A name map: retrycore's own names, resilience4j-micrometer's or Polly's. */
export type NameMap = 'default' | 'resilience4j' | 'polly';

/** One instrument as the core lists it (`host_tables()["metrics"]["maps"][map]`). */
interface Instrument {
  name: string;
  prometheus: string;
  prometheus_labels: string[];
  kind: 'counter' | 'gauge' | 'histogram';
  labels: string[];
  unit: string;
  help: string;
  buckets: number[];
}

/** What records samples: a prom-client registry's metrics, an OpenTelemetry meter's instruments. */
export interface Exporter {
  /** The name map whose samples it records. */
  readonly names: NameMap;
  /** Records the samples of events under its map. */
  record(samples: MetricSample[]): void;
}

function instruments(names: unknown): Instrument[] {
  const maps = (hostTables().metrics as { maps: Record<string, Instrument[]> }).maps;
  const list = typeof names === 'string' ? maps[names] : undefined;
  if (list === undefined) {
    const e = new RangeError(`names must be one of ${Object.keys(maps).join(', ')}, got ${String(names)}`) as RangeError & { code: string; field: string };
    e.code = 'invalid_value';
    e.field = 'names';
    throw e;
  }
  return list;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the caller's prom-client / OpenTelemetry objects
type Any = any;

/** CommonJS's `require` (the package compiles to CommonJS; no @types/node here). */
declare const require: (id: string) => Any;

/** The peer dependency, from the caller's tree (optional: only an exporter of it needs it). */
function peer(name: string): Any {
  return require(name);
}

/**
 * Registers the map's instruments in a prom-client `Registry` (default: prom-client's global
 * one) and records samples into them: counters `inc`, gauges `set` (or `inc` for resilience4j's
 * running counts), histograms `observe`, each sample's labels under their Prometheus names.
 */
export class PrometheusExporter implements Exporter {
  readonly names: NameMap;
  #metrics = new Map<string, { m: Any; labels: Map<string, string> }>();

  constructor(options: { registry?: Any; names?: NameMap; client?: Any } = {}) {
    const client = options.client ?? peer('prom-client');
    const registry = options.registry ?? client.register;
    this.names = options.names ?? 'default';
    for (const i of instruments(this.names)) {
      const labelNames = i.prometheus_labels;
      // Two exporters (two policies) on one registry share its metrics.
      let m = registry.getSingleMetric(i.prometheus);
      if (m === undefined) {
        const config = { name: i.prometheus, help: i.help, labelNames, registers: [registry] };
        if (i.kind === 'counter') m = new client.Counter(config);
        else if (i.kind === 'gauge') m = new client.Gauge(config);
        else m = new client.Histogram({ ...config, buckets: i.buckets });
      }
      this.#metrics.set(i.name, { m, labels: new Map(i.labels.map((l, k) => [l, labelNames[k]])) });
    }
  }

  record(samples: MetricSample[]): void {
    for (const s of samples) {
      const x = this.#metrics.get(s.name);
      if (x === undefined) continue;
      const labels: Record<string, string> = {};
      for (const [k, v] of Object.entries(s.labels)) labels[x.labels.get(k) ?? k] = v;
      if (s.op === 'add') x.m.inc(labels, s.value);
      else if (s.op === 'set') x.m.set(labels, s.value);
      else x.m.observe(labels, s.value);
    }
  }
}

/**
 * Creates the map's instruments with an OpenTelemetry `Meter` (default: `@opentelemetry/api`'s
 * `metrics.getMeter('retrycore')`, the global MeterProvider's) and records samples into them:
 * counters `add`, histograms `record` (with the core's bucket bounds as advice), gauges as
 * observable gauges holding the last value set (resilience4j's running counts as up-down counters).
 */
export class OpenTelemetryExporter implements Exporter {
  readonly names: NameMap;
  #instruments = new Map<string, Instrument>();
  #made = new Map<string, Any>();
  #gauges = new Map<string, Map<string, { value: number; labels: Record<string, string> }>>();
  #meter: Any;

  constructor(options: { meter?: Any; names?: NameMap } = {}) {
    this.#meter = options.meter ?? peer('@opentelemetry/api').metrics.getMeter('retrycore');
    this.names = options.names ?? 'default';
    for (const i of instruments(this.names)) this.#instruments.set(i.name, i);
  }

  /** The instrument a sample's op needs, made on first use (a gauge is set or added to, never both). */
  #instrument(i: Instrument, op: MetricSample['op']): Any {
    let x = this.#made.get(i.name);
    if (x !== undefined) return x;
    const opts = { description: i.help, unit: i.unit };
    if (i.kind === 'counter') x = this.#meter.createCounter(i.name, opts);
    else if (i.kind === 'histogram') x = this.#meter.createHistogram(i.name, { ...opts, advice: { explicitBucketBoundaries: i.buckets } });
    else if (op === 'add') x = this.#meter.createUpDownCounter(i.name, opts);
    else {
      const values = new Map<string, { value: number; labels: Record<string, string> }>();
      this.#gauges.set(i.name, values);
      x = this.#meter.createObservableGauge(i.name, opts);
      x.addCallback((r: Any) => {
        for (const v of values.values()) r.observe(v.value, v.labels);
      });
    }
    this.#made.set(i.name, x);
    return x;
  }

  record(samples: MetricSample[]): void {
    for (const s of samples) {
      const i = this.#instruments.get(s.name);
      if (i === undefined) continue;
      const x = this.#instrument(i, s.op);
      if (s.op === 'observe') x.record(s.value, s.labels);
      else if (s.op === 'add') x.add(s.value, s.labels);
      else this.#gauges.get(i.name)?.set(JSON.stringify(s.labels), { value: s.value, labels: s.labels });
    }
  }
}

/** What `RetryPolicy.execute` reports to the exporters of `instrument` (lib/retrycore.ts, `_metrics`). */
export interface PolicyMetrics {
  retry(attempt: number, attemptMs: number): void;
  end(attempts: number, outcome: string, durationMs: number, budget: string | null, refused: boolean, attemptMs: number | null): void;
  transition(t: { from: string; to: string }): void;
}

/** Hands `event` to each exporter as the samples the core makes of it under the exporter's map. */
function send(list: Exporter[], event: Record<string, unknown>): void {
  for (const x of list) x.record(metricSamples({ names: x.names, events: [event] }));
}

/** An exporter or a list of them, checked (`field` names the option in errors). */
function exporterList(exporters: unknown, field: string): Exporter[] {
  const list = Array.isArray(exporters) ? exporters : [exporters];
  list.forEach((x, k) => {
    if (x === null || typeof x !== 'object' || typeof (x as Exporter).record !== 'function' || typeof (x as Exporter).names !== 'string') {
      const e = new TypeError(`${field}${Array.isArray(exporters) ? `[${k}]` : ''}: must be an Exporter (PrometheusExporter, OpenTelemetryExporter)`) as TypeError & { code: string; field: string };
      e.code = 'invalid_type';
      e.field = Array.isArray(exporters) ? `${field}[${k}]` : field;
      throw e;
    }
  });
  return list as Exporter[];
}

/**
 * Reports the calls of `policy` (its `execute`, and the integrations that run it) to
 * `exporters`: each retry, the end of each operation — its attempts, its outcome, how
 * long it and its last attempt took — labelled with `operation` (default: the policy's `name`, else `default`),
 * and its breaker's transitions, labelled with the breaker's name (else the operation); the
 * breaker's state and failure rate now are recorded at once. Returns the policy.
 */
export function instrument(policy: RetryPolicy, exporters: Exporter | Exporter[], options: { operation?: string } = {}): RetryPolicy {
  const list = exporterList(exporters, 'exporters');
  const doc = policy.toJSON() as { name?: string; max_attempts: number };
  const operation = options.operation ?? doc.name ?? 'default';
  const maxAttempts = doc.max_attempts;
  const b = policy.breaker;
  const breaker = b === null ? null : ((b.toJSON() as { name?: string }).name ?? operation);
  if (b !== null) {
    // The breaker's state now: the gauges start from it.
    send(list, { event: 'breaker_state', breaker, state: b.state, failure_rate: b.stateMetrics().failureRate });
  }
  const m: PolicyMetrics = {
    retry: (attempt, attemptMs) => send(list, { event: 'retry', operation, attempt, max_attempts: maxAttempts, attempt_duration: attemptMs / 1000, breaker }),
    end: (attempts, outcome, durationMs, budget, refused, attemptMs) =>
      send(list, { event: 'end', operation, attempts, max_attempts: maxAttempts, outcome, duration: durationMs / 1000, attempt_duration: attemptMs === null ? null : attemptMs / 1000, budget, refused, breaker }),
    transition: (t) => send(list, { event: 'transition', breaker, from: t.from, to: t.to }),
  };
  (policy as unknown as { _metrics: PolicyMetrics | null })._metrics = m;
  return policy;
}
