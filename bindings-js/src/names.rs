//! Name lists interned once per JS environment, so that a failure's names
//! cross as one number instead of a string each (docs/js.md, "Performance").
//!
//! The JS layer hands a list of names to `internNames` the first time it
//! sees it and passes the id it got (`namesId`) with every later failure
//! whose list is the same; [`FailureArgs::read`](crate::FailureArgs::read)
//! reads the list back here. This is binding state, not the core's: the
//! core classifies the list exactly as if it had crossed as strings.
//!
//! An id is never taken back (a JS layer may hold it as long as it lives), so
//! the table is bounded instead: at most [`MAX_LISTS`] lists and
//! [`MAX_BYTES`] bytes of names in all. Past either, `internNames` answers
//! -1 and the JS layer sends names as strings again (hostile unique codes
//! cannot grow the table). A list longer than [`MAX_LIST_BYTES`] is not
//! interned (-2): it keeps crossing as strings, and the table stays for the
//! short lists errors have.

use crate::error::{Error, Result};
use retrycore::ErrorCode;
use std::cell::RefCell;
use std::rc::Rc;

/// The most lists a JS environment interns.
pub const MAX_LISTS: usize = 1024;

/// The most bytes of names a JS environment interns, over every list.
pub const MAX_BYTES: usize = 256 * 1024;

/// The most bytes of names in one interned list.
pub const MAX_LIST_BYTES: usize = 4 * 1024;

/// The interned lists of this thread (one JS environment: a Node worker, a wasm instance).
#[derive(Default)]
struct Table {
    lists: Vec<Rc<[String]>>,
    bytes: usize,
}

thread_local! {
    static TABLE: RefCell<Table> = RefCell::new(Table::default());
}

/// Interns a list of names: its id (≥ 0); -1 when the table is full, -2
/// when the list is longer than [`MAX_LIST_BYTES`] (either way the list
/// keeps crossing as strings). The same list given twice gets two ids: the
/// JS layer asks once per list.
pub fn intern_names(names: &[String]) -> Result<f64> {
    retrycore::limits::check_items(names.len() as u64, "names").map_err(Error::of_config)?;
    let bytes = names.iter().map(String::len).sum::<usize>();
    if bytes > MAX_LIST_BYTES {
        return Ok(-2.0);
    }
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        if t.lists.len() >= MAX_LISTS || bytes > MAX_BYTES - t.bytes {
            return Ok(-1.0);
        }
        t.bytes += bytes;
        t.lists.push(names.iter().cloned().collect());
        Ok((t.lists.len() - 1) as f64)
    })
}

/// The list interned as `id`.
pub(crate) fn interned(id: f64) -> Result<Rc<[String]>> {
    let unknown =
        || Error::config(ErrorCode::InvalidValue, "namesId", format_args!("is not an id internNames gave, got {id}"));
    if !(id >= 0.0 && id.fract() == 0.0 && id < MAX_LISTS as f64) {
        return Err(unknown());
    }
    TABLE.with(|t| t.borrow().lists.get(id as usize).cloned()).ok_or_else(unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_their_lists_and_the_table_is_bounded() {
        let a = vec!["ECONNRESET".to_owned(), "Error".to_owned()];
        let id = intern_names(&a).unwrap();
        assert!(id >= 0.0);
        assert_eq!(&*interned(id).unwrap(), a.as_slice());
        for bad in [-1.0, 0.5, f64::NAN, f64::INFINITY, 1e9, id + 1.0] {
            assert_eq!(interned(bad).unwrap_err().code, "invalid_value", "{bad}");
        }
        // A list past its own bound is not interned, and takes nothing.
        let big = vec!["x".repeat(MAX_LIST_BYTES + 1)];
        assert_eq!(intern_names(&big).unwrap(), -2.0);
        let mut last = id;
        while let Ok(i) = intern_names(&a) {
            if i < 0.0 {
                break;
            }
            last = i;
        }
        assert_eq!(last as usize, MAX_LISTS - 1);
        assert_eq!(intern_names(&[]).unwrap(), -1.0);
        assert_eq!(&*interned(last).unwrap(), a.as_slice());
    }

    #[test]
    fn the_bytes_are_bounded() {
        let list = vec!["x".repeat(MAX_LIST_BYTES)];
        let fit = MAX_BYTES / MAX_LIST_BYTES;
        for i in 0..fit {
            assert_eq!(intern_names(&list).unwrap(), i as f64);
        }
        assert_eq!(intern_names(&list).unwrap(), -1.0);
        assert_eq!(intern_names(&["a".to_owned()]).unwrap(), -1.0, "full: nothing more fits");
    }
}
