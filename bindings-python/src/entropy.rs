//! OS entropy, drawn in blocks: minting a session's idempotency key must
//! not cost a system call per session.

use retrycore::rng::{EntropyPool, Rng};
use std::sync::Mutex;

/// The process's pool (the core's), refilled from the operating system.
static POOL: Mutex<EntropyPool> = Mutex::new(EntropyPool::new());

/// Returns `N` bytes from the operating system's generator.
pub fn bytes<const N: usize>() -> Option<[u8; N]> {
    let mut out = [0u8; N];
    crate::locks::lock(&POOL).take(&mut out, "the operating system", getrandom::fill).ok()?;
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
