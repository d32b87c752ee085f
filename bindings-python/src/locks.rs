//! Core locks taken without ever deadlocking against the GIL.
//!
//! Two rules keep a lock and the GIL from waiting on each other: no Python
//! code runs, and no Python object is made or dropped (which can run a
//! finalizer), while a lock is held — the closure given to [`with`] gets
//! plain Rust data, and errors become exceptions only after it returns; and
//! a thread that finds the lock taken waits for it with the GIL released,
//! so the holder can always finish (docs/python.md, "Threads").

use pyo3::prelude::*;
use std::sync::{Mutex, MutexGuard, TryLockError};

/// Locks `m`, taking over a lock poisoned by a panic (the state it guards
/// is plain data, consistent between calls).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `f` on the value behind `m`: at once when the lock is free, else
/// after waiting for it with the GIL released.
pub fn with<T: Send, R: Send>(py: Python<'_>, m: &Mutex<T>, f: impl FnOnce(&mut T) -> R + Send) -> R {
    match m.try_lock() {
        Ok(mut g) => f(&mut g),
        Err(TryLockError::Poisoned(p)) => f(&mut p.into_inner()),
        Err(TryLockError::WouldBlock) => py.allow_threads(|| f(&mut lock(m))),
    }
}
