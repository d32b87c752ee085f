//! The low-level JS surface, declared once: every function and class both
//! JS bindings export, with its JS name, its arguments' kinds and its return
//! convention (a `json` return names its TypeScript type), and the public
//! wrappers of `lib/retrycore.ts` that only check arguments and call it
//! (`js` lines). Each FFI crate's `build.rs` expands it with the generator in
//! `bindings-js/codegen/surface.rs` (which documents the language) into its
//! `#[napi]` or `#[wasm_bindgen]` exports; the wasm package's hot-path
//! adapter (`backend.js`) is generated from it too.
//!
//! This file is also compiled by the build scripts: it uses nothing but `std`.

/// The decisions-only subset (issue 18's lite entry, measured by `make -C
/// bindings-wasm size-lite`; not shipped yet): the functions and classes it
/// keeps, and `-Class.member` for members of a kept class it drops. Policies
/// come from typed options only (`fromOptions`, read by the core's reader);
/// no lint, alerts, retry log or metric samples, no idempotency keys or
/// records, no limiters, sagas or dead-letter replay, no breaker snapshots.
// Read by bindings-wasm's build script, not by the napi one that includes this file too.
#[allow(dead_code)]
pub const LITE: &str = "
parseDuration formatDuration serverAdvice parseHttpDate unreadable internNames classifyStatus classify serverDelay
NativeRng NativeBreaker NativeBudget NativePolicy
-NativeBreaker.snapshot -NativeBreaker.restore -NativePolicy.fromJson
";

/// The surface: every low-level function and class both JS bindings export.
pub const DECLARATIONS: &str = r#"
/// Parses a duration string (`"250ms"`) to milliseconds.
fn parseDuration(text: str) -> try f64
js parseDuration(text:duration)
/// Writes milliseconds as the shortest exact duration string.
fn formatDuration(valueMs: f64) -> try string
js formatDuration(ms=valueMs:duration)
/// Reads server delay headers (flat `[name, value, name, value, …]`).
fn serverAdvice(headers: strs, wallNowMs: f64?) -> try json<ServerAdvice>
/// Parses an HTTP-date to Unix seconds (`null` when it is not one).
fn parseHttpDate(value: str, wallNowMs: f64) -> try f64?
js parseHttpDate(value, wallNowMs)
/// Lints a policy document (JSON text) against an optional service description.
fn lint(policy: str, service: str?) -> try json<Finding[]>
/// Checks the alert rules over two counter snapshots (JSON text) `intervalMs` apart; thresholds (JSON text) over the defaults.
fn alerts(before: str, after: str, intervalMs: f64, thresholds: str?) -> try json<AlertEvaluation>
/// Returns the retry log's record of a retry or give-up event (JSON text).
fn retryLog(event: str) -> try json<RetryLogRecord>
/// The samples an exporter records for metric events: `document` is
/// `{"names", "events"}` as JSON text (docs/observability.md, "Exporters").
fn metricSamples(document: str) -> try json<MetricSample[]>

/// Checks a key: true, or an `IdempotencyError` saying which character at which position is wrong.
fn validateKey(key: str, max: f64) -> try bool<true> = idem::validate_key
/// Joins business id, operation and version into a key.
fn deriveKey(parts: strs) -> try string = idem::derive_key
/// Scopes a key to a tenant.
fn scopedKey(tenant: str, key: str) -> try string = idem::scoped_key
js scopedKey(tenant, key)
/// Maps a key to one a store's index can hold.
fn storageKey(key: str, max: f64) -> try string = idem::storage_key
js storageKey(key, maxLength=max)
/// Mints a UUIDv4 key from OS entropy, or from 32 hex digits of entropy (tests).
fn mintKey(entropyHex: str?) -> try string = idem::mint_key::<H>
js mintKey()
/// Writes the `Idempotency-Key` header value (an RFC 8941 sf-string).
fn formatHeader(key: str) -> try string = idem::format_header
js formatIdempotencyHeader(key)
/// Reads an `Idempotency-Key` header value; `token` also accepts Stripe's bare token.
fn parseHeader(value: str, token: bool) -> try string = idem::parse_header
/// Canonicalises JSON text (RFC 8785).
fn canonicalize(text: str) -> try string = idem::canonicalize
js canonicalJSONText(text)
/// Writes a number as canonical JSON does (ECMAScript `Number::toString`).
fn canonicalNumber(x: f64) -> try string = idem::canonical_number
js _canonicalNumber(x)
/// Fingerprints a request: `method` + `path`, or `operation`, as given (the core reads the mix);
/// the body is JSON text. `canonical` returns the canonical JSON instead of its hash.
fn fingerprint(method: str?, path: str?, operation: str?, body: str, selected: strs?, canonical: bool) -> try string = idem::fingerprint
/// Decides what an incoming request gets (`record` is the stored record's JSON or null).
fn decideRecord(record: str?, key: str?, fingerprint: str, nowMs: f64, idem::RecordArgs{leaseMs: f64?, retentionMs: f64?, stripe: bool?, failureHandling: string?, releaseCategories: strs?}) -> try json<RecordDecision> = idem::decide_record
/// Completes a claimed record with an outcome; returns the record's JSON.
fn completeRecord(record: str, fence: f64, outcome: str, nowMs: f64, idem::RecordArgs{leaseMs: f64?, retentionMs: f64?, stripe: bool?, failureHandling: string?, releaseCategories: strs?}) -> try string = idem::complete_record
/// Renews the holder's lease; returns the record's JSON.
fn renewLease(record: str, fence: f64, nowMs: f64, idem::RecordArgs{leaseMs: f64?, retentionMs: f64?, stripe: bool?, failureHandling: string?, releaseCategories: strs?}) -> try string = idem::renew_lease
/// Validates a dead letter, applies `ops` in order, and returns its JSON.
fn deadLetter(letter: str, ops: strs) -> try string = idem::dead_letter
/// Writes Unix milliseconds as RFC 3339 (`YYYY-MM-DDTHH:MM:SS.mmmZ`).
fn formatRfc3339(unixMs: f64) -> try string = idem::format_rfc3339
js formatRfc3339(unixMs)
/// Reads RFC 3339 text as Unix milliseconds (rounded down).
fn parseRfc3339(text: str) -> try f64 = idem::parse_rfc3339
js parseRfc3339(text)

/// The message of a value that threw while it was read: `could not be read: <type>: <message>` (the core's text).
fn unreadable(typeName: str, message: str) -> string = failure::unreadable

/// Interns a list of names for the failure path: the id a failure passes as `namesId`
/// instead of the names, or -1 when the table is full (`names::intern_names`).
fn internNames(names: strs) -> try f64 = names::intern_names
/// Classifies a status with the built-in tables (the hot path; see `classifyStatus` in lib/).
fn classifyStatus(status: f64, flags: f64) -> hot u32 = verdict::classify_status
/// Classifies a failure with the built-in tables, packed (`verdict::pack_all`; see `serverDelay`).
fn classify(FailureArgs{status: f64?, grpc: string?, names: strs?, method: string?, idempotent: bool?, keySent: bool?, headers: strs?, wallNowMs: f64?, message: string?, retryableThrottling: bool?, shouldRetry: bool?, verdict: string?, namesId: f64?; elapsedMs}) -> hot u32 = verdict::classify
/// Returns the server delay (ms) of the verdict `classify` packed last (NaN: none).
fn serverDelay() -> f64 = verdict::server_delay

/// The seeded generator of every runtime: xoshiro256++ seeded by SplitMix64.
class NativeRng = Rng
  /// Seeds a generator from a decimal u64.
  new(seed: str) -> try Self
  /// Returns the next u64 as a decimal string.
  mut nextU64() -> string
  /// Returns the next draw in [0, 1).
  mut nextF64() -> f64
end

/// A circuit breaker.
class NativeBreaker = Breaker<H>
  /// Creates a breaker from a breaker object (JSON text; durations as strings, or ms numbers when `ms`).
  new(text: str, msNumbers: bool) -> try Self
  /// Asks to make one call: a permit (>= 0) or -1 when refused (see `lastRetryAfter`).
  mut tryAcquire(now: f64) -> hot f64
  js tryAcquire(now) fired
  /// Returns the wait (ms) the last refusal named (`Infinity`: not by waiting).
  get lastRetryAfter -> f64
  js get retryAfter
  /// Returns the state that refused last.
  get lastRefusedState -> static
  js get refusedState
  /// Returns the message of the last refusal (the core's `Ending::message`, as Python's).
  get lastRefusedMessage -> string
  /// Records an outcome (0 success, 1 failure, 2 ignored); returns true on a transition.
  mut record(permit: f64, outcome: f64, duration: f64, now: f64) -> hot bool
  /// Records a success; answers what the next call may skip: -1 nothing, else the permit it is
  /// admitted with without asking, plus 1 when a success up to `freeSuccessMs` need not be reported.
  mut succeed(permit: f64, duration: f64, now: f64) -> hot f64
  /// Records an outcome (as `record`); answers what the next call may skip, as `succeed` does.
  mut fail(permit: f64, outcome: f64, duration: f64, now: f64) -> hot f64
  /// Returns the longest success (ms) `succeed`'s answer speaks for (`Infinity`: any).
  get freeSuccessMs -> f64
  /// Records a failure described like a classification input; the
  /// breaker's counting rules decide how it counts. Returns the outcome counted (0 success, 1 failure, 2 ignored).
  mut recordFailure(permit: f64, duration: f64, now: f64, FailureArgs{status: f64?, grpc: string?, names: strs?, headers: strs?, message: string?, retryableThrottling: bool?, shouldRetry: bool?, namesId: f64?; method, idempotent, keySent, elapsedMs, wallNowMs, verdict}) -> hot u32
  /// Gives a permit back without an outcome.
  mut release(permit: f64, now: f64) -> hot bool
  /// Returns the state code.
  get state -> static
  js get state
  /// Returns the window totals and counters.
  ref totals() -> json<ReturnType<CircuitBreaker['metrics']>>
  js metrics()
  /// Returns ms until a call could be admitted (0: now; `Infinity`: not by waiting).
  ref remainingOpen(now: f64) -> try f64
  js remainingOpen(now)
  /// Moves to `state` by hand.
  mut transitionTo(state: str, now: f64) -> try json<Transition>
  js transitionTo(state, now) fired
  /// Returns to closed with an empty window.
  mut reset(now: f64) -> try json<Transition | null>
  js reset(now) fired
  /// Captures the state as snapshot JSON text.
  ref snapshot(now: f64, wallNowMs: f64) -> try string
  js snapshot(now, wallNowMs) parsed
  /// Replaces the state with a snapshot's (the breaker stays shared).
  mut restore(snapshot: str, now: f64, wallNowMs: f64) -> try ()
  /// Writes the breaker's settings as a breaker object.
  ref configJson() -> string
  js toJSON() parsed
  /// Returns true when a counting rule matches messages (only then is an error's message sent).
  ref needsMessage() -> bool
  /// Turns collecting transitions for `takeTransitions` on or off.
  mut setCollect(on: bool) -> ()
  /// Takes the transitions collected since the last call.
  mut takeTransitions() -> json<Transition[]>
  /// Returns the current state's metrics (rates in percent, -1 below the minimum).
  ref stateMetrics(now: f64) -> try json<BreakerMetrics>
  js stateMetrics(now)
  /// Records an outcome without a permit (0 success, 1 failure, 2 ignored); returns true on a transition.
  mut recordWithoutPermit(outcome: f64, duration: f64, now: f64) -> try bool
  /// Opens for `duration` ms by hand.
  mut transitionToOpenFor(duration: f64, now: f64) -> try json<Transition>
  js transitionToOpenFor(durationMs=duration, now) fired
  /// Opens until `until` (ms on the clock `now` uses).
  mut transitionToOpenUntil(until: f64, now: f64) -> try json<Transition>
  js transitionToOpenUntil(until, now) fired
  /// Returns what a break-duration generator sees now.
  ref breakArguments(now: f64) -> try json<BreakArguments>
  js breakArguments(now)
  /// Replaces the current open period's wait with `duration` ms.
  mut setBreakDuration(duration: f64) -> try ()
  js setBreakDuration(durationMs=duration)
end

/// A retry budget.
class NativeBudget = Budget<H>
  /// Creates a budget from a budget object (JSON text; durations as strings, or ms numbers when `ms`).
  new(text: str, msNumbers: bool) -> try Self
  /// Returns the budget's name.
  get name -> string
  js get name
  /// Returns the budget's kind.
  get kind -> static
  js get kind
  /// Writes the settings as a budget object.
  ref configJson() -> string
  js toJSON() parsed
  /// A logical operation starts (deposit, call in flight).
  ref start(now: f64) -> hot ()
  js start(now)
  /// A logical operation ends.
  ref end(holdsSlot: bool) -> ()
  js end(holdsSlot)
  /// Checks a retry after `category` without changing anything: null, or the refusal.
  ref check(now: f64, categoryId: f64, refused: bool, holdsSlot: bool) -> try json<Refusal | null>
  /// Takes what a retry costs: `{cost, slot}`.
  ref withdraw(now: f64, categoryId: f64, refused: bool, holdsSlot: bool) -> try json<{ cost: number | null; slot: boolean }>
  /// Checks, then withdraws when allowed: the cost (>= 0) or -1 when refused (the hot path).
  ref tryWithdraw(now: f64, categoryId: f64) -> hot f64
  /// Records a failed attempt.
  ref onFailure(now: f64, categoryId: f64, counts: bool, reachedBackend: bool, declinedPushback: bool, refused: bool) -> hot ()
  /// Records a success; `cost` is what the retry that led to it took.
  ref onSuccess(now: f64, cost: f64?) -> hot ()
  /// The adaptive throttle's check before an attempt (draw `r`): null, or the refusal.
  ref beforeAttempt(now: f64, r: f64) -> try json<Refusal | null>
  js beforeAttempt(r, now)
  /// Returns the budget's level (tokens, or its counts).
  ref level(now: f64) -> try json<Record<string, number>>
  js level(now)
  /// Returns refusals and withdrawals so far.
  ref stats() -> json<{ refusals: number; withdrawals: number }>
  js stats()
  /// Takes `amount` tokens from a token bucket if it holds that many (after refill); true when taken.
  ref acquire(amount: f64, now: f64) -> try bool
  js acquire(n=amount:amount, now)
  /// Returns `amount` tokens to a token bucket, up to its capacity.
  ref release(amount: f64, now: f64) -> try ()
  js release(n=amount:amount, now)
end

/// A live retry policy and the sessions it runs.
class NativePolicy = Policy<H>
  /// Creates a policy from a document (JSON text; durations are strings).
  static fromJson(text: str, entropy: str?) -> try Self
  /// Creates a policy from typed options (JSON text whose durations may be milliseconds).
  static fromOptions(text: str, entropy: str?) -> try Self
  /// Writes the normalized policy document.
  ref toJson() -> string
  js toJSONText()
  js toJSON() parsed
  /// Returns the schedule: rows of low / mid / high delays (ms) per retry.
  ref schedule() -> json<ReturnType<RetryPolicy['schedule']>>
  js schedule()
  /// Computes the backoff delay (ms) of retry `retry` for the draw `r`; a retry
  /// whose delay needs a history it is not given is refused (field `prev`).
  ref delay(retry: f64, r: f64, prev: f64?) -> hot f64
  js delay(retry, r, prev)
  /// Draws the delays (ms) of retries 1..=count from a generator seeded with `seed`.
  ref sampleDelays(seed: str, count: f64) -> try f64s
  js sampleDelays(seed, count)
  /// Replays `draws` (each in [0, 1]) through the backoff: the delays (ms) of retries 1..=draws.len().
  ref replayDelays(draws: nums) -> try f64s
  js replayDelays(draws)
  /// Returns a policy for tests: at most `attempts` calls, delays capped at `max_delay` ms.
  ref testing(attempts: f64, maxDelay: f64) -> try Self
  /// Returns the counters with the retry_attempts_total family of metric names.
  ref counters() -> json<Record<string, unknown>>
  js counters()
  /// Returns the policy's shared breaker, if any.
  ref breaker() -> NativeBreaker?
  /// Returns the number of budgets.
  ref budgetCount() -> u32
  /// Returns the budget at `index`.
  ref budget(index: f64) -> NativeBudget?
  /// Returns a policy whose sessions share `breaker`.
  ref shareBreaker(breaker: NativeBreaker) -> Self
  /// Returns a policy whose budget at `index` is `budget`.
  ref shareBudget(index: f64, budget: NativeBudget) -> try Self
  /// Classifies a status with this policy's rules (packed; see `classify_status`).
  mut classifyStatus(status: f64, flags: f64) -> hot u32
  /// Classifies a failure with this policy's rules, packed (`verdict::pack_all`; see `serverDelay`).
  ref classify(FailureArgs{status: f64?, grpc: string?, names: strs?, method: string?, idempotent: bool?, keySent: bool?, headers: strs?, wallNowMs: f64?, message: string?, retryableThrottling: bool?, shouldRetry: bool?, verdict: string?, namesId: f64?; elapsedMs}) -> hot u32
  /// Returns true when a classification or breaker counting rule matches messages (only then is an error's message sent).
  ref needsMessage() -> bool
  /// Returns true when the policy has an attempt timeout or a deadline.
  ref hasTimeouts() -> bool
  /// Returns true when the policy has a limiter (a gate may then carry a wait).
  ref hasLimiter() -> bool
  /// Starts a session; returns its id.
  mut begin(key: string?, seed: str?, idempotent: bool?, keySent: bool?, method: string?, draws: nums?) -> hot f64
  /// Starts a session and gates its first attempt in one call (the
  /// `execute` fast path): the id when it may proceed, `-id - 1` when the
  /// first attempt was rejected (see `gate`).
  mut start(now: f64, key: string?, idempotent: bool?, keySent: bool?, method: string?) -> hot f64
  /// Accounts for `n` first-try successes `execute` ran without a session, `durationNs` in all
  /// (`RetryPolicy::settle_first_tries`): settled before anything draws or reads the counters.
  ref settle(n: f64, durationNs: f64) -> try ()
  /// Records a success and frees the session in one call (the `execute` fast path).
  mut finish(id: f64, now: f64) -> hot ()
  /// Gates the next attempt: returns the attempt number, or 0 when rejected (see `gate`).
  mut before(id: f64, now: f64) -> hot f64
  /// Returns the last gate of a session.
  mut gate(id: f64) -> try json<BackendGate>
  /// Answers a failed attempt: the delay (ms) of the retry, or -1 when giving up (see `decision`).
  mut fail(id: f64, now: f64, FailureArgs{status: f64?, grpc: string?, names: strs?, method: string?, idempotent: bool?, keySent: bool?, headers: strs?, elapsedMs: f64?, wallNowMs: f64?, message: string?, retryableThrottling: bool?, shouldRetry: bool?, verdict: string?, namesId: f64?}) -> hot f64
  /// `fail` for a failure of names alone (an interned list) and the session's own inputs: a retry
  /// answers its delay and the decision packed in one number, when `attempt` is the attempt `before`
  /// gated (see `Policy::fail_names`); -1 a give-up, -2 a retry to read with `decision`.
  mut failNames(id: f64, now: f64, namesId: f64, attempt: f64, method: string?, idempotent: bool?, keySent: bool?, verdict: string?) -> hot f64
  /// Returns the last decision of a session.
  mut decision(id: f64) -> try json<BackendDecision>
  /// Returns the last decision of a session packed when it is a retry, else -1 (then read `decision`).
  mut retried(id: f64) -> hot f64
  /// Returns the backoff, or the server delay (NaN: none), of a session's last decision, a retry.
  mut retryDelay(id: f64, server: bool) -> hot f64
  /// Records a success and finishes the session.
  mut succeed(id: f64, now: f64, elapsedMs: f64?) -> hot ()
  /// Ends a session as cancelled.
  mut cancel(id: f64, now: f64) -> hot ()
  /// Gives back what a session holds without counting anything (the vectors' `drop`).
  mut release(id: f64) -> try ()
  /// Frees a session's slot (releasing what it still holds). Unknown ids are ignored.
  mut free(id: f64) -> ()
  /// Returns a session's idempotency key.
  mut key(id: f64) -> try string
  /// Returns a session's state: attempts made, done, give-up reason, key minted.
  mut status(id: f64) -> try json<SessionStatus>
  /// Takes the breaker transitions a session's calls caused.
  mut transitions(id: f64) -> try json<Transition[]>
end
/// A limiter: a bulkhead, a rate limiter, an adaptive concurrency limit or AWS's adaptive client rate limiter.
class NativeLimiter = Limiter<H>
  /// Creates a limiter from a limiter object (JSON text; durations as strings, or ms numbers when `ms`) at `now`.
  new(text: str, msNumbers: bool, now: f64) -> try Self
  /// Returns the limiter's name.
  get name -> string
  /// Returns the limiter's kind.
  get kind -> static
  /// Returns the calls in flight (bulkhead and adaptive kinds).
  get inFlight -> f64
  /// Asks whether an attempt may go (`attempt`: initial, retry or retry_after_timeout; `within`: ms the caller has left).
  ref acquire(now: f64, attempt: str?, within: f64?) -> try json<Record<string, unknown>>
  /// Reports the end of a call that proceeded: the ticket of the waiter that now holds its slot, or null.
  ref release(now: f64, rtt: f64?, signal: str?, category: str?) -> try f64?
  /// Abandons a delay or a queued wait by its ticket.
  ref cancel(ticket: f64, now: f64) -> try json<Record<string, unknown>>
  /// Returns the observable state (in flight, queued, limit, tokens, rates).
  ref state(now: f64) -> try json<Record<string, unknown>>
end
/// A saga's compensation run as the core plans it (lib/saga.ts runs the compensations).
class NativeCompensationRun = CompensationRun<H>
  /// Plans the run of a saga (JSON text; each compensation's policy a policy document).
  new(saga: str) -> try Self
  /// Returns the next compensation to run (`index`, `step`, `compensate`, `policy`), or null.
  ref next() -> json<Record<string, unknown> | null>
  /// Records the outcome (JSON text) of the compensation `next` gave: the dead letter it became, or null.
  mut record(outcome: str) -> try json<Record<string, unknown> | null>
  /// Returns the result: every step's outcome in saga order and the dead letters.
  ref result() -> json<Record<string, unknown>>
end
/// A dead-letter replay as the core plans it (lib/saga.ts replays the letters).
class NativeDeadLetterReplay = DeadLetterReplay<H>
  /// Plans a replay of letters (JSON text, a list) with options (JSON text) at `wallNowMs`.
  new(letters: str, options: str, wallNowMs: f64) -> try Self
  /// Returns the letters grouped by kind of reason and error class.
  ref groups() -> json<Record<string, unknown>[]>
  /// Returns the next batch's letter ids (empty when the replay is over).
  mut nextBatch() -> try json<string[]>
  /// Records a letter's replay; a complete batch decides whether the next grows or the replay stops.
  mut record(msgId: str, ok: bool, wallNowMs: f64) -> try ()
  /// Returns the letters, with their statuses as they now stand.
  ref letters() -> json<Record<string, unknown>[]>
  /// Returns the audit record.
  ref audit() -> json<Record<string, unknown>>
end
"#;
