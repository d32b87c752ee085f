// Included by `build.rs` (which writes the lookup indexes) and by
// `classify.rs` (which reads them), so both hash a name the same way.

/// Hashes a name for the lookup indexes (a multiply-rotate hash over 8-byte
/// little-endian chunks; the length seeds it, the tail is zero-padded).
fn name_hash(b: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = b.len() as u64;
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        h = (h.rotate_left(5) ^ u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])).wrapping_mul(K);
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h.rotate_left(5) ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    h ^ (h >> 32)
}
