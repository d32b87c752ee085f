// What the HTTP-client integrations share (docs/js.md, "HTTP clients"): the options, the
// per-request overrides, the idempotency header and the stacking warning. Each integration
// runs a request's attempts in `policy.execute`, the core's session: it hands the core the
// request's method and each attempt's error or response, and never knows a status, a method
// or an error name itself.

import { RetryPolicy as Policy, formatIdempotencyHeader, parseIdempotencyHeader } from '../retrycore.js';
import type { AttemptContext, ExecuteOptions, RetryPolicy } from '../api';

/** The span attribute of a resent request (OpenTelemetry's HTTP semantic conventions): the number of resends before it. */
// The core's name (`hostTables().metrics.resend_count`), spelled out for its literal type and
// because this module loads before a browser's init(); tests/js/metrics.test.cjs holds it to the core's.
export const RESEND_COUNT = 'http.request.resend_count' as const;

/** A span as `@opentelemetry/api` types it, the two members used here. */
interface Span {
  isRecording(): boolean;
  setAttribute(key: string, value: number): unknown;
}

/** CommonJS's `require`, when the module runs as CommonJS (not in the ES-module builds of retrycore-wasm). */
declare const require: ((id: string) => unknown) | undefined;

/** `@opentelemetry/api`'s `trace`, loaded at the first resend; null when it is not installed. */
let otelTrace: { getActiveSpan(): Span | undefined } | null | undefined;

/**
 * Sets `http.request.resend_count` (`attempt - 1`) on `span` (default: `@opentelemetry/api`'s
 * active span) for attempt 2 and later; true when it did. Does nothing without
 * `@opentelemetry/api` (an optional peer dependency) or on a span that is not recording.
 */
export function markResend(attempt: number, span?: Span): boolean {
  if (!(attempt >= 2)) return false;
  if (span === undefined) {
    if (otelTrace === undefined) {
      otelTrace = null;
      try {
        const name = '@opentelemetry/api'; // a name, not a literal: bundlers do not resolve it
        if (typeof require === 'function') otelTrace = (require(name) as { trace?: typeof otelTrace }).trace ?? null;
      } catch {
        // not installed: no span to mark
      }
    }
    span = otelTrace?.getActiveSpan();
    if (span === undefined) return false;
  }
  if (!span.isRecording()) return false;
  span.setAttribute(RESEND_COUNT, attempt - 1);
  return true;
}

/** The integration's options (every one may be overridden per request, `policy` included). */
export interface IntegrationOptions {
  /** The header that carries the session's idempotency key on every attempt (e.g. `Idempotency-Key`); none by default. */
  idempotencyHeader?: string;
  /** The caller declares the requests idempotent. */
  idempotent?: boolean;
  /** The server deduplicates on the key sent in `idempotencyHeader`. */
  idempotencyKeySent?: boolean;
}

/** What one request may override: `retrycore: {...}` in its options (fetch `init`, undici `request()`, axios config, got `context`). */
export interface RequestOverrides extends IntegrationOptions {
  policy?: RetryPolicy;
  /** The idempotency key of this request (default: the request's own header, else a minted one). */
  key?: string;
}

const OVERRIDE_KEYS = ['policy', 'idempotencyHeader', 'idempotent', 'idempotencyKeySent', 'key'];

/** The warning code of a client whose own retry is still on under an integration. */
export const STACKING_CODE = 'RETRYCORE_RETRY_STACKING' as const;

/** Warns, once per client kind, that the client retries too: every retrycore attempt may become several requests. */
export function warnStacking(client: string, how: string): void {
  const p = (globalThis as { process?: { emitWarning?: (m: string, o: object) => void } }).process;
  if (typeof p?.emitWarning === 'function') {
    p.emitWarning(`${client} retries by itself under a retrycore integration (${how}): attempts multiply`, { code: STACKING_CODE, type: 'RetryStackingWarning' });
  }
}

function invalid(field: string, message: string): TypeError {
  return Object.assign(new TypeError(`${field}: ${message}`), { code: 'invalid_type', field });
}

/** The integration's options under a request's overrides, checked. */
export function merged(policy: RetryPolicy, base: IntegrationOptions, overrides: unknown): RequestOverrides & { policy: RetryPolicy } {
  if (overrides !== undefined && overrides !== null) {
    if (typeof overrides !== 'object') throw invalid('retrycore', 'per-request overrides must be an object');
    for (const k of Object.keys(overrides)) {
      if (!OVERRIDE_KEYS.includes(k)) throw Object.assign(new TypeError(`retrycore.${k}: unknown option`), { code: 'unknown_key', field: `retrycore.${k}` });
    }
  }
  const o = { policy, ...base, ...(overrides as RequestOverrides | undefined) };
  if (!((o.policy as unknown) instanceof Policy)) throw invalid('policy', 'must be a RetryPolicy');
  return o;
}

/**
 * Runs `attempt` under the core's session for one request of `method`: the key comes from
 * the overrides, else from the request's own idempotency header (`current`), else is minted;
 * `header(ctx)` is what the attempt sends in `idempotencyHeader` (undefined without one).
 */
export function run<T>(
  o: RequestOverrides & { policy: RetryPolicy },
  method: string | undefined,
  current: string | null | undefined,
  signal: AbortSignal | null | undefined,
  attempt: (ctx: AttemptContext, header: string | undefined) => Promise<T>,
): Promise<T> {
  let key = o.key;
  if (key === undefined && o.idempotencyHeader !== undefined && current != null) key = parseIdempotencyHeader(current, { token: true });
  const options: ExecuteOptions = { method, key, idempotent: o.idempotent, idempotencyKeySent: o.idempotencyKeySent };
  if (signal != null) options.signal = signal;
  return o.policy.execute((ctx) => {
    markResend(ctx.attempt); // a resent request's span (OpenTelemetry, when installed)
    return attempt(ctx, o.idempotencyHeader === undefined ? undefined : formatIdempotencyHeader(ctx.key));
  }, options);
}
