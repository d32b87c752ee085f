//! OS entropy, drawn in blocks: minting a session's idempotency key must
//! not cost a system call per session.

use std::sync::Mutex;

const BLOCK: usize = 4096;

struct Pool {
    buf: [u8; BLOCK],
    at: usize,
}

static POOL: Mutex<Pool> = Mutex::new(Pool { buf: [0; BLOCK], at: BLOCK });

/// Returns `N` bytes from the operating system's generator.
pub fn bytes<const N: usize>() -> Option<[u8; N]> {
    let mut p = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if p.at + N > BLOCK {
        getrandom::fill(&mut p.buf).ok()?;
        p.at = 0;
    }
    let at = p.at;
    let mut out = [0u8; N];
    out.copy_from_slice(&p.buf[at..at + N]);
    // Never hand the same bytes out twice.
    p.buf[at..at + N].fill(0);
    p.at = at + N;
    Some(out)
}

/// A draw in [0, 1) from OS entropy (`(x >> 11) · 2⁻⁵³`).
pub fn draw() -> f64 {
    let x = bytes::<8>().map_or(0, u64::from_le_bytes);
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}
