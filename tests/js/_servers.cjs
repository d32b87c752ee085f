'use strict';
// The store suites' backends: PostgreSQL, MariaDB and Redis from RETRYCORE_TEST_POSTGRES /
// _MARIADB / _REDIS when they name running servers (`make test` starts them once for
// every suite), else started for this process by scripts/test-servers.sh and stopped at
// its exit. The drivers are the Node package's pinned dev dependencies.
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { execFileSync } = require('node:child_process');
const { createRequire } = require('node:module');

const root = path.join(__dirname, '..', '..');
/** require() from the Node package, where the drivers are installed. */
const pkgRequire = createRequire(path.join(root, 'bindings-node', 'package.json'));
const NAMES = { postgresql: 'RETRYCORE_TEST_POSTGRES', mariadb: 'RETRYCORE_TEST_MARIADB', redis: 'RETRYCORE_TEST_REDIS' };

let urls = null;
function servers() {
  if (urls) return urls;
  if (Object.values(NAMES).every((v) => process.env[v])) {
    urls = Object.fromEntries(Object.entries(NAMES).map(([k, v]) => [k, process.env[v]]));
    return urls;
  }
  const script = path.join(root, 'scripts', 'test-servers.sh');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retrycore-servers.'));
  process.on('exit', () => {
    execFileSync(script, ['stop', dir], { stdio: 'inherit' });
    fs.rmSync(dir, { recursive: true, force: true });
  });
  execFileSync(script, ['start', dir], { stdio: ['ignore', 'inherit', 'inherit'] });
  const env = {};
  for (const line of fs.readFileSync(path.join(dir, 'env'), 'utf8').split('\n')) {
    const m = /^export (\w+)=(.*)$/.exec(line);
    if (m) env[m[1]] = m[2];
  }
  for (const v of Object.values(NAMES)) process.env[v] = env[v];
  urls = Object.fromEntries(Object.entries(NAMES).map(([k, v]) => [k, env[v]]));
  return urls;
}

module.exports = { root, pkgRequire, servers };
