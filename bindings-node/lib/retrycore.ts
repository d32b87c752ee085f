// The public JS API declared in lib/api.d.ts (both packages' index.d.ts; lib/conforms.ts holds this file to
// it): it translates and owns what must be asynchronous; every decision is the Rust core's, through `setBackend`.

// ---------------------------------------------------------------- backend

import type { Backend, BackendDecision, BackendEnding, BackendGate, BackendGiveUp, BackendInfo, BackendReject, BackendRetry } from './backend';
import type { BackendBreaker, BackendBudget, BackendPolicy, BackendRng } from './surface';
import type {
  Category, Profile, Failure, HeadersLike, Verdict, FailureContext, ServerAdvice, Finding, Transition, BreakerMetrics, BreakArguments, BreakerOptions,
  Refusal, BudgetOptions, Gate, Decision, SessionOptions, HookInfo, PolicyOptions, ExecuteOptions, AttemptContext, FingerprintOptions, RecordConfig,
  IdempotencyRecord, RecordDecision, RecordOutcome, AlertEvaluation, AlertThresholds, CounterSnapshot, RetryLogger, RetryLogRecord, MetricSample,
} from './api';
import * as G from './generated.js';
import { setReads, readResponse, failedResponse, errorMethod, connectingName } from './reads.js';
import type { ResponseRead } from './reads.js';
import { LimiterRejectedError } from './limiters.js';


let N: Backend = null as unknown as Backend;
// The core's tables, generated from it at build time (`retrycore_js::info()`): the same in both packages.
const INFO = G.INFO;
let CATEGORY_IDS: Map<string, number> = new Map();
let VERDICTS: Array<Verdict | undefined> = [];

// Read from the core's tables at setBackend (`host_tables()`: limits, the fetch failure
// messages and network-code rule, CATEGORY_BITS, SEEN_STATUS, Counted::ALL, the error
// markers), never a copy here (docs/js.md, "Input limits").
let LIMITS: Record<string, number> = {};
let FETCH_MESSAGES: Set<string> = new Set();
let NETWORK_CODE = /(?!)/;
let CATEGORY_BITS = 0;
let CORE_CATEGORIES: Category[] = [];
let SEEN_STATUS: [number, number] = [0, -1];
let OUTCOMES: string[] = [];
let MARKERS: BackendInfo['tables']['error_markers'] = { retry_exhausted: '', breaker_open: '', dom_exception_prefix: '', fetch_network: '', connecting: '' };

// The kind lists, generated from the core's `host_tables()`.
export { BACKOFF_KINDS, JITTERS, BREAKER_KINDS, BUDGET_KINDS, CATEGORIES, GIVE_UP_REASONS, REJECT_REASONS, PROFILES } from './generated.js';

/**
 * The host's monotonic clock (ms), `performance.now` bound once: calling the bound function skips the
 * property lookup of `performance.now()`, ~10 ns of the ~45 ns a reading costs in Node 20 (measured in
 * `execute`, which reads it twice per call; issue 17).
 */
const hostNow: () => number = performance.now.bind(performance);

/**
 * A retry decision unpacked from the backend's packed answers (`retried`, `failNames`), its keys in the
 * order the core's JSON has them; `flags`' low `CATEGORY_BITS` are the category's index.
 */
function retryDecision(retry: number, attempt: number, hookAttempt: number, backoff: number, capped: boolean, flags: number, delay: number, maxAttempts: number, serverDelay: number | null): BackendDecision {
  return {
    action: 'retry', attempt, backoff, capped, category: CORE_CATEGORIES[flags & ((1 << CATEGORY_BITS) - 1)], delay, maxAttempts,
    onRetry: { attempt: hookAttempt, retry }, retry, serverDelay,
  };
}

/** Installs the backend (the napi addon, or the wasm module): called once by the package's entry point. */
export function setBackend(native: Backend): void {
  N = native;
  N.setErrorFactory(makeError);
  N.calibrate(hostNow());
  const t = INFO.tables;
  LIMITS = t.limits;
  FETCH_MESSAGES = new Set(t.fetch_failure_messages);
  NETWORK_CODE = new RegExp(t.network_code_pattern);
  CATEGORY_BITS = t.category_bits;
  CORE_CATEGORIES = t.categories.map((c) => c.code as Category);
  CATEGORY_IDS = new Map(CORE_CATEGORIES.map((c, i) => [c, i]));
  VERDICTS = [];
  OUTCOMES = (t.breaker_outcomes as string[] | undefined) ?? [];
  DEFAULT_MAX_KEY_LENGTH = t.max_key_length as number;
  SEEN_STATUS = (t.seen_status as [number, number] | undefined) ?? [0, -1];
  MARKERS = t.error_markers;
  NAMES_ROOT = { id: -1, next: null };
  NAMES_FULL = false;
  NAMES_VERDICTS = [];
  setReads(t);
  G.setHost({ n: N, str, num, nums, time: timeArg, wall: wallArg, u64: u64Text });
}

// The wrappers generated from the `js` lines of bindings-js/src/surface.rs.
export { parseDuration, formatDuration, parseHttpDate, scopedKey, storageKey, mintKey, formatIdempotencyHeader, canonicalJSONText, _canonicalNumber } from './generated.js';
export { formatRfc3339, parseRfc3339 } from './generated.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- public since 0.1: JSON of the core's tables, read by key
export function hostTables(): Record<string, any> {
  return JSON.parse(JSON.stringify(INFO.tables));
}

export function coreVersion(): string {
  return INFO.version;
}

// ---------------------------------------------------------------- errors

const kBrand = Symbol.for('retrycore.error');

export class RetrycoreError extends Error {
  code: string;
  field: string;
  constructor(message: string, code: string, field = '', options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.field = field;
  }
}
Object.defineProperty(RetrycoreError.prototype, 'name', { value: 'RetrycoreError', writable: true, configurable: true });
Object.defineProperty(RetrycoreError.prototype, kBrand, { value: true });

export class RetryError extends RetrycoreError {
  reason: string;
  attempts: number;
  category: string | null;
  exhausted: boolean;
  budget: string | null;
  key: string;
  constructor(
    message: string,
    init: { reason: string; attempts: number; category: string | null; exhausted: boolean; budget?: string | null; key: string; cause?: unknown },
  ) {
    super(message, 'retry_exhausted', '', { cause: init.cause });
    this.reason = init.reason;
    this.attempts = init.attempts;
    this.category = init.category;
    this.exhausted = init.exhausted;
    this.budget = init.budget ?? null;
    this.key = init.key;
    if (!('cause' in this)) (this as { cause?: unknown }).cause = init.cause;
  }
}
Object.defineProperty(RetryError.prototype, 'name', { value: 'RetryError', writable: true, configurable: true });

export class CircuitOpenError extends RetrycoreError {
  retryAfter: number;
  state: string;
  constructor(message: string, retryAfter: number, state: string) {
    super(message, 'breaker_open');
    this.retryAfter = retryAfter;
    this.state = state;
  }
}
Object.defineProperty(CircuitOpenError.prototype, 'name', { value: 'CircuitOpenError', writable: true, configurable: true });

/**
 * The `CircuitOpenError` of a refused call, built without capturing a stack (`stack` is its first line only):
 * an open breaker refuses calls in bulk, and the capture costs more than the refusal (docs/js.md, "Errors").
 */
function refusal(message: string, retryAfter: number, state: string): CircuitOpenError {
  const E = Error as { stackTraceLimit?: unknown };
  const limit = E.stackTraceLimit;
  if (typeof limit !== 'number' || limit === 0) return new CircuitOpenError(message, retryAfter, state);
  try {
    E.stackTraceLimit = 0;
  } catch {
    // A frozen Error (a locked-down realm): the stack is captured.
    return new CircuitOpenError(message, retryAfter, state);
  }
  try {
    return new CircuitOpenError(message, retryAfter, state);
  } finally {
    E.stackTraceLimit = limit;
  }
}

export class BudgetExhaustedError extends RetryError {
  retryAfter: number | null;
  constructor(
    message: string,
    budget: string | null,
    reason: string,
    retryAfter: number | null = null,
    init: { code?: string; attempts?: number; category?: string | null; key?: string; cause?: unknown } = {},
  ) {
    super(message, { reason, attempts: init.attempts ?? 0, category: init.category ?? null, exhausted: true, budget, key: init.key ?? '', cause: init.cause });
    this.code = init.code ?? 'budget_exhausted';
    this.retryAfter = retryAfter;
  }
}
Object.defineProperty(BudgetExhaustedError.prototype, 'name', { value: 'BudgetExhaustedError', writable: true, configurable: true });

export class IdempotencyError extends RetrycoreError {}
Object.defineProperty(IdempotencyError.prototype, 'name', { value: 'IdempotencyError', writable: true, configurable: true });

export function isRetrycoreError(e: unknown): boolean {
  try {
    return e != null && typeof e === 'object' && (e as { [kBrand]?: unknown })[kBrand] === true;
  } catch {
    // A revoked or throwing proxy is not one of ours.
    return false;
  }
}

function brand<T extends Error>(e: T, code: string, field: string): T {
  Object.defineProperty(e, 'code', { value: code, enumerable: true, writable: true, configurable: true });
  Object.defineProperty(e, 'field', { value: field, enumerable: true, writable: true, configurable: true });
  Object.defineProperty(e, kBrand, { value: true });
  return e;
}

/** Builds the error for a core code; `kind` is decided by the core (see the binding's errors.rs). */
function makeError(kind: string, code: string, field: string, message: string): Error {
  switch (kind) {
    case 'type':
      return brand(new TypeError(message), code, field);
    case 'range':
      return brand(new RangeError(message), code, field);
    case 'idempotency':
      return new IdempotencyError(message, code, field);
    default:
      return new RetrycoreError(message, code, field);
  }
}

/** An error for a core code in the JS class the core gives it (`js_error_classes`, the same in every domain). */
function coreError(code: string, field: string, message: string): Error {
  return makeError((INFO.tables.js_error_classes as Record<string, string>)[code], code, field, field ? `${field}: ${message}` : message);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  try {
    if (Array.isArray(v)) return 'an array';
    if (typeof v === 'object') {
      const name: unknown = (v as { constructor?: { name?: unknown } }).constructor?.name;
      return typeof name === 'string' && name ? `a ${name}` : 'an object';
    }
  } catch {
    // A revoked proxy or a throwing `constructor` getter.
    return 'an unreadable object';
  }
  return `a ${typeof v}`;
}

/** The message of something thrown, without running more of the caller's code than a `message` read. */
function messageOf(e: unknown): string {
  try {
    const m = e instanceof Error ? e.message : typeof e === 'string' ? e : undefined;
    return typeof m === 'string' ? m.slice(0, 200) : describe(e);
  } catch {
    return 'an unreadable value';
  }
}

/** Runs `f` over caller values: what their proxies or getters throw becomes `invalid_type` on `field` (the original as `cause`). */
function reading<T>(field: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw unreadable(field, e);
  }
}

/** What `reading` throws for `e`: ours as is, else `invalid_type` on `field` with `e` as its cause. */
function unreadable(field: string, e: unknown): unknown {
  if (isRetrycoreError(e)) return e;
  // The text is the core's (`surface::unreadable`: the type's name and the message, cut), as Python's.
  let type = '';
  let text = '';
  try {
    // At most 1024 code units cross (a bound on the copy; the core cuts to 200 characters).
    if (e instanceof Error) [type, text] = [String(e.name).slice(0, 1024), String(e.message).slice(0, 1024)];
    else if (typeof e === 'string') text = e.slice(0, 1024);
    else type = describe(e);
  } catch {
    // An unreadable name or message: what was read is kept.
  }
  const err = coreError('invalid_type', field, N.unreadable(type, text));
  Object.defineProperty(err, 'cause', { value: e, writable: true, configurable: true });
  return err;
}

/** `instanceof` that answers false for a proxy whose `getPrototypeOf` throws or is revoked. */
function isA(v: unknown, C: abstract new (...args: never[]) => unknown): boolean {
  try {
    return v instanceof C;
  } catch {
    return false;
  }
}

/** `Array.isArray` that answers false for a revoked proxy instead of throwing. */
function isArray(v: unknown): v is unknown[] {
  try {
    return Array.isArray(v);
  } catch {
    return false;
  }
}

/** Refuses a list longer than the core's `maxItems` before anything walks it (a sparse array of length 2^32 − 1). */
function checkLength(len: number, field: string): void {
  if (len > LIMITS.max_items) throw coreError('too_large', field, `at most ${LIMITS.max_items} items, got ${len}`);
}

/** A dense copy of an array argument (holes: `undefined`), its length checked against the core's `maxItems` first. */
function items(v: unknown, field: string, what: string): unknown[] {
  if (!isArray(v)) throw coreError('invalid_type', field, `must be an array of ${what}, got ${describe(v)}`);
  return reading(field, () => {
    const len = v.length;
    checkLength(len, field);
    const out = new Array(len);
    for (let i = 0; i < len; i++) out[i] = v[i];
    return out;
  });
}

/** Lone surrogates have no UTF-8 form: refused, never turned into U+FFFD on the way to the core. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function isWellFormed(s: string): boolean {
  const f = (s as { isWellFormed?: () => boolean }).isWellFormed;
  return typeof f === 'function' ? f.call(s) : !LONE_SURROGATE.test(s);
}

function wellFormed(s: string, field: string): string {
  if (!isWellFormed(s)) throw coreError('invalid_string', field, 'contains a lone surrogate, which has no UTF-8 form');
  return s;
}

// ---------------------------------------------------------------- argument checks

function num(v: unknown, field: string): number {
  if (typeof v !== 'number') throw coreError('invalid_type', field, `must be a number, got ${describe(v)}`);
  return v;
}

function optNum(v: unknown, field: string): number | undefined {
  return v === undefined || v === null ? undefined : num(v, field);
}

function str(v: unknown, field: string): string {
  if (typeof v !== 'string') throw coreError('invalid_type', field, `must be a string, got ${describe(v)}`);
  return wellFormed(v, field);
}

function optStr(v: unknown, field: string): string | undefined {
  return v === undefined || v === null ? undefined : str(v, field);
}

function optBool(v: unknown, field: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw coreError('invalid_type', field, `must be a boolean, got ${describe(v)}`);
  return v;
}

/** A monotonic `now` (ms ≥ 0), or -1 when omitted: the backend reads `performance.now()`'s clock, cheaper than JS. */
function timeArg(v: unknown): number {
  if (v === undefined) return -1;
  if (typeof v === 'number' && v >= 0) return v;
  if (typeof v !== 'number') throw coreError('invalid_type', 'now', `must be a number of milliseconds, got ${describe(v)}`);
  throw coreError('out_of_range', 'now', `must be a non-negative number of milliseconds, got ${v}`);
}

function wallArg(v: unknown, field = 'wallNowMs'): number {
  if (v === undefined || v === null) return Date.now();
  return num(v, field);
}

function u64Text(v: unknown, field: string): string {
  if (typeof v === 'bigint') {
    if (v < 0n || v >= 1n << 64n) throw coreError('out_of_range', field, 'must be in [0, 2^64)');
    return v.toString();
  }
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0) throw coreError('out_of_range', field, `must be a non-negative safe integer (use a BigInt or a string past 2^53), got ${v}`);
    return String(v);
  }
  if (typeof v === 'string' && /^[0-9]{1,20}$/.test(v)) return v;
  throw coreError('invalid_type', field, `must be a BigInt, a safe integer or a decimal string, got ${describe(v)}`);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  try {
    const p = Object.getPrototypeOf(v);
    return p === Object.prototype || p === null;
  } catch {
    return false;
  }
}

function checkKeys(o: Record<string, unknown>, allowed: readonly string[], what: string): void {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) throw coreError('unknown_key', k, `is not an option of ${what} (options: ${allowed.join(', ')})`);
  }
}

/** A plain copy of an option bag (undefined, null: none): each own key read once, so getters run here only. */
function optionsObject(v: unknown, what: string): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (!isPlainObject(v)) throw coreError('invalid_type', '', `${what} options must be a plain object, got ${describe(v)}`);
  return reading('', () => {
    const keys = Object.keys(v);
    checkLength(keys.length, '');
    const out: Record<string, unknown> = {};
    for (const k of keys) out[k] = v[k];
    return out;
  });
}

/** Reads one option: its value (`undefined` when absent) and its field. */
type Reader = (v: unknown, field: string) => unknown;

/** The option specs of a public options type: a reader for each of its keys, and nothing else. */
type Spec<T> = Record<keyof T, Reader>;

/** A key list the compiler holds to `T`'s keys: each of them, and only them. */
const keysOf =
  <T>() =>
  <const K extends readonly (keyof T)[]>(keys: K & ([keyof T] extends [K[number]] ? unknown : never)): K =>
    keys;

/** Reads an option bag with `spec`'s readers in order; another key is `unknown_key` (naming `owner`). */
function readOptions<S extends Record<string, Reader>>(v: unknown, what: string, owner: string, spec: S): { [K in keyof S]: ReturnType<S[K]> } {
  const o = optionsObject(v, what);
  const keys = Object.keys(spec);
  checkKeys(o, keys, owner);
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = spec[k](o[k], k);
  return out as { [K in keyof S]: ReturnType<S[K]> };
}

// An item's field (`names[1]`) is written only when the item is refused.
function nums(v: unknown, field: string): number[] {
  const xs = items(v, field, 'numbers');
  for (let i = 0; i < xs.length; i++) if (typeof xs[i] !== 'number') num(xs[i], `${field}[${i}]`);
  return xs as number[];
}

/** `errorNames`' own list (strings only), each checked to have a UTF-8 form as `strs` checks it. */
function wellFormedNames(xs: string[]): string[] {
  for (let i = 0; i < xs.length; i++) if (!isWellFormed(xs[i])) str(xs[i], `errorNames[${i}]`);
  return xs;
}

/** A list of strings, each checked; `what` names the items in the error. */
function strs(v: unknown, field: string, what = 'strings'): string[] {
  const xs = items(v, field, what);
  for (let i = 0; i < xs.length; i++) if (typeof xs[i] !== 'string' || !isWellFormed(xs[i] as string)) str(xs[i], `${field}[${i}]`);
  return xs as string[];
}

/** A reader of an optional list (absent: `undefined`; `null` is refused by `items`). */
const optList =
  <T>(f: (v: unknown, field: string) => T) =>
  (v: unknown, field: string): T | undefined =>
    v === undefined ? undefined : f(v, field);

/** An optional 64-bit integer (`seed`) as decimal text. */
function optU64(v: unknown, field: string): string | undefined {
  return v === undefined || v === null ? undefined : u64Text(v, field);
}

// ---------------------------------------------------------------- JSON values

const camelToSnake = (k: string): string => k.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
const snakeToCamel = (k: string): string => k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** Converts a field path written with document keys to the JS option names. */
function camelPath(field: string): string {
  return field.replace(/[a-z0-9_]+/gi, (s) => snakeToCamel(s));
}

/**
 * Copies a value that is plain JSON (plain objects, arrays, strings, finite
 * numbers, booleans, null), at most `maxJsonDepth` deep and acyclic, and
 * optionally rewrites camelCase keys to snake_case (typed options). Fields
 * are dotted paths, or JSON pointers in `pointer` mode (canonical JSON,
 * fingerprints), where a non-finite number is `invalid_number`.
 */
function jsonValue(value: unknown, mode: JsonMode, at: Array<string | number>, ancestors: Set<object>, nonFiniteCode: string): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw coreError(nonFiniteCode, pathText(at, mode), `number ${value} is not finite`);
      // A seed is a decimal string in documents; typed options also take a safe integer.
      if (mode === 'options' && /(^|\.)seed$/.test(pathText(at, mode))) return u64Text(value, pathText(at, mode));
      return value;
    case 'bigint':
      if (mode === 'options' && /(^|\.)seed$/.test(pathText(at, mode))) return u64Text(value, pathText(at, mode));
      throw coreError('invalid_type', pathText(at, mode), 'a BigInt is not JSON');
    case 'object':
      break;
    default:
      throw coreError('invalid_type', pathText(at, mode), `${describe(value)} is not JSON`);
  }
  // null stays null: the core's typed readers refuse it in options (`invalid_type`), as in Python.
  if (value === null) return null;
  const here = () => (mode === 'pointer' && at.length === 0 ? '/' : pathText(at, mode));
  if (at.length >= LIMITS.max_depth) throw coreError('too_deep', here(), `nesting deeper than ${LIMITS.max_depth}`);
  if (ancestors.has(value)) throw coreError('invalid_type', here(), 'a cyclic structure is not JSON');
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      const len = value.length;
      // Its path is written only when refused (not for every object and array of a fingerprinted body).
      if (len > LIMITS.max_items) checkLength(len, here());
      const out: unknown[] = new Array(len);
      for (let i = 0; i < len; i++) {
        at.push(i);
        out[i] = jsonValue(value[i], mode, at, ancestors, nonFiniteCode);
        at.pop();
      }
      return out;
    }
    if (!isPlainObject(value)) throw coreError('invalid_type', here(), `${describe(value)} is not a plain object`);
    const out: Record<string, unknown> = {};
    const keys = Object.keys(value);
    // Its path is written only when refused (not for every object and array of a fingerprinted body).
    if (keys.length > LIMITS.max_items) checkLength(keys.length, here());
    for (const k of keys) {
      let key = k;
      at.push(k);
      if (mode === 'options') {
        if (k.includes('_')) throw coreError('unknown_key', pathText(at, mode), 'options are camelCase (the document key in camelCase)');
        key = camelToSnake(k);
      }
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined || mode !== 'options') out[key] = jsonValue(v, mode, at, ancestors, nonFiniteCode);
      at.pop();
    }
    return out;
  } finally {
    ancestors.delete(value);
  }
}

type JsonMode = 'json' | 'options' | 'pointer';

/** The field of the value at `at` (keys and indices from the root): a dotted path, or a JSON pointer in `pointer` mode. Written only for an error. */
function pathText(at: Array<string | number>, mode: JsonMode): string {
  let out = '';
  for (const s of at) {
    if (mode === 'pointer') out += `/${typeof s === 'number' ? s : s.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    else out += typeof s === 'number' ? `[${s}]` : out ? `.${s}` : s;
  }
  return out;
}
function jsonOf(value: unknown, mode: JsonMode, nonFiniteCode: string): string {
  return JSON.stringify(reading('', () => jsonValue(value, mode, [], new Set(), nonFiniteCode)));
}

function documentText(doc: unknown, what: string): string {
  if (typeof doc === 'string') return wellFormed(doc, '');
  if (doc === null || typeof doc !== 'object') throw coreError('invalid_type', '', `${what} must be JSON text or an object, got ${describe(doc)}`);
  return jsonOf(doc, 'json', 'out_of_range');
}

/** Converts typed options (camelCase, durations in ms) to the document text the backend reads. */
function optionsText(o: Record<string, unknown>): string {
  return jsonOf(o, 'options', 'out_of_range');
}

/** Runs a native call whose config errors name document fields, renaming them to JS option names. */
function withCamelFields<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    const e = err as Error & { field?: unknown };
    if (isRetrycoreError(e) && typeof e.field === 'string' && e.field) {
      const f2 = camelPath(e.field);
      if (f2 !== e.field) {
        e.message = e.message.replace(e.field, f2);
        e.field = f2;
      }
    }
    throw e;
  }
}

// ---------------------------------------------------------------- seeing a JS error (docs/classification-rules.md)

const FAILURE_KEYS = keysOf<Failure>()(['status', 'grpcCode', 'errorNames', 'method', 'idempotent', 'idempotencyKeySent', 'headers', 'elapsed', 'wallNowMs', 'message', 'retryable', 'shouldRetry', 'verdict']);

/** A value `fn` returned that is awaited (a promise, or any thenable). */
function isThenable<T>(r: T | PromiseLike<T>): r is PromiseLike<T> {
  return r != null && typeof (r as { then?: unknown }).then === 'function';
}

/** What {@link isResponse} recognises: a fetch `Response` or one that looks like it. */
interface ResponseLike {
  status: number;
  ok: boolean;
  headers: { get(name: string): string | null };
}

function isResponse(v: unknown): v is ResponseLike {
  return readResponse(v) !== null;
}

/** An error's fields as the walks below read them (any may be a hostile getter). */
type ErrorFields = { [key: string]: unknown; constructor?: { name?: unknown } };

function isDomException(e: ErrorFields | null | undefined): boolean {
  return (typeof DOMException !== 'undefined' && e instanceof DOMException) || e?.constructor?.name === 'DOMException';
}

function causeHoldsNetworkCode(e: ErrorFields | null | undefined): boolean {
  const seen = new Set<unknown>();
  let c = e?.cause;
  for (let i = 0; c != null && typeof c === 'object' && i < LIMITS.max_chain && !seen.has(c); i++) {
    seen.add(c);
    const code = (c as ErrorFields).code;
    if (typeof code === 'string' && NETWORK_CODE.test(code)) return true;
    c = (c as ErrorFields).cause;
  }
  return false;
}

/**
 * The constructor names of a prototype chain, from `p` up to (not including) `Object.prototype`, read once
 * per prototype (as Python reads them once per class): the failure path reads them for every error.
 */
const PROTO_NAMES = new WeakMap<object, unknown[]>();

function protoNames(p: object | null, w: NameWalk): void {
  if (p === null) return;
  const known = PROTO_NAMES.get(p);
  if (known !== undefined) {
    for (let i = 0; i < known.length; i++) pushName(w, known[i]);
    return;
  }
  const names: unknown[] = [];
  try {
    let q: object | null = p;
    for (let i = 0; q != null && q !== Object.prototype && i < 32; i++) {
      const d = Object.getOwnPropertyDescriptor(q, 'constructor');
      if (d && typeof d.value === 'function') names.push(d.value.name);
      q = Object.getPrototypeOf(q);
    }
  } catch (e) {
    // A hostile chain (a proxy, a throwing `name`): what was read counts, nothing is kept.
    for (const n of names) pushName(w, n);
    throw e;
  }
  PROTO_NAMES.set(p, names);
  for (let i = 0; i < names.length; i++) pushName(w, names[i]);
}

/** One walk of `errorNames`: the names so far, where the current error's start, and the markers it adds last. */
interface NameWalk {
  out: string[];
  mine: number;
  fetchNetwork: boolean;
  connecting: string | undefined;
}

export function errorNames(err: unknown): string[] {
  // One object per walk, no closures: the failure path walks every error.
  const w: NameWalk = { out: [], mine: 0, fetchNetwork: false, connecting: undefined };
  // The errors walked (a chain is short: at most max_chain).
  const seen: unknown[] = [];
  let e: unknown = err;
  for (let depth = 0; e != null && depth < LIMITS.max_chain; depth++) {
    if (typeof e !== 'object' && typeof e !== 'function') {
      break;
    }
    if (seen.includes(e)) break;
    seen.push(e);
    w.mine = w.out.length;
    try {
      walkOne(w, e as ErrorFields);
    } catch {
      // A hostile getter or proxy: keep what was read.
    }
    try {
      e = (e as ErrorFields).cause;
    } catch {
      break;
    }
  }
  if (w.fetchNetwork) w.out.push(MARKERS.fetch_network);
  if (w.connecting !== undefined) w.out.push(w.connecting);
  return w.out;
}

/** Adds a name, once per error (a subclass without its own `name` says `Error` twice). */
function pushName(w: NameWalk, s: unknown): void {
  const out = w.out;
  if (typeof s === 'string' && s.length > 0 && s.length <= LIMITS.max_name_bytes && out.length < LIMITS.max_error_names && out.indexOf(s, w.mine) < 0) {
    out.push(s);
  }
}

function walkOne(w: NameWalk, e: ErrorFields): void {
  if (e instanceof RetryError) {
    // Only an exhausted give-up is marked (docs/sessions.md); a RetryError for a
    // failure nothing would retry is transparent: its cause decides.
    if (e.exhausted) pushName(w, MARKERS.retry_exhausted);
  } else if (e instanceof CircuitOpenError) {
    pushName(w, MARKERS.breaker_open);
  } else if (isDomException(e)) {
    pushName(w, `${MARKERS.dom_exception_prefix}${e.name}`);
  } else if (e instanceof TypeError && (FETCH_MESSAGES.has(e.message) || causeHoldsNetworkCode(e))) {
    w.fetchNetwork = true;
  } else {
    pushName(w, e.code);
    pushName(w, e.name);
    w.connecting ??= connectingName(e);
    protoNames(Object.getPrototypeOf(e), w);
  }
}

/** A header name or value as text: a well-formed string, or a number, boolean or BigInt written out. */
function headerText(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return wellFormed(v, 'headers');
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(v);
    default:
      throw coreError('invalid_type', 'headers', `a header name or value must be a string or a number, got ${describe(v)}`);
  }
}

/** Flattens headers to `[name, value, …]`, at most the core's `maxHeaders`; a value may be one flat list of values. */
function headerPairs(h: unknown): string[] {
  const out: string[] = [];
  if (h == null) return out;
  const max = LIMITS.max_headers * 2;
  const add = (k: unknown, v: unknown) => {
    if (out.length >= max || v === undefined || v === null) return;
    const name = headerText(k);
    if (isArray(v)) {
      for (const x of items(v, 'headers', 'header values')) {
        if (out.length >= max) return;
        if (x === undefined || x === null) continue;
        if (isArray(x)) throw coreError('invalid_type', 'headers', 'a header value list must not be nested');
        out.push(name, headerText(x));
      }
      return;
    }
    out.push(name, headerText(v));
  };
  reading('headers', () => {
    if (isArray(h)) {
      for (const p of items(h, 'headers', '[name, value] pairs')) {
        if (out.length >= max) break;
        if (!isArray(p) || p.length !== 2) throw coreError('invalid_type', 'headers', 'must be [name, value] pairs, a Headers or an object');
        add(p[0], p[1]);
      }
    } else if (typeof h === 'object' && typeof (h as Headers).forEach === 'function' && typeof (h as Headers).get === 'function') {
      (h as Headers).forEach((v: string, k: string) => add(k, v));
    } else if (typeof h === 'object') {
      const keys = Object.keys(h);
      checkLength(keys.length, 'headers');
      for (const k of keys) {
        if (out.length >= max) break;
        add(k, (h as Record<string, unknown>)[k]);
      }
    } else {
      throw coreError('invalid_type', 'headers', `must be [name, value] pairs, a Headers or an object, got ${describe(h)}`);
    }
  });
  return out;
}

export function describeFailure(x: unknown): Failure {
  return describeWith(x, false, true, null);
}

/**
 * `describeFailure`; a `thrown` plain object with other than `Failure` keys (`{code: 'ECONNRESET'}`) is
 * read like an error, whose `message` is read only for a policy with a message rule.
 */
function describeWith(x: unknown, thrown: boolean, message: boolean, read: FailureRead | null): Failure {
  if (typeof x === 'number') return { status: x };
  // The value is read as a response once: the caller takes the read (its method) from `read`.
  const r = readResponse(x);
  if (read !== null) read.response = r;
  if (r !== null) {
    return { status: r.status, headers: pairsOf(headerPairs(r.headers)) };
  }
  if (isPlainObject(x) && !safeHas(x, 'name', 'message')) {
    const o = optionsObject(x, 'a failure');
    if (!thrown || Object.keys(o).every((k) => (FAILURE_KEYS as readonly string[]).includes(k))) {
      checkKeys(o, FAILURE_KEYS, 'a failure');
      return o as Failure;
    }
  }
  const f: Failure = { errorNames: errorNames(x) };
  if (read !== null) read.ownNames = true;
  if (x != null && typeof x === 'object') {
    const e = x as ErrorFields;
    try {
      const resp = e.response as ErrorFields | null | undefined;
      // All four read first (in this order), then the first that is a status.
      const s1 = e.status;
      const s2 = e.statusCode;
      const s3 = resp?.status;
      const s4 = resp?.statusCode;
      const status = isStatus(s1) ? s1 : isStatus(s2) ? s2 : isStatus(s3) ? s3 : isStatus(s4) ? s4 : undefined;
      if (status !== undefined) f.status = status;
      // `x` was read as no response above, so only `response.headers` can hold them.
      const h = resp?.headers;
      if (h != null) f.headers = pairsOf(headerPairs(h));
      if (typeof e.code === 'number' && Number.isInteger(e.code) && e.code >= 0 && e.code <= 16 && ('details' in e || 'metadata' in e)) {
        f.grpcCode = e.code;
      }
      const r = e.$retryable;
      if (r != null && typeof r === 'object') f.retryable = { throttling: (r as ErrorFields).throttling === true };
      // A message with a lone surrogate (no UTF-8 form) is not sent: the rest of the error still is.
      if (message && typeof e.message === 'string' && !LONE_SURROGATE.test(e.message)) f.message = e.message;
    } catch {
      // A hostile getter: classify by names alone.
    }
  }
  return f;
}

/** A number a thrown error's status field may hold: an integer in the core's `seen_status` range. */
function isStatus(s: unknown): s is number {
  return Number.isInteger(s) && (s as number) >= SEEN_STATUS[0] && (s as number) <= SEEN_STATUS[1];
}

function safeHas(o: object, a: string, b: string): boolean {
  try {
    return a in o && b in o;
  } catch {
    return true;
  }
}

function pairsOf(flat: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
  return out;
}

/** Positional arguments for the backend: status, grpc, names, method, idempotent, keySent, headers, elapsed, wallNow. */
function failureArgs(x: unknown, opts?: FailureContext, thrown = false, message = false): G.FailureArgs {
  try {
    return failureArgsOf(x, opts, thrown, message);
  } catch (e) {
    throw unreadable('failure', e);
  }
}

/** Smithy's `@retryable` trait as the backend takes it: absent, or its `throttling` flag. */
function retryableArg(r: unknown): boolean | undefined {
  if (r === undefined || r === null || r === false) return undefined;
  if (r === true) return false;
  if (!isPlainObject(r)) throw coreError('invalid_type', 'retryable', `must be true, false or {throttling}, got ${describe(r)}`);
  const o = r as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (k !== 'throttling') throw coreError('unknown_key', `retryable.${k}`, 'is not a field of the retryable trait (fields: throttling)');
  }
  return optBool(o.throttling, 'retryable.throttling') === true;
}

/** What `describeWith` learnt on the way: the value's read as a response, and whether the names are `errorNames`' own list. */
interface FailureRead {
  response: ResponseRead | null;
  ownNames: boolean;
}

function failureArgsOf(x: unknown, opts: FailureContext | undefined, thrown: boolean, message: boolean): G.FailureArgs {
  const read: FailureRead = { response: null, ownNames: false };
  const f = describeWith(x, thrown, message, read);
  const status = optNum(f.status, 'status');
  const grpc = f.grpcCode === undefined || f.grpcCode === null ? undefined : String(typeof f.grpcCode === 'number' ? num(f.grpcCode, 'grpcCode') : str(f.grpcCode, 'grpcCode'));
  // errorNames' own list is a fresh array of strings: only its text is checked (a caller's list is copied first).
  // A list the backend interned crosses as its id; one seen before was checked when it was interned.
  let names: string[] | undefined;
  let namesId: number | undefined;
  if (f.errorNames !== undefined) {
    const known = read.ownNames ? knownNamesId(f.errorNames) : -1;
    if (known >= 0) {
      namesId = known;
    } else {
      names = read.ownNames ? wellFormedNames(f.errorNames) : strs(f.errorNames, 'errorNames');
      const id = internNames(names);
      if (id >= 0) {
        namesId = id;
        names = undefined;
      }
    }
  }
  const method = optStr(f.method ?? opts?.method ?? (read.response !== null ? read.response.method : errorMethod(x)), 'method');
  const idempotent = optBool(f.idempotent ?? opts?.idempotent, 'idempotent');
  const keySent = optBool(f.idempotencyKeySent ?? opts?.idempotencyKeySent, 'idempotencyKeySent');
  const headers = f.headers === undefined ? undefined : headerPairs(f.headers);
  const elapsed = optNum(f.elapsed, 'elapsed');
  // wallNowMs: null means "no wall clock" (HTTP-dates stay unresolved); absent means Date.now().
  const w = f.wallNowMs !== undefined ? f.wallNowMs : opts?.wallNowMs;
  const wall = w === null ? undefined : (optNum(w, 'wallNowMs') ?? (headers && headers.length ? Date.now() : undefined));
  // The message crosses only when a rule reads it (RetryPolicy::needs_message),
  // cut to the core's limit in UTF-16 units first (never fewer than its bytes;
  // the core then cuts at the byte limit).
  const m = message ? optStr(f.message, 'message') : undefined;
  if (!message && f.message != null && typeof f.message !== 'string') throw coreError('invalid_type', 'message', `must be a string, got ${describe(f.message)}`);
  const msg = m !== undefined && m.length > LIMITS.max_message_bytes ? m.slice(0, LIMITS.max_message_bytes) : m;
  const retryable = retryableArg(f.retryable !== undefined ? f.retryable : opts?.retryable);
  const shouldRetry = optBool(f.shouldRetry ?? opts?.shouldRetry, 'shouldRetry');
  const verdict = verdictArg(f.verdict !== undefined ? f.verdict : opts?.verdict);
  return { status, grpc, names, method, idempotent, keySent, headers, elapsedMs: elapsed, wallNowMs: wall, message: msg, retryableThrottling: retryable, shouldRetry, verdict, namesId };
}

/** A node of the name lists the backend interned: the id of the list that ends here (-1: none), and the longer ones. */
interface NameNode {
  id: number;
  next: Map<string, NameNode> | null;
}

// The lists interned so far (bindings-js/src/names.rs): each list is its names in order, so an id stands
// for exactly one list. Bounded by the backend's table: once it is full (-1), lists not seen before cross as
// strings; a list too long to intern (-2) crosses as strings too.
let NAMES_ROOT: NameNode = { id: -1, next: null };
let NAMES_FULL = false;

/** The id the backend interned `names` as, or -1. */
function knownNamesId(names: readonly string[]): number {
  let node: NameNode | undefined = NAMES_ROOT;
  for (let i = 0; i < names.length; i++) {
    const next: Map<string, NameNode> | null = node.next;
    if (next === null) return -1;
    node = next.get(names[i]);
    if (node === undefined) return -1;
  }
  return node.id;
}

/** The id of a list of checked names, interned the first time it is seen; -1 when it crosses as strings. */
function internNames(names: string[]): number {
  const known = knownNamesId(names);
  if (known >= 0 || NAMES_FULL) return known;
  const id = N.internNames(names);
  if (id < 0) {
    if (id === -1) NAMES_FULL = true;
    return -1;
  }
  let node = NAMES_ROOT;
  for (let i = 0; i < names.length; i++) {
    const next = (node.next ??= new Map());
    let child = next.get(names[i]);
    if (child === undefined) {
      child = { id: -1, next: null };
      next.set(names[i], child);
    }
    node = child;
  }
  node.id = id;
  return id;
}

/**
 * A host predicate's answer as the backend takes it (the core's `HostVerdict`: docs/classification-rules.md,
 * "Host predicates"): absent for null or undefined (no opinion); a boolean as `HostVerdict::of_bool` writes it
 * (`true`: always, `false`: never); a string as given (a retry rule, a category or `category:rule`, read by the core).
 */
function verdictArg(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'boolean') return v ? 'always' : 'never';
  if (typeof v !== 'string') throw coreError('invalid_type', 'verdict', `must be a boolean, a string or null, got ${describe(v)}`);
  return v;
}

/** The arguments of what `fn` threw, never refused: read as a failure when it can be, else by its names alone. */
function thrownArgs(x: unknown, opts?: FailureContext, message = false): G.FailureArgs {
  try {
    return failureArgs(x, opts, true, message);
  } catch {
    return namesOnlyArgs(x, opts);
  }
}

function namesOnlyArgs(x: unknown, opts?: FailureContext): G.FailureArgs {
  return { names: errorNames(x), method: opts?.method, idempotent: opts?.idempotent, keySent: opts?.idempotencyKeySent, verdict: verdictArg(opts?.verdict) };
}

/** A returned value that `retryIfResult` made a failure (not a response): what the core sees of it is the predicate's verdict. */
function valueArgs(opts: FailureContext): G.FailureArgs {
  return { method: opts.method, idempotent: opts.idempotent, keySent: opts.idempotencyKeySent, verdict: verdictArg(opts.verdict), wallNowMs: opts.wallNowMs ?? undefined };
}

/** An optional function option (`retryIfResult`, `before`, …). */
function optFn<F>(v: unknown, field: string): F | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'function') throw coreError('invalid_type', field, `must be a function, got ${describe(v)}`);
  return v as F;
}

/** Awaits a value only when it is a thenable (a predicate or a fallback may be async). */
async function settled(v: unknown): Promise<unknown> {
  return isThenable(v) ? await v : v;
}

/** The environment's way to report an error nobody awaits: `process.emitWarning` (Node), else `reportError` (browsers, workers). */
function reportHookError(e: unknown): void {
  const g = globalThis as { process?: { emitWarning?: (w: Error) => void }; reportError?: (e: unknown) => void; console?: { error?: (...a: unknown[]) => void } };
  try {
    const emitWarning = g.process?.emitWarning;
    const error = g.console?.error;
    if (typeof emitWarning === 'function') {
      const w = new Error(`a retrycore hook threw (the call went on): ${messageOf(e)}`);
      w.name = 'RetrycoreHookWarning';
      Object.defineProperty(w, 'cause', { value: e, writable: true, configurable: true });
      emitWarning.call(g.process, w);
    } else if (typeof g.reportError === 'function') {
      g.reportError(e);
    } else if (typeof error === 'function') {
      error.call(g.console, 'a retrycore hook threw (the call went on):', e);
    }
  } catch {
    // Reporting must not break the call either.
  }
}

/** Calls a hook once its state is updated: what it throws is reported, never met by the caller (docs/js.md, "Hooks"). */
function callHook<A>(h: (arg: A) => void, self: unknown, arg: A): void {
  try {
    h.call(self, arg);
  } catch (e) {
    reportHookError(e);
  }
}

// ---------------------------------------------------------------- classification

/** Unpacks `bindings-js/src/verdict.rs`'s `pack_all`, with the core's category width (one frozen object per packing). */
function unpackVerdict(p: number): Verdict {
  const B = CATEGORY_BITS;
  const delayed = 1 << (B + 8);
  if ((p & delayed) !== 0) return Object.freeze({ ...unpackVerdict(p & ~delayed), serverDelay: N.serverDelay() });
  let v = VERDICTS[p];
  if (v === undefined) {
    v = Object.freeze({
      category: CORE_CATEGORIES[p & ((1 << B) - 1)],
      retry: INFO.retryRules[(p >> B) & 3],
      safe: ((p >> (B + 2)) & 1) !== 0,
      retryable: ((p >> (B + 3)) & 1) !== 0,
      serverDeclined: ((p >> (B + 4)) & 1) !== 0,
      serverDelay: null,
      shouldRetry: [null, false, true][(p >> (B + 5)) & 3] ?? null,
      refused: ((p >> (B + 7)) & 1) !== 0,
    });
    VERDICTS[p] = v;
  }
  return v;
}

function statusFlags(opts: FailureContext | undefined): number {
  if (opts === undefined) return 0;
  return (opts.idempotent === true ? 1 : opts.idempotent === false ? 2 : 0) | (opts.idempotencyKeySent === true ? 4 : 0);
}

const CONTEXT_KEYS = keysOf<FailureContext>()(['method', 'idempotent', 'idempotencyKeySent', 'wallNowMs', 'retryable', 'shouldRetry', 'verdict']);

/**
 * Whether the backend's arguments hold nothing but an interned list's id: the core's answer for them then
 * depends on the list alone (and on the object asked, whose settings do not change), so it may be kept by id.
 */
function namesOnly(a: G.FailureArgs): a is G.FailureArgs & { namesId: number } {
  return namesAndCallOnly(a) && a.method === undefined && a.idempotent === undefined && a.keySent === undefined && a.verdict === undefined;
}

/** Whether the backend's arguments hold an interned list's id and, besides, at most the call's method, flags and verdict (`failNames`' inputs). */
function namesAndCallOnly(a: G.FailureArgs): a is G.FailureArgs & { namesId: number } {
  return (
    a.namesId !== undefined && a.names === undefined && a.status === undefined && a.grpc === undefined && a.headers === undefined && a.elapsedMs === undefined &&
    a.wallNowMs === undefined && a.message === undefined && a.retryableThrottling === undefined && a.shouldRetry === undefined
  );
}

/** The packed verdicts of the built-in tables for failures that are names alone, by list id (reset with the backend). */
let NAMES_VERDICTS: number[] = [];

function classifyWith(target: Pick<Backend, 'classifyStatus' | 'classify'>, x: unknown, options: FailureContext | undefined, message: boolean, byNames: number[]): Verdict {
  const opts = options === undefined || options === null ? undefined : (optionsObject(options, 'classify') as FailureContext);
  if (typeof x === 'number' && (opts === undefined || (opts.method === undefined && opts.retryable === undefined && opts.shouldRetry === undefined && opts.verdict == null))) {
    return unpackVerdict(target.classifyStatus(x, statusFlags(opts)));
  }
  if (opts !== undefined) checkKeys(opts as Record<string, unknown>, CONTEXT_KEYS, 'classify');
  const a = failureArgs(typeof x === 'number' ? { status: x } : x, opts, false, message);
  if (!namesOnly(a)) return unpackVerdict(G.classify(target, a));
  const known = byNames[a.namesId];
  if (known !== undefined) return unpackVerdict(known);
  const p = G.classify(target, a);
  // A verdict with a server delay is not kept (there is none without headers or a gRPC code; the delay is read with it).
  if ((p & (1 << (CATEGORY_BITS + 8))) === 0) byNames[a.namesId] = p;
  return unpackVerdict(p);
}

export function classify(failure: number | unknown, options?: FailureContext): Verdict {
  if (typeof failure === 'number' && options === undefined) return unpackVerdict(N.classifyStatus(failure, 0));
  return classifyWith(N, failure, options, false, NAMES_VERDICTS);
}

export function readServerAdvice(headers: HeadersLike, wallNowMs?: number | null): ServerAdvice {
  return N.serverAdvice(headerPairs(headers), wallNowMs === null ? undefined : wallArg(wallNowMs));
}

export function lint(policy: RetryPolicy | object | string, service?: object | string): Finding[] {
  const text = isA(policy, RetryPolicy) ? (policy as RetryPolicy).toJSONText() : documentText(policy, 'policy');
  const s = service === undefined ? undefined : documentText(service, 'service');
  return N.lint(text, s);
}

export function alerts(before: CounterSnapshot | string, after: CounterSnapshot | string, intervalMs: number, thresholds?: AlertThresholds | string): AlertEvaluation {
  const b = documentText(before, 'before');
  const a = documentText(after, 'after');
  const t = thresholds === undefined || thresholds === null ? undefined : documentText(thresholds, 'thresholds');
  return N.alerts(b, a, num(intervalMs, 'intervalMs'), t);
}

export function metricSamples(document: object | string): MetricSample[] {
  return N.metricSamples(documentText(document, 'document'));
}

export class Rng {
  #g: BackendRng;
  constructor(seed: bigint | number | string) {
    this.#g = new N.NativeRng(u64Text(seed, 'seed'));
  }
  nextU64(): bigint {
    return BigInt(this.#g.nextU64());
  }
  nextFloat(): number {
    return this.#g.nextF64();
  }
}

// ---------------------------------------------------------------- circuit breaker

export const Outcome = Object.freeze({ success: 0 as const, failure: 1 as const, ignored: 2 as const });

function outcomeId(o: unknown): number {
  if (o === 0 || o === 1 || o === 2) return o;
  // The names are the core's (`breaker_outcomes`, `Counted::ALL`), their index the number.
  const i = typeof o === 'string' ? OUTCOMES.indexOf(o) : -1;
  if (i >= 0) return i;
  throw coreError('invalid_value', 'outcome', `must be ${OUTCOMES.join(', ')}, got ${typeof o === 'string' ? JSON.stringify(o) : describe(o)}`);
}

export class CircuitBreaker extends G.BreakerMembers {
  #n: BackendBreaker;
  /** `execute`'s hot calls: napi's functions bound to the native breaker (no `this` to unwrap per call; issue 17), else the breaker. */
  #h: Pick<BackendBreaker, 'tryAcquire' | 'record' | 'succeed' | 'fail' | 'release'> | null = null;
  #uses = 0;
  #hook: ((t: Transition) => void) | null = null;
  /** Whether a counting rule matches messages: read once, so that only then does an error's message cross. */
  #needsMessage: boolean;
  /**
   * What `execute`'s next call may skip, as the core last answered (`succeed`): -1 nothing; else the
   * permit it is admitted with without asking, plus 1 when a success up to `#freeMs` need not be
   * reported either. It holds until anything else reaches the backend (`#sync`).
   */
  #free = -1;
  /** The longest success (ms) `#free` speaks for. */
  #freeMs: number;
  /** The latest clock reading (ms) of a skipped call, not yet brought to the backend's clock; -1: none. */
  #at = -1;
  /** The outcome each failure that is names alone counted as, by list id (see `namesOnly`). */
  #countedByNames: number[] = [];

  constructor(options: BreakerOptions = {}) {
    super();
    const native = nativeOf<BackendBreaker>(options);
    if (native !== undefined) {
      this.#n = native;
      this.#needsMessage = native.needsMessage();
      this.#freeMs = native.freeSuccessMs;
      return;
    }
    const o = optionsObject(options, 'CircuitBreaker');
    const { onStateChange, ...rest } = o as BreakerOptions & { onStateChange?: unknown };
    const text = optionsText(rest);
    this.#n = withCamelFields(() => new N.NativeBreaker(text, true));
    this.#needsMessage = this.#n.needsMessage();
    this.#freeMs = this.#n.freeSuccessMs;
    if (onStateChange !== undefined) this.onStateChange = onStateChange;
  }

  /** `execute`'s hot calls (`#h`): the methods until the breaker proved used (`BIND_AFTER`). */
  #hot(): Pick<BackendBreaker, 'tryAcquire' | 'record' | 'succeed' | 'fail' | 'release'> {
    if (this.#h !== null) return this.#h;
    if (++this.#uses < BIND_AFTER) return this.#n;
    return (this.#h = this.#n.bound?.() ?? this.#n);
  }

  /**
   * Before anything but `execute`'s own steps reaches the backend: the calls `execute` skipped
   * brought to its clock (an admission at the latest skipped reading, which in the states that
   * admit without asking changes nothing but the clock: `CircuitBreaker::free_admission`), and
   * nothing skipped from now on until a success says so again.
   */
  #sync(): BackendBreaker {
    const n = this.#n;
    this.#free = -1;
    if (this.#at >= 0) {
      const at = this.#at;
      this.#at = -1;
      this.#hot().tryAcquire(at);
    }
    return n;
  }

  static fromJSON(doc: object | string): CircuitBreaker {
    return CircuitBreaker._wrap(new N.NativeBreaker(documentText(doc, 'breaker'), false));
  }

  /** @internal */
  static _wrap(native: BackendBreaker): CircuitBreaker {
    return new CircuitBreaker(wrapped<BreakerOptions>(native));
  }

  /** @internal Whoever holds the backend may change it: `execute` stops skipping calls (see `#sync`). */
  get _native(): BackendBreaker {
    return this.#sync();
  }

  get onStateChange(): ((t: Transition) => void) | null {
    return this.#hook;
  }
  set onStateChange(f: ((t: Transition) => void) | null) {
    if (f !== null && typeof f !== 'function') throw coreError('invalid_type', 'onStateChange', 'must be a function');
    this.#hook = f;
    this.#n.setCollect(f !== null);
  }

  #fire(): void {
    const h = this.#hook;
    if (h !== null) for (const t of this.#n.takeTransitions()) callHook(h, undefined, t);
  }

  /** @internal Fires the transitions a call caused, then answers what it returned. */
  _fired<T>(r: T): T {
    if (this.#hook !== null) this.#fire();
    return r;
  }

  static isTrialPermit(permit: number): boolean {
    return num(permit, 'permit') % 2 === 1;
  }

  record(permit: number, outcome: unknown, durationMs = 0, now?: number): boolean {
    const t = timeArg(now);
    const n = this.#sync();
    let r: boolean;
    if (typeof outcome === 'number' || typeof outcome === 'string') {
      r = n.record(num(permit, 'permit'), outcomeId(outcome), num(durationMs, 'durationMs'), t);
    } else {
      const a = failureArgs(outcome, undefined, false, this.#needsMessage);
      const before = n.totals().transitions;
      G.breakerRecordFailure(n, num(permit, 'permit'), num(durationMs, 'durationMs'), t, a);
      r = n.totals().transitions !== before;
    }
    if (this.#hook !== null) this.#fire();
    return r;
  }

  release(permit: number, now?: number): void {
    this.#sync().release(num(permit, 'permit'), timeArg(now));
    if (this.#hook !== null) this.#fire();
  }

  /**
   * Not an `async` function (issue 17): a call whose `fn` answers without a promise settles here, with
   * no async frame; one whose `fn` returns a promise continues in `#awaited`. What it records and fires,
   * and when, is as an `async` function's: everything up to `fn`'s answer happens in the call, a
   * rejection that nothing was awaited for comes one microtask later (`rejectLater`), a value resolves.
   */
  execute<T>(fn: (ctx: { signal?: AbortSignal }) => T | Promise<T>, options?: { signal?: AbortSignal }): Promise<T> {
    let signal: AbortSignal | undefined;
    let start: number;
    let permit: number;
    try {
      if (typeof fn !== 'function') throw coreError('invalid_type', 'fn', 'must be a function');
      signal = options === undefined ? undefined : readOptions(options, 'execute', 'CircuitBreaker.execute', { signal: signalOption }).signal;
      if (signal?.aborted) throw abortReason(signal);
      start = hostNow();
      // Every reading below is at least `start` (performance.now() is monotonic), so the step that
      // reaches the backend next brings its clock past the calls skipped so far (`#at`).
      permit = this.#free;
      if (permit >= 0) {
        // Admitted without asking (the core said so after the last success).
        permit -= permit % 2;
        this.#at = start;
      } else {
        const n = this.#sync();
        permit = this.#hot().tryAcquire(start);
        if (this.#hook !== null) this.#fire();
        if (permit < 0) return rejectLater(refusal(n.lastRefusedMessage, n.lastRetryAfter, n.lastRefusedState));
      }
    } catch (e) {
      return Promise.reject(e);
    }
    let r: T | PromiseLike<T>;
    try {
      r = fn({ signal });
    } catch (err) {
      try {
        this.#failed(permit, start, signal, err);
      } catch (e) {
        return Promise.reject(e);
      }
      return rejectLater(err);
    }
    if (isThenable(r)) return this.#awaited(r, permit, start, signal);
    try {
      this.#succeeded(permit, start);
    } catch (e) {
      return Promise.reject(e);
    }
    return Promise.resolve(r as T);
  }

  /** `execute` once `fn` returned a promise: its outcome recorded when it settles. */
  async #awaited<T>(r: PromiseLike<T>, permit: number, start: number, signal: AbortSignal | undefined): Promise<T> {
    let result: T;
    try {
      result = await r;
    } catch (err) {
      this.#failed(permit, start, signal, err);
      throw err;
    }
    this.#succeeded(permit, start);
    return result;
  }

  /** Records what `fn` threw; whatever was thrown is rethrown as is by the caller, and the permit always goes back. */
  #failed(permit: number, start: number, signal: AbortSignal | undefined, err: unknown): void {
    const end = hostNow();
    this.#free = -1;
    this.#at = -1;
    const next = signal?.aborted ? -2 : this.#recordThrown(permit, end - start, end, err);
    if (next === -2) {
      try {
        this.#hot().release(permit, end);
      } catch {
        // Released already.
      }
    }
    // What the next call may skip, as after a success (a failure that leaves the breaker closed).
    if (next >= 0) this.#free = next;
    if (this.#hook !== null) this.#fire();
  }

  /** Records a success of `fn`. */
  #succeeded(permit: number, start: number): void {
    const end = hostNow();
    const free = this.#free;
    if (free % 2 === 1 && free - 1 === permit && end - start <= this.#freeMs) {
      // A success that changes nothing but the clock (the core said so): only the clock is owed.
      this.#at = end;
      return;
    }
    // Nothing skipped if the step throws: the next one asks, and brings the clock up first.
    this.#free = -1;
    const next = this.#hot().succeed(permit, end - start, end);
    this.#at = -1;
    this.#free = next;
    if (this.#hook !== null) this.#fire();
  }

  /**
   * Records what `fn` threw (read as a failure, else by its names alone). Answers -2 when neither could
   * be recorded, else what the next call may skip (`succeed`'s answer: -1 nothing).
   */
  #recordThrown(permit: number, duration: number, end: number, err: unknown): number {
    try {
      const a = thrownArgs(err, undefined, this.#needsMessage);
      if (!namesOnly(a)) {
        G.breakerRecordFailure(this.#n, permit, duration, end, a);
        return -1;
      }
      // How a failure that is names alone counts is the core's answer for the list (see `namesOnly`).
      const counted = this.#countedByNames[a.namesId];
      if (counted !== undefined) return this.#hot().fail(permit, counted, duration, end);
      this.#countedByNames[a.namesId] = G.breakerRecordFailure(this.#n, permit, duration, end, a);
      return -1;
    } catch {
      // Try the names alone.
    }
    try {
      G.breakerRecordFailure(this.#n, permit, duration, end, namesOnlyArgs(err));
      return -1;
    } catch {
      return -2;
    }
  }

  restore(snapshot: object | string, now?: number, wallNowMs?: number): void {
    this.#sync().restore(documentText(snapshot, 'snapshot'), timeArg(now), wallArg(wallNowMs));
  }

  recordWithoutPermit(outcome: unknown, durationMs = 0, now?: number): boolean {
    return this._fired(this.#sync().recordWithoutPermit(outcomeId(outcome), num(durationMs, 'durationMs'), timeArg(now)));
  }
}

const kNative = Symbol('retrycore.native');

/** The backend object an internal wrap passes (never present in a caller's options; a hostile object has none). */
function nativeOf<T>(options: unknown): T | undefined {
  if (!isPlainObject(options)) return undefined;
  const d = Object.getOwnPropertyDescriptor(options, kNative);
  return d === undefined ? undefined : (d.value as T);
}

/** The options object an internal wrap passes: the backend object under `kNative`. */
function wrapped<T>(native: unknown): T {
  return { [kNative]: native } as unknown as T;
}

// ---------------------------------------------------------------- budgets

function budgetFlags(options: unknown): { refused: boolean; holdsSlot: boolean } {
  const o = readOptions(options, 'budget', 'a budget check', { refused: optBool, holdsSlot: optBool });
  return { refused: o.refused === true, holdsSlot: o.holdsSlot === true };
}

function categoryId(c: unknown): number {
  if (c === undefined) return CATEGORY_IDS.get('server_error')!;
  const id = typeof c === 'string' ? CATEGORY_IDS.get(c) : undefined;
  if (id === undefined) throw coreError('invalid_value', 'category', `not a category: ${typeof c === 'string' ? JSON.stringify(c) : describe(c)}`);
  return id;
}

export class Budget extends G.BudgetMembers {
  #n: BackendBudget;
  /** The hot calls: napi's functions bound to the native budget (no `this` to unwrap per call; issue 17), else the budget (see `BIND_AFTER`). */
  #h: Pick<BackendBudget, 'tryWithdraw'> | null = null;
  #uses = 0;

  constructor(options: BudgetOptions) {
    super();
    const native = nativeOf<BackendBudget>(options);
    if (native !== undefined) {
      this.#n = native;
      return;
    }
    const o = optionsObject(options, 'Budget');
    const text = optionsText(o);
    this.#n = withCamelFields(() => new N.NativeBudget(text, true));
  }

  static fromJSON(doc: object | string): Budget {
    return new Budget(wrapped<BudgetOptions>(new N.NativeBudget(documentText(doc, 'budget'), false)));
  }

  /** @internal */
  static _wrap(native: BackendBudget): Budget {
    return new Budget(wrapped<BudgetOptions>(native));
  }

  /** @internal */
  get _native(): BackendBudget {
    return this.#n;
  }

  check(category = 'server_error', now?: number, options?: { refused?: boolean; holdsSlot?: boolean }): Refusal | null {
    const o = budgetFlags(options);
    return this.#n.check(timeArg(now), categoryId(category), o.refused, o.holdsSlot);
  }

  withdraw(category = 'server_error', now?: number, options?: { refused?: boolean; holdsSlot?: boolean }): { cost: number | null; slot: boolean } {
    const o = budgetFlags(options);
    return this.#n.withdraw(timeArg(now), categoryId(category), o.refused, o.holdsSlot);
  }

  tryWithdraw(category: string = 'server_error', now?: number): boolean {
    const h = this.#h ?? (++this.#uses < BIND_AFTER ? this.#n : (this.#h = this.#n.bound?.() ?? this.#n));
    return h.tryWithdraw(timeArg(now), categoryId(category)) >= 0;
  }

  recordFailure(category = 'server_error', now?: number, facts?: unknown): void {
    const f = readOptions(facts, 'recordFailure', 'Budget.recordFailure', { counts: optBool, reachedBackend: optBool, declinedPushback: optBool, refused: optBool });
    this.#n.onFailure(timeArg(now), categoryId(category), f.counts ?? true, f.reachedBackend ?? true, f.declinedPushback === true, f.refused === true);
  }

  recordSuccess(now?: number, cost?: number): void {
    this.#n.onSuccess(timeArg(now), cost === undefined || cost === null ? undefined : num(cost, 'cost'));
  }
}

// ---------------------------------------------------------------- policies and sessions

const SESSION_OPTIONS = { key: optStr, seed: optU64, draws: optList(nums), idempotent: optBool, idempotencyKeySent: optBool, method: optStr } satisfies Spec<SessionOptions>;

const sessionRegistry: FinalizationRegistry<{ n: BackendPolicy; id: number }> | null =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry(({ n, id }) => {
        try {
          n.free(id);
        } catch {
          // Nothing to give back.
        }
      })
    : null;

/**
 * Hot calls an object makes through its methods before it binds them (`bound()`): binding costs
 * ~2 µs a function (issue 17), which a short-lived object would not win back.
 */
const BIND_AFTER = 64;

/** A policy's hot calls: its bound functions (napi) or the native policy itself. */
type HotPolicy = Pick<BackendPolicy, 'delay' | 'before' | 'retried' | 'succeed' | 'finish'>;

export class Session {
  #n: BackendPolicy;
  #id: number;
  #policy: RetryPolicy;
  /** What a finished session answers after its slot went back to the policy. */
  #final: { key: string; status: { attempts: number; done: boolean; reason: string | null; keyMinted: boolean } } | null = null;

  /** @internal */
  constructor(policy?: RetryPolicy, native?: BackendPolicy, id?: number) {
    if (!isA(policy, RetryPolicy) || typeof id !== 'number') throw coreError('invalid_type', 'policy', 'a Session comes from policy.session()');
    this.#policy = policy as RetryPolicy;
    this.#n = native as BackendPolicy;
    this.#id = id;
    sessionRegistry?.register(this, { n: this.#n, id }, this);
  }

  get key(): string {
    return this.#final !== null ? this.#final.key : this.#n.key(this.#id);
  }

  status(): { attempts: number; done: boolean; reason: string | null; keyMinted: boolean } {
    return this.#final !== null ? { ...this.#final.status } : this.#n.status(this.#id);
  }

  // Fires the step's transitions; a finished session's slot goes back to the policy at
  // once (not when collected), keeping what `key` and `status()` answer.
  #settle(done: boolean): void {
    this.#policy._afterStep(this.#n, this.#id);
    if (!done || this.#final !== null) return;
    const status = this.#n.status(this.#id);
    if (!status.done) return;
    this.#final = { key: this.#n.key(this.#id), status };
    this.#n.free(this.#id);
    sessionRegistry?.unregister(this);
  }

  /** The attempt the last gate let through (0: none): a failure's decision is packed for it (`RetryPolicy._fail`). */
  #attempt = 0;

  beforeAttempt(now?: number): Gate {
    const attempt = this.#policy._hot().before(this.#id, timeArg(now));
    this.#attempt = attempt;
    const g = this.#policy._gate(this.#n, this.#id, attempt);
    this.#settle(g.action === 'reject');
    return g;
  }

  onFailure(failure: unknown, now?: number): Decision {
    const t = timeArg(now);
    const a = failureArgs(failure, undefined, false, this.#policy._needsMessage);
    const d = this.#policy._fail(this.#n, this.#id, t, a, this.#attempt);
    this.#settle(d.action === 'give_up');
    return d;
  }

  onSuccess(now?: number, elapsed?: number): void {
    this.#policy._hot().succeed(this.#id, timeArg(now), optNum(elapsed, 'elapsed'));
    this.#settle(true);
  }

  cancel(now?: number): void {
    this.#n.cancel(this.#id, timeArg(now));
    this.#settle(true);
  }

  release(): void {
    if (this.#final === null) {
      this.#n.release(this.#id);
      this.#n.free(this.#id);
    }
    // Released: nothing more to read (key and status() throw invalid_state).
    this.#final = null;
    sessionRegistry?.unregister(this);
  }
}

const EXECUTE_OPTIONS = {
  signal: signalOption, idempotent: optBool, idempotencyKeySent: optBool, method: optStr, key: optStr,
  retryIfResult: optFn<ExecuteOptions['retryIfResult']>, retryIfError: optFn<ExecuteOptions['retryIfError']>,
  before: optFn<ExecuteOptions['before']>, after: optFn<ExecuteOptions['after']>, fallback: optFn<ExecuteOptions['fallback']>,
} satisfies Spec<ExecuteOptions>;
/** No options: each `undefined` (a destructuring of an empty object would look each up on its prototypes). */
const NO_EXECUTE_OPTIONS = Object.freeze({
  signal: undefined, key: undefined, idempotent: undefined, idempotencyKeySent: undefined, method: undefined,
  retryIfResult: undefined, retryIfError: undefined, before: undefined, after: undefined, fallback: undefined,
});
const HOOKS = ['onRetry', 'onGiveUp', 'onStateChange'] as const;
/** The retry log's options (docs/observability.md, "The retry log"): taken out of the options like the hooks. */
const LOG_OPTIONS = ['logger', 'correlationId'] as const;

/** The type name of what failed, for the retry log: an error's `name` (its class's when it is the generic `Error`), null for a response. */
function errorTypeName(e: unknown): string | null {
  try {
    if (isResponse(e)) return null;
    if (e === null || (typeof e !== 'object' && typeof e !== 'function')) return typeof e;
    const n = (e as ErrorFields).name;
    if (typeof n === 'string' && n !== '' && n !== 'Error') return n;
    const c = (e as ErrorFields).constructor?.name;
    if (typeof c === 'string' && c !== '' && c !== 'Object') return c;
    return typeof n === 'string' && n !== '' ? n : null;
  } catch {
    // A hostile getter: the record goes without the name.
    return null;
  }
}

class Context implements AttemptContext {
  attempt = 1;
  #n: BackendPolicy;
  /** The session's id; -1 while a lean first try has none (its key, if read, is minted here and given to the session). */
  #id: number;
  #key: string | undefined;
  // A lean first try's start (ms) and the options its session starts with (see `_start`): kept here, not in an object of their own.
  #t0 = -1;
  #idempotent: boolean | undefined = undefined;
  #keySent: boolean | undefined = undefined;
  #method: string | undefined = undefined;
  constructor(n: BackendPolicy, id: number, key: string | undefined, public signal: AbortSignal | undefined) {
    this.#n = n;
    this.#id = id;
    this.#key = key;
  }
  get key(): string {
    if (this.#key === undefined) this.#key = this.#id < 0 ? N.mintKey(undefined) : this.#n.key(this.#id);
    return this.#key!;
  }
  /** @internal The session's id (-1: a lean first try without one yet). */
  get _id(): number {
    return this.#id;
  }
  /** @internal When the lean first try this context is for started (ms). */
  get _t0(): number {
    return this.#t0;
  }
  /** @internal Makes this the context of a lean first try started at `t0` (ms) with these options. */
  _lean(t0: number, idempotent: boolean | undefined, keySent: boolean | undefined, method: string | undefined): this {
    this.#t0 = t0;
    this.#idempotent = idempotent;
    this.#keySent = keySent;
    this.#method = method;
    return this;
  }
  /** @internal Gives the lean first try its session, started at its start with the key it minted (if read). */
  _start(n: BackendPolicy): void {
    this.#id = n.start(this.#t0, this.#key, this.#idempotent, this.#keySent, this.#method);
  }
  /** @internal Reads the key before the session is freed. */
  _settle(): void {
    if (this.#key === undefined && this.#id >= 0) {
      try {
        this.#key = this.#n.key(this.#id);
      } catch {
        // finish() already freed it: a successful session's key was never asked for.
      }
    }
  }
}

/** The core's `now` in ns (`limits::time_from_host_f64`: round half to even), or -1 when it refuses the time. */
function nowNs(ms: number): number {
  const x = ms * 1e6;
  if (!(x >= 0 && x < 2 ** 64)) return -1;
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** The ms since `started` on the injected clock, or the host's (a function, not a closure made per call). */
function tookMs(clock: { now(): number } | null, started: number): number {
  return (clock === null ? hostNow() : clock.now()) - started;
}

/**
 * Awaited before an `async` method rejects when it has awaited nothing yet: a promise rejected before
 * its caller could attach a handler goes through the runtime's unhandled-rejection tracking (in Node
 * ~1 µs per call, twice what the rest of a failing breaker call costs). Everything the call decides
 * and records happens before it; only the rejection comes one microtask later.
 */
const REJECT_LATER: Promise<void> = Promise.resolve();

/** A promise that rejects with `e` one microtask later (`REJECT_LATER`), as an `async` function that awaited it would. */
async function rejectLater<T>(e: unknown): Promise<T> {
  await REJECT_LATER;
  throw e;
}

/** `now` for the backend's own clock. */
const HOST_NOW = (): number => -1;

/** What `callCaught` answers when `fn` threw: the thrown value is in `error` until read. */
const CAUGHT: { error: unknown } = { error: undefined };

/** Calls `fn(ctx)`; what it throws is kept in `CAUGHT.error` and `CAUGHT` answered (no try block in the caller). */
function callCaught(fn: (ctx: Context) => unknown, ctx: Context): unknown {
  try {
    return fn(ctx);
  } catch (err) {
    CAUGHT.error = err;
    return CAUGHT;
  }
}

/** Settled at the latest when this many lean successes or nanoseconds are owed (sums stay exact doubles). */
const LEAN_MAX = 2 ** 20;
const LEAN_MAX_NS = 2 ** 52;

function signalOption(v: unknown): AbortSignal | undefined {
  if (v === undefined || v === null) return undefined;
  const ok = reading('signal', () => typeof v === 'object' && typeof (v as AbortSignal).aborted === 'boolean' && typeof (v as AbortSignal).addEventListener === 'function');
  if (!ok) throw coreError('invalid_type', 'signal', `must be an AbortSignal, got ${describe(v)}`);
  return v as AbortSignal;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? (typeof DOMException !== 'undefined' ? new DOMException('This operation was aborted', 'AbortError') : new Error('aborted'));
}

/** The longest delay `setTimeout` honours (2^31 − 1 ms); a longer one fires after 1 ms. */
const MAX_TIMER_MS = 0x7fffffff;

/** Calls `f` after `ms`, however long (a chain of timers of at most 2^31 − 1 ms each); returns its canceller. */
function later(ms: number, f: () => void): () => void {
  let t: ReturnType<typeof setTimeout> | undefined;
  const arm = (left: number): void => {
    t = left > MAX_TIMER_MS ? setTimeout(() => arm(left - MAX_TIMER_MS), MAX_TIMER_MS) : setTimeout(f, left);
  };
  arm(ms);
  return () => clearTimeout(t);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal === undefined) {
      later(ms, resolve);
      return;
    }
    const onAbort = () => {
      cancel();
      reject(abortReason(signal));
    };
    const cancel = later(ms, () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Races `p` against `signal`: rejects with the abort reason as soon as it aborts. */
function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** An attempt's own signal: aborts with the caller's reason, or with a `TimeoutError` after `timeout` ms. */
function attemptSignal(outer: AbortSignal | undefined, timeout: number): { signal: AbortSignal; done: () => void } {
  const c = new AbortController();
  const onOuter = () => c.abort(abortReason(outer!));
  if (outer) {
    if (outer.aborted) c.abort(abortReason(outer));
    else outer.addEventListener('abort', onOuter, { once: true });
  }
  const cancel = later(timeout, () => {
    c.abort(typeof DOMException !== 'undefined' ? new DOMException(`the attempt timed out after ${timeout} ms`, 'TimeoutError') : new Error('timeout'));
  });
  return {
    signal: c.signal,
    done: () => {
      cancel();
      outer?.removeEventListener('abort', onOuter);
    },
  };
}

export class RetryPolicy extends G.PolicyMembers {
  #n: BackendPolicy;
  #hasTimeouts: boolean;
  /** Whether the policy has a limiter: a gate may answer with a wait (`Proceed.wait`), slept before the call. */
  #hasLimiter = false;
  /** Whether a rule matches messages: read once, so that only then does an error's message cross. */
  #needsMessage: boolean;
  /** Whether `execute` may make a first try without a session: no breaker, budget, timeout or deadline. */
  #lean = false;
  /** This policy's packed verdicts for failures that are names alone, by list id (see `namesOnly`). */
  #namesVerdicts: number[] = [];
  /** Lean first-try successes not yet settled with the core, and their durations in all (ns). */
  #owed = 0;
  #owedNs = 0;
  /** The lean call in flight that has drawn nothing yet: at most one (anything else that draws turns it into a session first). */
  #open: Context | null = null;
  /** The hot calls: napi's functions bound to the native policy (no `this` to unwrap per call; issue 17), else the policy (see `BIND_AFTER`). */
  #hot: HotPolicy | null = null;
  #uses = 0;
  onRetry: ((info: HookInfo) => void) | null = null;
  onGiveUp: ((info: HookInfo) => void) | null = null;
  onStateChange: ((t: Transition) => void) | null = null;
  logger: RetryLogger | null = null;
  correlationId: (() => string | null | undefined) | null = null;
  /** @internal The exporters' reports (lib/metrics.ts, `instrument`); null: none. */
  _metrics: { retry(attempt: number, attemptMs: number): void; end(attempts: number, outcome: string, durationMs: number, budget: string | null, refused: boolean, attemptMs: number | null): void; transition(t: Transition): void } | null = null;

  constructor(options: PolicyOptions = {}) {
    super();
    const native = nativeOf<BackendPolicy>(options);
    if (native !== undefined) {
      this.#n = native;
      this.#hasTimeouts = this.#n.hasTimeouts();
      this.#needsMessage = this.#n.needsMessage();
      this.#hasLimiter = native.hasLimiter();
      this.#lean = !this.#hasTimeouts && !this.#hasLimiter && native.breaker() === null && native.budgetCount() === 0;
      return;
    }
    const o: Record<string, unknown> = { ...optionsObject(options, 'RetryPolicy') };
    const hooks: Record<string, unknown> = {};
    for (const h of [...HOOKS, ...LOG_OPTIONS]) {
      if (h in o) {
        hooks[h] = o[h];
        delete o[h];
      }
    }
    let sharedBreaker: CircuitBreaker | null = null;
    if (isA(o.breaker, CircuitBreaker)) {
      sharedBreaker = o.breaker as CircuitBreaker;
      o.breaker = {};
    }
    const sharedBudgets: Array<[number, Budget]> = [];
    const budgetList = o.budgets !== undefined ? 'budgets' : o.budget !== undefined ? 'budget' : null;
    if (budgetList === 'budget' && isA(o.budget, Budget)) {
      const b = o.budget as Budget;
      sharedBudgets.push([0, b]);
      o.budget = { kind: b.kind };
    } else if (budgetList === 'budgets' && isArray(o.budgets)) {
      o.budgets = items(o.budgets, 'budgets', 'budgets').map((b, i) => {
        if (isA(b, Budget)) {
          sharedBudgets.push([i, b as Budget]);
          return { kind: (b as Budget).kind, name: (b as Budget).name };
        }
        return b;
      });
    }
    const text = optionsText(o);
    let n = withCamelFields(() => N.NativePolicy.fromOptions(text, undefined));
    if (sharedBreaker) n = n.shareBreaker(sharedBreaker._native);
    for (const [i, b] of sharedBudgets) n = n.shareBudget(i, b._native);
    this.#n = n;
    this.#hasTimeouts = n.hasTimeouts();
    this.#needsMessage = n.needsMessage();
    this.#hasLimiter = n.hasLimiter();
    this.#lean = !this.#hasTimeouts && !this.#hasLimiter && n.breaker() === null && n.budgetCount() === 0;
    for (const h of HOOKS) if (hooks[h] !== undefined) this.#setHook(h, hooks[h]);
    if (hooks.correlationId !== undefined) this.#setHook('correlationId', hooks.correlationId);
    if (hooks.logger !== undefined && hooks.logger !== null) {
      const l = hooks.logger as { warn?: unknown };
      if (typeof l !== 'function' && (typeof l !== 'object' || typeof l.warn !== 'function')) {
        throw coreError('invalid_type', 'logger', `must be a function or a logger with a warn method, got ${describe(l)}`);
      }
      this.logger = l as RetryLogger;
    }
  }

  #setHook(name: (typeof HOOKS)[number] | 'correlationId', f: unknown): void {
    if (f !== null && typeof f !== 'function') throw coreError('invalid_type', name, 'must be a function');
    (this as unknown as Record<string, unknown>)[name] = f;
  }

  /**
   * Writes the retry log's record of a retry or a give-up (the core's `retry_log::record`) to the
   * logger: a function gets the record, a logger object `logger[level](fields, message)`. What the
   * logger or `correlationId` throws is reported as a hook's is, never met by the caller.
   */
  #log(retry: number | null, attempt: number, maxAttempts: number, category: string | null, delay: number | null, reason: string | null, budget: string | null, error: unknown, key: string): void {
    const lg = this.logger;
    if (lg === null) return;
    try {
      const cid = this.correlationId === null ? undefined : this.correlationId.call(this);
      const event = {
        event: retry === null ? 'give_up' : 'retry',
        attempt,
        max_attempts: maxAttempts,
        retry,
        category,
        delay: delay === null ? null : Math.round(delay * 1e6),
        reason,
        budget,
        error: errorTypeName(error),
        idempotency_key: key,
        correlation_id: typeof cid === 'string' ? cid : null,
      };
      const r = N.retryLog(JSON.stringify(event));
      const record: RetryLogRecord = { level: r.level, message: r.message, fields: r.fields };
      if (typeof lg === 'function') {
        lg.call(this, record);
      } else {
        const o = lg as unknown as Record<string, unknown>;
        const m = typeof o[record.level] === 'function' ? o[record.level] : o.warn;
        (m as (f: object, msg: string) => void).call(lg, record.fields, record.message);
      }
    } catch (e) {
      reportHookError(e);
    }
  }

  static fromJSON(document: string | object): RetryPolicy {
    return new RetryPolicy(wrapped<PolicyOptions>(N.NativePolicy.fromJson(documentText(document, 'policy'), undefined)));
  }

  static profile(name: Profile, overrides: PolicyOptions = {}): RetryPolicy {
    return new RetryPolicy({ ...optionsObject(overrides, 'RetryPolicy.profile'), profile: name });
  }

  classify(failure: number | unknown, options?: FailureContext): Verdict {
    if (typeof failure === 'number' && options === undefined) return unpackVerdict(this.#n.classifyStatus(failure, 0));
    return classifyWith(this.#n, failure, options, this.#needsMessage, this.#namesVerdicts);
  }

  testing(attempts: number, maxDelay = 0): RetryPolicy {
    const p = new RetryPolicy(wrapped<PolicyOptions>(this._native.testing(num(attempts, 'attempts'), num(maxDelay, 'maxDelay'))));
    p.onRetry = this.onRetry;
    p.onGiveUp = this.onGiveUp;
    p.onStateChange = this.onStateChange;
    p.logger = this.logger;
    p.correlationId = this.correlationId;
    p._metrics = this._metrics;
    return p;
  }

  get breaker(): CircuitBreaker | null {
    const b = this.#n.breaker();
    return b ? CircuitBreaker._wrap(b) : null;
  }

  get budgets(): Budget[] {
    const out: Budget[] = [];
    for (let i = 0; i < this.#n.budgetCount(); i++) {
      const b = this.#n.budget(i);
      if (b !== null) out.push(Budget._wrap(b));
    }
    return out;
  }

  lint(service?: object | string): Finding[] {
    return lint(this, service);
  }

  session(options: SessionOptions = {}): Session {
    const o = readOptions(options, 'session', 'a session', SESSION_OPTIONS);
    const n = this._native;
    return new Session(this, n, n.begin(o.key, o.seed, o.idempotent, o.idempotencyKeySent, o.method, o.draws));
  }

  /** `delay` reads neither the generator nor the counters: no lean call need settle first (no `_sync`). */
  override delay(retry: unknown, r: unknown, prev?: unknown): number {
    const h = this.#hot ?? this._hot();
    return h.delay(num(retry, 'retry'), num(r, 'r'), prev === undefined ? undefined : num(prev, 'prev'));
  }

  /** @internal The hot calls of the native policy (`#hot`): the methods until the policy proved used (`BIND_AFTER`). */
  _hot(): HotPolicy {
    if (this.#hot !== null) return this.#hot;
    if (++this.#uses < BIND_AFTER) return this.#n;
    return (this.#hot = this.#n.bound?.() ?? this.#n);
  }

  /** @internal The native policy, once lean calls settled what they owe (every use draws or reads the counters, or may). */
  get _native(): BackendPolicy {
    return this._sync();
  }

  /**
   * @internal Settles what lean first tries owe the core, in the order they started (every call takes one
   * u64 of the policy's generator: docs/backoff.md, Determinism): the finished ones' draws and counts, then
   * the open one's session. Called before anything else draws from the generator or reads the counters.
   */
  _sync(): BackendPolicy {
    const open = this.#open;
    if (this.#owed !== 0) {
      const owed = this.#owed;
      const ns = this.#owedNs;
      this.#owed = 0;
      this.#owedNs = 0;
      this.#n.settle(owed, ns);
    }
    if (open !== null) {
      this.#open = null;
      open._start(this.#n);
    }
    return this.#n;
  }

  /** @internal The gate `before` answered with `attempt`: a proceed is written here when the policy has no timeouts and no limiter (so no timeout or wait to read), anything else is the core's JSON. */
  _gate(n: BackendPolicy, id: number, attempt: number): BackendGate {
    if (attempt === 0 || this.#hasTimeouts || this.#hasLimiter || this.#max < 0) {
      const g = n.gate(id);
      this.#max = g.maxAttempts;
      return g;
    }
    return { action: 'proceed', attempt, maxAttempts: this.#max, timeout: null, wait: null };
  }

  /** @internal The decision `fail` answered with `delay`: a retry is unpacked from `retried` (bindings-js/src/policy.rs), anything else is the core's JSON. */
  _decision(n: BackendPolicy, id: number, delay: number): BackendDecision {
    const p = delay < 0 || this.#max < 0 ? -1 : (this.#hot ?? this._hot()).retried(id);
    if (p < 0) {
      const d = n.decision(id);
      this.#max = d.maxAttempts;
      return d;
    }
    const low = 1 << (CATEGORY_BITS + 2);
    const flags = p % low;
    const numbers = (p - flags) / low;
    const retry = numbers % 16384;
    // Without a server delay the core's delay is the backoff itself (docs/sessions.md, "After a failure"): no crossing to read it.
    const server = ((flags >> (CATEGORY_BITS + 1)) & 1) !== 0;
    return retryDecision(
      retry, Math.floor(numbers / 16384) % 16384, Math.floor(numbers / 268435456), server ? n.retryDelay(id, false) : delay, ((flags >> CATEGORY_BITS) & 1) !== 0,
      flags, delay, this.#max, server ? n.retryDelay(id, true) : null,
    );
  }

  /**
   * @internal A session's failure: one of names alone (an interned list, and the call's method, flags and
   * verdict) crosses as `failNames`, whose answer packs a retry of `attempt` (bindings-js/src/policy.rs);
   * anything else as `fail`.
   */
  _fail(n: BackendPolicy, id: number, t: number, a: G.FailureArgs, attempt: number): BackendDecision {
    if (this.#max < 0 || !namesAndCallOnly(a)) return this._decision(n, id, G.policyFail(n, id, t, a));
    const p = n.failNames(id, t, a.namesId, attempt, a.method, a.idempotent, a.keySent, a.verdict);
    if (p < 0) return this._decision(n, id, -1);
    const low = 1 << (CATEGORY_BITS + 1);
    const flags = p % low;
    const delay = (p - flags) / low / 1e6;
    return retryDecision(attempt, attempt + 1, attempt, delay, flags >= 1 << CATEGORY_BITS, flags, delay, this.#max, null);
  }

  /** The policy's `max_attempts`, as the core's first JSON gate or decision said it (-1: none read yet). */
  #max = -1;

  /** @internal Whether the policy's rules match messages (an error's message is sent only then). */
  get _needsMessage(): boolean {
    return this.#needsMessage;
  }

  /** @internal Fires onStateChange for the transitions a session step caused. */
  _afterStep(n: BackendPolicy, id: number): void {
    const h = this.onStateChange;
    const m = this._metrics;
    if (h === null && m === null) return;
    for (const t of n.transitions(id)) {
      // The exporters see each transition before the caller's hook (as on_state_change's in Python).
      if (m !== null) m.transition(t);
      if (h !== null) callHook(h, this, t);
    }
  }

  execute<T>(fn: (ctx: AttemptContext) => T | Promise<T>, options?: ExecuteOptions): Promise<T> {
    // A lean first try without options, exporters or an injected clock, whose `fn` returns a value that is
    // not a promise: settled here, without an async frame. Anything else continues in `#run` as it was.
    if (options !== undefined || typeof fn !== 'function' || !this.#lean || this._metrics !== null || this._clock !== null) return this.#run(fn, options, null);
    try {
      const start = hostNow();
      const t0 = nowNs(start);
      if (t0 < 0) return this.#run(fn, options, null);
      if (this.#open !== null) this._sync();
      const ctx = new Context(this.#n, -1, undefined, undefined)._lean(start, undefined, undefined, undefined);
      this.#open = ctx;
      const value = callCaught(fn, ctx);
      if (value === CAUGHT) {
        const err = CAUGHT.error;
        CAUGHT.error = undefined;
        return this.#run(fn, options, { ctx, value: err, failed: true, checked: true });
      }
      if (isThenable(value)) return this.#run(fn, options, { ctx, value, failed: false, checked: false });
      const failed = failedResponse(value);
      if (!failed && ctx._id < 0) {
        const t1 = nowNs(hostNow());
        if (t1 >= 0) {
          this.#open = null;
          this.#owed++;
          this.#owedNs += Math.max(0, t1 - t0);
          if (this.#owed >= LEAN_MAX || this.#owedNs >= LEAN_MAX_NS) this._sync();
          return Promise.resolve(value as T);
        }
      }
      return this.#run(fn, options, { ctx, value, failed, checked: true });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** `execute`, with the lean first try `execute` already called when `lean` is given (its outcome, `checked` when `failedResponse` read it). */
  async #run<T>(fn: (ctx: AttemptContext) => T | Promise<T>, options: ExecuteOptions | undefined, lean: { ctx: Context; value: unknown; failed: boolean; checked: boolean } | null): Promise<T> {
    if (typeof fn !== 'function') throw coreError('invalid_type', 'fn', `must be a function, got ${describe(fn)}`);
    const n = this.#n;
    const h = this.#hot ?? this._hot();
    const { signal, key, idempotent, idempotencyKeySent: keySent, method, retryIfResult, retryIfError, before, after, fallback } = options === undefined ? NO_EXECUTE_OPTIONS : readOptions(options, 'execute', 'execute', EXECUTE_OPTIONS);
    // Predicates, before/after hooks or a fallback: every attempt goes through a session.
    const plain = retryIfResult === undefined && retryIfError === undefined && before === undefined && after === undefined && fallback === undefined;
    if (signal?.aborted) throw abortReason(signal);
    // An injected clock and sleep (tests, the execute vectors).
    const clock = this._clock;
    const met = this._metrics;
    const started = met === null ? 0 : clock === null ? hostNow() : clock.now();
    // When the attempt under way started (the exporters' attempt_duration).
    let attemptAt = started;
    // The first attempt, when a lean call made it and failed (or its end could not be read).
    let first: { failed: boolean; value: unknown } | null = null;
    let ctx: Context | undefined;
    let id = -1;
    const start = lean !== null ? lean.ctx._t0 : this.#lean && key === undefined && plain ? (clock === null ? hostNow() : clock.now()) : -1;
    const t0 = start === -1 ? -1 : nowNs(start);
    if (t0 >= 0) {
      // A lean first try: no session unless it fails or something else draws meanwhile.
      let value: unknown;
      let failed: boolean;
      if (lean !== null) {
        // `execute` made it already.
        ctx = lean.ctx;
        value = lean.value;
        failed = lean.failed;
      } else {
        if (this.#open !== null) this._sync();
        ctx = new Context(n, -1, undefined, signal)._lean(start, idempotent, keySent, method);
        this.#open = ctx;
        // Called outside a try block, awaited only when it must be: this path is the cost of a first-try success.
        value = callCaught(fn, ctx);
        failed = value === CAUGHT;
        if (failed) {
          value = CAUGHT.error;
          CAUGHT.error = undefined;
        }
      }
      if (failed) {
        // Thrown: nothing to await.
      } else if (isThenable(value)) {
        try {
          value = await (signal !== undefined ? raceAbort(value as Promise<T>, signal) : value);
        } catch (err) {
          failed = true;
          value = err;
        }
      }
      if (!failed && (lean === null || !lean.checked) && failedResponse(value)) failed = true;
      // A cancelled call ends as the session's does (below).
      if (!failed && ctx._id < 0 && !signal?.aborted) {
        const t1 = nowNs(clock === null ? hostNow() : clock.now());
        if (t1 >= 0) {
          this.#open = null;
          this.#owed++;
          this.#owedNs += Math.max(0, t1 - t0);
          if (this.#owed >= LEAN_MAX || this.#owedNs >= LEAN_MAX_NS) this._sync();
          if (met !== null) met.end(1, 'success', tookMs(clock, started), null, false, tookMs(clock, started));
          return value as T;
        }
      }
      if (ctx._id < 0) this._sync();
      id = ctx._id;
      first = { failed, value };
    }
    // -1: the backend reads performance.now().
    const now = clock === null ? HOST_NOW : clock.now;
    const wall = clock === null ? undefined : clock.wallNow;
    const pause = clock === null ? sleep : clock.sleep;
    const hooked = this.onStateChange !== null || met !== null;
    if (first === null) id = this._sync().start(now(), key, idempotent, keySent, method);
    if (id < 0) {
      id = -id - 1;
      try {
        const g = n.gate(id) as BackendReject;
        if (hooked) this._afterStep(n, id);
        // Refused before anything ran: no onGiveUp, but the exporters count the refusal (attempts 0).
        if (met !== null) met.end(0, g.giveUpReason, tookMs(clock, started), g.budget ?? null, false, null);
        // No failure was seen, so no category; the key is the session's (docs/sessions.md).
        const e = endingError(g.ending, g, undefined, 0, null, n.key(id));
        if (fallback !== undefined && g.ending.fallsBack) {
          return (await settled(fallback.call(this, { attempt: 0, retry: null, delay: null, category: null, reason: g.giveUpReason, maxAttempts: g.maxAttempts, budget: g.budget ?? null, error: e, key: n.key(id) }))) as T;
        }
        throw e;
      } finally {
        n.free(id);
      }
    }
    ctx ??= new Context(n, id, key, signal);
    let lastCategory = 'unknown';
    try {
      for (;;) {
        let result: T | undefined;
        let failed = false;
        let failure: unknown;
        let attempt: { signal: AbortSignal; done: () => void } | null = null;
        if (first === null && this.#hasLimiter) {
          // The limiter's reserved wait, slept before the call (docs/limiters.md, "In a policy"):
          // an abort ends it and cancels the session, which gives the permit back.
          const g = n.gate(id);
          if (g.action === 'proceed' && typeof g.wait === 'number' && g.wait > 0) {
            try {
              await pause(g.wait, signal);
            } catch (e) {
              n.cancel(id, now());
              if (hooked) this._afterStep(n, id);
              throw e;
            }
            if (signal?.aborted) {
              n.cancel(id, now());
              if (hooked) this._afterStep(n, id);
              throw abortReason(signal);
            }
          }
        }
        if (first !== null) {
          // The lean first try already ran.
          failed = first.failed;
          if (failed) failure = first.value;
          else result = first.value as T;
          first = null;
        } else {
          try {
            if (this.#hasTimeouts && clock === null) {
              const g = n.gate(id);
              if (g.action === 'proceed' && g.timeout !== null) {
                attempt = attemptSignal(signal, g.timeout);
                ctx.signal = attempt.signal;
              }
            }
            if (before !== undefined) callHook(before, this, { attempt: ctx.attempt, retry: null, delay: null, category: null, reason: null, maxAttempts: this.#max < 0 ? n.gate(id).maxAttempts : this.#max, budget: null, error: undefined, key: ctx.key });
            if (met !== null) attemptAt = clock === null ? hostNow() : clock.now();
            const r = fn(ctx);
            if (isThenable(r)) {
              const s = ctx.signal;
              result = (s !== undefined ? await raceAbort(r as Promise<T>, s) : await r) as T;
            } else {
              result = r;
            }
            if (failedResponse(result)) {
              failed = true;
              failure = result;
            }
          } catch (err) {
            failed = true;
            failure = err;
          } finally {
            if (attempt !== null) {
              attempt.done();
              ctx.signal = signal;
            }
          }
        }
        const attemptMs = met === null ? 0 : (clock === null ? hostNow() : clock.now()) - attemptAt;
        if (signal?.aborted) {
          // The caller's own cancellation: no on_give_up (the caller knows).
          n.cancel(id, now());
          if (hooked) this._afterStep(n, id);
          throw abortReason(signal);
        }
        // The caller's predicates: a verdict for the core, as a rule's (docs/classification-rules.md, "Host predicates").
        const returned = !failed || isResponse(failure);
        let verdict: unknown;
        if (retryIfResult !== undefined && returned) {
          const v = await settled(retryIfResult(failed ? failure : result));
          // A truthy answer makes the value a failure; a falsy one leaves it as it is.
          if (v) {
            verdict = v;
            if (!failed) {
              failed = true;
              failure = result;
            }
          }
        } else if (retryIfError !== undefined && failed && !returned) {
          verdict = await settled(retryIfError(failure));
        }
        if (!failed) {
          if (fn.length > 0) ctx._settle();
          if (hooked) {
            h.succeed(id, now(), undefined);
            this._afterStep(n, id);
          } else {
            h.finish(id, now());
          }
          id = -1;
          if (met !== null) met.end(ctx.attempt, 'success', tookMs(clock, started), null, false, attemptMs);
          return result as T;
        }
        const ctxOpts: FailureContext = { method, idempotent, idempotencyKeySent: keySent };
        if (wall !== undefined) ctxOpts.wallNowMs = wall();
        if (verdict !== undefined) ctxOpts.verdict = verdict as FailureContext['verdict'];
        let delay: number;
        const t = now();
        try {
          delay = G.policyFail(n, id, t, returned && !isResponse(failure) ? valueArgs(ctxOpts) : thrownArgs(failure, ctxOpts, this.#needsMessage));
        } catch {
          // What was thrown could not be read as a failure: its names decide.
          delay = G.policyFail(n, id, t, namesOnlyArgs(failure, ctxOpts));
        }
        if (hooked) this._afterStep(n, id);
        const decided = this._decision(n, id, delay);
        lastCategory = decided.category;
        if (delay < 0) {
          const d = decided as BackendGiveUp;
          if (after !== undefined) callHook(after, this, { attempt: d.attempts, retry: null, delay: null, category: d.category, reason: d.giveUpReason, maxAttempts: d.maxAttempts, budget: d.budget ?? null, error: failure, key: ctx.key });
          // Every give-up after an attempt fires on_give_up (docs/sessions.md, "What the caller observes").
          this.#giveUp(d.onGiveUp, d.attempts, d.giveUpReason, d.category, failure, ctx.key, d.maxAttempts, d.budget ?? null);
          if (met !== null && d.onGiveUp) met.end(d.attempts, d.giveUpReason, tookMs(clock, started), d.budget ?? null, false, attemptMs);
          const kind = d.ending.kind;
          // A response or value nothing would retry (404, 400, …) is the caller's answer; an error is re-raised unchanged.
          const e = kind === 'propagate' || kind === 'cancelled' ? failure : endingError(d.ending, d, failure, d.attempts, d.category, ctx.key);
          if (fallback !== undefined && (returned ? d.ending.fallsBackOnValue : d.ending.fallsBack)) {
            return (await settled(fallback.call(this, { attempt: d.attempts, retry: null, delay: null, category: d.category, reason: d.giveUpReason, maxAttempts: d.maxAttempts, budget: d.budget ?? null, error: e, key: ctx.key }))) as T;
          }
          if (kind === 'propagate' && returned) return failure as T;
          throw e;
        }
        const d = decided as BackendRetry;
        if (after !== undefined) callHook(after, this, { attempt: d.onRetry.attempt, retry: d.onRetry.retry, delay: d.delay, category: d.category, reason: null, maxAttempts: d.maxAttempts, budget: null, error: failure, key: ctx.key });
        if (this.onRetry !== null) {
          callHook(this.onRetry, this, { attempt: d.onRetry.attempt, retry: d.onRetry.retry, delay: d.delay, category: d.category, reason: null, maxAttempts: d.maxAttempts, budget: null, error: failure, key: ctx.key });
        }
        if (this.logger !== null) this.#log(d.onRetry.retry, d.onRetry.attempt, d.maxAttempts, d.category, d.delay, null, null, failure, ctx.key);
        if (met !== null) met.retry(d.onRetry.attempt, attemptMs);
        if (delay > 0) {
          try {
            await pause(delay, signal);
          } catch (e) {
            n.cancel(id, now());
            if (hooked) this._afterStep(n, id);
            throw e;
          }
        }
        if (signal?.aborted) {
          n.cancel(id, now());
          if (hooked) this._afterStep(n, id);
          throw abortReason(signal);
        }
        const attemptNo = h.before(id, now());
        if (hooked) this._afterStep(n, id);
        if (attemptNo === 0) {
          const g = n.gate(id) as BackendReject;
          this.#giveUp(g.onGiveUp, g.attempts, g.giveUpReason, lastCategory, failure, ctx.key, g.maxAttempts, g.budget ?? null);
          // Refused at a gate: the last attempt already ended in a retry.
          if (met !== null && g.onGiveUp) met.end(g.attempts, g.giveUpReason, tookMs(clock, started), g.budget ?? null, true, null);
          const e = g.ending.kind === 'propagate' ? failure : endingError(g.ending, g, failure, g.attempts, lastCategory, ctx.key);
          if (fallback !== undefined && (returned ? g.ending.fallsBackOnValue : g.ending.fallsBack)) {
            return (await settled(fallback.call(this, { attempt: g.attempts, retry: null, delay: null, category: lastCategory, reason: g.giveUpReason, maxAttempts: g.maxAttempts, budget: g.budget ?? null, error: e, key: ctx.key }))) as T;
          }
          if (g.ending.kind === 'propagate' && returned) return failure as T;
          throw e;
        }
        ctx.attempt = attemptNo;
      }
    } finally {
      // A function that takes the context may read ctx.key after the session ends.
      if (fn.length > 0) ctx._settle();
      if (id >= 0) n.free(id);
    }
  }

  /**
   * `fetch` under this policy: `wrapFetch(globalThis.fetch, policy)` of `retrycore/integrations` without
   * its options (docs/js.md, "HTTP clients"). Each attempt sends a clone of the request with the
   * attempt's signal; the request's method decides what is safe to repeat; the body of a response the
   * core retries is cancelled; the last response (or error) is the caller's, as `execute` ends.
   */
  fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    const f = (globalThis as { fetch?: (input: Request, init?: RequestInit) => Promise<Response> }).fetch;
    if (typeof f !== 'function') return Promise.reject(coreError('invalid_state', 'fetch', 'needs a global fetch (Node 18+, browsers, Deno, workers)'));
    let base: Request;
    let signal: AbortSignal | null | undefined;
    try {
      // Checked here, so that what the caller gave is refused with a retrycore code (as every method's arguments are).
      if (typeof input !== 'string' && !isA(input, URL) && !isA(input, Request)) {
        throw coreError('invalid_type', 'input', `must be a URL string, a URL or a Request, got ${describe(input)}`);
      }
      if (init !== undefined && init !== null && !isPlainObject(init)) throw coreError('invalid_type', 'init', `must be an object, got ${describe(init)}`);
      base = reading('input', () => new Request(input, init ?? undefined));
      signal = reading('init', () => (init?.signal ?? (isA(input, Request) ? (input as Request).signal : undefined)) as AbortSignal | null | undefined);
    } catch (e) {
      return Promise.reject(e);
    }
    let last: Response | undefined;
    return this.execute(async (ctx) => {
      void last?.body?.cancel().catch(() => undefined); // the response the core retried
      last = await f(base.clone(), ctx.signal ? { signal: ctx.signal } : undefined);
      return last;
    }, signal != null ? { method: base.method, signal } : { method: base.method });
  }

  /** Fires on_give_up (after the step's transitions) when the core says it fires (`surface::fires_on_give_up`). */
  #giveUp(fires: boolean, attempts: number, reason: string, category: string, error: unknown, key: string, maxAttempts: number, budget: string | null): void {
    if (this.onGiveUp !== null && fires) {
      callHook(this.onGiveUp, this, { attempt: attempts, retry: null, delay: null, category, reason, maxAttempts, budget, error, key });
    }
    if (this.logger !== null && fires) this.#log(null, attempts, maxAttempts, category, null, reason, budget, error, key);
  }

  /** @internal An injected clock and sleep for `execute` (tests, vectors); null: the host's. */
  _clock: { now: () => number; wallNow: () => number; sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void> } | null = null;
}

/**
 * Builds the error a call ends with from the core's ending (`surface::Ending`,
 * docs/sessions.md "What the caller observes"): `RetryError`,
 * `BudgetExhaustedError` (a `RetryError`) or `CircuitOpenError`.
 */
function endingError(e: BackendEnding, step: { retryAfter?: number | null; budget?: string | null }, cause: unknown, attempts: number, category: string | null, key: string): Error {
  // A `raise` ending, which carries the reason.
  const reason = e.reason as string;
  const hasCause = e.cause === true;
  // The text is the core's (`Ending::message`), the same as Python's.
  const message = e.message as string;
  switch (e.class) {
    case 'circuit_open':
      return refusal(message, step.retryAfter ?? Infinity, e.state ?? 'open');
    case 'limiter_rejected':
      return new LimiterRejectedError(message, (e.limiter as string | null) ?? '', reason, step.retryAfter ?? null);
    case 'budget_exhausted':
      return new BudgetExhaustedError(
        message,
        step.budget ?? null,
        reason,
        step.retryAfter ?? null,
        { code: e.code, attempts, category, key, cause: hasCause ? cause : undefined },
      );
    default:
      return new RetryError(message, {
        reason,
        attempts,
        category,
        exhausted: e.marked === true,
        budget: step.budget ?? null,
        key,
        cause: hasCause ? cause : undefined,
      });
  }
}

// ---------------------------------------------------------------- idempotency

export let DEFAULT_MAX_KEY_LENGTH = 0;

export function validateKey(key: string, maxLength: number = DEFAULT_MAX_KEY_LENGTH): true {
  return N.validateKey(str(key, 'key'), num(maxLength, 'maxLength'));
}

export function deriveKey(...parts: string[]): string {
  const list = parts.length === 1 && isArray(parts[0]) ? items(parts[0], 'parts', 'strings') : parts;
  checkLength(list.length, 'parts');
  return N.deriveKey(list.map((p, i) => str(p, `parts[${i}]`)));
}

/** @internal Mints a key from 32 hex digits of entropy (vectors). */
export function _mintKeyFrom(entropyHex: string): string {
  return N.mintKey(str(entropyHex, 'entropyHex'));
}

export function parseIdempotencyHeader(value: string, options: { token?: boolean } = {}): string {
  return N.parseHeader(str(value, 'value'), optionsObject(options, 'parseIdempotencyHeader').token === true);
}

export function canonicalJSON(value: unknown): string {
  return N.canonicalize(jsonText(value));
}

/** A value as JSON text after `jsonValue`'s checks, fields named by JSON pointers. */
function jsonText(value: unknown): string {
  return jsonOf(value, 'pointer', 'invalid_number');
}

function fingerprintWith(bodyText: string, options: FingerprintOptions, canonical: boolean): string {
  const o = optionsObject(options, 'fingerprint');
  checkKeys(o, ['method', 'path', 'operation', 'selected'], 'fingerprint');
  let selected: string[] | undefined;
  if (o.selected !== undefined) {
    selected = items(o.selected, 'selected', 'JSON pointers').map((p, i) => str(p, `selected[${i}]`));
  }
  // Which options go together is the core's rule (`FingerprintOf::read`), as in Python.
  const given = (k: 'method' | 'path' | 'operation') => (o[k] === undefined ? undefined : str(o[k], k));
  return N.fingerprint(given('method'), given('path'), given('operation'), bodyText, selected, canonical);
}

export function fingerprint(body: unknown, options: FingerprintOptions): string {
  return fingerprintWith(jsonText(body), options, false);
}

export function fingerprintText(bodyText: string, options: FingerprintOptions): string {
  return fingerprintWith(str(bodyText, 'bodyText'), options, false);
}

export function fingerprintCanonical(body: unknown, options: FingerprintOptions & { bodyText?: string }): string {
  const { bodyText, ...rest } = optionsObject(options, 'fingerprint') as FingerprintOptions & { bodyText?: unknown };
  return fingerprintWith(bodyText !== undefined ? str(bodyText, 'bodyText') : jsonText(body), rest, true);
}

function recordConfigArgs(c: RecordConfig | undefined): G.RecordArgs {
  return readOptions(c, 'record config', 'a record config', RECORD_OPTIONS);
}

const RECORD_OPTIONS = { leaseMs: optNum, retentionMs: optNum, stripe: optBool, failureHandling: optStr, releaseCategories: optList((v, f) => strs(v, f, 'category names')) } satisfies Spec<RecordConfig>;

export function decideRecord(record: IdempotencyRecord | null, key: string | null, fingerprintHex: string, nowMs?: number, config?: RecordConfig): RecordDecision {
  const r = record === null || record === undefined ? undefined : documentText(record, 'record');
  return G.decideRecord(N, r, key === null || key === undefined ? undefined : str(key, 'key'), str(fingerprintHex, 'fingerprint'), wallArg(nowMs, 'nowMs'), recordConfigArgs(config));
}

export function completeRecord(record: IdempotencyRecord, fence: number, outcome: RecordOutcome, nowMs?: number, config?: RecordConfig): IdempotencyRecord {
  return JSON.parse(G.completeRecord(N, documentText(record, 'record'), num(fence, 'fence'), documentText(outcome, 'outcome'), wallArg(nowMs, 'nowMs'), recordConfigArgs(config)));
}

export function renewLease(record: IdempotencyRecord, fence: number, nowMs?: number, config?: RecordConfig): IdempotencyRecord {
  return JSON.parse(G.renewLease(N, documentText(record, 'record'), num(fence, 'fence'), wallArg(nowMs, 'nowMs'), recordConfigArgs(config)));
}

export class DeadLetter {
  #doc: Record<string, unknown>;

  private constructor(doc?: Record<string, unknown>) {
    this.#doc = doc as Record<string, unknown>;
  }

  static fromJSON(letter: object | string): DeadLetter {
    return new DeadLetter(JSON.parse(N.deadLetter(documentText(letter, 'letter'), [])));
  }

  static create(fields: Record<string, unknown>): DeadLetter {
    const o = optionsObject(fields, 'DeadLetter');
    const doc: Record<string, unknown> = {};
    for (const k of Object.keys(o)) {
      let v = o[k];
      if ((k === 'firstFailureAt' || k === 'lastFailureAt') && typeof v === 'number') v = G.formatRfc3339(v);
      if (k === 'error' && isA(v, Error)) {
        const e = v as Error;
        reading('error', () => {
          doc.error_class = e.name;
          doc.error_message = e.message;
        });
        continue;
      }
      doc[k.includes('_') ? k : camelToSnake(k)] = v;
    }
    doc.status ??= 'pending';
    return DeadLetter.fromJSON(doc);
  }

  #apply(op: string): this {
    this.#doc = JSON.parse(N.deadLetter(JSON.stringify(this.#doc), [op]));
    return this;
  }

  markReplayable(): this {
    return this.#apply('mark_replayable');
  }

  markReplayed(): this {
    return this.#apply('mark_replayed');
  }

  discard(): this {
    return this.#apply('discard');
  }

  get status(): string {
    return this.#doc.status as string;
  }

  toJSON(): Record<string, unknown> {
    return structuredClone(this.#doc);
  }
}
export { Limiter, LimiterRejectedError } from './limiters.js';
export { CompensationRun, DeadLetterReplay, runCompensations, replayDeadLetters } from './saga.js';
