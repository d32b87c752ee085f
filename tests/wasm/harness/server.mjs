// The loopback test server of the real-runtime tests (Node only).
//
//   /pkg/*                 the built package, bindings-wasm/dist/
//   /vectors/index.json    the files of tests/vectors/ (relative paths); /vectors/<path> each file
//   /gen/vectors.test.mjs  tests/js/vectors.test.cjs wrapped as an ES module (wrap.mjs)
//   /harness/*, /browser/* tests/wasm/harness/, tests/wasm/browser/
//   /flaky/<id>            503 + Retry-After: 1 twice, then 200 with what it saw
//                          (attempts and the Idempotency-Key of each)
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { wrapCjs } from './wrap.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(here, '..', '..', '..');
export const DIST = path.join(REPO, 'bindings-wasm', 'dist');
export const VECTORS = path.join(REPO, 'tests', 'vectors');

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
};

/** Every vector file, relative to tests/vectors/, sorted. */
export function vectorList(dir = VECTORS, prefix = '') {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (e.isDirectory()) out.push(...vectorList(path.join(dir, e.name), `${prefix}${e.name}/`));
    else if (e.name.endsWith('.json')) out.push(`${prefix}${e.name}`);
  }
  return out;
}

/** `{ relativePath: text }` of every vector file. */
export function vectorFiles() {
  return Object.fromEntries(vectorList().map((rel) => [rel, fs.readFileSync(path.join(VECTORS, rel), 'utf8')]));
}

/** Serves a file below `base`, refusing paths that leave it. */
function sendFile(res, base, rel) {
  const file = path.resolve(base, '.' + path.posix.normalize('/' + rel));
  if (!file.startsWith(base + path.sep)) return send(res, 403, 'forbidden');
  fs.readFile(file, (err, body) => {
    if (err) return send(res, 404, 'not found');
    res.writeHead(200, { 'content-type': MIME[path.extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    res.end(body);
  });
}

function send(res, status, body, headers = {}) {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  res.end(body);
}

/** Starts the server on 127.0.0.1 (a free port): `{ url, flaky, close }`. */
export function startServer() {
  const flaky = new Map(); // id -> { attempts, keys }
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    const p = decodeURIComponent(u.pathname);
    if (p.startsWith('/flaky/')) {
      const id = p.slice('/flaky/'.length);
      const s = flaky.get(id) ?? { attempts: 0, keys: [], methods: [] };
      flaky.set(id, s);
      s.attempts++;
      s.keys.push(req.headers['idempotency-key'] ?? null);
      s.methods.push(req.method);
      req.resume();
      if (s.attempts <= 2) return send(res, 503, 'busy', { 'retry-after': '1' });
      return send(res, 200, JSON.stringify(s), { 'content-type': 'application/json' });
    }
    if (p === '/vectors/index.json') return send(res, 200, JSON.stringify(vectorList()), { 'content-type': 'application/json' });
    if (p === '/gen/vectors.test.mjs') {
      const src = fs.readFileSync(path.join(REPO, 'tests', 'js', 'vectors.test.cjs'), 'utf8');
      return send(res, 200, wrapCjs(src), { 'content-type': MIME['.mjs'] });
    }
    if (p === '/' || p === '/browser/') return send(res, 302, '', { location: '/browser/index.html' });
    if (p.startsWith('/pkg/')) return sendFile(res, DIST, p.slice(5));
    if (p.startsWith('/vectors/')) return sendFile(res, VECTORS, p.slice(9));
    if (p.startsWith('/harness/')) return sendFile(res, here, p.slice(9));
    if (p.startsWith('/browser/')) return sendFile(res, path.join(here, '..', 'browser'), p.slice(9));
    send(res, 404, 'not found');
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}`,
        port,
        flaky,
        close: () => new Promise((r) => server.close(() => r())),
      });
    });
  });
}
