// Independent oracle: JCS via V8's JSON.stringify/String(number) and UTF-16 key sort.
const crypto = require('crypto');
function jcs(v) {
  if (v === null || typeof v !== 'object') {
    if (typeof v === 'number' && !isFinite(v)) throw new Error('non-finite');
    return JSON.stringify(v);
  }
  if (Array.isArray(v)) return '[' + v.map(jcs).join(',') + ']';
  return '{' + Object.keys(v).sort().map(k => JSON.stringify(k) + ':' + jcs(v[k])).join(',') + '}';
}
function tokens(p) { if (p === '') return []; return p.slice(1).split('/').map(t => t.replace(/~1/g, '/').replace(/~0/g, '~')); }
// Pruned copy: keep selected subtrees in place; arrays up to the highest selected index, gaps null.
function prune(v, sels) {
  if (sels.some(t => t.length === 0)) return v;
  const groups = new Map();
  for (const t of sels) { if (!groups.has(t[0])) groups.set(t[0], []); groups.get(t[0]).push(t.slice(1)); }
  if (Array.isArray(v)) {
    const idx = [...groups.keys()].map(Number); const max = Math.max(...idx); const out = [];
    for (let i = 0; i <= max; i++) out.push(groups.has(String(i)) ? prune(v[i], groups.get(String(i))) : null);
    return out;
  }
  const out = {};
  for (const [k, rest] of groups) out[k] = prune(v[k], rest);
  return out;
}
const reqs = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const b = Buffer.alloc(8);
const res = reqs.map(r => {
  if (r.op === 'jcs_text') return jcs(JSON.parse(r.text));
  if (r.op === 'jcs_value') return jcs(r.value);
  if (r.op === 'num') { b.writeBigUInt64BE(BigInt('0x' + r.bits)); return String(b.readDoubleBE(0)); }
  if (r.op === 'fp') {
    let body = r.body_text !== undefined ? JSON.parse(r.body_text) : (r.body === undefined ? null : r.body);
    if (r.selected) body = prune(body, r.selected.map(tokens));
    const env = r.operation !== undefined ? { operation: r.operation, body } : { method: r.method, path: r.path, body };
    const c = jcs(env);
    return { canonical: c, hex: crypto.createHash('sha256').update(c, 'utf8').digest('hex') };
  }
  throw new Error('op ' + r.op);
});
process.stdout.write(JSON.stringify(res));
