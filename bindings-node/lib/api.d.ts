/**
 * retrycore for JavaScript: one retry-policy engine shared by every runtime.
 *
 * This file declares the public JS surface of both the Node package
 * (`retrycore`, napi-rs) and the wasm package (`retrycore-wasm`), which ship
 * it as their `index.d.ts`; `lib/retrycore.ts` implements it (`lib/conforms.ts`
 * makes the compiler hold the two together). The layer only translates —
 * camelCase options to the policy document, milliseconds to the core's
 * nanoseconds (done natively, round half to even), JS errors and `Response`s
 * to the failure descriptions the core classifies — and owns what must be
 * asynchronous: sleeping with timers, `AbortSignal`, hooks. Every decision
 * is the Rust core's, reached through a low-level backend set once with
 * `setBackend` by the package's entry point.
 *
 * Units: durations and times are numbers of milliseconds, like `setTimeout`;
 * `now` is monotonic (`performance.now()` when omitted); wall-clock times
 * are Unix epoch milliseconds (`Date.now()` when omitted).
 *
 * @packageDocumentation
 */
/** Backoff kinds (the core's lists, as lib/generated.ts has them: lib/conforms.ts checks each). */
export declare const BACKOFF_KINDS: readonly ["constant", "linear", "exponential", "decorrelated"];
/** Jitter names (a string, or an object's `kind`). */
export declare const JITTERS: readonly ["none", "full", "equal", "proportional", "additive", "symmetric"];
/** Circuit breaker kinds. */
export declare const BREAKER_KINDS: readonly ["count_based", "time_based", "consecutive", "sampling"];
/** Retry budget kinds. */
export declare const BUDGET_KINDS: readonly ["token_bucket", "grpc", "ratio", "concurrency", "finagle", "adaptive"];
/** Failure categories, in the core's table order. */
export declare const CATEGORIES: readonly ["connect", "not_processed", "overloaded", "connection_lost", "timeout", "server_error", "resource_exhausted", "conflict", "invalid_request", "auth", "not_found", "open_breaker", "retry_exhausted", "cancelled", "programming_error", "unknown"];
/** Why a logical operation gave up. */
export declare const GIVE_UP_REASONS: readonly ["cancelled", "not_retryable", "server_declined", "attempts_exhausted", "breaker_open", "budget_exhausted", "retry_after_too_long", "deadline_exceeded", "throttled", "limiter_rejected"];
/** Why a call was refused before an attempt. */
export declare const REJECT_REASONS: readonly ["breaker_open", "throttled", "deadline_exceeded", "concurrency_limited", "limiter_rejected"];
/** Compatibility profiles (docs/profiles.md). */
export declare const PROFILES: readonly ["aws-standard", "aws-2026", "grpc", "polly", "resilience4j", "finagle", "tenacity", "stamina", "envoy"];
export type BackoffKind = (typeof BACKOFF_KINDS)[number];
export type JitterKind = (typeof JITTERS)[number];
export type BreakerKind = (typeof BREAKER_KINDS)[number];
export type BudgetKind = (typeof BUDGET_KINDS)[number];
export type Category = (typeof CATEGORIES)[number];
export type GiveUpReason = (typeof GIVE_UP_REASONS)[number];
export type RejectReason = (typeof REJECT_REASONS)[number];
export type Profile = (typeof PROFILES)[number];
/**
 * The core's tables (`retrycore::tables::host_tables()`: kinds, categories,
 * codes, their families and classes, limits, defaults) as JSON, plus
 * `js_classes` (each core error class → `type` | `range` | `idempotency` |
 * `state`, the JS class it becomes) and `js_error_classes` (code → that JS
 * class, the same wherever the code is raised), for drift tests and tooling.
 */
export declare function hostTables(): Record<string, any>;
/** The version of the native core. */
export declare function coreVersion(): string;
/** The base class of retrycore's own errors; `code` is the core's stable code. */
export declare class RetrycoreError extends Error {
    /** The core's stable snake_case code (`invalid_state`, …). */
    code: string;
    /** The field or argument concerned (`backoff.initial`, `key`, …), or `""`. */
    field: string;
    constructor(message: string, code: string, field?: string, options?: {
        cause?: unknown;
    });
}
/** Why a logical operation gave up; thrown by `execute`. Its `code` is `retry_exhausted`. */
export declare class RetryError extends RetrycoreError {
    /** The give-up reason: `attempts_exhausted`, `not_retryable`, `deadline_exceeded`, … */
    reason: string;
    /** Attempts made. */
    attempts: number;
    /** The last failure's category; null when the first attempt was refused (docs/sessions.md, "What the caller observes"). */
    category: string | null;
    /** True when outer layers must not retry it again (docs/sessions.md, "What the caller observes"). */
    exhausted: boolean;
    /** The budget that refused, for `budget_exhausted` / `throttled`. */
    budget: string | null;
    /** The idempotency key the attempts carried. */
    key: string;
    constructor(message: string, init: {
        reason: string;
        attempts: number;
        category: string | null;
        exhausted: boolean;
        budget?: string | null;
        key: string;
        cause?: unknown;
    });
}
/** A circuit breaker refused the call. Its `code` is `breaker_open`. */
export declare class CircuitOpenError extends RetrycoreError {
    /** Milliseconds until the breaker may admit a call (`Infinity`: not by waiting). */
    retryAfter: number;
    /** The state that refused (`open`, `half_open`, `forced_open`). */
    state: string;
    constructor(message: string, retryAfter: number, state: string);
}
/**
 * A retry budget refused: a first attempt (code `throttled` or
 * `concurrency_limited`) or a retry (code `budget_exhausted`). It is a
 * `RetryError` (`.reason`, `.attempts`, `.cause`).
 */
export declare class BudgetExhaustedError extends RetryError {
    /** Milliseconds until the call could be admitted, if known. */
    retryAfter: number | null;
    constructor(message: string, budget: string | null, reason: string, retryAfter?: number | null, init?: {
        code?: string;
        attempts?: number;
        category?: string | null;
        key?: string;
        cause?: unknown;
    });
}
/** An idempotency key, header, record or dead letter was refused (`invalid_key`, `stale_fence`, …). */
export declare class IdempotencyError extends RetrycoreError {
}
/** Returns true for every error retrycore throws (its `TypeError`s and `RangeError`s included). */
export declare function isRetrycoreError(e: unknown): boolean;
/** What retrycore reads of a failed attempt; every field is optional. */
export interface Failure {
    /** The HTTP status. */
    status?: number;
    /** The gRPC status code (number or name). */
    grpcCode?: number | string;
    /** The flattened cause chain, outermost error first (see `errorNames`). */
    errorNames?: string[];
    /** The HTTP method. */
    method?: string;
    /** The caller declares the request idempotent. */
    idempotent?: boolean;
    /** The caller sent an idempotency key the server deduplicates on. */
    idempotencyKeySent?: boolean;
    /** Response headers: `[name, value]` pairs, a `Headers`, or a plain object. */
    headers?: HeadersLike;
    /** How long the attempt took (ms). */
    elapsed?: number;
    /** Wall-clock Unix epoch ms, to resolve HTTP-dates in `Retry-After` (default `Date.now()`; null: none). */
    wallNowMs?: number | null;
    /** The error's message, for `message` rules (sent only when the policy has one). */
    message?: string;
    /** Smithy's `@retryable` trait: `true`, or `{ throttling }` for a throttle (AWS SDK v3 errors' `$retryable`). */
    retryable?: RetryableTrait | boolean;
    /** The error's own verdict on a retry (Stripe's `should_retry`): `false` declines, `true` vouches. */
    shouldRetry?: boolean;
    /** Your own predicate's verdict (see {@link HostVerdict}): decides after the markers, before the policy's rules. */
    verdict?: HostVerdict;
}
/**
 * What a host predicate answers (docs/classification-rules.md, "Host predicates"): `true` retries
 * always, `false` never, a retry rule (`'always'`, `'if_idempotent'`, `'never'`), a category
 * (`'overloaded'`, `'server_error'`, …: the policy's rule for it, idempotency gating included) or
 * `'category:rule'`; `null` / `undefined` is no opinion.
 */
export type HostVerdict = boolean | string | null | undefined;
/** Smithy's `@retryable` trait on an error; `throttling` marks a throttle. */
export interface RetryableTrait {
    throttling?: boolean;
}
/** Headers as a host holds them. */
export type HeadersLike = Array<[string, string]> | {
    forEach(cb: (value: string, name: string) => void): void;
} | Record<string, string | string[] | number | undefined>;
/**
 * Flattens an error's cause chain into the names the core's tables read
 * (docs/classification-rules.md): for each error its `code`, its `name`, its prototype chain's
 * constructor names (most specific first, stopping before `Object`), then
 * the same for its `cause` — bounded and cycle-safe. A `DOMException` named
 * N is `DOMException:N`; a fetch network `TypeError` drops its own names and
 * appends `FetchNetworkError` after the chain; retrycore's exhausted
 * `RetryError` is `retrycore:retry_exhausted` (one that gave up on a failure
 * nothing would retry is transparent: its cause decides) and
 * `CircuitOpenError` `retrycore:breaker_open`.
 */
export declare function errorNames(err: unknown): string[];
/**
 * Describes what was seen of a failure: a thrown error, a `Response`, or a
 * {@link Failure} object; status from a `Response` or `err.status` /
 * `err.statusCode` / `err.response.status`, headers from `Response.headers`
 * / `err.response.headers`, the gRPC code of a grpc-js error.
 */
export declare function describeFailure(x: unknown): Failure;
/** The outcome of classifying one failure. */
export interface Verdict {
    /** The category (`connect`, `timeout`, `server_error`, …). */
    readonly category: Category;
    /** The retry rule: `always`, `if_idempotent` or `never`. */
    readonly retry: string;
    /** Repeating the request is safe (method or declaration). */
    readonly safe: boolean;
    /** The rule allows a retry given `safe`, and the server did not decline. */
    readonly retryable: boolean;
    /** The server declined a retry. */
    readonly serverDeclined: boolean;
    /** The server's delay (ms), or null. */
    readonly serverDelay: number | null;
    /** What `x-should-retry` / `Stripe-Should-Retry` said, or null. */
    readonly shouldRetry: boolean | null;
    /** The chain holds a refused connection (it takes no budget token). */
    readonly refused: boolean;
}
/** The caller's declarations for classification. */
export interface FailureContext {
    /** The HTTP method. */
    method?: string;
    /** The request is idempotent. */
    idempotent?: boolean;
    /** An idempotency key was sent to a server that deduplicates on it. */
    idempotencyKeySent?: boolean;
    /** Wall-clock ms for HTTP-dates (default `Date.now()`; null: none). */
    wallNowMs?: number | null;
    /** Smithy's `@retryable` trait, when the failure does not carry its own. */
    retryable?: RetryableTrait | boolean;
    /** The error's own verdict on a retry, when the failure does not carry its own. */
    shouldRetry?: boolean;
    /** Your own predicate's verdict, when the failure does not carry one. */
    verdict?: HostVerdict;
}
/**
 * Classifies a failure with the built-in tables: an HTTP status (the fast
 * path, numbers only), a thrown error, a `Response`, or a {@link Failure}.
 */
export declare function classify(failure: number | unknown, options?: FailureContext): Verdict;
/** Parses a duration string (`"250ms"`, `"1.5s"`) to milliseconds. */
export declare function parseDuration(text: string): number;
/** Writes milliseconds as the shortest exact duration string (`"250ms"`). */
export declare function formatDuration(ms: number): string;
/** What the server said about retrying. */
export interface ServerAdvice {
    /** The server's delay (ms), or null. */
    delay: number | null;
    /** Where it came from: `retry-after`, `retry-after-ms` or `grpc-retry-pushback-ms`. */
    source: string | null;
    /** A negative or malformed gRPC pushback: don't retry. */
    declined: boolean;
    /** `x-should-retry` / `Stripe-Should-Retry`, or null. */
    shouldRetry: boolean | null;
    /** `x-retry-exhausted: 1`: an inner layer already retried. */
    retryExhausted: boolean;
}
/** Reads `Retry-After`, `retry-after-ms`, `grpc-retry-pushback-ms` and retry hints from response headers. */
export declare function readServerAdvice(headers: HeadersLike, wallNowMs?: number | null): ServerAdvice;
/** Parses an HTTP-date (IMF-fixdate, RFC 850, asctime) to Unix seconds, or null. */
export declare function parseHttpDate(value: string, wallNowMs?: number): number | null;
/** One lint finding. */
export interface Finding {
    /** A stable code (`no_jitter`, …). */
    code: string;
    /** `info`, `warning` or `error`. */
    severity: string;
    /** The field concerned, or `""`. */
    field: string;
    /** One line of reason. */
    message: string;
}
/** Lints a policy (a `RetryPolicy`, a document or its JSON text) against an optional service description. */
export declare function lint(policy: RetryPolicy | object | string, service?: object | string): Finding[];
/** A service's counters at one moment (docs/observability.md, "Alerts"): every part optional. */
export interface CounterSnapshot {
    /** Each policy's `counters()`, by name, as they are. */
    policies?: Record<string, Record<string, unknown>>;
    /** Each breaker's state, by name. */
    breakers?: Record<string, string>;
    /** Each idempotent endpoint's answers, by outcome. */
    idempotency?: Record<string, { executed?: number; replayed?: number; in_progress?: number; mismatch?: number }>;
}
/** A ratio rule's threshold: it fires strictly `above` this ratio, over at least `min_volume` events. */
export interface AlertThreshold {
    above?: number;
    min_volume?: number;
}
/** Thresholds over the defaults (10 %, 1 % and 5 % over at least 100 events). */
export interface AlertThresholds {
    retry_rate?: AlertThreshold;
    exhausted_rate?: AlertThreshold;
    duplicate_rate?: AlertThreshold;
}
/** One rule checked for one policy, breaker or endpoint. */
export interface AlertCheck {
    rule: 'retry_rate' | 'exhausted_rate' | 'breaker_open' | 'duplicate_rate';
    level: 'warn' | 'error' | 'critical';
    /** The policy, breaker or endpoint name. */
    subject: string;
    /** `low_volume`: fewer events than the rule's minimum. */
    status: 'firing' | 'ok' | 'low_volume';
    /** The ratio (1 or 0 for `breaker_open`). */
    value: number;
    /** The ratio's numerator over the interval. */
    count: number;
    /** Its denominator (1 for `breaker_open`). */
    volume: number;
    /** The threshold (0 for `breaker_open`). */
    above: number;
    message: string;
}
/** Every check of one evaluation, firing ones first (the CLI's `retrycore alerts --json`). */
export interface AlertEvaluation {
    /** The interval as a duration string (`"5m"`). */
    interval: string;
    /** How many checks fire. */
    alerts: number;
    checks: AlertCheck[];
}
/**
 * Checks the alert rules (docs/observability.md, "Alerts") over what
 * changed between two counter snapshots taken `intervalMs` apart: retry
 * rate, exhausted rate, open breakers, duplicate rate. Snapshots and
 * thresholds are objects or JSON text with the document's snake_case keys;
 * a bad one throws naming the field (`before.policies.p.retries_by_number[1]`).
 */
export declare function alerts(before: CounterSnapshot | string, after: CounterSnapshot | string, intervalMs: number, thresholds?: AlertThresholds | string): AlertEvaluation;
/** One thing a metrics exporter records (docs/observability.md, "Exporters"). */
export interface MetricSample {
    /** The instrument's name in its name map (`retry_attempts_total`, `resilience4j.retry.calls`, …). */
    name: string;
    /** `add` (counters, resilience4j's running gauges), `set` (gauges) or `observe` (histograms). */
    op: 'add' | 'set' | 'observe';
    /** The label values by label name, every label of the instrument. */
    labels: Record<string, string>;
    /** The value, in the instrument's unit (seconds; Polly's milliseconds). */
    value: number;
}
/**
 * The samples of metric events under a name map: `document` is
 * `{names?: 'default' | 'resilience4j' | 'polly', events: [...]}` (or its JSON
 * text), each event `{event: 'retry' | 'end' | 'transition' | 'breaker_state' |
 * 'idempotency', …}` with snake_case fields and durations in seconds
 * (docs/observability.md, "Exporters"). Exporters record what this returns.
 */
export declare function metricSamples(document: object | string): MetricSample[];
/** The seeded generator every runtime shares: xoshiro256++ seeded by SplitMix64. */
export declare class Rng {
    /** Seeds a generator (a BigInt, a safe integer or a decimal string). */
    constructor(seed: bigint | number | string);
    /** Returns the next 64-bit output. */
    nextU64(): bigint;
    /** Returns the next draw in [0, 1): `(x >> 11) · 2⁻⁵³`. */
    nextFloat(): number;
}
/** A breaker state change. */
export interface Transition {
    /** The state before. */
    from: string;
    /** The state after. */
    to: string;
    /** Why (`failure_rate`, `wait_elapsed`, `manual`, …). */
    reason: string;
    /** When (the `now` of the call that caused it, ms). */
    at: number;
}
/** How a breaker counts an outcome: `'success'`, `'failure'`, `'ignored'`, or their numbers 0, 1, 2. */
export type Outcome = 'success' | 'failure' | 'ignored' | 0 | 1 | 2;
/** The numbers of the outcomes, for the hot path. */
export declare const Outcome: Readonly<{
    success: 0;
    failure: 1;
    ignored: 2;
}>;
/**
 * A circuit breaker (resilience4j's model, or `consecutive`): create one per
 * downstream and share it among policies.
 */
export declare class CircuitBreaker {
    /**
     * Creates a breaker from typed options (the document's breaker keys in
     * camelCase; durations in ms or as strings), e.g.
     * `{ kind: 'count_based', failureRateThreshold: 50, waitDurationInOpenState: 30_000 }`.
     */
    constructor(options?: BreakerOptions);
    /** Creates a breaker from a breaker object of a policy document (snake_case, duration strings). */
    static fromJSON(doc: object | string): CircuitBreaker;
    /** Called with every transition this object's calls cause. */
    get onStateChange(): ((t: Transition) => void) | null;
    set onStateChange(f: ((t: Transition) => void) | null);
    /** The state: `closed`, `open`, `half_open`, `disabled`, `forced_open` or `metrics_only`. */
    get state(): string;
    /**
     * Asks to make one call: a permit (a number ≥ 0) to pass to `record` or
     * `release`, or -1 when refused (then `retryAfter` says for how long).
     */
    tryAcquire(now?: number): number;
    /** Returns true when a permit is a half-open trial call. */
    static isTrialPermit(permit: number): boolean;
    /** The state that refused the last refused call. */
    get refusedState(): string;
    /** Milliseconds until the last refused call could be admitted (`Infinity`: not by waiting). */
    get retryAfter(): number;
    /**
     * Records the outcome of a permitted call: `'success'`, `'failure'`,
     * `'ignored'` (or `Outcome.*` numbers), or what was thrown (an error, a
     * `Response`, a {@link Failure}), which the breaker's counting rules judge.
     * Returns true when it caused a transition.
     */
    record(permit: number, outcome: Outcome | unknown, durationMs?: number, now?: number): boolean;
    /** Gives a permit back without an outcome (cancellation). */
    release(permit: number, now?: number): void;
    /**
     * Runs `fn` guarded by the breaker: rejects with `CircuitOpenError` when
     * refused, records the outcome (a rejection is judged by the counting rules;
     * an abort is not recorded) and returns `fn`'s result.
     */
    execute<T>(fn: (ctx: {
        signal?: AbortSignal;
    }) => T | Promise<T>, options?: {
        signal?: AbortSignal;
    }): Promise<T>;
    /** Window totals: `{state, calls, failures, slow, failureRate, slowRate, rejections, transitions}`. */
    metrics(): {
        state: string;
        calls: number;
        failures: number;
        slow: number;
        failureRate: number;
        slowRate: number;
        rejections: number;
        transitions: number;
    };
    /** Milliseconds until a call could be admitted (0: now; `Infinity`: not by waiting). */
    remainingOpen(now?: number): number;
    /** Moves to `state` by hand (resilience4j's `transitionTo…State`). */
    transitionTo(state: string, now?: number): Transition;
    /** Returns to closed with an empty window. */
    reset(now?: number): Transition | null;
    /** Captures the state for storage or sharing (remaining durations, wall clock `wallNowMs`). */
    snapshot(now?: number, wallNowMs?: number): object;
    /** Replaces the state with a snapshot's, less the wall time it spent stored. */
    restore(snapshot: object | string, now?: number, wallNowMs?: number): void;
    /** The breaker's settings as a breaker object of a policy document. */
    toJSON(): object;
    /**
     * The current state's metrics (resilience4j's `CircuitBreaker.Metrics`):
     * they reset on every transition except into open, which keeps those of
     * the state it left. A time window drops the seconds that left it by `now`.
     */
    stateMetrics(now?: number): BreakerMetrics;
    /**
     * Records an outcome without a permit (resilience4j's `onError` /
     * `onSuccess` without `tryAcquirePermission`): it counts in the current
     * state's metrics and cannot be voided. Returns true on a transition.
     */
    recordWithoutPermit(outcome: Outcome, durationMs?: number, now?: number): boolean;
    /** Opens for `durationMs` by hand (resilience4j's `transitionToOpenStateFor`; not a re-open for a growing wait). */
    transitionToOpenFor(durationMs: number, now?: number): Transition;
    /** Opens until `until`, in ms on the clock `now` uses (resilience4j's `transitionToOpenStateUntil`). */
    transitionToOpenUntil(until: number, now?: number): Transition;
    /** What a break-duration generator sees now (Polly's `BreakDurationGeneratorArguments`). */
    breakArguments(now?: number): BreakArguments;
    /** Replaces the current open period's wait with `durationMs`, counted from when it opened (a host-computed break). */
    setBreakDuration(durationMs: number): void;
}
/** A breaker's metrics in its current state (rates in percent, -1 below the minimum number of calls). */
export interface BreakerMetrics {
    failureRate: number;
    slowCallRate: number;
    bufferedCalls: number;
    failedCalls: number;
    successfulCalls: number;
    slowCalls: number;
    slowSuccessfulCalls: number;
    slowFailedCalls: number;
    /** Calls refused in this state (`metrics().rejections` is the running total). */
    notPermittedCalls: number;
}
/** What a break-duration generator sees (Polly v8's `BreakDurationGeneratorArguments`). */
export interface BreakArguments {
    /** The failure ratio in [0, 1]. */
    failureRate: number;
    failureCount: number;
    /** open → half_open transitions since the last close. */
    halfOpenAttempts: number;
}
/** Typed breaker options: the document's breaker keys in camelCase (see docs/policy.md). */
export interface BreakerOptions {
    kind?: BreakerKind;
    name?: string;
    failureRateThreshold?: number;
    slowCallRateThreshold?: number;
    slowCallDurationThreshold?: number | string;
    minimumNumberOfCalls?: number;
    slidingWindowSize?: number;
    waitDurationInOpenState?: number | string;
    waitMultiplier?: number;
    maxWaitDurationInOpenState?: number | string;
    permittedNumberOfCallsInHalfOpenState?: number;
    maxWaitDurationInHalfOpenState?: number | string;
    failureThreshold?: number;
    /** `sampling`: the window the failure rate is measured over. */
    samplingDuration?: number | string;
    /** `sampling`: the calls a window needs before it can trip. */
    minimumThroughput?: number;
    initialState?: string;
    count?: object[];
    onStateChange?: (t: Transition) => void;
    [key: string]: unknown;
}
/** A budget refusal. */
export interface Refusal {
    /** The budget's name. */
    budget: string;
    /** Why: `insufficient_tokens`, `below_threshold`, `ratio_exceeded`, `too_many_retries_in_flight`, `throttled`. */
    reason: string;
}
/** Typed budget options: the document's budget keys in camelCase, e.g. `{ kind: 'token_bucket', capacity: 500 }`. */
export interface BudgetOptions {
    kind: BudgetKind;
    name?: string;
    [key: string]: unknown;
}
/**
 * A retry budget (one of `BUDGET_KINDS`): create one per downstream and
 * share it among policies.
 */
export declare class Budget {
    /** Creates a budget from typed options (camelCase keys; durations in ms or as strings). */
    constructor(options: BudgetOptions);
    /** Creates a budget from a budget object of a policy document. */
    static fromJSON(doc: object | string): Budget;
    /** The budget's name (refusals and metrics carry it). */
    get name(): string;
    /** The budget's kind. */
    get kind(): string;
    /** A logical operation starts (a ratio budget's deposit; a call in flight). */
    start(now?: number): void;
    /** A logical operation ends (`holdsSlot`: it held a concurrency retry slot). */
    end(holdsSlot?: boolean): void;
    /** Checks a retry after a failure of `category` without changing anything: null, or the refusal. */
    check(category?: string, now?: number, options?: {
        refused?: boolean;
        holdsSlot?: boolean;
    }): Refusal | null;
    /** Takes what a retry costs (after `check` allowed it): `{cost, slot}`. */
    withdraw(category?: string, now?: number, options?: {
        refused?: boolean;
        holdsSlot?: boolean;
    }): {
        cost: number | null;
        slot: boolean;
    };
    /** Checks and withdraws in one step (the hot path): true when the retry may go. */
    tryWithdraw(category?: string, now?: number): boolean;
    /** Records a failed attempt. */
    recordFailure(category?: string, now?: number, facts?: {
        counts?: boolean;
        reachedBackend?: boolean;
        declinedPushback?: boolean;
        refused?: boolean;
    }): void;
    /** Records a successful attempt (`cost`: what the retry that led to it took). */
    recordSuccess(now?: number, cost?: number): void;
    /** The adaptive throttle's check before an attempt, with the draw `r` in [0, 1]: null, or the refusal. */
    beforeAttempt(r: number, now?: number): Refusal | null;
    /**
     * Takes `n` tokens from a token bucket if it holds that many, after its
     * time-based refill (smithy-rs `try_acquire_many`, botocore
     * `RetryQuota.acquire`): true when taken. Counts no withdrawal or refusal.
     * Other kinds throw `invalid_state` (field `kind`).
     */
    acquire(n: number, now?: number): boolean;
    /** Returns `n` tokens to a token bucket, up to its capacity (botocore `RetryQuota.release`); other kinds throw `invalid_state`. */
    release(n: number, now?: number): void;
    /** The level: `{tokens}` (token bucket, grpc), `{requests, retries}` (ratio), `{calls, retries}` (concurrency), `{requests, accepts}` (adaptive). */
    level(now?: number): Record<string, number>;
    /** Refusals and withdrawals so far. */
    stats(): {
        refusals: number;
        withdrawals: number;
    };
    /** The budget's settings as a budget object of a policy document. */
    toJSON(): object;
}
/** What `beforeAttempt` answers. */
export type Gate = {
    action: 'proceed';
    attempt: number;
    maxAttempts: number;
    timeout: number | null;
    /** Sleep this long (ms) before the call: the policy's limiter reserved a permit for then (null: go now). */
    wait: number | null;
} | {
    action: 'reject';
    reason: string;
    retryAfter: number | null;
    budget: string | null;
    /** The limiter's name when `reason` is `limiter_rejected`, else null. */
    limiter: string | null;
    /** The limiter's own reason (`bulkhead_full`, `queue_full`, `wait_too_long`, …) when it refused, else null. */
    limiterReason: string | null;
};
/** What `onFailure` answers. */
export type Decision = {
    action: 'retry';
    retry: number;
    attempt: number;
    delay: number;
    backoff: number;
    serverDelay: number | null;
    capped: boolean;
    category: string;
} | {
    action: 'give_up';
    reason: string;
    category: string;
    exhausted: boolean;
    attempts: number;
    budget: string | null;
    budgetReason: string | null;
};
/** Options of a session. */
export interface SessionOptions {
    /** The idempotency key for every attempt (e.g. from `deriveKey`); default: a minted UUIDv4. */
    key?: string;
    /** The session's own random stream (tests). */
    seed?: bigint | number | string;
    /** Replays these draws instead of a generator (tests, anchors' vectors). */
    draws?: number[];
    /** The caller declares the operation idempotent. */
    idempotent?: boolean;
    /** The caller sends the key to a server that deduplicates on it. */
    idempotencyKeySent?: boolean;
    /** The HTTP method. */
    method?: string;
}
/**
 * One logical operation, driven by hand: `beforeAttempt()` before every
 * call, then `onFailure(err)` or `onSuccess()`. It answers with decisions and
 * never sleeps: the caller waits the returned delay. (`execute` does all of
 * this for you.)
 */
export declare class Session {
    /** The idempotency key every attempt carries. */
    get key(): string;
    /** Attempts made, whether it is done, the give-up reason, whether the key was minted. */
    status(): {
        attempts: number;
        done: boolean;
        reason: string | null;
        keyMinted: boolean;
    };
    /** Gates the next attempt (the first included): takes a breaker permit, consults the throttle. */
    beforeAttempt(now?: number): Gate;
    /** Answers a failed attempt (an error, a `Response`, a {@link Failure} or a bare status): retry after a delay, or give up. */
    onFailure(failure: unknown, now?: number): Decision;
    /** Records a successful attempt and finishes the session. */
    onSuccess(now?: number, elapsed?: number): void;
    /** Ends the session as cancelled (releases its permit and slots). */
    cancel(now?: number): void;
    /** Gives back what the session holds without counting anything, and frees it. */
    release(): void;
}
/** Information a hook receives. */
export interface HookInfo {
    /** The call that failed (onRetry: retry n follows call n) or the calls made (onGiveUp). */
    attempt: number;
    /** The retry number (onRetry), or null. */
    retry: number | null;
    /** The delay before the coming attempt (ms), or null. */
    delay: number | null;
    /** The failure's category (null in `before`, and in a `fallback` for a refused first attempt). */
    category: string | null;
    /** The give-up reason (onGiveUp), or null. */
    reason: string | null;
    /** The policy's `maxAttempts` (Python's `max_attempts`). */
    maxAttempts: number;
    /** The budget that refused (onGiveUp after a budget's refusal), or null (Python's `budget`). */
    budget: string | null;
    /** What failed: the error or the `Response`. */
    error: unknown;
    /** The idempotency key. */
    key: string;
}
/** Typed policy options: the policy document's keys in camelCase (see docs/js.md), plus hooks and shared objects. */
export interface PolicyOptions {
    maxAttempts?: number;
    deadline?: number | string;
    attemptTimeout?: number | string;
    backoff?: BackoffKind;
    initial?: number | string;
    maxDelay?: number | string;
    multiplier?: number;
    increment?: number | string;
    minDelay?: number | string;
    jitter?: JitterKind | number | {
        kind: JitterKind;
        factor?: number;
        amount?: number | string;
    };
    classification?: {
        defaults?: boolean;
        rules?: object[];
    };
    idempotent?: boolean;
    honorRetryAfter?: boolean;
    maxRetryAfter?: number | string;
    capRetryAfter?: boolean;
    seed?: bigint | number | string;
    name?: string;
    purpose?: 'default' | 'compensation';
    profile?: Profile;
    breaker?: BreakerOptions | CircuitBreaker;
    budget?: BudgetOptions | Budget;
    budgets?: Array<BudgetOptions | Budget>;
    /**
     * A limiter every attempt passes (docs/limiters.md, "In a policy"): its
     * options, or a profile's name (`'aws-adaptive'`). A refused first attempt
     * rejects with `LimiterRejectedError`; a wait it reserves is slept before
     * the call, and an abort ends it.
     */
    limiter?: LimiterOptions | 'aws-adaptive' | 'resilience4j' | 'dotnet';
    onRetry?: (info: HookInfo) => void;
    onGiveUp?: (info: HookInfo) => void;
    onStateChange?: (t: Transition) => void;
    /** Writes a record of each retry and give-up to this logger (see {@link RetryLogger}); none by default. */
    logger?: RetryLogger;
    /** Called for each record: the caller's correlation id (a request id); default: the idempotency key. */
    correlationId?: () => string | null | undefined;
    [key: string]: unknown;
}
/**
 * The fields of a retry log record (docs/observability.md, "The retry log"):
 * every one always present, `null` where it does not apply, named as
 * Python's `extra` keys are (snake_case), so one log query finds both hosts'.
 */
export interface RetryLogFields {
    /** `retry` (a retry is scheduled) or `give_up`. */
    event: 'retry' | 'give_up';
    /** The call that failed (a retry), or the calls made (a give-up). */
    attempt: number;
    /** The policy's `maxAttempts`. */
    max_attempts: number;
    /** The retry about to happen, or null. */
    retry: number | null;
    /** The failure's category. */
    category: string | null;
    /** The error's name (its class's when its `name` is the generic `Error`); null for a response. */
    error: string | null;
    /** The wait before the retry, in ms, or null. */
    delay_ms: number | null;
    /** The give-up reason, or null. */
    reason: string | null;
    /** The budget that refused, or null. */
    budget: string | null;
    /** The idempotency key every attempt carries. */
    idempotency_key: string;
    /** The caller's correlation id (`correlationId`), else the idempotency key. */
    correlation_id: string;
}
/** One record of the retry log: its level, one line for people, and its fields. */
export interface RetryLogRecord {
    /** `warn` for a retry; `error` when a retry limit ran out or a breaker refused; `info` for a give-up nothing would have retried. */
    level: 'info' | 'warn' | 'error';
    /** `attempt 1 of 3 failed (server_error: TypeError); retry 1 in 100ms`, `gave up after 3 attempts: attempts_exhausted (last failure: timeout: TimeoutError)`. */
    message: string;
    fields: RetryLogFields;
}
/**
 * Where the retry log goes: a function given each record, or a pino, bunyan
 * or `console`-like logger, called `logger[level](fields, message)` (`warn`
 * when it has no method of that level).
 */
export type RetryLogger =
    | ((record: RetryLogRecord) => void)
    | {
          warn(fields: RetryLogFields, message: string): void;
          info?(fields: RetryLogFields, message: string): void;
          error?(fields: RetryLogFields, message: string): void;
      };
/** Options of `execute`. */
export interface ExecuteOptions {
    /** Stops retrying (and the current wait) when aborted; `execute` rejects with its reason. */
    signal?: AbortSignal;
    /** The caller declares the operation idempotent. */
    idempotent?: boolean;
    /** The caller sends the key to a server that deduplicates on it. */
    idempotencyKeySent?: boolean;
    /** The HTTP method of the call. */
    method?: string;
    /** The idempotency key for every attempt (default: a minted UUIDv4). */
    key?: string;
    /**
     * Your predicate over each returned value (tenacity's `retry_if_result`, axios-retry's
     * `retryCondition`, got's `statusCodes`): a truthy {@link HostVerdict} makes the value a failure
     * the core classifies with that verdict (`true`: retried always); a falsy one leaves it as it is
     * (a non-ok `Response` is still a failure). May return a promise.
     */
    retryIfResult?: (value: unknown) => HostVerdict | Promise<HostVerdict>;
    /** Your predicate over each thrown error: its {@link HostVerdict} goes to the core like a rule's. May return a promise. */
    retryIfError?: (error: unknown) => HostVerdict | Promise<HostVerdict>;
    /** Called before each attempt (`attempt`, `maxAttempts`, `key`), as tenacity's `before`. */
    before?: (info: HookInfo) => void;
    /** Called after each failed attempt with its category (and the delay or the give-up reason), before `onRetry` / `onGiveUp`. */
    after?: (info: HookInfo) => void;
    /**
     * Called when the call gives up with an error (retrying ran out, a failure nothing retries, a
     * refused first attempt) with the give-up {@link HookInfo} (`error`: what `execute` would reject
     * with); its value (or promise) is returned instead (tenacity's `retry_error_callback`, Polly's Fallback).
     */
    fallback?: (info: HookInfo) => unknown;
}
/** What `execute` passes to the function on every attempt. */
export interface AttemptContext {
    /** The number of this call (1 = first). */
    attempt: number;
    /** The idempotency key every attempt carries. */
    key: string;
    /** Aborted when the caller aborts or the attempt's timeout passes. */
    signal: AbortSignal | undefined;
}
/**
 * A retry policy: settings (the policy document) plus the generator,
 * breaker, budgets and counters its sessions share.
 */
export declare class RetryPolicy {
    /** Called before each sleep with the decided delay. */
    onRetry: ((info: HookInfo) => void) | null;
    /** Called when an operation gives up. */
    onGiveUp: ((info: HookInfo) => void) | null;
    /** Called with every transition of the policy's breaker that this policy's calls cause. */
    onStateChange: ((t: Transition) => void) | null;
    /** Where each retry and give-up is logged (docs/observability.md, "The retry log"), or null: silent. */
    logger: RetryLogger | null;
    /** Gives the correlation id of each log record (e.g. a request id); null: the idempotency key. */
    correlationId: (() => string | null | undefined) | null;
    /**
     * Creates a policy from typed options: the document's keys in camelCase
     * (`maxAttempts`, `maxDelay`, …), durations as numbers of milliseconds or
     * duration strings; unknown keys throw a `TypeError` with code
     * `unknown_key`. `breaker` and `budget(s)` may be shared `CircuitBreaker`
     * / `Budget` objects; `onRetry`, `onGiveUp`, `onStateChange` are hooks.
     */
    constructor(options?: PolicyOptions);
    /**
     * Creates a policy from a policy document: JSON text or an object with the
     * document's snake_case keys and duration strings (`"250ms"`), the same
     * document every runtime reads.
     */
    static fromJSON(document: string | object): RetryPolicy;
    /**
     * Creates a policy with a compatibility profile's defaults
     * (docs/profiles.md): `RetryPolicy.profile('polly', { maxAttempts: 5 })`.
     * `overrides` are typed options, as for the constructor.
     */
    static profile(name: Profile, overrides?: PolicyOptions): RetryPolicy;
    /** The normalized policy document (every setting spelled out). */
    toJSON(): Record<string, unknown>;
    /** The normalized policy document as JSON text. */
    toJSONText(): string;
    /** Low / mid / high delays (ms) per retry, and the cumulative worst case. */
    schedule(): {
        rows: Array<{
            retry: number;
            attempt: number;
            low: number;
            mid: number;
            high: number;
            cumulativeHigh: number;
        }>;
        worstCase: number;
        maxAttempts: number;
        deadline: number | null;
    };
    /**
     * The backoff delay (ms) of retry `retry` (≥ 1) for the draw `r` in [0, 1];
     * `prev` is decorrelated's previous delay. A retry after the first whose
     * delay depends on a history it is not given is refused rather than
     * answered with a delay no session would wait: decorrelated without
     * `prev` is a `TypeError` `missing_field` (field `prev`); the polly
     * profile's exponential backoff with jitter (DecorrelatedJitterV2, which
     * depends on every earlier draw) a `RangeError` `invalid_combination`
     * (field `prev`): use {@link replayDelays}.
     */
    delay(retry: number, r: number, prev?: number): number;
    /** The delays (ms) of retries 1..count drawn from a generator seeded with `seed`. */
    sampleDelays(seed: bigint | number | string, count: number): number[];
    /** The delays (ms) of retries 1..draws.length with the given draws (each in [0, 1]). */
    replayDelays(draws: number[]): number[];
    /** Classifies a failure with this policy's rules (see {@link classify}). */
    classify(failure: number | unknown, options?: FailureContext): Verdict;
    /** A policy for tests: at most `attempts` calls, every delay capped at `maxDelay` ms (0: no waiting). Shares breaker and budgets. */
    testing(attempts: number, maxDelay?: number): RetryPolicy;
    /** The counters of all sessions, with the retry_attempts_total family of metric names. */
    counters(): Record<string, unknown>;
    /** The breaker this policy's sessions share, or null. */
    get breaker(): CircuitBreaker | null;
    /** The budgets this policy's sessions share. */
    get budgets(): Budget[];
    /** Lints this policy (see {@link lint}). */
    lint(service?: object | string): Finding[];
    /** Starts one logical operation driven by hand. */
    session(options?: SessionOptions): Session;
    /**
     * Runs `fn` under the policy: awaits it, and after a failure asks the core
     * whether and when to retry, sleeps with a timer (none at all when the
     * delay is 0) and calls again with the same idempotency key. `fn` gets
     * `{ attempt, key, signal }`; it may throw, or return a fetch `Response`
     * (a non-ok one is classified by its status and `Retry-After`). Ends as
     * the core says (docs/sessions.md, "What the caller observes"): a failure
     * nothing would retry rejects with the error itself (a response is
     * returned); retrying that stopped rejects with `RetryError` (`.reason`,
     * `.attempts`, `.cause`) or `BudgetExhaustedError` (a `RetryError`); a
     * refused first attempt with `CircuitOpenError` / `BudgetExhaustedError`;
     * an abort with the signal's reason.
     */
    execute<T>(fn: (ctx: AttemptContext) => T | Promise<T>, options?: ExecuteOptions): Promise<T>;
    /**
     * `fetch` under this policy (the global `fetch`), as `wrapFetch(fetch, policy)` of
     * `retrycore/integrations` without its options: the request's method decides what is safe to
     * repeat, every attempt sends a clone of the request, a non-ok response is classified by its
     * status and `Retry-After`, and the call ends as `execute` does.
     */
    fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
}
/** The longest key by default (255 characters): the core's `max_key_length`, set when the backend loads (the wasm web build: by `init()`). */
export declare let DEFAULT_MAX_KEY_LENGTH: number;
/** Checks a key (1–255 visible ASCII characters by default); throws `IdempotencyError` (`invalid_key`) saying what is wrong. */
export declare function validateKey(key: string, maxLength?: number): true;
/** Joins business id, operation and version into a key: `deriveKey('order-1001', 'charge', 'v1')` → `"order-1001:charge:v1"`. */
export declare function deriveKey(...parts: string[]): string;
/** Scopes a key to a tenant: `len(tenant) ":" tenant ":" key`. */
export declare function scopedKey(tenant: string, key: string): string;
/** Keeps a short key, maps a longer one to `"sha256:" + hex` that fits `maxLength` (≥ 39). */
export declare function storageKey(key: string, maxLength: number): string;
/** Mints a UUIDv4 key from the operating system's entropy. */
export declare function mintKey(): string;
/** Writes an `Idempotency-Key` header value (an RFC 8941 sf-string). */
export declare function formatIdempotencyHeader(key: string): string;
/** Reads an `Idempotency-Key` header value; `{ token: true }` also accepts Stripe's bare token. */
export declare function parseIdempotencyHeader(value: string, options?: {
    token?: boolean;
}): string;
/** Writes a JSON value (or JSON text) in RFC 8785 canonical form. */
export declare function canonicalJSON(value: unknown): string;
/** Canonicalises JSON text (RFC 8785), read by the core's own parser (duplicate keys, lone surrogates and inexact integers are errors). */
export declare function canonicalJSONText(text: string): string;
/** Options of {@link fingerprint}: `method` + `path`, or `operation`; `selected` JSON pointers narrow the body. */
export interface FingerprintOptions {
    method?: string;
    path?: string;
    operation?: string;
    selected?: string[];
}
/**
 * The request fingerprint: the lowercase hex SHA-256 of the RFC 8785
 * canonical JSON of `{method, path, body}` (or `{operation, body}`). The body
 * is plain JSON (objects, arrays, strings, finite numbers, booleans, null);
 * anything else throws (`TypeError` for cycles, BigInt and non-plain values,
 * `RangeError` for non-finite numbers and nesting deeper than 128).
 */
export declare function fingerprint(body: unknown, options: FingerprintOptions): string;
/** The fingerprint of a body given as JSON text (read by the core's own parser). */
export declare function fingerprintText(bodyText: string, options: FingerprintOptions): string;
/** The canonical JSON a fingerprint hashes. */
export declare function fingerprintCanonical(body: unknown, options: FingerprintOptions & {
    bodyText?: string;
}): string;
/** Settings of idempotency records. */
export interface RecordConfig {
    /** How long a claim holds (ms; default 30 s). */
    leaseMs?: number;
    /** How long a completed record is kept (ms; default 24 h). */
    retentionMs?: number;
    /** Stripe's conventions (400 `idempotency_error` on mismatch). */
    stripe?: boolean;
    /** `by_category` (default), `replay` or `execute`. */
    failureHandling?: 'by_category' | 'replay' | 'execute';
    /** Failure categories that release the claim. */
    releaseCategories?: string[];
}
/** An idempotency record: a document with snake_case keys, the same in every runtime. */
export type IdempotencyRecord = Record<string, unknown>;
/** What an incoming request gets. */
export interface RecordDecision {
    /** `execute`, `mismatch`, `in_progress`, `replay` or `missing_key`. */
    decision: string;
    /** The HTTP answer to send instead of running (`{status, errorType, retryAfterS}`), or null. */
    http: {
        status: number;
        errorType: string | null;
        retryAfterS: number | null;
    } | null;
    /** For `execute`: the `processing` record to store (compare-and-set on the previous fence). */
    record?: IdempotencyRecord;
    [key: string]: unknown;
}
/**
 * Decides what an incoming request gets, from the stored record (or null),
 * its key (null: a request without a key), its fingerprint and the wall clock.
 */
export declare function decideRecord(record: IdempotencyRecord | null, key: string | null, fingerprintHex: string, nowMs?: number, config?: RecordConfig): RecordDecision;
/** How a request ended, to store in its record. */
export interface RecordOutcome {
    state: 'succeeded' | 'failed';
    /** The failure's category (failed). */
    category?: string;
    /** The response to replay: `{status, headers: [[name, value]], body}`. */
    response?: {
        status?: number;
        headers?: Array<[string, string]>;
        body?: unknown;
    } | null;
}
/** Completes a claimed record (holding `fence`) with an outcome; returns the record to store. */
export declare function completeRecord(record: IdempotencyRecord, fence: number, outcome: RecordOutcome, nowMs?: number, config?: RecordConfig): IdempotencyRecord;
/** Renews the holder's lease; returns the record to store. */
export declare function renewLease(record: IdempotencyRecord, fence: number, nowMs?: number, config?: RecordConfig): IdempotencyRecord;
/** Writes Unix epoch milliseconds as RFC 3339 (`YYYY-MM-DDTHH:MM:SS.mmmZ`). */
export declare function formatRfc3339(unixMs: number): string;
/** Reads RFC 3339 text as Unix epoch milliseconds (rounded down). */
export declare function parseRfc3339(text: string): number;
/**
 * A dead letter (docs/idempotency.md, "Dead letters"): an envelope with `msg_id`, the message,
 * reason, error class and message, attempts, first and last failure time,
 * trace id, source coordinates and `status`. Its JSON has snake_case keys,
 * the same in every runtime.
 */
export declare class DeadLetter {
    private constructor();
    /** Reads and validates a letter (JSON text or object). */
    static fromJSON(letter: object | string): DeadLetter;
    /**
     * Builds a letter from typed fields (camelCase: `msgId`, `message`,
     * `reason`, `errorClass`, `errorMessage`, `attempts`, `firstFailureAt` and
     * `lastFailureAt` as Unix ms or RFC 3339 text, `traceId`, `topic`,
     * `partition`, `offset`, `targetIdempotent`).
     */
    static create(fields: Record<string, unknown>): DeadLetter;
    /** Marks the letter replayable (only if its target is idempotent). */
    markReplayable(): this;
    /** Marks the letter replayed. */
    markReplayed(): this;
    /** Discards the letter. */
    discard(): this;
    /** The letter's status: `pending`, `replayed` or `discarded`. */
    get status(): string;
    /** The letter as a JSON object (snake_case keys). */
    toJSON(): Record<string, unknown>;
}
/**
 * What a limiter answers before an attempt (docs/limiters.md): go now; sleep
 * `wait` ms with the permit reserved (`ticket` cancels it); wait at most
 * `maxWait` ms for a slot a `release` hands over; or do not call now.
 */
export type LimiterDecision =
    | { decision: 'proceed' }
    | { decision: 'delay'; wait: number; ticket: number }
    | { decision: 'queued'; ticket: number; maxWait: number | null }
    | { decision: 'reject'; reason: string; retryAfter: number | null; limiter: string };
/** What cancelling a delay or a queued wait did. */
export type LimiterCancel =
    | { cancelled: 'refunded' | 'not_waiting' }
    | { cancelled: 'removed'; decision: 'reject'; reason: string; retryAfter: number | null; limiter: string };
/** Typed limiter options: the document's limiter keys in camelCase, durations in ms or as strings, e.g. `{ kind: 'bulkhead', maxConcurrent: 10, maxWait: 50 }`. */
export interface LimiterOptions {
    kind?: string;
    profile?: string;
    name?: string;
    [key: string]: unknown;
}
/** When an attempt asks and what it may wait: `attempt` is `initial`, `retry` or `retry_after_timeout`; `within` the ms the caller has left. */
export interface LimiterAsk {
    now?: number;
    attempt?: string;
    within?: number;
}
/** The end of a call that proceeded: its latency `rtt` (ms) and `signal` (`success`, `overloaded`, `ignore`) or a failure's `category`. */
export interface LimiterEnd {
    now?: number;
    rtt?: number;
    signal?: string;
    category?: string;
}
/** A limiter refused a call (`code` `limiter_rejected`); `retryAfter` ms when the limiter knows. */
export declare class LimiterRejectedError extends Error {
    code: string;
    field: string;
    /** The limiter's name. */
    limiter: string;
    /** `bulkhead_full`, `queue_full`, `wait_too_long`, `max_wait_exceeded` or `limit_reached`. */
    reason: string;
    /** Milliseconds after which a permit would be free, if known. */
    retryAfter: number | null;
    constructor(message: string, limiter: string, reason: string, retryAfter?: number | null);
}
/**
 * A limiter (docs/limiters.md): a bulkhead, a token bucket, a fixed or
 * sliding window, an AIMD or Gradient2 concurrency limit, or AWS's adaptive
 * client rate limiter. `wait` asks before an attempt and waits as told
 * (an `AbortSignal` ends the wait and gives the permit back); `release`
 * reports the call's end.
 */
export declare class Limiter {
    /** Creates a limiter from typed options (camelCase keys; durations in ms or as strings). */
    constructor(options: LimiterOptions, now?: number);
    /** Creates a limiter from a limiter object of a document (snake_case keys, durations as strings). */
    static fromJSON(doc: object | string, now?: number): Limiter;
    /** The limiter's name (rejections carry it). */
    get name(): string;
    /** The limiter's kind. */
    get kind(): string;
    /** Calls in flight (bulkhead and adaptive kinds; 0 for rate limiters). */
    get inFlight(): number;
    /** Asks whether an attempt may go, without waiting. */
    acquire(ask?: LimiterAsk): LimiterDecision;
    /** Asks, then waits as told: resolves when the call may go; rejects with a `LimiterRejectedError`, or with the signal's reason when aborted. */
    wait(ask?: Omit<LimiterAsk, 'now'> & { signal?: AbortSignal }): Promise<void>;
    /** Reports the end of a call that proceeded (wakes the waiter that takes its slot). */
    release(end?: LimiterEnd): void;
    /** Abandons a delay or a queued wait by its ticket. */
    cancel(ticket: number, now?: number): LimiterCancel;
    /** The observable state (`inFlight`, `queued`, `limit`, `tokens`, `fillRate`, …). */
    state(now?: number): Record<string, unknown>;
    /** Waits, runs `fn`, and releases with its latency (`success`, or the error's `category` when it has one). */
    run<T>(fn: () => T | Promise<T>, ask?: Omit<LimiterAsk, 'now'> & { signal?: AbortSignal }): Promise<T>;
}
/**
 * A saga's compensation run as the core plans it (docs/compensation.md): the
 * completed steps' compensations, newest first, each under its own
 * `purpose: compensation` policy. JSON in and out has snake_case keys.
 */
export declare class CompensationRun {
    /** Plans the run of a saga: `{ saga, steps: [{ name, completed, compensate, policy }] }` (object or JSON text). */
    constructor(saga: object | string);
    /** The next compensation to run (`index`, `step`, `compensate`, `policy`), or null when every one has an outcome. */
    next(): Record<string, unknown> | null;
    /** Records the outcome of the compensation `next` gave; returns the dead letter an exhausted one became, or null. */
    record(outcome: object | string): Record<string, unknown> | null;
    /** The result: `saga`, `finished`, `compensated`, every step's outcome in saga order, the dead letters. */
    result(): Record<string, unknown>;
}
/** A dead-letter replay as the core plans it (docs/dead-letters.md): refusals with their reasons, growing batches, the audit record. */
export declare class DeadLetterReplay {
    /** Plans a replay of letters (JSON objects or text) with options (`operator` required) at `wallNowMs` (default: now). */
    constructor(letters: unknown[] | string, options: object | string, wallNowMs?: number);
    /** The letters grouped by kind of reason (`system`, `data`, `unknown`) and error class. */
    groups(): Record<string, unknown>[];
    /** The next batch's letter ids, or an empty list when the replay is over. */
    nextBatch(): string[];
    /** Records a letter's replay; a complete batch decides whether the next grows or the replay stops. */
    record(msgId: string, ok: boolean, wallNowMs?: number): void;
    /** The letters as JSON, with their statuses as they now stand. */
    letters(): Record<string, unknown>[];
    /** The audit record (schema/dead-letter-replay.schema.json). */
    audit(): Record<string, unknown>;
}
/**
 * Runs a saga's compensations newest first, each under its own policy
 * (`RetryPolicy#execute`); one that exhausts becomes a dead letter and the
 * rest still run. Resolves with the core's result; an abort of `signal`
 * rejects with its reason and runs nothing further.
 */
export declare function runCompensations(
    saga: object | string,
    compensations: Record<string, (ctx: { attempt: number; signal: AbortSignal | undefined }) => unknown>,
    options?: { signal?: AbortSignal; wallClock?: () => number },
): Promise<Record<string, unknown>>;
/**
 * Replays dead letters (`DeadLetter`s or their JSON objects) in the batches
 * the core hands out, a batch's letters concurrently (`replay` resolving is
 * a success, rejecting a failure); marks each replayed letter and resolves
 * with the audit record. Options: `operator` (required), `initial_batch`,
 * `growth`, `max_batch`, `max_failure_rate`, `include_data_errors`,
 * `signal`, `wallClock` (Unix ms).
 */
export declare function replayDeadLetters(
    letters: unknown[],
    replay: (letter: unknown, ctx: { signal: AbortSignal | undefined }) => unknown,
    options: { operator: string; signal?: AbortSignal; wallClock?: () => number; [key: string]: unknown },
): Promise<Record<string, unknown>>;
