// The public declarations of `retrycore/integrations` (docs/js.md, "HTTP clients"),
// hand-written; lib/integrations/conforms.ts makes `make compile` fail when the implementation
// disagrees with them.
import type { RetryPolicy } from './index';

/** An integration's options; each may be overridden per request (`retrycore: {...}`). */
export interface IntegrationOptions {
    /** The header that carries the session's idempotency key on every attempt (e.g. `Idempotency-Key`); none by default. */
    idempotencyHeader?: string;
    /** The caller declares the requests idempotent. */
    idempotent?: boolean;
    /** The server deduplicates on the key sent in `idempotencyHeader`. */
    idempotencyKeySent?: boolean;
}

/** What one request may override: `retrycore: {...}` in fetch's `init`, `undici.request`'s options, the axios config or got's `context`. */
export interface RequestOverrides extends IntegrationOptions {
    policy?: RetryPolicy;
    /** This request's idempotency key (default: the request's own header, else a minted one). */
    key?: string;
}

/** The `code` of the warning (`process.emitWarning`) when a client still retries by itself. */
export declare const STACKING_CODE: 'RETRYCORE_RETRY_STACKING';

/** A `fetch` whose every call is one retrycore session (`init.retrycore` overrides per request). */
export declare function wrapFetch(
    fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>,
    policy: RetryPolicy,
    options?: IntegrationOptions,
): (input: RequestInfo | URL, init?: RequestInit & { retrycore?: RequestOverrides }) => Promise<Response>;

/** An interceptor for undici's `Dispatcher.compose` (`opts.retrycore` overrides per request). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- undici's own Dispatch type, without importing undici
export declare function interceptor(policy: RetryPolicy, options?: IntegrationOptions): (dispatch: (opts: any, handler: any) => boolean) => (opts: any, handler: any) => boolean;

/** An axios adapter running each request in a retrycore session over `options.adapter` (default axios's). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- axios's own types, without importing axios
export declare function axiosAdapter(axios: any, policy: RetryPolicy, options?: IntegrationOptions & { adapter?: unknown }): (config: any) => Promise<any>;

/** `got.extend(...)` with got's retry off and each request in a retrycore session. */
export declare function gotExtend<G extends { extend(...options: any[]): G }>(got: G, policy: RetryPolicy, options?: IntegrationOptions): G;

/** `ky.extend(...)` with ky's retry off and `wrapFetch` as its fetch. */
export declare function kyExtend<K extends { extend(options: any): K }>(ky: K, policy: RetryPolicy, options?: IntegrationOptions & { fetch?: typeof fetch }): K;
