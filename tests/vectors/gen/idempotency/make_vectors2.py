"""Generates tests/vectors/idempotency/*.json (records, dead letters, RFC 3339); see make_vectors.py."""
import json, os, datetime
import os as _os
exec(open(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), 'make_vectors.py')).read().split('# ---------------- keys ----------------')[0].replace('__file__', repr(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), 'make_vectors.py'))))
T = 1_700_000_000_000
LEASE, RET = 30_000, 86_400_000
FP, FP2, KEY = "9f2c" + "0"*60, "1b7e" + "0"*60, "order-1001:charge:v1"
def rec(state="processing", fence=1, created=T-10_000, lease_until=None, completed=None, expires=None, response=None, category=None, key=KEY, fp=FP):
    if lease_until is None: lease_until = created + LEASE
    if expires is None: expires = (completed if completed is not None else lease_until) + RET
    return {"key": key, "fingerprint": fp, "state": state, "fence": fence, "created_ms": created, "lease_until_ms": lease_until,
            "completed_ms": completed, "expires_at_ms": expires, "response": response, "failure_category": category}
def done(state, fence=1, completed=T-5_000, response=None, category=None, **kw):
    return rec(state, fence, lease_until=completed, completed=completed, response=response, category=category, **kw)
def execute(reason, fence, created=T, now=T):
    return {"decision": "execute", "reason": reason, "fence": fence, "lease_until_ms": now+LEASE, "created_ms": created,
            "expires_at_ms": now+LEASE+RET, "http": None}
def replay(state, response=None, category=None):
    return {"decision": "replay", "state": state, "response": response, "failure_category": category, "http": None}
def in_progress(ms):
    return {"decision": "in_progress", "retry_after_ms": ms, "retry_after_s": -(-ms//1000), "http": {"status": 409, "error_type": None, "title": "A request is outstanding for this Idempotency-Key", "retry_after_s": -(-ms//1000)}}
MISMATCH = {"decision": "mismatch", "http": {"status": 422, "error_type": None, "title": "Idempotency-Key is already used", "retry_after_s": None}}
RESP = {"status": 201, "headers": [["location", "/v1/charges/ch_1"]], "body": {"id": "ch_1", "amount": 1000}}
FAIL = {"status": 504, "headers": [], "body": {"error": "upstream timeout"}}
def d(name, expect, record=None, now=T, fp=FP, key=KEY, **kw):
    c = {"name": name, "record": record, "key": key, "fingerprint": fp, "now": now}
    c.update(kw); c["expect"] = expect; return c
rd = [
 d("no record: execute, fence 1", execute("new", 1)),
 d("record expired exactly now (expires_at is exclusive): execute, fence + 1", execute("expired", 4), done("succeeded", 3, response=RESP, expires=T)),
 d("record expires 1 ms from now: replay", replay("succeeded", RESP), done("succeeded", 3, response=RESP, expires=T+1)),
 d("expired record with another fingerprint: execute (expiry comes first)", execute("expired", 2), done("succeeded", 1, response=RESP, expires=T-1), fp=FP2),
 d("expired processing claim: execute, new creation time", execute("expired", 8), rec("processing", 7, created=T-RET-LEASE-5, expires=T-5)),
 d("another fingerprint, live lease: mismatch", MISMATCH, rec("processing", 1, lease_until=T+5_000), fp=FP2),
 d("another fingerprint, completed: mismatch", MISMATCH, done("succeeded", 1, response=RESP), fp=FP2),
 d("another fingerprint, stripe: 400 idempotency_error", {"decision": "mismatch", "http": {"status": 400, "error_type": "idempotency_error", "title": "Idempotency-Key is already used", "retry_after_s": None}},
   done("succeeded", 1, response=RESP), fp=FP2, config={"lease_ms": LEASE, "retention_ms": RET, "stripe": True}),
 d("record for another key (storage-key collision): mismatch, never executed over", MISMATCH, done("succeeded", 1, response=RESP, key="order-1002:charge:v1")),
 d("another fingerprint and an ended lease: mismatch (rule 2 before rule 4)", MISMATCH, rec("processing", 1, lease_until=T-1), fp=FP2),
 d("processing, 1500 ms of lease left: in progress, Retry-After 2 s", in_progress(1500), rec("processing", 1, lease_until=T+1500)),
 d("processing, 1 ms left: Retry-After rounds up to 1 s", in_progress(1), rec("processing", 1, lease_until=T+1)),
 d("processing, 1000 ms left: Retry-After 1 s", in_progress(1000), rec("processing", 1, lease_until=T+1000)),
 d("processing, 1001 ms left: Retry-After 2 s", in_progress(1001), rec("processing", 1, lease_until=T+1001)),
 d("processing, stripe: still 409", in_progress(30_000), rec("processing", 1, lease_until=T+30_000), config={"lease_ms": LEASE, "retention_ms": RET, "stripe": True}),
 d("lease ends exactly now (lease_until is exclusive): take over, fence + 1, creation kept", execute("takeover", 3, created=T-10_000), rec("processing", 2, lease_until=T)),
 d("lease ended long ago: take over", execute("takeover", 6, created=T-3_600_000), rec("processing", 5, created=T-3_600_000, lease_until=T-3_000_000)),
 d("succeeded: replay the stored response", replay("succeeded", RESP), done("succeeded", 1, response=RESP)),
 d("succeeded without a stored response: replay nothing", replay("succeeded"), done("succeeded", 1)),
 d("failed, timeout (something may have run): replay the failure", replay("failed", FAIL, "timeout"), done("failed", 1, response=FAIL, category="timeout")),
 d("failed, server_error: replay the failure", replay("failed", FAIL, "server_error"), done("failed", 2, response=FAIL, category="server_error")),
 d("failed, connect (nothing ran): execute, fence + 1", execute("released", 2, created=T-10_000), done("failed", 1, category="connect")),
 d("failed, not_processed: execute", execute("released", 2, created=T-10_000), done("failed", 1, category="not_processed")),
 d("failed, overloaded: execute", execute("released", 2, created=T-10_000), done("failed", 1, category="overloaded")),
 d("failed, resource_exhausted: execute", execute("released", 2, created=T-10_000), done("failed", 1, category="resource_exhausted")),
 d("failed without a category: replay", replay("failed", FAIL), done("failed", 1, response=FAIL)),
 d("override: failures always replayed", replay("failed", None, "connect"), done("failed", 1, category="connect"), config={"lease_ms": LEASE, "retention_ms": RET, "failure_handling": "replay"}),
 d("override: failures always executed", execute("released", 2, created=T-10_000), done("failed", 1, response=FAIL, category="timeout"), config={"lease_ms": LEASE, "retention_ms": RET, "failure_handling": "execute"}),
 d("override: timeout releases the claim", execute("released", 2, created=T-10_000), done("failed", 1, category="timeout"), config={"lease_ms": LEASE, "retention_ms": RET, "release_categories": ["timeout"]}),
 d("override: no category releases the claim", replay("failed", None, "connect"), done("failed", 1, category="connect"), config={"lease_ms": LEASE, "retention_ms": RET, "release_categories": []}),
 d("custom lease and retention", {**execute("new", 1), "lease_until_ms": T+5_000, "expires_at_ms": T+5_000+3_600_000}, config={"lease_ms": 5_000, "retention_ms": 3_600_000}),
 d("a storage_key result (sha256: and 64 lowercase hex) is a valid record key", execute("new", 1), key="sha256:" + "0123456789abcdef" * 4),
 d("a storage_key result cut to 32 hex digits (max_len 39) is a valid record key", execute("new", 1), key="sha256:" + "0123456789abcdef" * 2),
 d("a user key longer than 255 characters (a scoped key before hashing) is a valid record key", execute("new", 1), key="t" * 300),
]
for name, bad in [("empty key", ""), ("space in the key", "order 1001"), ("non-ASCII key", "caf\u00e9"),
                  ("sha256: with uppercase hex", "sha256:" + "0123456789ABCDEF" * 4),
                  ("sha256: with 31 hex digits", "sha256:" + "a" * 31), ("sha256: with 65 hex digits", "sha256:" + "a" * 65),
                  ("sha256: with a non-hex character", "sha256:" + "g" * 40), ("bare sha256: prefix", "sha256:")]:
    c = d(f"invalid record key ({name}): invalid_key", None, key=bad)
    del c["expect"]
    c["error"] = "invalid_key"; c["error_field"] = "key"
    rd.append(c)
# A stored record that does not read as one (docs/idempotency.md, "Records": to_json / from_json).
no_fence = rec(); del no_fence["fence"]
for name, bad, code in [("whose state is not a string", {**rec(), "state": 1}, "invalid_type"),
                        ("whose response is an array of its fields, not an object", done("succeeded", 1, response=[201]), "invalid_type"),
                        ("with a key a record does not define", {**rec(), "fencing": 1}, "unknown_key"),
                        ("without its fence", no_fence, "missing_field")]:
    c = d(f"a stored record {name}: {code}", None, bad)
    del c["expect"]
    c["error"] = code; c["error_field"] = "record"
    rd.append(c)
rd += [
 {"name": "no Idempotency-Key where one is required: 400", "key": None, "expect": {"decision": "missing_key", "http": {"status": 400, "error_type": None, "title": "Idempotency-Key is missing", "retry_after_s": None}}},
]
write("record_decide.json", "record_decide",
 "decide(record, key, fingerprint, now, config) in the order of docs/idempotency.md (Records). Times are Unix epoch ms. 'record' is an IdempotencyRecord as JSON or null; 'key' null means a request without a key (missing_key_answer). expect: the decision as JSON (tag 'decision') plus 'http' {status, error_type, title, retry_after_s} or null (title: the RFC 9457 problem body's, which every middleware sends).",
 rd, {"config": {"lease_ms": LEASE, "retention_ms": RET}})

def cm(name, expect_or_err, record, fence, outcome, now=T, config=None):
    c = {"name": name, "record": record, "fence": fence, "outcome": outcome, "now": now}
    if config: c["config"] = config
    if isinstance(expect_or_err, str):
        c["error"] = expect_or_err
        c["error_field"] = {"stale_fence": "fence", "fence_from_future": "fence", "invalid_state": "record.state", "invalid_value": "category"}[expect_or_err]
    else: c["expect"] = expect_or_err
    return c
P = rec("processing", 3, created=T-10_000, lease_until=T+20_000)
def completed(state, response=None, category=None, now=T, fence=3, retention=RET, base=P):
    r = dict(base); r.update(state=state, fence=fence, lease_until_ms=now, completed_ms=now, expires_at_ms=now+retention, response=response, failure_category=category); return r
rc = [
 cm("success stored, expires after retention", completed("succeeded", RESP), P, 3, {"state": "succeeded", "response": RESP}),
 cm("success without a response", completed("succeeded"), P, 3, {"state": "succeeded"}),
 cm("failure stored with its category", completed("failed", FAIL, "timeout"), P, 3, {"state": "failed", "category": "timeout", "response": FAIL}),
 cm("failure that released the claim", completed("failed", None, "connect"), P, 3, {"state": "failed", "category": "connect"}),
 cm("completion after the lease ended, nobody took over: allowed", completed("succeeded", RESP, now=T+60_000), P, 3, {"state": "succeeded", "response": RESP}, now=T+60_000),
 cm("clock reads before creation: completion at creation", completed("succeeded", now=T-10_000), P, 3, {"state": "succeeded"}, now=T-20_000),
 cm("custom retention", completed("succeeded", retention=7*RET), P, 3, {"state": "succeeded"}, config={"lease_ms": LEASE, "retention_ms": 7*RET}),
 cm("stale fence: another request took over", "stale_fence", P, 2, {"state": "succeeded", "response": RESP}),
 cm("stale fence 1 against 3", "stale_fence", P, 1, {"state": "succeeded"}),
 cm("fence from the future", "fence_from_future", P, 4, {"state": "succeeded"}),
 cm("completed twice", "invalid_state", done("succeeded", 3, response=RESP), 3, {"state": "succeeded"}),
 cm("stale fence on a completed record: stale first", "stale_fence", done("succeeded", 3, response=RESP), 2, {"state": "succeeded"}),
 cm("failure with an empty category", "invalid_value", P, 3, {"state": "failed", "category": ""}),
]
write("record_complete.json", "record_complete",
 "complete(record, fence, outcome, now, config): the completed record, or stale_fence / fence_from_future / invalid_state / invalid_value. outcome is {state: succeeded|failed, category?, response?}. expect the record as JSON.",
 rc, {"config": {"lease_ms": LEASE, "retention_ms": RET}})

def rn(name, expect_or_err, record, fence, now=T):
    c = {"name": name, "record": record, "fence": fence, "now": now}
    if isinstance(expect_or_err, str): c["error"] = expect_or_err
    else: c["expect"] = expect_or_err
    return c
P2 = rec("processing", 3, created=T-10_000, lease_until=T+5_000, expires=T+5_000+RET)
rr = [
 rn("heartbeat extends the lease to now + lease", {**P2, "lease_until_ms": T+LEASE, "expires_at_ms": T+LEASE+RET}, P2, 3),
 rn("a lease never shrinks", {**P2, "lease_until_ms": T+5_000}, P2, 3, now=T-40_000),
 rn("renew after the lease ended, nobody took over", {**P2, "lease_until_ms": T+10_000+LEASE, "expires_at_ms": T+10_000+LEASE+RET}, P2, 3, now=T+10_000),
 rn("stale fence", "stale_fence", P2, 2),
 rn("fence from the future", "fence_from_future", P2, 4),
 rn("completed record", "invalid_state", done("succeeded", 3), 3),
]
write("record_renew.json", "record_renew", "renew_lease(record, fence, now, config): the record with lease_until_ms = max(lease_until_ms, now + lease) and expires_at_ms moved along, or an error code.", rr, {"config": {"lease_ms": LEASE, "retention_ms": RET}})

BASE = {"msg_id": "M-20260819-000123", "message": {"order": "1001", "amount": 1000}, "reason": "upstream 503 after 5 attempts",
        "error_class": "HTTPError", "error_message": "503 Service Unavailable", "attempts": 5,
        "first_failure_at": "2026-08-19T02:11:03+09:00", "last_failure_at": "2026-08-19T02:12:47+09:00", "trace_id": "a1b2c3d4"}
FULL_DEFAULTS = {"trace_id": None, "topic": None, "partition": None, "offset": None, "status": "pending", "target_idempotent": False, "replayable": False}
def norm(letter): 
    out = {k: None for k in ["msg_id","message","reason","error_class","error_message","attempts","first_failure_at","last_failure_at"]}
    out.update(FULL_DEFAULTS); out.update(letter); return out
def dl(name, letter, expect=None, error=None, ops=None):
    c = {"name": name, "letter": letter}
    if ops: c["ops"] = ops
    if error: c["error"] = error
    if error and name in DL_FIELDS: c["error_field"] = DL_FIELDS[name]
    else: c["expect"] = expect
    return c
def without(k): x = dict(BASE); del x[k]; return x
DL_FIELDS = {'missing msg_id': 'msg_id', 'missing message': 'message', 'null message': 'message', 'missing error_class': 'error_class', 'missing error_message': 'error_message', 'missing attempts': 'attempts', 'missing first failure time': 'first_failure_at', 'empty msg_id': 'msg_id', 'empty reason': 'reason', 'zero attempts': 'attempts', 'attempts as a string': 'attempts', 'first failure after the last': 'last_failure_at', 'timestamp with a space instead of T': 'first_failure_at', 'partition without topic': 'partition', 'mark replayable refused: target not idempotent': 'target_idempotent', 'unknown status': 'status', 'replayable in input but target not idempotent': 'replayable', 'field given twice under its name and an alias': 'message'}
SRC = {**BASE, "topic": "orders", "partition": 3, "offset": 42, "target_idempotent": True}
dls = [
 dl("a typical dead letter, normalised", BASE, norm(BASE)),
 dl("alternative names original / first_failed_at / last_failed_at", {**without("message"), "original": BASE["message"], "first_failed_at": BASE["first_failure_at"], "last_failed_at": BASE["last_failure_at"], "first_failure_at": None, "last_failure_at": None} if False else
    {k: v for k, v in {**BASE, "original": BASE["message"], "first_failed_at": BASE["first_failure_at"], "last_failed_at": BASE["last_failure_at"]}.items() if k not in ("message", "first_failure_at", "last_failure_at")}, norm(BASE)),
 dl("source coordinates and idempotent target", SRC, norm(SRC)),
 dl("one attempt, equal first and last failure, empty error message", {**BASE, "attempts": 1, "last_failure_at": BASE["first_failure_at"], "error_message": ""},
    norm({**BASE, "attempts": 1, "last_failure_at": BASE["first_failure_at"], "error_message": ""})),
 dl("offsets compared as instants", {**BASE, "last_failure_at": "2026-08-18T17:12:00Z"}, norm({**BASE, "last_failure_at": "2026-08-18T17:12:00Z"})),
 dl("lowercase t and z, fractional seconds", {**BASE, "first_failure_at": "2026-08-18t17:11:03.25z", "last_failure_at": "2026-08-18T17:11:03.250001Z"},
    norm({**BASE, "first_failure_at": "2026-08-18t17:11:03.25z", "last_failure_at": "2026-08-18T17:11:03.250001Z"})),
 dl("mark replayable with an idempotent target", SRC, norm({**SRC, "replayable": True}), ops=["mark_replayable"]),
 dl("replay after marking", SRC, norm({**SRC, "replayable": True, "status": "replayed"}), ops=["mark_replayable", "mark_replayed"]),
 dl("discard", BASE, norm({**BASE, "status": "discarded"}), ops=["discard"]),
 dl("mark replayable refused: target not idempotent", BASE, error="invalid_state", ops=["mark_replayable"]),
 dl("replayed without being marked replayable", SRC, error="invalid_state", ops=["mark_replayed"]),
 dl("mark replayable refused once discarded", SRC, error="invalid_state", ops=["discard", "mark_replayable"]),
 dl("replayable in input but target not idempotent", {**BASE, "replayable": True}, error="invalid_dead_letter"),
 dl("missing msg_id", without("msg_id"), error="missing_field"),
 dl("missing message", without("message"), error="missing_field"),
 dl("null message", {**BASE, "message": None}, error="missing_field"),
 dl("missing error_class", without("error_class"), error="missing_field"),
 dl("missing error_message", without("error_message"), error="missing_field"),
 dl("missing attempts", without("attempts"), error="missing_field"),
 dl("missing first failure time", without("first_failure_at"), error="missing_field"),
 dl("empty msg_id", {**BASE, "msg_id": ""}, error="invalid_dead_letter"),
 dl("empty reason", {**BASE, "reason": ""}, error="invalid_dead_letter"),
 dl("zero attempts", {**BASE, "attempts": 0}, error="invalid_dead_letter"),
 dl("attempts as a string", {**BASE, "attempts": "5"}, error="invalid_type"),
 dl("negative attempts", {**BASE, "attempts": -1}, error="invalid_type"),
 dl("fractional attempts", {**BASE, "attempts": 1.5}, error="invalid_type"),
 dl("first failure after the last", {**BASE, "first_failure_at": "2026-08-19T02:12:48+09:00"}, error="invalid_dead_letter"),
 dl("last before first across offsets", {**BASE, "last_failure_at": "2026-08-18T17:11:02Z"}, error="invalid_dead_letter"),
 dl("timestamp with a space instead of T", {**BASE, "first_failure_at": "2026-08-19 02:11:03+09:00"}, error="invalid_dead_letter"),
 dl("timestamp without offset", {**BASE, "first_failure_at": "2026-08-19T02:11:03"}, error="invalid_dead_letter"),
 dl("timestamp on a day that does not exist", {**BASE, "first_failure_at": "2026-02-29T02:11:03Z"}, error="invalid_dead_letter"),
 dl("unix time instead of rfc 3339", {**BASE, "first_failure_at": "1755537063"}, error="invalid_dead_letter"),
 dl("unknown key", {**BASE, "retry_count": 5}, error="unknown_key"),
 dl("unknown status", {**BASE, "status": "retrying"}, error="invalid_dead_letter"),
 dl("partition without topic", {**BASE, "partition": 3}, error="invalid_dead_letter"),
 dl("field given twice under its name and an alias", {**BASE, "original": {"x": 1}}, error="invalid_dead_letter"),
 dl("not an object", ["M-1"], error="invalid_type"),
]
write("dead_letter.json", "dead_letter",
 "DeadLetter.from_json(letter) then each of 'ops' (mark_replayable, mark_replayed, discard) in order. expect the letter as JSON with every key (null when absent), or error code.",
 dls)

def iso(ms):
    dt = datetime.datetime.fromtimestamp(ms/1000, tz=datetime.timezone.utc)
    return dt.strftime('%Y-%m-%dT%H:%M:%S.') + f"{ms%1000:03d}Z"
def ms_of(s):
    return int(datetime.datetime.fromisoformat(s.replace('Z', '+00:00')).timestamp()*1000)
r3 = [ok("format epoch", iso(0), unix_ms=0), ok("format a time with milliseconds", iso(T+123), unix_ms=T+123),
      ok("format leap day", iso(951782400000), unix_ms=951782400000), ok("format the last representable instant", "9999-12-31T23:59:59.999Z", unix_ms=253402300799999),
      err("format after year 9999", "out_of_range", unix_ms=253402300800000),
      ok("parse UTC", ms_of("2026-08-18T17:11:03+00:00"), text="2026-08-18T17:11:03Z"),
      ok("parse an offset", ms_of("2026-08-19T02:11:03+09:00"), text="2026-08-19T02:11:03+09:00"),
      ok("parse a negative offset", ms_of("2026-08-18T12:11:03-05:00"), text="2026-08-18T12:11:03-05:00"),
      ok("parse fraction, truncated to ms", ms_of("2026-08-18T17:11:03+00:00")+123, text="2026-08-18T17:11:03.123987Z"),
      ok("parse a leap second as the next minute's first second", 1483228800000, text="2016-12-31T23:59:60Z"),
      ok("parse before 1970", -1, text="1969-12-31T23:59:59.999Z"),
      err("parse without offset", "invalid_value", text="2026-08-18T17:11:03"),
      err("parse hour 24", "invalid_value", text="2026-08-18T24:00:00Z"),
      err("parse offset without colon", "invalid_value", text="2026-08-18T17:11:03+0900")]
write("rfc3339.json", "rfc3339", "format_rfc3339_ms(unix_ms) -> 'YYYY-MM-DDTHH:MM:SS.mmmZ', or parse_rfc3339_ms(text) -> Unix ms (rounded down). expect the string / integer, or error code.", r3)
