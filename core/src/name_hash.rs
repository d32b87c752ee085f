// Included by `build.rs` (which writes the lookup indexes) and by
// `classify.rs` (which reads them), so both hash a name the same way.

/// Hashes a name for the lookup indexes (a multiply-rotate hash over 8-byte
/// little-endian chunks; the length seeds it, the tail is zero-padded).
fn name_hash(b: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    // A plain byte loop: the wasm build (opt-level "z") keeps slice-chunk
    // iterators as calls, and this runs for every name of every failure.
    let mut h = b.len() as u64;
    let (mut word, mut n) = (0u64, 0u32);
    for &x in b {
        word |= u64::from(x) << (8 * n);
        n += 1;
        if n == 8 {
            h = (h.rotate_left(5) ^ word).wrapping_mul(K);
            (word, n) = (0, 0);
        }
    }
    // The tail, zero-padded (a whole zero word when the length is a multiple of 8).
    h = (h.rotate_left(5) ^ word).wrapping_mul(K);
    h ^ (h >> 32)
}
