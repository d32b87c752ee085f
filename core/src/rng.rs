//! The pinned random generator: xoshiro256++ seeded by SplitMix64.
//!
//! Every runtime reproduces every delay bit for bit because the generator,
//! its seeding and the mapping of a draw to [0, 1) are fixed here:
//!
//! - a `u64` seed is expanded into the four state words by four successive
//!   SplitMix64 outputs;
//! - a draw is the next xoshiro256++ output `x`, mapped to `(x >> 11) · 2⁻⁵³`.
//!
//! A delay takes exactly one draw iff its jitter is not `none` (the
//! decorrelated kind takes one); the `adaptive` throttle takes one per check;
//! nothing else draws.

/// A source of uniform draws in [0, 1).
pub trait Rng {
    /// Returns the next 64 random bits.
    fn next_u64(&mut self) -> u64;

    /// Returns the next draw in [0, 1): `(x >> 11) · 2⁻⁵³`.
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// The SplitMix64 generator (used to seed [`Xoshiro256pp`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// Creates a generator from a seed.
    pub const fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }
}

impl Rng for SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The xoshiro256++ generator, seeded by SplitMix64.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Xoshiro256pp {
    s: [u64; 4],
}

impl Xoshiro256pp {
    /// Creates a generator whose state is four SplitMix64 outputs of `seed`.
    pub fn seed_from_u64(seed: u64) -> Self {
        let mut sm = SplitMix64::new(seed);
        Xoshiro256pp { s: [sm.next_u64(), sm.next_u64(), sm.next_u64(), sm.next_u64()] }
    }

    /// Returns the internal state (for snapshots and tests).
    pub fn state(&self) -> [u64; 4] {
        self.s
    }

    /// Skips `n` outputs: the state after `n` calls of `next_u64`.
    pub fn advance(&mut self, n: u64) {
        for _ in 0..n {
            self.next_u64();
        }
    }

    /// Creates a generator from a state returned by [`state`](Self::state).
    ///
    /// An all-zero state would only ever produce zeros; it is replaced by the
    /// state of seed 0.
    pub fn from_state(s: [u64; 4]) -> Self {
        if s == [0; 4] {
            Self::seed_from_u64(0)
        } else {
            Xoshiro256pp { s }
        }
    }
}

impl Rng for Xoshiro256pp {
    fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }
}

/// A fixed sequence of draws, for replaying an anchor's vectors or tests.
///
/// Each [`next_f64`](Rng::next_f64) returns the next value as given (values
/// in [0, 1] are accepted, as explicit `r` is); when the sequence runs out
/// it starts again.
#[derive(Clone, Debug, PartialEq)]
pub struct FixedDraws {
    draws: Vec<f64>,
    next: usize,
}

impl FixedDraws {
    /// Creates a replaying source; `draws` must not be empty.
    pub fn new(draws: Vec<f64>) -> Self {
        FixedDraws { draws, next: 0 }
    }

    /// Returns how many draws were taken.
    pub fn taken(&self) -> usize {
        self.next
    }

    /// Returns true when every draw was taken: a session refuses a retry
    /// that needs another (the draws never cycle).
    pub fn exhausted(&self) -> bool {
        self.next >= self.draws.len()
    }
}

impl Rng for FixedDraws {
    fn next_u64(&mut self) -> u64 {
        // The bits that map back to the same draw under `next_f64`.
        ((self.next_f64() * (1u64 << 53) as f64) as u64) << 11
    }

    fn next_f64(&mut self) -> f64 {
        if self.draws.is_empty() {
            return 0.0;
        }
        let r = self.draws[self.next % self.draws.len()];
        self.next += 1;
        r
    }
}

/// OS entropy served from a block the host refills, so minting a key costs
/// no system call (or call into JS) per key. The pool does no I/O: the host
/// keeps one (per thread or behind a lock) and passes its source to
/// [`take`](Self::take).
#[derive(Debug, Default)]
pub struct EntropyPool {
    buf: Vec<u8>,
    pos: usize,
}

impl EntropyPool {
    /// The bytes one refill draws.
    pub const BLOCK: usize = 4096;

    /// Creates an empty pool (filled on first use).
    pub const fn new() -> Self {
        EntropyPool { buf: Vec::new(), pos: 0 }
    }

    /// Fills `out` from the pool, refilling it with `fill` when it runs
    /// dry. A failed refill leaves nothing half-filled to hand out later;
    /// bytes handed out are zeroed so none is handed out twice.
    ///
    /// # Errors
    /// `invalid_state` on `entropy` when `fill` fails (naming `source`),
    /// `out_of_range` when more than [`BLOCK`](Self::BLOCK) bytes are asked at once.
    pub fn take<E: core::fmt::Display>(
        &mut self,
        out: &mut [u8],
        source: &str,
        fill: impl FnOnce(&mut [u8]) -> core::result::Result<(), E>,
    ) -> crate::Result<()> {
        if out.len() > Self::BLOCK {
            return Err(crate::Error::new(crate::ErrorCode::OutOfRange, "entropy", "too many bytes asked"));
        }
        let end = match self.pos.checked_add(out.len()).filter(|e| *e <= self.buf.len()) {
            Some(e) => e,
            None => {
                self.buf.resize(Self::BLOCK, 0);
                self.pos = 0;
                if let Err(e) = fill(&mut self.buf) {
                    self.buf.clear();
                    let why = format!("{source} gave no entropy: {e}");
                    return Err(crate::Error::new(crate::ErrorCode::InvalidState, "entropy", why));
                }
                out.len()
            }
        };
        if let Some(src) = self.buf.get_mut(self.pos..end) {
            out.copy_from_slice(src);
            src.fill(0);
        }
        self.pos = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advance_skips_outputs() {
        let (mut a, mut b) = (Xoshiro256pp::seed_from_u64(5), Xoshiro256pp::seed_from_u64(5));
        for _ in 0..7 {
            a.next_u64();
        }
        b.advance(7);
        assert_eq!(a, b);
        b.advance(0);
        assert_eq!(a.next_u64(), b.next_u64());
    }

    #[test]
    fn splitmix64_reference_values() {
        // From the reference implementation (Vigna), seed 1234567.
        let mut g = SplitMix64::new(1234567);
        assert_eq!(g.next_u64(), 6457827717110365317);
        assert_eq!(g.next_u64(), 3203168211198807973);
        assert_eq!(g.next_u64(), 9817491932198370423);
    }

    #[test]
    fn xoshiro256pp_reference_values() {
        // State 1, 2, 3, 4 from the reference implementation's test vector.
        let mut g = Xoshiro256pp { s: [1, 2, 3, 4] };
        let want = [41943041u64, 58720359, 3588806011781223, 3591011842654386];
        for w in want {
            assert_eq!(g.next_u64(), w);
        }
    }

    #[test]
    fn draws_are_in_unit_interval() {
        let mut g = Xoshiro256pp::seed_from_u64(42);
        for _ in 0..10_000 {
            let r = g.next_f64();
            assert!((0.0..1.0).contains(&r));
        }
    }

    #[test]
    fn pool_refills_zeroes_and_survives_failures() {
        type R = core::result::Result<(), &'static str>;
        let mut p = EntropyPool::new();
        let mut fills = 0;
        let mut out = [0u8; 16];
        p.take(&mut out, "test", |b: &mut [u8]| -> R {
            fills += 1;
            b.fill(7);
            Ok(())
        })
        .unwrap();
        assert_eq!(out, [7; 16]);
        for _ in 0..(EntropyPool::BLOCK / 16 - 1) {
            p.take(&mut out, "test", |_: &mut [u8]| -> R { unreachable!() }).unwrap();
        }
        let e = p.take(&mut out, "test", |_: &mut [u8]| Err("down")).unwrap_err();
        assert_eq!((e.code(), e.field()), ("invalid_state", "entropy"));
        assert!(e.to_string().contains("test gave no entropy: down"), "{e}");
        // Nothing half-filled is handed out after a failure.
        p.take(&mut out, "test", |b: &mut [u8]| -> R {
            b.fill(9);
            Ok(())
        })
        .unwrap();
        assert_eq!(out, [9; 16]);
        let mut big = vec![0u8; EntropyPool::BLOCK + 1];
        assert_eq!(p.take(&mut big, "test", |_: &mut [u8]| -> R { Ok(()) }).unwrap_err().code(), "out_of_range");
        assert_eq!(fills, 1);
    }
}
