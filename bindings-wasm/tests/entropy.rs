//! The host's entropy, buffered (`retrycore_js::host::EntropyPool`).

use retrycore_wasm::entropy;

#[test]
fn entropy_never_repeats_bytes() {
    let mut a = [0u8; 16];
    let mut b = [0u8; 16];
    entropy(&mut a).unwrap();
    entropy(&mut b).unwrap();
    assert_ne!(a, b);
    let mut big = [0u8; 5000];
    assert!(entropy(&mut big).is_err());
    for _ in 0..1000 {
        entropy(&mut a).unwrap();
    }
}
