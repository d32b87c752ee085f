// The backend's own types: what the low-level surface (lib/surface.d.ts,
// generated from bindings-js/src/surface.rs) answers and what lib/retrycore.ts
// reads of it. Internal: not part of the public declarations (lib/api.d.ts).
import type { Decision, Gate, Verdict } from './api';
import type { BackendSurface } from './surface';

/** `retrycore_js::info()`, generated into `lib/generated.ts` (`INFO`): the core's tables and the packing rules. */
export interface BackendInfo {
  version: string;
  tables: {
    limits: Record<string, number>;
    fetch_failure_messages: string[];
    network_code_pattern: string;
    category_bits: number;
    categories: Array<{ code: string; retry: string }>;
    error_markers: { retry_exhausted: string; breaker_open: string; dom_exception_prefix: string; fetch_network: string; connecting: string };
    [key: string]: unknown;
  };
  retryRules: Verdict['retry'][];
  lintCodes: Array<{ code: string; severity: string; description: string }>;
  states: string[];
}

/**
 * The low-level surface this layer drives: the napi addon
 * (`bindings-node/native.d.ts`) or the wasm module adapted by
 * `bindings-wasm/lib/backend.mjs`. Its functions and classes are declared
 * once, in `bindings-js/src/surface.rs`, and typed by the generated
 * `lib/surface.d.ts`; each FFI crate adds the error factory and the clock.
 */
export interface Backend extends BackendSurface {
  setErrorFactory(factory: (kind: string, code: string, field: string, message: string) => Error): void;
  calibrate(performanceNow: number): void;
}

/** What a session's `status()` answers. */
export type SessionStatus = { attempts: number; done: boolean; reason: string | null; keyMinted: boolean };

/** How a call ends (`retrycore::surface::Ending`); a `raise` carries the error's fields. */
export interface BackendEnding {
  kind: 'return' | 'propagate' | 'cancelled' | 'raise';
  class?: string;
  code?: string;
  reason?: string;
  marked?: boolean;
  cause?: boolean;
  /** The error's message (`Ending::message`). */
  message?: string;
  /** The breaker's state when it refused (a `circuit_open`), else null. */
  state?: string | null;
  /** The limiter's name when it refused the first attempt (a `limiter_rejected`), else null. */
  limiter?: string | null;
  /** A give-up fallback answers instead when the last outcome was an error (`Ending::falls_back`). */
  fallsBack: boolean;
  /** The same when the last outcome was a returned value (a response, or a value `retryIfResult` failed). */
  fallsBackOnValue: boolean;
}

/** A rejecting gate as the backend writes it: the public one, the attempts made and the ending. */
export type BackendReject = Extract<Gate, { action: 'reject' }> & { attempts: number; maxAttempts: number; ending: BackendEnding; onGiveUp: boolean; giveUpReason: string };
/** A gate as the backend writes it. */
export type BackendGate = Extract<Gate, { action: 'proceed' }> | BackendReject;
/** A give-up as the backend writes it: the public one and the ending. */
export type BackendGiveUp = Extract<Decision, { action: 'give_up' }> & { maxAttempts: number; ending: BackendEnding; onGiveUp: boolean; giveUpReason: string };
/** A decision as the backend writes it. */
export type BackendDecision = BackendRetry | BackendGiveUp;
/** A retry as the backend writes it: the public one and what on_retry carries (`surface::RetryNumbers`). */
export type BackendRetry = Extract<Decision, { action: 'retry' }> & { maxAttempts: number; onRetry: { attempt: number; retry: number } };
