//! OS entropy, drawn in blocks: minting a session's idempotency key must
//! not cost a system call per session.

use retrycore::rng::Rng;
use std::sync::Mutex;

const BLOCK: usize = 4096;

/// A block of entropy and how much of it was handed out.
static POOL: Mutex<([u8; BLOCK], usize)> = Mutex::new(([0; BLOCK], BLOCK));

/// Returns `N` bytes from the operating system's generator.
pub fn bytes<const N: usize>() -> Option<[u8; N]> {
    let mut guard = POOL.lock().unwrap_or_else(|e| e.into_inner());
    let (buf, at) = &mut *guard;
    if *at + N > BLOCK {
        getrandom::fill(buf).ok()?;
        *at = 0;
    }
    let mut out = [0u8; N];
    out.copy_from_slice(&buf[*at..*at + N]);
    // Never hand the same bytes out twice.
    buf[*at..*at + N].fill(0);
    *at += N;
    Some(out)
}

/// OS entropy as a generator: 64 bits a draw.
struct Os;

impl Rng for Os {
    fn next_u64(&mut self) -> u64 {
        bytes::<8>().map_or(0, u64::from_le_bytes)
    }
}

/// A draw in [0, 1) from OS entropy, mapped as the core maps every draw (`Rng::next_f64`).
pub fn draw() -> f64 {
    Os.next_f64()
}
