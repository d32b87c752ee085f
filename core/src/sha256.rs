//! SHA-256 (FIPS 180-4), and its lowercase hex.
//!
//! Natively this is the `sha2` crate (which uses the CPU's SHA instructions
//! where it has them). The wasm build has no such instructions and is
//! compiled for size (docs/js.md, "The wasm package"), where `sha2`'s
//! software rounds come out as a chain of small calls; [`compress`] is two
//! plain loops instead, a few hundred bytes and a fifth faster there. Both
//! give the same digest (`is_sha2` below checks it).

/// The lowercase hex digits.
pub(crate) const HEX: &[u8; 16] = b"0123456789abcdef";

/// The SHA-256 digest of `data`.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn sha256(data: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(data).into()
}

/// The SHA-256 digest of `data`.
#[cfg(target_arch = "wasm32")]
pub(crate) fn sha256(data: &[u8]) -> [u8; 32] {
    compact(data)
}

/// The lowercase hex of the SHA-256 of `data` (64 characters).
pub(crate) fn sha256_hex(data: &[u8]) -> String {
    let mut out = Vec::with_capacity(64);
    for b in sha256(data).iter() {
        out.extend_from_slice(&[HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
    }
    String::from_utf8(out).expect("hex digits are ASCII")
}

const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
    0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
];

/// The digest of `data`, with [`compress`].
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
fn compact(data: &[u8]) -> [u8; 32] {
    let mut state: [u32; 8] =
        [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
    let mut blocks = data.chunks_exact(64);
    for block in &mut blocks {
        compress(&mut state, block);
    }
    // The rest, 0x80, zeros, and the length in bits: one block or two.
    let rest = blocks.remainder();
    let mut tail = [0u8; 128];
    tail[..rest.len()].copy_from_slice(rest);
    tail[rest.len()] = 0x80;
    let end = if rest.len() < 56 { 64 } else { 128 };
    tail[end - 8..end].copy_from_slice(&(data.len() as u64).wrapping_mul(8).to_be_bytes());
    for block in tail[..end].chunks_exact(64) {
        compress(&mut state, block);
    }
    let mut out = [0u8; 32];
    for (o, s) in out.chunks_exact_mut(4).zip(state.iter()) {
        o.copy_from_slice(&s.to_be_bytes());
    }
    out
}

/// One 64-byte block into `state`: the 64-word schedule first, then the
/// rounds over it (at opt-level "z" a fifth faster than keeping 16 words and
/// computing each in its round, and than `sha2`'s rounds).
fn compress(state: &mut [u32; 8], block: &[u8]) {
    let mut w = [0u32; 64];
    for (w, b) in w.iter_mut().zip(block.chunks_exact(4)) {
        *w = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    }
    for i in 16..64 {
        let (w15, w2) = (w[i - 15], w[i - 2]);
        let s0 = w15.rotate_right(7) ^ w15.rotate_right(18) ^ (w15 >> 3);
        let s1 = w2.rotate_right(17) ^ w2.rotate_right(19) ^ (w2 >> 10);
        w[i] = w[i - 16].wrapping_add(s0).wrapping_add(w[i - 7]).wrapping_add(s1);
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    for (k, w) in K.iter().zip(w.iter()) {
        let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
        let ch = (e & f) ^ (!e & g);
        let t1 = h.wrapping_add(s1).wrapping_add(ch).wrapping_add(k.wrapping_add(*w));
        let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
        let maj = (a & b) ^ (a & c) ^ (b & c);
        (h, g, f, e) = (g, f, e, d.wrapping_add(t1));
        (d, c, b, a) = (c, b, a, t1.wrapping_add(s0.wrapping_add(maj)));
    }
    // Not `zip` over an array by value: at opt-level "z" its `next` is a call.
    for (x, y) in state.iter_mut().zip([a, b, c, d, e, f, g, h].iter()) {
        *x = x.wrapping_add(*y);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_digests() {
        let hex = |d: [u8; 32]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
        assert_eq!(hex(compact(b"")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(hex(compact(b"abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(
            hex(compact(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(sha256_hex(b"abc"), hex(compact(b"abc")));
    }

    proptest! {
        /// Every length around the block and padding edges, and beyond.
        #[test]
        fn is_sha2(data in prop::collection::vec(any::<u8>(), 0..300)) {
            use sha2::Digest;
            let want: [u8; 32] = sha2::Sha256::digest(&data).into();
            prop_assert_eq!(compact(&data), want);
        }
    }

    #[test]
    fn is_sha2_at_each_length() {
        use sha2::Digest;
        let data: Vec<u8> = (0..=255u8).cycle().take(200).collect();
        for n in 0..data.len() {
            let want: [u8; 32] = sha2::Sha256::digest(&data[..n]).into();
            assert_eq!(compact(&data[..n]), want, "length {n}");
        }
    }
}
