// The integration snippet of docs/js.md and README.md is a tested file: each ```js block
// that imports 'retrycore/integrations' is, verbatim, the marked block of quickstart.mjs,
// which runs against a local server.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..', '..');
const quickstart = path.join(here, 'quickstart.mjs');
const marked = readFileSync(quickstart, 'utf8').split('// --- docs/js.md\n')[1].split('// --- end\n')[0];

for (const doc of ['docs/js.md', 'README.md']) {
  test(`${doc}: the integration snippet is quickstart.mjs's`, () => {
    const blocks = [...readFileSync(path.join(root, doc), 'utf8').matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]).filter((b) => b.includes("'retrycore/integrations'"));
    assert.deepEqual(blocks, [marked]);
  });
}

test('quickstart.mjs runs', () => {
  const out = execFileSync(process.execPath, [quickstart], { cwd: here, encoding: 'utf8', timeout: 60_000 });
  assert.match(out, /every snippet ran/);
});
