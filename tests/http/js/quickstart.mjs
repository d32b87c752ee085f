// The JS integration snippet of docs/js.md and README.md, verbatim (snippets.test.mjs
// checks that each document's block is the marked part here, and runs this file).

// --- docs/js.md
import http from 'node:http';
import { RetryPolicy } from 'retrycore';
import { wrapFetch, interceptor, axiosAdapter, gotExtend, kyExtend } from 'retrycore/integrations';
import { Agent, request } from 'undici';
import axios from 'axios';
import got from 'got';
import ky from 'ky';

// A local server that answers 503 with Retry-After: 0 every other request.
let calls = 0;
const server = http.createServer((req, res) => res.writeHead(++calls % 2 ? 503 : 200, { 'retry-after': '0' }).end(req.headers['idempotency-key']));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/orders/1001`;

const policy = new RetryPolicy({ maxAttempts: 4, initial: 100, maxDelay: 2_000, deadline: 10_000 });
const options = { idempotencyHeader: 'Idempotency-Key' }; // one key, sent on every attempt

const retryingFetch = wrapFetch(fetch, policy, options);
const dispatcher = new Agent().compose(interceptor(policy, options));
const axiosClient = axios.create({ adapter: axiosAdapter(axios, policy, options) });
const gotClient = gotExtend(got, policy, options);
const kyClient = kyExtend(ky, policy, options);

console.log('fetch', (await retryingFetch(url)).status);
console.log('undici', (await request(url, { dispatcher })).statusCode);
console.log('axios', (await axiosClient.get(url)).status);
console.log('got', (await gotClient(url)).statusCode);
console.log('ky', (await kyClient(url)).status);
// Per request: `retrycore` options (fetch init, undici.request, axios config, got `context`).
console.log('POST', (await retryingFetch(url, { method: 'POST', body: '{}', retrycore: { idempotencyKeySent: true } })).status);
server.close();
await dispatcher.close();
// --- end

if (calls !== 12) throw new Error(`the server saw ${calls} requests, not 12`);
console.log('every snippet ran');
