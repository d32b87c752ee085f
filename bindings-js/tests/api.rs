//! The crate's tests, through its public API (the FFI crates' view of it),
//! module by module, with a host of a fixed clock and counting entropy.

use retrycore::classify::{Category, Classifier, RetryableTrait};
use retrycore::json;
use retrycore::{ErrorClass, ErrorCode, ErrorDomain};
use retrycore_js::host::{count, ms, ms_or_infinity, now_ns, ns, pooled_entropy, quote, u64_arg, wall_ms, whole_ms};
use retrycore_js::idem::{dead_letter, decide_record, mint_key, RecordArgs};
use retrycore_js::options::read_object;
use retrycore_js::verdict::{classify_status, classify_status_with, StatusCache};
use retrycore_js::{
    camel, format_duration, id_parts, info, parse_duration, permit_number, read_permit, seeded_rng, server_advice,
    Breaker, Budget, Class, Error, FailureArgs, Host, Policy, Result,
};
use std::cell::Cell;

thread_local!(static NEXT: Cell<u8> = const { Cell::new(1) });

/// A host with a fixed clock and a counting entropy source.
struct Strict;

fn fill(out: &mut [u8]) -> Result<()> {
    for b in out {
        *b = NEXT.with(|n| {
            let v = n.get();
            n.set(v.wrapping_add(1));
            v
        });
    }
    Ok(())
}

impl Host for Strict {
    fn clock_ms() -> f64 {
        1.5
    }
    fn entropy(out: &mut [u8]) -> Result<()> {
        fill(out)
    }
}

/// The slot index of an id: 2^21 slots per policy (docs of `Policy`).
const INDEX_BITS: f64 = (1u64 << 21) as f64;

type Args = FailureArgs<Option<Vec<String>>>;

mod lib {
    use super::*;

    #[test]
    fn info_lists_the_tables() {
        let i = info();
        assert_eq!(i["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(i["tables"]["limits"]["max_items"], retrycore::limits::MAX_ITEMS as u64);
        assert_eq!(i["tables"]["js_error_classes"]["stale_fence"], "idempotency");
        assert_eq!(i["tables"]["js_classes"]["idempotency_type"], "type");
        // A code's JavaScript class does not depend on the domain it is raised in,
        // so `coreError` needs none.
        for c in retrycore::ErrorCode::ALL {
            let classes = retrycore::ErrorDomain::ALL.map(|d| Class::of(c.class(d)));
            assert!(classes.iter().all(|k| *k == classes[0]), "{c}");
        }
        assert_eq!(i["retryRules"], json!(["always", "if_idempotent", "never"]));
    }

    #[test]
    fn durations_parse_and_format() {
        assert_eq!(parse_duration("250ms"), Ok(250.0));
        assert_eq!(format_duration(1.5).as_deref(), Ok("1.5ms"));
        assert_eq!(parse_duration("x").map_err(|e| e.class), Err(Class::Range));
    }

    #[test]
    fn seeds_are_decimal() {
        assert!(seeded_rng(" 42 ").is_ok());
        let long = "9".repeat(100);
        let e = seeded_rng(&long).map(|_| ()).unwrap_err();
        assert_eq!(e.code, "out_of_range");
        assert!(!e.message.contains(&long), "a long input is quoted clipped");
    }

    #[test]
    fn server_advice_reads_pairs() {
        let h = vec!["Retry-After".to_owned(), "2".to_owned(), "odd".to_owned()];
        let v = server_advice(&h, None).unwrap();
        assert_eq!(v["delay"], 2000.0);
        assert_eq!(v["source"], "retry-after");
    }
}

mod error {
    use super::*;

    #[test]
    fn classes_follow_the_core() {
        use ErrorDomain::{Config, Idempotency};
        let e = |code, domain| Error::core(&retrycore::Error::new(code, "f", "r"), domain).class;
        assert_eq!(e(ErrorCode::InvalidType, Config), Class::Type);
        assert_eq!(e(ErrorCode::InvalidType, Idempotency), Class::Type);
        assert_eq!(e(ErrorCode::OutOfRange, Config), Class::Range);
        assert_eq!(e(ErrorCode::OutOfRange, Idempotency), Class::Range);
        assert_eq!(e(ErrorCode::TooDeep, Config), Class::Range);
        assert_eq!(e(ErrorCode::TooDeep, Idempotency), Class::Range);
        assert_eq!(e(ErrorCode::StaleFence, Config), Class::Idempotency);
        // A state code is a state error in the idempotency functions too.
        assert_eq!(e(ErrorCode::InvalidState, Idempotency), Class::State);
        assert_eq!(e(ErrorCode::InvalidState, Config), Class::State);
        let full = Error::core(&retrycore::Error::new(ErrorCode::OutOfRange, "a.b", "bad"), Config);
        assert_eq!((full.code, full.field.as_str()), ("out_of_range", "a.b"));
        assert_eq!(Class::Idempotency.name(), "idempotency");
        assert_eq!(Class::of(ErrorClass::Snapshot), Class::State);
    }
}

mod options {
    use super::*;
    use retrycore::breaker::BreakerConfig;

    #[test]
    fn millisecond_numbers_are_read_by_the_core() {
        let read = |t| read_object(t, true, BreakerConfig::from_typed_value, BreakerConfig::from_json_value);
        let c = read(r#"{"kind": "sampling", "sampling_duration": 1.5}"#).unwrap();
        assert_eq!(c.to_json_value()["sampling_duration"], "1.5ms");
        let e = read(r#"{"wait_duration_in_open_state": -1}"#).unwrap_err();
        assert_eq!((e.code, e.field.as_str()), ("out_of_range", "wait_duration_in_open_state"));
        assert_eq!(read("{").unwrap_err().code, "invalid_json");
    }
}

mod host {
    use super::*;

    #[test]
    fn wall_clock_and_seeds_are_checked() {
        assert_eq!(wall_ms(5.0, "w"), Ok(5));
        for bad in [f64::NAN, -1.0, 0.5] {
            assert_eq!(wall_ms(bad, "w").map_err(|e| e.code), Err("out_of_range"));
        }
        for bad in [f64::INFINITY, 9_007_199_254_740_992.0, 1e308] {
            assert_eq!(wall_ms(bad, "w").map_err(|e| e.code), Err("invalid_time"));
            assert_eq!(whole_ms(bad, "w").map_err(|e| e.code), Err("out_of_range"));
        }
        assert_eq!(u64_arg(" 18446744073709551615 ", "seed"), Ok(u64::MAX));
        assert!(u64_arg("18446744073709551616", "seed").is_err());
        assert!(u64_arg(&"9".repeat(10_000_000), "seed").is_err());
    }

    #[test]
    fn durations_round_and_refuse() {
        assert_eq!(ns(1.5, "d"), Ok(1_500_000));
        assert!(ns(f64::NAN, "d").is_err());
        assert!(ns(-1.0, "d").is_err());
        assert_eq!(ms(1_500_000), 1.5);
        assert_eq!(now_ns::<Strict>(-1.0, "now"), Ok(1_500_000));
        assert_eq!(now_ns::<Strict>(2.0, "now"), Ok(2_000_000));
        for bad in [1e308, 18_446_744_073_709.6, f64::INFINITY] {
            assert_eq!(now_ns::<Strict>(bad, "now").unwrap_err().code, "invalid_time");
        }
        assert_eq!(count(-1.0, u32::MAX.into(), "cost").unwrap_err().code, "out_of_range");
        assert_eq!(count(4_294_967_296.0, u32::MAX.into(), "cost").unwrap_err().field, "cost");
        assert_eq!(ms_or_infinity(u64::MAX), f64::INFINITY);
    }

    #[test]
    fn quotes_are_clipped_by_characters() {
        let s = "é".repeat(100);
        assert_eq!(quote(&s).chars().count(), 64);
        assert_eq!(quote("short"), "short");
    }

    #[test]
    fn pooled_entropy_raises_the_cores_refusals() {
        // The pool itself is the core's (`retrycore::rng::EntropyPool`, tested there).
        type R = std::result::Result<(), &'static str>;
        let mut out = [0u8; 16];
        let e = pooled_entropy(&mut out, "test", |_: &mut [u8]| -> R { Err("down") }).unwrap_err();
        assert_eq!((e.code, e.field.as_str()), ("invalid_state", "entropy"));
        pooled_entropy(&mut out, "test", |b: &mut [u8]| -> R {
            b.fill(9);
            Ok(())
        })
        .unwrap();
        assert_eq!(out, [9; 16]);
        let mut big = vec![0u8; retrycore::rng::EntropyPool::BLOCK + 1];
        let e = pooled_entropy(&mut big, "test", |_: &mut [u8]| -> R { Ok(()) }).unwrap_err();
        assert_eq!(e.code, "out_of_range");
    }
}

mod policy {
    use super::*;

    #[test]
    fn the_slab_shrinks_and_old_ids_stay_dead() {
        let mut p = Policy::<Strict>::from_json("{}", Some("1")).unwrap();
        let ids: Vec<f64> =
            (0..10_000).map(|i| p.begin(Some(format!("k{i}")), None, None, None, None, None).unwrap()).collect();
        assert_eq!(p.slab_size(), (10_000, 10_000));
        // Freed in any order, the slab ends empty and its memory is given back.
        for id in ids.iter().step_by(2).chain(ids.iter().skip(1).step_by(2)) {
            p.free(*id);
        }
        assert_eq!(p.slab_size(), (0, 0));
        let (capacity, free) = p.slab_memory();
        assert!(capacity <= 64 && free <= 64, "{capacity} {free}");
        let again = p.begin(Some("new".into()), None, None, None, None, None).unwrap();
        assert!(ids.iter().all(|old| p.key(*old).is_err()), "no old id names the new session");
        assert!(!ids.contains(&again));
        // A live session at the end keeps the slab; lowest free slots are reused first.
        let a = p.begin(Some("a".into()), None, None, None, None, None).unwrap();
        p.free(again);
        let b = p.begin(Some("b".into()), None, None, None, None, None).unwrap();
        assert_eq!(id_parts(b).map(|x| x.0), Some(0));
        p.free(a);
        p.free(b);
        assert_eq!(p.slab_size(), (0, 0));
    }

    #[test]
    fn ids_are_checked_before_use() {
        assert_eq!(id_parts(INDEX_BITS + 3.0), Some((3, 1)));
        for bad in [f64::NAN, -1.0, 0.5, INDEX_BITS + 3.7, f64::INFINITY, 2f64.powi(53)] {
            assert_eq!(id_parts(bad), None);
        }
    }

    #[test]
    fn sessions_run_in_a_generation_tagged_slab() {
        let mut p = Policy::<Strict>::from_json("{}", Some("1")).unwrap();
        let id = p.begin(Some("k".into()), Some("7"), Some(true), None, None, None).unwrap();
        assert_eq!(p.before(id, 0.0), Ok(1.0));
        assert_eq!(p.gate(id).unwrap()["action"], "proceed");
        let f = Args { status: Some(503.0), ..Default::default() };
        assert!(p.fail(id, 1.0, f).unwrap() >= 0.0);
        assert_eq!(p.decision(id).unwrap()["action"], "retry");
        assert_eq!(p.key(id).as_deref(), Ok("k"));
        p.free(id);
        assert_eq!(p.key(id).unwrap_err().code, "invalid_state");
        let again = p.begin(Some("k2".into()), None, None, None, None, None).unwrap();
        assert_eq!(again, id + INDEX_BITS, "the slot is reused with the next generation");
        assert!(p.key(id).is_err());
        assert_eq!(p.start(2.0, None, None, None, None).map(|i| i >= 0.0), Ok(true));
        assert_eq!(p.delay(0.5, 0.5, None).unwrap_err().field, "retry");
        assert_eq!(p.sample_delays("1", -1.0).unwrap_err().field, "count");
        assert_eq!(p.sample_delays("1", 0.5).unwrap_err().code, "out_of_range");
        assert!(p.delay(1.0, 0.5, None).is_ok());
    }
}

mod verdict {
    use super::*;

    #[test]
    fn packed_verdicts_are_memoized_and_checked() {
        let c = Classifier::default();
        let mut cache = StatusCache::default();
        let direct = classify_status_with(|f| c.classify(f), 503.0, 1.0).unwrap();
        assert_eq!(cache.get(|f| c.classify(f), 503.0, 1.0), Ok(direct));
        assert_eq!(cache.get(|f| c.classify(f), 503.0, 1.0), Ok(direct));
        assert_eq!(classify_status(503.0, 1.0), Ok(direct));
        assert_eq!(classify_status(503.0, 1.0), Ok(direct));
        for (s, f) in [(1000.0, 0.0), (-1.0, 0.0), (503.5, 0.0), (f64::NAN, 0.0)] {
            assert_eq!(cache.get(|f| c.classify(f), s, f).unwrap_err().field, "status");
            assert_eq!(classify_status(s, f).unwrap_err().field, "status");
        }
        assert_eq!(classify_status(503.0, 8.0).unwrap_err().field, "flags");
    }
}

mod breaker {
    use super::*;

    #[test]
    fn a_counting_rule_on_messages_reads_the_message() {
        let doc = r#"{"count": [{"message": "certificate", "count": "ignored"}]}"#;
        let mut b = Breaker::<Strict>::new(doc, false).unwrap();
        assert!(b.needs_message());
        assert!(!Breaker::<Strict>::new("{}", false).unwrap().needs_message());
        let failure = |message: Option<&str>| Args {
            status: Some(503.0),
            message: message.map(str::to_owned),
            ..Default::default()
        };
        let p = b.try_acquire(1.0).unwrap();
        assert_eq!(b.record_failure(p, 1.0, 2.0, failure(Some("x509: certificate is not trusted"))), Ok(2)); // ignored
        let p = b.try_acquire(3.0).unwrap();
        assert_eq!(b.record_failure(p, 1.0, 4.0, failure(None)), Ok(1)); // failure
    }

    #[test]
    fn permits_round_trip_and_refuse() {
        let mut b = Breaker::<Strict>::new("{}", false).unwrap();
        let p = b.try_acquire(5.0).unwrap();
        assert!(p >= 0.0);
        assert_eq!(read_permit(p).map(|x| permit_number(&x)), Ok(p));
        assert_eq!(b.record(p, 0.0, 1.0, 6.0), Ok(false));
        for bad in [-1.0, 0.5, f64::NAN, 9_007_199_254_740_992.0] {
            assert_eq!(read_permit(bad).unwrap_err().code, "out_of_range");
        }
        for bad in [3.0, -1.0, 0.5, f64::NAN, 4_294_967_296.0] {
            assert_eq!(b.record(p, bad, 1.0, 6.0).unwrap_err().field, "outcome");
        }
        assert_eq!(b.try_acquire(1e308).unwrap_err().code, "invalid_time");
        let big = format!("{{\"name\": \"{}\"}}", "x".repeat(retrycore::limits::MAX_DOCUMENT_BYTES));
        assert_eq!(Breaker::<Strict>::new(&big, false).err().map(|e| e.code), Some("too_large"));
        // A snapshot may be larger than a document, up to the core's snapshot limit.
        assert_eq!(b.restore(&big, 9.0, 0.0).unwrap_err().code, "invalid_snapshot");
        let huge = " ".repeat(retrycore::limits::MAX_SNAPSHOT_BYTES + 1);
        assert_eq!(b.restore(&huge, 9.0, 0.0).unwrap_err().code, "too_large");
        assert_eq!(b.transition_to("nope", 7.0).unwrap_err().code, "invalid_value");
        b.set_collect(true);
        assert_eq!(b.transition_to("forced_open", 7.0).unwrap()["to"], "forced_open");
        assert_eq!(b.try_acquire(8.0), Ok(-1.0));
        assert_eq!(b.last_refused_state(), "forced_open");
        assert_eq!(b.take_transitions().as_array().map(Vec::len), Some(1));
        assert_eq!(Breaker::<Strict>::new("{", false).err().map(|e| e.code), Some("invalid_json"));
    }
}

mod budget {
    use super::*;

    #[test]
    fn withdraws_and_checks_categories() {
        let b = Budget::<Strict>::new(r#"{"kind":"token_bucket"}"#, false).unwrap();
        assert_eq!(b.kind(), "token_bucket");
        let server_error = Category::ALL.iter().position(|c| c.code() == "server_error").unwrap() as u32;
        assert!(b.try_withdraw(1.0, f64::from(server_error)).unwrap() >= 0.0);
        assert_eq!(b.try_withdraw(1.0, 999.0).unwrap_err().field, "category");
        for bad in [-1.0, 0.5, f64::NAN, 4_294_967_296.0] {
            assert_eq!(b.try_withdraw(1.0, bad).unwrap_err().code, "out_of_range");
            let e = b.on_success(1.0, Some(bad)).unwrap_err();
            assert_eq!((e.code, e.field.as_str()), ("out_of_range", "cost"));
        }
        assert_eq!(b.before_attempt(1.0, 2.0).unwrap_err().field, "r");
        assert_eq!(b.stats()["withdrawals"], 1);
    }

    #[test]
    fn acquires_and_releases_tokens() {
        let b = Budget::<Strict>::new(r#"{"kind":"token_bucket","capacity":10}"#, false).unwrap();
        assert!(b.acquire(7.0, 1.0).unwrap());
        assert!(!b.acquire(4.0, 1.0).unwrap());
        b.release(2.0, 1.0).unwrap();
        assert!(b.acquire(5.0, 1.0).unwrap());
        b.release(100.0, 1.0).unwrap();
        assert_eq!(b.level(1.0).unwrap()["tokens"], 10);
        assert_eq!(b.acquire(-1.0, 1.0).unwrap_err().field, "amount");
        assert_eq!(b.release(0.5, 1.0).unwrap_err().code, "out_of_range");
        let ratio = Budget::<Strict>::new(r#"{"kind":"ratio"}"#, false).unwrap();
        let e = ratio.acquire(1.0, 1.0).unwrap_err();
        assert_eq!((e.code, e.field.as_str()), ("invalid_state", "kind"));
        assert_eq!(ratio.release(1.0, 1.0).unwrap_err().code, "invalid_state");
    }
}

mod failure {
    use super::*;

    fn args(status: Option<f64>, headers: Option<Vec<String>>) -> Args {
        FailureArgs {
            status,
            grpc: None,
            names: Some(vec!["ECONNRESET".into()]),
            method: Some("GET".into()),
            idempotent: None,
            key_sent: None,
            headers,
            elapsed_ms: Some(1.5),
            wall_now_ms: Some(1000.0),
            message: None,
            retryable_throttling: None,
            should_retry: None,
            verdict: None,
            names_id: None,
        }
    }

    #[test]
    fn reads_and_checks() {
        let f = args(Some(503.0), Some(vec!["a".into(), "1".into(), "b".into(), "2".into()])).read().unwrap();
        let f = f.buf();
        assert_eq!(f.status, Some(503));
        assert_eq!(f.headers, vec![("a".to_owned(), "1".to_owned()), ("b".to_owned(), "2".to_owned())]);
        assert_eq!(f.elapsed, Some(std::time::Duration::from_micros(1500)));
        assert_eq!(f.wall_now_ms, Some(1000));
        assert!(!f.idempotency_key_sent);
        assert_eq!((f.message.as_deref(), f.retryable, f.should_retry), (None, None, None));
        let mut own = args(None, None);
        own.message = Some("stopped after 10 redirects".into());
        own.retryable_throttling = Some(true);
        own.should_retry = Some(false);
        let f = own.read().unwrap();
        let f = f.buf();
        assert_eq!(f.message.as_deref(), Some("stopped after 10 redirects"));
        assert_eq!(f.retryable, Some(RetryableTrait { throttling: true }));
        assert_eq!(f.should_retry, Some(false));
        let max = retrycore::limits::MAX_MESSAGE_BYTES;
        let mut long = args(None, None);
        long.message = Some(format!("{}é", "a".repeat(max - 1)));
        assert_eq!(
            long.read().unwrap().buf().message.as_ref().map(|m| m.len()),
            Some(max - 1),
            "cut at a character boundary"
        );
        assert_eq!(args(Some(1000.0), None).read().unwrap_err().code, "out_of_range");
        assert_eq!(args(Some(200.5), None).read().unwrap_err().field, "status");
        assert_eq!(args(None, Some(vec!["a".into()])).read().unwrap_err().code, "invalid_type");
        let mut bad = args(None, None);
        bad.grpc = Some("NOPE".into());
        assert_eq!(bad.read().unwrap_err().field, "grpcCode");
    }

    /// A list interned once stands for its names: the failure reads as if they had crossed.
    #[test]
    fn interned_names_read_as_the_names() {
        let names = || vec!["ECONNRESET".to_owned(), "Error".to_owned()];
        let id = retrycore_js::names::intern_names(&names()).unwrap();
        assert!(id >= 0.0);
        let by_id = Args { names_id: Some(id), ..Default::default() }.read().unwrap();
        let by_names = Args { names: Some(names()), ..Default::default() }.read().unwrap();
        let seen =
            |f: &retrycore_js::ReadFailure| f.with(|f| f.error_names.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(seen(&by_id), names());
        assert_eq!(seen(&by_names), names());
        assert!(by_id.buf().error_names.is_empty());
        // An id nothing was interned as, or an id with names, is refused.
        for bad in [
            Args { names_id: Some(id + 1.0), ..Default::default() },
            Args { names_id: Some(id), names: Some(names()), ..Default::default() },
        ] {
            let e = bad.read().unwrap_err();
            assert_eq!((e.code, e.field.as_str()), ("invalid_value", "namesId"));
        }
        let p = Policy::<Strict>::from_json("{}", Some("1")).unwrap();
        let v = |a: Args| p.classify(a).unwrap();
        assert_eq!(
            v(Args { names_id: Some(id), ..Default::default() }),
            v(Args { names: Some(names()), ..Default::default() })
        );
    }
}

mod idem {
    use super::*;

    #[test]
    fn mint_key_reads_hex_without_panicking() {
        assert!(mint_key::<Strict>(Some("00112233445566778899aabbccddeeff")).is_ok());
        assert!(mint_key::<Strict>(None).is_ok());
        for bad in ["", "0", "zz112233445566778899aabbccddeeff", "é0112233445566778899aabbccddeef", &"0".repeat(33)] {
            assert_eq!(mint_key::<Strict>(Some(bad)).map_err(|e| e.code), Err("invalid_value"));
        }
    }

    #[test]
    fn camel_case_keys() {
        assert_eq!(camel("retry_after_s"), "retryAfterS");
        assert_eq!(camel("_x__y_"), "XY");
    }

    #[test]
    fn records_decide_in_camel_case() {
        let settings = || RecordArgs {
            lease_ms: None,
            retention_ms: None,
            stripe: None,
            failure_handling: None,
            release_categories: None::<Vec<String>>,
        };
        let missing = decide_record(None, None, "fp", 0.0, settings()).unwrap();
        assert_eq!(missing["decision"], "missing_key");
        assert!(missing["http"].get("retryAfterS").is_some());
        let fresh = decide_record(None, Some("k"), "fp", 1000.0, settings()).unwrap();
        assert!(fresh["record"].is_object());
        let mut bad = settings();
        bad.failure_handling = Some("x".into());
        assert_eq!(bad.config().unwrap_err().field, "failureHandling");
        assert_eq!(dead_letter("{}", &["discard".into()]).unwrap_err().class, Class::Type);
        assert_eq!(dead_letter("{", &[]).unwrap_err().code, "invalid_json");
    }
}
