// One-line integrations of retrycore with the HTTP clients (docs/js.md, "HTTP clients"):
// `retrycore/integrations`. None imports its client: each takes the client (or its module).

export { STACKING_CODE, type IntegrationOptions, type RequestOverrides } from './common.js';
export { wrapFetch } from './fetch.js';
export { interceptor } from './undici.js';
export { axiosAdapter } from './axios.js';
export { gotExtend } from './got.js';
export { kyExtend } from './ky.js';
