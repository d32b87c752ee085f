// Two builds of the wasm package in one process, issue 17's rows interleaved
// round by round (bindings-node/bench/issue17.mjs): what a size step costs per call.
//
//   BEFORE=<another dist/> node bench/ab.mjs      (after: ../dist, or AFTER=<dist/>)
import { createRequire } from 'node:module';
import * as cockatiel from 'cockatiel';
import Opossum from 'opossum';
import stableStringify from 'fast-json-stable-stringify';
import { runIssue17 } from '../../bindings-node/bench/issue17.mjs';

const require = createRequire(import.meta.url);
const before = process.env.BEFORE;
if (!before) throw new Error('BEFORE=<dist directory of the build to compare against> (e.g. a worktree of the previous commit, built with make -C bindings-wasm build)');
const after = process.env.AFTER || new URL('../dist', import.meta.url).pathname;
console.log(`before: ${before}\nafter:  ${after}\nNode ${process.version}`);
await runIssue17([['wasm before', require(`${before}/index.cjs`)], ['wasm after', require(`${after}/index.cjs`)]], { cockatiel, Opossum, stableStringify });
