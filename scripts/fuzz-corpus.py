#!/usr/bin/env python3
"""Seeds fuzz/corpus/<target>/ from the shared vectors (run once; the corpus is checked in)."""
import hashlib
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
V = ROOT / "tests" / "vectors"
C = ROOT / "fuzz" / "corpus"


def put(target, text):
    d = C / target
    d.mkdir(parents=True, exist_ok=True)
    data = text.encode()
    (d / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


def cases(rel):
    p = V / rel
    return json.loads(p.read_text())["cases"] if p.exists() else []


for c in cases("policy/documents.json"):
    doc = c.get("text") or json.dumps(c.get("document", {}))
    put("policy_json", doc)
    put("lint_input", doc + "\n{}")
for c in cases("policy/duration.json"):
    put("duration", c["text"])
for c in cases("server_delay/headers.json"):
    put("retry_after", "\n".join(f"{k}:{v}" for k, v in c["headers"]))
for c in cases("server_delay/http_date.json"):
    put("retry_after", c["value"])
for c in cases("classify/classify.json"):
    f = c["failure"]
    doc = json.dumps(c.get("policy", {}))
    heads = ";".join(f"{k}={v}" for k, v in f.get("headers", []))
    put("classify", f"{doc}\n{f.get('status', '')}|{f.get('grpc_code', '')}|{f.get('method', '')}|{','.join(f.get('error_names', []))}|{heads}")
for c in cases("lint/lint.json"):
    put("lint_input", json.dumps(c["policy"]) + "\n" + json.dumps(c.get("service", {})))
for p in sorted((V / "idempotency").glob("*.json")) if (V / "idempotency").exists() else []:
    doc = json.loads(p.read_text())
    for c in doc["cases"]:
        for k in ("value", "header", "key"):
            if isinstance(c.get(k), str):
                put("idempotency_header", c[k])
        for k in ("json", "text", "input"):
            if isinstance(c.get(k), str):
                put("jcs", c[k])
            elif k in c:
                put("jcs", json.dumps(c[k]))
put("snapshot_restore", '{"version":1}')
put("session_ops", "\x01\x02" + "\x10\x00\x20\x02\x30\x03\x00\x04" * 4)
print("corpus seeded:", {d.name: len(list(d.iterdir())) for d in sorted(C.iterdir())})
