//! The host's entropy, buffered (`retrycore_js::host::pooled_entropy`).

use retrycore_js::Host;
use retrycore_wasm::Wasm;

#[test]
fn entropy_never_repeats_bytes() {
    let mut a = [0u8; 16];
    let mut b = [0u8; 16];
    Wasm::entropy(&mut a).unwrap();
    Wasm::entropy(&mut b).unwrap();
    assert_ne!(a, b);
    let mut big = [0u8; 5000];
    assert!(Wasm::entropy(&mut big).is_err());
    for _ in 0..1000 {
        Wasm::entropy(&mut a).unwrap();
    }
}
