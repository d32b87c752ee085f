//! One limiter per downstream, so that one slow dependency cannot take
//! every slot (isolation per downstream), in bounded memory.

use super::{Limiter, LimiterConfig};
use crate::{Error, ErrorCode, Result};

/// Limiters keyed by downstream, built from one configuration on first use.
///
/// At most `max_entries` limiters live at once; a new downstream evicts the
/// least recently used idle one (nothing in flight or waiting, no
/// adaptation under way), and is refused with `too_large` when none is idle.
#[derive(Clone, Debug, PartialEq)]
pub struct Registry {
    config: LimiterConfig,
    max_entries: usize,
    /// (downstream, limiter, last use), in insertion order.
    entries: Vec<(String, Limiter, u64)>,
}

impl Registry {
    /// Creates an empty registry.
    ///
    /// # Errors
    /// `out_of_range` on `max_entries` when it is 0.
    pub fn new(config: LimiterConfig, max_entries: usize) -> Result<Registry> {
        if max_entries == 0 {
            return Err(Error::new(ErrorCode::OutOfRange, "max_entries", "must be at least 1"));
        }
        Ok(Registry { config, max_entries, entries: Vec::new() })
    }

    /// Limiters alive.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no limiter is alive.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Returns the limiter of `downstream`, if it is alive.
    pub fn peek(&self, downstream: &str) -> Option<&Limiter> {
        self.entries.iter().find(|(k, _, _)| k == downstream).map(|(_, l, _)| l)
    }

    /// Returns the limiter of `downstream`, created at `now` (named
    /// `<name>:<downstream>`) when it is new.
    ///
    /// # Errors
    /// `too_large` on `downstream` when the registry is full and every
    /// limiter in it is busy.
    pub fn get(&mut self, downstream: &str, now: u64) -> Result<&mut Limiter> {
        let i = match self.entries.iter().position(|(k, _, _)| k == downstream) {
            Some(i) => i,
            None => {
                if self.entries.len() >= self.max_entries {
                    let idle = self
                        .entries
                        .iter()
                        .enumerate()
                        .filter(|(_, (_, l, _))| l.is_idle(now))
                        .min_by_key(|(_, (_, _, used))| *used)
                        .map(|(i, _)| i);
                    match idle {
                        Some(i) => {
                            self.entries.remove(i);
                        }
                        None => {
                            return Err(Error::new(
                                ErrorCode::TooLarge,
                                "downstream",
                                format!("{} limiters are busy; no room for {downstream:?}", self.max_entries),
                            ))
                        }
                    }
                }
                let mut config = self.config.clone();
                config.name = format!("{}:{downstream}", config.name);
                self.entries.push((downstream.to_owned(), Limiter::new(config, now), now));
                self.entries.len() - 1
            }
        };
        let entry = &mut self.entries[i];
        entry.2 = entry.2.max(now);
        Ok(&mut entry.1)
    }
}
