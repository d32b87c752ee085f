"""Generates tests/vectors/idempotency/*.json (keys, headers, JCS, fingerprints).

JCS and fingerprint answers come from V8 and Node's crypto (oracle.js), an
implementation independent of the Rust core. VECTORS_OUT redirects the output
(the drift check writes to a temporary directory and compares).
"""
import json, hashlib, subprocess, uuid, os, copy
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.environ.get('VECTORS_OUT') or os.path.join(HERE, '..', '..', 'idempotency')
def node(reqs):
    r = subprocess.run(['node', os.path.join(HERE, 'oracle.js')], input=json.dumps(reqs), capture_output=True, text=True, check=True)
    return json.loads(r.stdout)
def write(name, kind, comment, cases, defaults=None):
    doc = {"_comment": comment, "kind": kind}
    if defaults: doc["defaults"] = defaults
    doc["cases"] = cases
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
    with open(os.path.join(OUT, name), 'w', encoding='utf-8') as f:
        json.dump(doc, f, ensure_ascii=False, indent=2)
        f.write('\n')
    print(name, len(cases))
def ok(name, expect, **inputs): return {"name": name, **inputs, "expect": expect}
def err(name, code, **inputs): return {"name": name, **inputs, "error": code}

# ---------------- keys ----------------
visible = ''.join(chr(c) for c in range(0x21, 0x7f))
kv = [
 ok("business id, operation, version", True, key="order-1001:charge:v1"),
 ok("uuid", True, key="8e03978e-40d5-43e8-bc93-6894a57f9324"),
 ok("one character", True, key="!"),
 ok("every visible ascii character", True, key=visible),
 ok("255 characters, the default maximum", True, key="a"*255),
 ok("sha256 without the colon is a user key", True, key="sha256"),
 ok("the reserved prefix is case-sensitive", True, key="SHA256:abc"),
 ok("custom maximum, at the limit", True, key="abcdefghij", max_len=10),
 err("empty", "invalid_key", key=""),
 err("space inside", "invalid_key", key="order 1001", error_field="key"),
 err("leading space", "invalid_key", key=" order-1001"),
 err("trailing space", "invalid_key", key="order-1001 "),
 err("tab", "invalid_key", key="a\tb"),
 err("line feed", "invalid_key", key="a\nb"),
 err("nul", "invalid_key", key="a\u0000b"),
 err("delete 0x7f", "invalid_key", key="a\u007fb"),
 err("non-ascii letter", "invalid_key", key="caf\u00e9"),
 err("emoji", "invalid_key", key="key-\U0001F600"),
 err("no-break space", "invalid_key", key="a\u00a0b"),
 err("zero-width space", "invalid_key", key="a\u200bb"),
 err("256 characters", "invalid_key", key="a"*256),
 err("1000 characters", "invalid_key", key="k"*1000),
 err("reserved prefix sha256:", "invalid_key", key="sha256:0123abcd"),
 err("reserved prefix alone", "invalid_key", key="sha256:"),
 err("custom maximum exceeded", "invalid_key", key="abcdefghijk", max_len=10),
 err("maximum of zero", "out_of_range", key="a", max_len=0, error_field="max_len"),
]
write("key_validate.json", "key_validate",
 "validate_key(key, max_len): 1..=max_len visible ASCII (0x21-0x7E), no 'sha256:' prefix. expect true, or error code.",
 kv, {"max_len": 255})

kd = [
 ok("business id + operation + version", "order-1001:charge:v1", parts=["order-1001","charge","v1"]),
 ok("domain + time window + id", "payment:20261007T120000:1001", parts=["payment","20261007T120000","1001"]),
 ok("one part", "order-1001", parts=["order-1001"]),
 ok("exactly 255 characters joined", "a"*127+":"+"b"*127, parts=["a"*127, "b"*127]),
 err("no parts", "invalid_key", parts=[]),
 err("empty part", "invalid_key", parts=["order-1001", "", "v1"], error_field="parts[1]"),
 err("part containing the separator", "invalid_key", parts=["order:1001", "charge"], error_field="parts[0]"),
 err("part with a space", "invalid_key", parts=["order 1001", "charge"], error_field="parts[0]"),
 err("part with non-ascii", "invalid_key", parts=["commande-\u00e9", "charge"], error_field="parts[0]"),
 err("joined key too long", "invalid_key", parts=["a"*128, "b"*127], error_field="key"),
 err("joined key takes the reserved prefix", "invalid_key", parts=["sha256", "abc"]),
]
write("key_derive.json", "key_derive", "derive_key(parts): parts joined with ':'; empty parts and parts containing ':' are errors; the result is validated with the default maximum.", kd)

ks = [
 ok("tenant and key", "4:acme:order-1001", tenant="acme", key="order-1001"),
 ok("tenant with a colon", "3:a:b:c", tenant="a:b", key="c"),
 ok("key with a colon: no collision with the previous case", "1:a:b:c", tenant="a", key="b:c"),
 ok("two-digit tenant length", "12:tenant-00042:k", tenant="tenant-00042", key="k"),
 ok("long tenant and key may exceed 255", str(200)+":"+"t"*200+":"+"k"*255, tenant="t"*200, key="k"*255),
 err("empty tenant", "invalid_key", tenant="", key="k", error_field="tenant"),
 err("tenant with a space", "invalid_key", tenant="acme corp", key="k", error_field="tenant"),
 err("tenant with non-ascii", "invalid_key", tenant="soci\u00e9t\u00e9", key="k"),
 err("empty key", "invalid_key", tenant="acme", key="", error_field="key"),
 err("key with the reserved prefix", "invalid_key", tenant="acme", key="sha256:abc"),
]
write("key_scoped.json", "key_scoped", "scoped_key(tenant, key) = len(tenant) ':' tenant ':' key (length in bytes, decimal). expect the scoped key, or error code.", ks)

def h(s): return hashlib.sha256(s.encode()).hexdigest()
long300 = "k"*300
scoped = ks[4]["expect"]
sk = [
 ok("short key unchanged", "order-1001", key="order-1001", max_len=39),
 ok("key of exactly max_len unchanged", "x"*39, key="x"*39, max_len=39),
 ok("one over max_len 39: 32 hex digits", "sha256:"+h("x"*40)[:32], key="x"*40, max_len=39),
 ok("300 characters into 191 (MySQL utf8mb4 index): 64 hex digits", "sha256:"+h(long300), key=long300, max_len=191),
 ok("max_len 71: the full hash", "sha256:"+h(long300), key=long300, max_len=71),
 ok("max_len 50: 43 hex digits", "sha256:"+h(long300)[:43], key=long300, max_len=50),
 ok("256 characters at 255", "sha256:"+h("a"*256), key="a"*256, max_len=255),
 ok("a long scoped key", "sha256:"+h(scoped), key=scoped, max_len=191),
 err("max_len below 39 (128 bits)", "out_of_range", key="order-1001", max_len=38, error_field="max_len"),
 err("empty key", "invalid_key", key="", max_len=191),
 err("key with a space", "invalid_key", key="a b", max_len=191),
 err("key already hashed", "invalid_key", key="sha256:"+h("x"), max_len=191),
]
write("storage_key.json", "storage_key", "storage_key(key, max_len): keys of at most max_len characters unchanged; longer ones 'sha256:' + lowercase hex SHA-256 of the key cut to min(64, max_len - 7) digits; max_len < 39 is out_of_range.", sk)

mint = []
for name, hx in [("all zero", "00"*16), ("all ones", "ff"*16), ("counting bytes", "00112233445566778899aabbccddeeff"), ("random bytes", "3f9a1c0e7b2d4e6f8a9b0c1d2e3f4a5b")]:
    mint.append(ok(name, str(uuid.UUID(bytes=bytes.fromhex(hx), version=4)), entropy_hex=hx))
write("key_mint.json", "key_mint", "mint_key(entropy): 16 caller-supplied bytes (hex) formatted as a lowercase version 4 UUID (version and variant bits set).", mint)

# ---------------- header ----------------
hp = [
 ok("sf-string", "abc", value='"abc"'),
 ok("uuid", "8e03978e-40d5-43e8-bc93-6894a57f9324", value='"8e03978e-40d5-43e8-bc93-6894a57f9324"'),
 ok("surrounding spaces trimmed", "abc", value='   "abc"  '),
 ok("surrounding tabs trimmed (HTTP OWS)", "abc", value='\t"abc"\t'),
 ok("escaped quote", 'a"b', value='"a\\"b"'),
 ok("escaped backslash", 'a\\b', value='"a\\\\b"'),
 ok("parameter ignored", "abc", value='"abc";v=1'),
 ok("several parameters of every type ignored", "abc", value='"abc";a=1;b;c="x";d=?0;e=tok/1;f=:AAE=:;g=-1.5'),
 ok("space after ';' allowed by RFC 8941", "abc", value='"abc"; a=1'),
 ok("token form: bare key", "abc", value="abc", form="sf_string_or_token"),
 ok("token form: bare uuid", "8e03978e-40d5-43e8-bc93-6894a57f9324", value="8e03978e-40d5-43e8-bc93-6894a57f9324", form="sf_string_or_token"),
 ok("token form: quoted value still read as sf-string", "abc", value='"abc"', form="sf_string_or_token"),
 ok("token form: trimmed", "abc", value="  abc ", form="sf_string_or_token"),
 ok("token form: any visible ascii", "a;b=c", value="a;b=c", form="sf_string_or_token"),
 err("empty", "invalid_header", value=""),
 err("only spaces", "invalid_header", value="   "),
 err("bare token where only sf-string is accepted", "invalid_header", value="abc"),
 err("unterminated string", "invalid_header", value='"abc'),
 err("escape other than quote and backslash", "invalid_header", value='"a\\nb"'),
 err("raw tab inside the string", "invalid_header", value='"a\tb"'),
 err("non-ascii inside the string", "invalid_header", value='"caf\u00e9"'),
 err("junk after the string", "invalid_header", value='"abc" x'),
 err("two values (a list)", "invalid_header", value='"abc", "def"'),
 err("space before ';'", "invalid_header", value='"abc" ;a=1'),
 err("uppercase parameter key", "invalid_header", value='"abc";A=1'),
 err("parameter without key", "invalid_header", value='"abc";=1'),
 err("parameter without value after '='", "invalid_header", value='"abc";a='),
 err("invalid boolean parameter", "invalid_header", value='"abc";a=?2'),
 err("integer parameter with 16 digits", "invalid_header", value='"abc";a=1234567890123456'),
 err("empty string", "invalid_key", value='""'),
 err("space inside the key", "invalid_key", value='"a b"'),
 err("reserved prefix", "invalid_key", value='"sha256:abc"'),
 err("256 characters", "invalid_key", value='"' + "a"*256 + '"'),
 err("token form: space inside", "invalid_key", value="a b", form="sf_string_or_token"),
 err("token form: non-ascii", "invalid_key", value="caf\u00e9", form="sf_string_or_token"),
 err("token form: empty", "invalid_header", value=" ", form="sf_string_or_token"),
]
write("header_parse.json", "header_parse", "parse_header(value, form): the Idempotency-Key header as an RFC 8941 sf-string Item (parameters parsed and ignored), or with form sf_string_or_token also a bare key. Syntax errors are invalid_header; a parsed key that breaks the key rules is invalid_key.", hp, {"form": "sf_string"})

hf = [
 ok("plain key", '"abc"', key="abc"),
 ok("uuid", '"8e03978e-40d5-43e8-bc93-6894a57f9324"', key="8e03978e-40d5-43e8-bc93-6894a57f9324"),
 ok("quote escaped", '"a\\"b"', key='a"b'),
 ok("backslash escaped", '"a\\\\b"', key='a\\b'),
 ok("derived key", '"order-1001:charge:v1"', key="order-1001:charge:v1"),
 err("empty key", "invalid_key", key=""),
 err("space", "invalid_key", key="a b"),
 err("non-ascii", "invalid_key", key="caf\u00e9"),
]
write("header_format.json", "header_format", "format_header(key): the key as an RFC 8941 sf-string, with '\\' and '\"' escaped; the key must be valid.", hf)

# ---------------- jcs ----------------
rfc_example = '{\n  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],\n  "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n  "literals": [null, true, false]\n}'
rfc_sort = '{\n  "\\u20ac": "Euro Sign",\n  "\\r": "Carriage Return",\n  "\\ufb33": "Hebrew Letter Dalet With Dagesh",\n  "1": "One",\n  "\\ud83d\\ude00": "Emoji: Grinning Face",\n  "\\u0080": "Control",\n  "\\u00f6": "Latin Small Letter O With Diaeresis"\n}'
jt = [  # (name, text)
 ("RFC 8785 §3.2.2 example", rfc_example),
 ("RFC 8785 §3.2.3 UTF-16 key sorting example", rfc_sort),
 ("keys sorted", '{"b":1,"a":2,"c":3}'),
 ("whitespace removed", ' { "a" : [ 1 , 2 ] ,\n\t"b" : { } } '),
 ("nested objects sorted at every level", '{"z":{"y":1,"x":[{"b":1,"a":2}]},"a":null}'),
 ("number 1.0", '1.0'), ("number 1e2", '1e2'), ("number 1E2", '1E2'), ("number 1e+2", '1e+2'), ("number 100", '100'),
 ("number -0", '-0'), ("number -0.0", '-0.0'), ("number 0.1", '0.1'), ("number 4.50", '4.50'), ("number 2e-3", '2e-3'),
 ("number 1e21", '1e21'), ("number 1e20", '1e20'), ("number 1e-7", '1e-7'), ("number 0.000001", '0.000001'),
 ("number 1E30", '1E30'), ("number 123456789012345680000", '123456789012345680000'),
 ("number 2^53", '9007199254740992'), ("number -2^53", '-9007199254740992'),
 ("number 2^64 (held exactly)", '18446744073709551616'),
 ("number underflowing to 0", '1e-400'),
 ("number 0.30000000000000004", '0.30000000000000004'),
 ("number 5e-324", '5e-324'), ("number 1.7976931348623157e308", '1.7976931348623157e308'),
 ("string control escapes", '"\\b\\f\\n\\r\\t\\u0001\\u001f"'),
 ("string quote, backslash and slash", '"\\"\\\\\\/"'),
 ("string delete and line separator stay raw", '"\\u007f\\u2028"'),
 ("string escaped non-ascii written raw", '"\\u00e9\\u20ac\\ud83d\\ude00"'),
 ("raw non-ascii stays raw", '"caf\u00e9 \U0001F600"'),
 ("keys with non-ascii sorted by UTF-16 units", '{"\\ufb33":1,"\\ud83d\\ude00":2,"z":3,"\\u00e9":4}'),
 ("literals", '[true,false,null]'), ("empty object", '{}'), ("empty array", '[]'), ("top-level string", '"x"'),
 ("numeric-looking keys sorted as strings", '{"10":1,"9":2,"1":3}'),
 ("depth 128 accepted", '['*128 + ']'*128),
]
jv = [  # value cases: plain JSON every host parses the same way
 ("value: key order", {"b": 1, "a": 2}),
 ("value: nested", {"list": [1, 2.5, "x", None, True, {"k": "v"}], "obj": {"y": 1, "x": 2}}),
 ("value: non-ascii keys", {"\u00e9": 1, "z": 2, "\U0001F600": 3, "\ufb33": 4}),
 ("value: float spellings", [1.5, 0.001, 1e21, 1e-7, 100.0]),
]
res = node([{"op": "jcs_text", "text": t} for _, t in jt] + [{"op": "jcs_value", "value": v} for _, v in jv])
jc = [ok(n, r, text=t) for (n, t), r in zip(jt, res[:len(jt)])]
jc += [ok(n, r, value=v) for (n, v), r in zip(jv, res[len(jt):])]
jc += [
 err("2^53 + 1 cannot be held by a double", "invalid_number", text='9007199254740993'),
 err("-(2^53 + 1)", "invalid_number", text='-9007199254740993'),
 err("2^53 + 1 inside an object", "invalid_number", text='{"id":9007199254740993}'),
 err("21-digit integer that is not the double's spelling", "invalid_number", text='123456789012345678901'),
 err("beyond the double range", "invalid_number", text='1e400'),
 err("beyond the double range, negative", "invalid_number", text='-1e400'),
 err("NaN is not JSON", "invalid_json", text='[NaN]'),
 err("Infinity is not JSON", "invalid_json", text='Infinity'),
 err("duplicate key", "invalid_json", text='{"a":1,"a":2}'),
 err("duplicate key, nested", "invalid_json", text='{"x":{"a":1,"b":2,"a":1}}'),
 err("lone high surrogate", "invalid_string", text='"\\ud800"'),
 err("lone low surrogate", "invalid_string", text='"\\udc00x"'),
 err("high surrogate followed by a non-surrogate", "invalid_string", text='"\\ud83dA"'),
 err("lone surrogate in a key", "invalid_string", text='{"\\ud800":1}'),
 err("depth 129 arrays", "too_deep", text='['*129 + ']'*129),
 err("depth 129 objects", "too_deep", text='{"a":'*128 + '{}' + '}'*128),
 err("depth 5000", "too_deep", text='['*5000 + ']'*5000),
 err("leading zero", "invalid_json", text='01'),
 err("trailing comma", "invalid_json", text='[1,]'),
 err("single quotes", "invalid_json", text="{'a':1}"),
 err("empty text", "invalid_json", text=''),
 err("two values", "invalid_json", text='1 2'),
 err("raw control character in a string", "invalid_json", text='"a\u0001b"'),
 err("unknown escape", "invalid_json", text='"\\x"'),
 err("unterminated array", "invalid_json", text='[1'),
 err("non-string key", "invalid_json", text='{1:2}'),
]
write("jcs.json", "jcs", "RFC 8785 canonical JSON of 'text' (parsed by the core's parse_json) or of 'value' (a JSON value handed over by the host). expect the canonical text, or error code. Expectations computed independently with V8 (JSON.stringify, String(number), UTF-16 key sort).", jc)

bits = ["0000000000000000","8000000000000000","0000000000000001","8000000000000001","7fefffffffffffff","ffefffffffffffff",
 "4340000000000000","c340000000000000","4430000000000000","44b52d02c7e14af5","44b52d02c7e14af6","44b52d02c7e14af7",
 "444b1ae4d6e2ef4e","444b1ae4d6e2ef4f","444b1ae4d6e2ef50","3eb0c6f7a0b5ed8c","3eb0c6f7a0b5ed8d","41b3de4355555553",
 "41b3de4355555554","41b3de4355555555","41b3de4355555556","41b3de4355555557","becbf647612f3696","43143ff3c1cb0959"]
import struct
def fbits(x): return struct.pack('>d', x).hex()
extra = [("1.0", 1.0), ("100", 100.0), ("1e21", 1e21), ("1e-6", 1e-6), ("1e-7", 1e-7), ("0.1 + 0.2", 0.1+0.2), ("123e20", 123e20),
 ("2^-24, a tie on a power of two", 2.0**-24), ("-1.5", -1.5), ("2^64", 2.0**64), ("1e-5", 1e-5), ("1.5e300", 1.5e300)]
res = node([{"op": "num", "bits": b} for b in bits] + [{"op": "num", "bits": fbits(x)} for _, x in extra])
jn = [ok("RFC 8785 Appendix B " + b, r, bits=b) for b, r in zip(bits, res)]
jn += [ok(n, r, bits=fbits(x)) for (n, x), r in zip(extra, res[len(bits):])]
jn += [err("NaN (Appendix B 7fffffffffffffff)", "invalid_number", bits="7fffffffffffffff"),
       err("quiet NaN", "invalid_number", bits="7ff8000000000000"),
       err("Infinity (Appendix B 7ff0000000000000)", "invalid_number", bits="7ff0000000000000"),
       err("-Infinity", "invalid_number", bits="fff0000000000000")]
write("jcs_number.json", "jcs_number", "A host double (IEEE 754 bits as 16 hex digits, big-endian) canonicalised alone: ECMAScript Number-to-String (RFC 8785 §3.2.2.3). expect the text, or error code for NaN and infinities. Expectations computed with V8's String(x).", jn)

# ---------------- fingerprints ----------------
charge = {"amount": 1000, "currency": "usd", "customer": "cus_1", "metadata": {"order": "1001", "tags": ["a", "b"]}}
fp_in = [
 ("charge", dict(method="POST", path="/v1/charges", body=charge)),
 ("same charge, keys in another order", dict(method="POST", path="/v1/charges", body={"metadata": {"tags": ["a", "b"], "order": "1001"}, "customer": "cus_1", "currency": "usd", "amount": 1000})),
 ("same charge as text, number spelled 1000.0", dict(method="POST", path="/v1/charges", body_text='{"amount":1000.0,"currency":"usd","customer":"cus_1","metadata":{"order":"1001","tags":["a","b"]}}')),
 ("same charge as text, number spelled 1e3 with whitespace", dict(method="POST", path="/v1/charges", body_text=' {\n "customer" : "cus_1", "amount" : 1e3,\n "metadata":{"tags":["a","b"],"order":"1001"}, "currency":"usd" } ')),
 ("same charge as text, escaped characters", dict(method="POST", path="/v1/charges", body_text='{"amount":10.00e2,"currency":"\\u0075sd","customer":"cus_1","metadata":{"order":"1001","tags":["a","b"]}}')),
 ("amount changed", dict(method="POST", path="/v1/charges", body={**charge, "amount": 1001})),
 ("currency case changed", dict(method="POST", path="/v1/charges", body={**charge, "currency": "USD"})),
 ("amount as a string", dict(method="POST", path="/v1/charges", body={**charge, "amount": "1000"})),
 ("array order changed", dict(method="POST", path="/v1/charges", body={**charge, "metadata": {"order": "1001", "tags": ["b", "a"]}})),
 ("extra member", dict(method="POST", path="/v1/charges", body={**charge, "description": None})),
 ("method changed", dict(method="PUT", path="/v1/charges", body=charge)),
 ("method case is significant", dict(method="post", path="/v1/charges", body=charge)),
 ("path changed", dict(method="POST", path="/v1/charges/", body=charge)),
 ("no body", dict(method="DELETE", path="/v1/charges/ch_1")),
 ("operation instead of method and path", dict(operation="charge", body=charge)),
 ("operation, keys in another order", dict(operation="charge", body={"metadata": {"tags": ["a", "b"], "order": "1001"}, "customer": "cus_1", "currency": "usd", "amount": 1000})),
 ("selected members", dict(method="POST", path="/v1/charges", body=charge, selected=["/amount", "/currency"])),
 ("selected members ignore the rest", dict(method="POST", path="/v1/charges", body={**charge, "customer": "cus_2", "metadata": {}}, selected=["/amount", "/currency"])),
 ("selected pointer order does not matter", dict(method="POST", path="/v1/charges", body=charge, selected=["/currency", "/amount", "/amount"])),
 ("selected array element keeps its index", dict(method="POST", path="/v1/charges", body=charge, selected=["/metadata/tags/1"])),
 ("selected nested member", dict(method="POST", path="/v1/charges", body=charge, selected=["/metadata/order"])),
 ("selected whole body with the empty pointer", dict(method="POST", path="/v1/charges", body=charge, selected=[""])),
 ("selected overlapping pointers", dict(method="POST", path="/v1/charges", body=charge, selected=["/metadata", "/metadata/order"])),
 ("selected escaped names", dict(operation="put", body={"a/b": 1, "m~n": 2, "c": 3}, selected=["/a~1b", "/m~0n"])),
 ("selected inside an array of objects", dict(operation="order", body={"items": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}]}, selected=["/items/1/sku", "/items/0/qty"])),
]
res = node([{"op": "fp", **args} for _, args in fp_in])
fpc = []
for (n, args), r in zip(fp_in, res):
    fpc.append({"name": n, **args, "canonical": r["canonical"], "expect": r["hex"]})
fpc += [
 err("pointer selects nothing", "invalid_pointer", method="POST", path="/v1/charges", body=charge, selected=["/missing"], error_field="selected"),
 err("pointer without leading slash", "invalid_pointer", method="POST", path="/v1/charges", body=charge, selected=["amount"]),
 err("empty selection", "invalid_pointer", method="POST", path="/v1/charges", body=charge, selected=[]),
 err("index with a leading zero", "invalid_pointer", method="POST", path="/v1/charges", body=charge, selected=["/metadata/tags/01"]),
 err("index past the end", "invalid_pointer", method="POST", path="/v1/charges", body=charge, selected=["/metadata/tags/2"]),
 err("index '-'", "invalid_pointer", method="POST", path="/v1/charges", body=charge, selected=["/metadata/tags/-"]),
 err("step into a scalar", "invalid_pointer", method="POST", path="/v1/charges", body=charge, selected=["/amount/value"]),
 err("bad escape", "invalid_pointer", operation="put", body={"a": 1}, selected=["/a~2"]),
 err("empty method", "invalid_value", method="", path="/v1/charges", body=charge, error_field="method"),
 err("empty operation", "invalid_value", operation="", body=charge, error_field="operation"),
 # Which options go together: the core's FingerprintOf::read (docs/idempotency.md, "Which options").
 err("method without path", "missing_field", method="POST", body=charge, error_field="path"),
 err("path without method", "missing_field", path="/v1/charges", body=charge, error_field="method"),
 err("neither method and path nor operation", "missing_field", body=charge, error_field="operation"),
 err("operation with method and path", "invalid_value", operation="charge", method="POST", path="/v1/charges", body=charge, error_field="operation"),
 err("operation with method alone", "invalid_value", operation="charge", method="POST", body=charge, error_field="operation"),
 err("body integer 2^53 + 1", "invalid_number", method="POST", path="/v1/charges", body_text='{"amount":9007199254740993}'),
 err("body duplicate key", "invalid_json", method="POST", path="/v1/charges", body_text='{"amount":1,"amount":2}'),
 err("body too deep", "too_deep", method="POST", path="/v1/charges", body_text='['*129 + ']'*129),
 err("body lone surrogate", "invalid_string", method="POST", path="/v1/charges", body_text='{"name":"\\udead"}'),
]
write("fingerprint.json", "fingerprint",
 "fingerprint_http(method, path, body, selected) / fingerprint_operation(operation, body, selected): lowercase hex SHA-256 of the RFC 8785 canonical JSON of {method, path, body} or {operation, body}. body is a JSON value ('body', default null) or text ('body_text', parsed by the core). 'selected' lists RFC 6901 pointers: the body becomes a pruned copy keeping those subtrees in place (array gaps null). 'canonical' is the hashed text, for runners that can see it. Expectations computed independently with V8 and Node's crypto.",
 fpc)
print("equal groups:", len({c["expect"] for c in fpc if "expect" in c}), "distinct of", sum(1 for c in fpc if "expect" in c))
