// The shipped .wasm's size against its budget (docs/js.md, "Size").
//
// GOAL is where the package is going: the whole API in ≤ 150 KB raw and
// ≤ 60 KB gzip -9, what browser users accept beside the pure-JS libraries they
// would pick instead. BUDGET is a ratchet on the way there: the size of the
// last step plus about 1 %. A build above it fails; a build that shrank more
// than 5 % below it fails too, asking for the budget to be lowered, so that
// the next step cannot spend what this one saved without anyone deciding so.
// BENCHMARKS.md ("Package size") keeps each step's sizes and breakdown.
//
// The budgets hold for the shipped build only (scripts/build-wasm.sh writes
// dist/.wasm-build.json): Debian's rustc with the size flags, wasm-opt, no
// extra features or rustflags, names stripped. Another build (a rustup laptop,
// `make bench`'s floor exports) skips, unless RETRYCORE_SIZE_REQUIRE=1, which
// `make test` sets: there a skip is a failure.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { DIST } from './harness/server.mjs';

export const GOAL = { raw: 150_000, gzip: 60_000 };
export const BUDGET = { raw: 527_600, gzip: 224_600 };
const SLACK = 0.05;

const gzip = (bytes) => zlib.gzipSync(bytes, { level: 9 }).length;

function shippedBuild() {
  const file = path.join(DIST, '.wasm-build.json');
  if (!fs.existsSync(file)) return `${file} is missing (built before the size budgets?)`;
  const b = JSON.parse(fs.readFileSync(file, 'utf8'));
  const why = [];
  if (b.toolchain !== 'debian' || b.size_flags !== 1) why.push(`toolchain ${b.toolchain}, size flags ${b.size_flags}`);
  if (!b.wasm_opt) why.push('no wasm-opt');
  if (b.keep_names) why.push('names kept');
  if (b.cargo_args || b.rustflags) why.push(`extra cargo args '${b.cargo_args}' / rustflags '${b.rustflags}'`);
  if (b.profile !== 'wasm-release' || b.opt_level) why.push(`profile ${b.profile} opt-level '${b.opt_level}'`);
  return why.length ? `not the shipped build: ${why.join('; ')}` : null;
}

test('the shipped .wasm fits its budget', (t) => {
  const notShipped = shippedBuild();
  if (notShipped) {
    assert.notEqual(process.env.RETRYCORE_SIZE_REQUIRE, '1', `RETRYCORE_SIZE_REQUIRE=1 but ${notShipped}`);
    t.skip(notShipped);
    return;
  }
  for (const dir of ['web', 'bundler', 'node']) {
    const file = path.join(DIST, dir, 'retrycore_wasm_bg.wasm');
    const bytes = fs.readFileSync(file);
    const size = { raw: bytes.length, gzip: gzip(bytes) };
    const glue = fs.readFileSync(path.join(DIST, dir, 'retrycore_wasm.js'));
    t.diagnostic(`${dir}: ${size.raw} B raw, ${size.gzip} B gzip -9 (budget ${BUDGET.raw} / ${BUDGET.gzip}, goal ${GOAL.raw} / ${GOAL.gzip}); glue ${glue.length} B, ${gzip(glue)} B gzipped`);
    for (const k of ['raw', 'gzip']) {
      assert.ok(size[k] <= BUDGET[k], `${dir}: ${size[k]} B ${k} is over the budget of ${BUDGET[k]} B (tests/wasm/size.test.mjs)`);
      assert.ok(size[k] >= BUDGET[k] * (1 - SLACK),
        `${dir}: ${size[k]} B ${k} is more than ${SLACK * 100} % below the budget of ${BUDGET[k]} B: lower BUDGET in tests/wasm/size.test.mjs to the new size plus ~1 % and record the step in BENCHMARKS.md`);
    }
  }
});

test('no panic machinery or source paths in the shipped .wasm', (t) => {
  const notShipped = shippedBuild();
  if (notShipped) {
    t.skip(notShipped);
    return;
  }
  const text = fs.readFileSync(path.join(DIST, 'web', 'retrycore_wasm_bg.wasm')).toString('latin1');
  // -Cpanic=immediate-abort and -Zlocation-detail=none (scripts/build-wasm.sh): a panic
  // is a bare trap, with no message and no file name to carry.
  for (const sentinel of ['panicked at', 'called `Option::unwrap()`', 'core/src/', 'bindings-js/src/', 'library/std/src']) {
    assert.equal(text.includes(sentinel), false, `the .wasm contains ${JSON.stringify(sentinel)}`);
  }
});
