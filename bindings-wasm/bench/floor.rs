//! No-op exports with the signatures of the hot paths: the floor that
//! `bench/` measures each decision against (what a wasm-bindgen call of that
//! shape costs before anything is decided). They convert their arguments and
//! return a value, and decide nothing. Only `make bench` builds them (cargo
//! feature `bench`); `bench.mjs` reads them off the glue, next to the Node
//! binding's raw Node-API floor. Never in the shipped package.

use crate::{NativeBreaker, NativeBudget, NativePolicy};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
impl NativePolicy {
    /// `policy.delay(retry, r, prev?)`: a method, two numbers and an optional one, a number back.
    #[wasm_bindgen(js_name = floorDelay)]
    pub fn floor_delay(&self, retry: f64, r: f64, prev: Option<f64>) -> f64 {
        retry + r + prev.unwrap_or(0.0)
    }
}

/// `classifyStatus(status, flags)`: a function, a number and an integer, a number back.
#[wasm_bindgen(js_name = floorClassify)]
pub fn floor_classify(status: f64, flags: f64) -> f64 {
    status + flags
}

#[wasm_bindgen]
impl NativeBreaker {
    /// `breaker.tryAcquire(now)`: a method, one number, a number back.
    #[wasm_bindgen(js_name = floorAcquire)]
    pub fn floor_acquire(&mut self, now: f64) -> f64 {
        now
    }

    /// `breaker.record(permit, outcome, duration, now)`: a method, numbers in, a number back.
    #[wasm_bindgen(js_name = floorRecord)]
    pub fn floor_record(&mut self, permit: f64, outcome: f64, duration: f64, now: f64) -> f64 {
        if permit + outcome + duration + now < 0.0 {
            1.0
        } else {
            0.0
        }
    }
}

#[wasm_bindgen]
impl NativeBudget {
    /// `budget.tryWithdraw(now, category)`: a method, a number and an integer, a number back.
    #[wasm_bindgen(js_name = floorWithdraw)]
    pub fn floor_withdraw(&self, now: f64, category: f64) -> f64 {
        now + category
    }
}

/// `fingerprint(method, path, body, selected, canonical)`: three strings in, 64 characters out.
#[wasm_bindgen(js_name = floorFingerprint)]
pub fn floor_fingerprint(
    method: &str,
    path: Option<String>,
    body: &str,
    #[wasm_bindgen(unchecked_param_type = "Array<string> | undefined | null")] selected: JsValue,
    canonical: bool,
) -> String {
    let _ = (selected, canonical);
    let n = method.len() + path.map_or(0, |p| p.len()) + body.len();
    let digit = char::from(b'0' + (n % 10) as u8);
    std::iter::repeat_n(digit, 64).collect()
}
