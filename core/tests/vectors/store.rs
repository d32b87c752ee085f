//! Runners for the store protocol kinds (`store_protocol`, `store_claim`,
//! `store_row`); the schema is in `tests/vectors/idempotency/README.md`.
use crate::common::{as_u64, eq, Case};
use crate::idempotency::{config_of, record_of};
use retrycore::idempotency::{self as idem, RecordDecision};
use retrycore::{json, json::Value};
use sha2::{Digest, Sha256};

pub fn run(kind: &str, case: &Case) -> Option<Result<(), String>> {
    let r = match kind {
        "store_protocol" => store_protocol(case),
        "store_claim" => store_claim(case),
        "store_row" => store_row(case),
        _ => return None,
    };
    Some(r)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha256(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

/// SHA-1 (FIPS 180-4), for the Redis script ids EVALSHA uses; test-only.
fn sha1(text: &str) -> String {
    let mut h: [u32; 5] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0];
    let mut msg = text.as_bytes().to_vec();
    let bits = (msg.len() as u64) * 8;
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bits.to_be_bytes());
    for block in msg.chunks(64) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A82_7999),
                20..=39 => (b ^ c ^ d, 0x6ED9_EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
                _ => (b ^ c ^ d, 0xCA62_C1D6),
            };
            let t = a.rotate_left(5).wrapping_add(f).wrapping_add(e).wrapping_add(k).wrapping_add(*wi);
            (e, d, c, b, a) = (d, c, b.rotate_left(30), a, t);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

fn store_protocol(case: &Case) -> Result<(), String> {
    let doc = idem::store_protocol();
    eq("host_tables().store_protocol", &retrycore::tables::host_tables()["store_protocol"], &doc)?;
    let want = case.expect();
    match case.str("target") {
        Some("document") => {
            let canon = idem::canonicalize(&doc).map_err(|e| e.to_string())?;
            eq("version", &doc["version"], &want["version"])?;
            eq("document sha256", json!(sha256(&canon)), want["sha256"].clone())
        }
        Some("schema") => {
            let d = case.str("dialect").ok_or("no dialect")?;
            let texts = doc["dialects"][d]["schema"].as_array().ok_or("no schema")?;
            let got: Vec<Value> = texts.iter().map(|t| json!(sha256(t.as_str().unwrap_or_default()))).collect();
            eq("schema sha256", &json!(got), &want["sha256"])
        }
        Some("statement") => {
            let (d, op, style) = (case.str("dialect"), case.str("op"), case.str("style"));
            let form =
                &doc["dialects"][d.ok_or("no dialect")?]["statements"][op.ok_or("no op")?][style.ok_or("no style")?];
            eq("params", &form["params"], &want["params"])?;
            eq("sha256", json!(sha256(form["text"].as_str().ok_or("no text")?)), want["sha256"].clone())
        }
        Some("script") => {
            let s = &doc["redis"]["scripts"][case.str("script").ok_or("no script")?];
            eq("args", &s["args"], &want["args"])?;
            eq("sha1", json!(sha1(s["lua"].as_str().ok_or("no lua")?)), want["sha1"].clone())
        }
        other => Err(format!("unknown target {other:?}")),
    }
}

fn store_claim(case: &Case) -> Result<(), String> {
    let cfg = config_of(case)?;
    let record = case.get("record").map(record_of).transpose()?;
    let key = case.str("key").ok_or("no key")?;
    let fp = case.str("fingerprint").ok_or("no fingerprint")?;
    let now = case.u64("now").ok_or("no now")?;
    let d = idem::decide(record.as_ref(), key, fp, now, &cfg).map_err(|e| e.to_string())?;
    let got = match d {
        RecordDecision::Execute(c) => json!({"claimed": true, "fence": c.fence, "created_ms": c.created_ms}),
        _ => json!({"claimed": false, "fence": null, "created_ms": null}),
    };
    eq("claim", &got, case.expect())
}

fn store_row(case: &Case) -> Result<(), String> {
    let record = record_of(case.get("record").ok_or("no record")?)?;
    let skey = case.str("storage_key").ok_or("no storage_key")?;
    let want_skey = idem::storage_key(&record.key, idem::STORE_KEY_MAX_LEN).map_err(|e| e.to_string())?;
    eq("storage_key", skey, want_skey.as_str())?;
    let row = idem::record_to_row_json(&record, skey).map_err(|e| e.to_string())?;
    eq("row", &row, case.expect())?;
    let (back, back_key) = idem::record_from_row(case.expect()).map_err(|e| e.to_string())?;
    eq("read back", (&back, back_key.as_str()), (&record, skey))?;
    // Integers as decimal strings (node pg's BIGINT) read the same.
    let mut strings = case.expect().clone();
    for (_, v) in strings.as_object_mut().ok_or("row is not an object")?.iter_mut() {
        if let Some(n) = as_u64(v).filter(|_| v.is_number()) {
            *v = json!(n.to_string());
        }
    }
    eq("read back from strings", idem::record_from_row(&strings).map_err(|e| e.to_string())?.0, record)
}

#[test]
fn sha1_matches_fips_180_examples() {
    assert_eq!(sha1("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
    assert_eq!(sha1(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    let two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    assert_eq!(sha1(two_blocks), "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
}
