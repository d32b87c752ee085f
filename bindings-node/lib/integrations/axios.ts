// retrycore for axios (docs/js.md, "HTTP clients"): an adapter that wraps axios's own,
//
//   const client = axios.create({ adapter: axiosAdapter(axios, policy) });
//
// Each request is one retrycore session. Every attempt goes through axios's adapter (no
// interceptor runs twice) with a status check that lets every response through, so the core
// sees each attempt's response; the one it keeps is then checked by the request's own
// `validateStatus`, as axios's `settle` does. axios has no retry of its own; axios-retry
// (`config['axios-retry']`) warns.

import type { RetryPolicy } from '../api';
import { type IntegrationOptions, merged, run, warnStacking } from './common.js';

/** The parts of an axios request config read here. */
interface AxiosConfig {
  method?: string;
  headers?: { get?(name: string): unknown; set?(name: string, value: string): unknown; [key: string]: unknown };
  signal?: AbortSignal;
  validateStatus?: ((status: number) => boolean) | null;
  adapter?: unknown;
  retrycore?: unknown;
  [key: string]: unknown;
}

interface AxiosResponse {
  status: number;
  config: AxiosConfig;
  request?: unknown;
}

/** The parts of the axios module used: its adapter lookup and error class. */
interface AxiosModule {
  getAdapter(adapter: unknown): (config: AxiosConfig) => Promise<AxiosResponse>;
  defaults: { adapter?: unknown };
  AxiosError: new (message: string, code: string, config: AxiosConfig, request: unknown, response: AxiosResponse) => Error;
}

/** An axios adapter running each request in a retrycore session over `adapter` (default: axios's). `config.retrycore` overrides per request. */
export function axiosAdapter(axios: AxiosModule, policy: RetryPolicy, options: IntegrationOptions & { adapter?: unknown } = {}): (config: AxiosConfig) => Promise<AxiosResponse> {
  const { adapter, ...rest } = options;
  merged(policy, rest, undefined);
  const base = axios.getAdapter(adapter ?? axios.defaults.adapter);
  return async (config) => {
    const o = merged(policy, rest, config.retrycore);
    if (config['axios-retry'] !== undefined) warnStacking('axios', 'axios-retry');
    const name = o.idempotencyHeader;
    const current = name === undefined ? undefined : config.headers?.get?.(name);
    const res = await run(o, config.method, typeof current === 'string' ? current : undefined, config.signal, (ctx, header) => {
      const c: AxiosConfig = { ...config, validateStatus: null };
      if (ctx.signal) c.signal = ctx.signal;
      if (header !== undefined) config.headers?.set?.(name!, header);
      return base(c);
    });
    const validate = config.validateStatus;
    if (!res.status || !validate || validate(res.status)) return res;
    // axios's own settle (lib/core/settle.js), for the response the core kept.
    const code = res.status >= 400 && res.status < 500 ? 'ERR_BAD_REQUEST' : 'ERR_BAD_RESPONSE';
    throw new axios.AxiosError(`Request failed with status code ${res.status}`, code, config, res.request, res);
  };
}
