//! Idempotency keys: validation, derivation, tenant scoping, storage form and minting.

use crate::sha256::{sha256_hex, HEX};
use crate::{Error, ErrorCode, Result};

/// The default maximum length of a key, in characters (docs/idempotency.md, "Keys").
pub const DEFAULT_MAX_KEY_LEN: usize = 255;

/// The smallest `max_len` that [`storage_key`] accepts: `sha256:` plus 32 hex
/// digits, 128 bits of the hash.
pub const MIN_STORAGE_KEY_LEN: usize = 39;

/// The prefix of hashed storage keys, reserved: user keys may not start with it.
pub const HASHED_KEY_PREFIX: &str = "sha256:";

/// Describes one character for an error message: `U+0020 space`, `U+00E9 'é'`.
pub(crate) fn describe_char(c: char) -> String {
    let name = match c {
        '\0' => "null",
        '\t' => "tab",
        '\n' => "line feed",
        '\r' => "carriage return",
        ' ' => "space",
        '\u{7f}' => "delete",
        '\u{a0}' => "no-break space",
        '\u{feff}' => "byte order mark",
        c if c.is_control() => "control character",
        c if c.is_whitespace() => "whitespace",
        _ => "",
    };
    if name.is_empty() {
        format!("U+{:04X} '{c}'", c as u32)
    } else {
        format!("U+{:04X} {name}", c as u32)
    }
}

/// Returns the byte position of the first byte of `s` outside 0x21–0x7E.
///
/// Every byte before that position is visible ASCII, so the byte position is
/// also the character position.
#[inline]
pub(crate) fn first_invisible(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    // Whole chunks first, without early exit, so the check vectorises.
    let mut chunks = bytes.chunks_exact(16);
    for (i, chunk) in chunks.by_ref().enumerate() {
        if !chunk.iter().fold(true, |ok, &b| ok & (b.wrapping_sub(0x21) < 0x5e)) {
            return chunk.iter().position(|&b| b.wrapping_sub(0x21) >= 0x5e).map(|p| i * 16 + p);
        }
    }
    let done = bytes.len() - chunks.remainder().len();
    chunks.remainder().iter().position(|&b| b.wrapping_sub(0x21) >= 0x5e).map(|p| done + p)
}

/// Builds the error for the character at byte `pos` of `s` (a char boundary).
fn bad_char(field: &'static str, what: &str, s: &str, pos: usize) -> Error {
    let c = s[pos..].chars().next().unwrap_or('\0');
    Error::new(
        ErrorCode::InvalidKey,
        field,
        format!("{what} has {} at position {pos}; only visible ascii (0x21-0x7e) is allowed", describe_char(c)),
    )
}

/// Checks that `key` is a valid idempotency key of at most `max_len` characters.
///
/// A key is 1 to `max_len` characters of visible ASCII (0x21–0x7E, so no
/// space, no control character, nothing beyond ASCII) and does not start with
/// the reserved prefix `sha256:` (kept for [`storage_key`]'s hashed keys).
///
/// # Errors
/// - `out_of_range` when `max_len` is 0;
/// - `invalid_key` when the key is empty, when a character is not visible
///   ASCII (the message names the character, escaped as `U+0020 space`, and
///   its 0-based position), when it is longer than `max_len`, or when it
///   starts with `sha256:`.
#[inline]
pub fn validate_key(key: &str, max_len: usize) -> Result<()> {
    if max_len == 0 {
        return Err(Error::new(ErrorCode::OutOfRange, "max_len", "must be at least 1"));
    }
    if key.is_empty() {
        return Err(Error::new(ErrorCode::InvalidKey, "key", "is empty"));
    }
    if let Some(pos) = first_invisible(key) {
        return Err(bad_char("key", "key", key, pos));
    }
    // Visible ASCII: bytes are characters.
    if key.len() > max_len {
        return Err(Error::new(
            ErrorCode::InvalidKey,
            "key",
            format!("is {} characters long, more than the maximum of {max_len}", key.len()),
        ));
    }
    if key.starts_with(HASHED_KEY_PREFIX) {
        return Err(Error::new(
            ErrorCode::InvalidKey,
            "key",
            "starts with the reserved prefix sha256: of hashed storage keys",
        ));
    }
    Ok(())
}

/// Joins business id, operation and version (or any parts) into one key with `:`.
///
/// `derive_key(&["order-1001", "charge", "v1"])` gives `"order-1001:charge:v1"`
/// (a key is stable, unique and reproducible, so a retry sends the same one:
/// docs/idempotency.md, "Keys"). The result is checked by [`validate_key`]
/// with the default maximum of 255 characters.
///
/// # Errors
/// `invalid_key` (field `parts[i]`) when there are no parts, when a part is
/// empty, contains `:` or has a character that is not visible ASCII; then any
/// error of [`validate_key`] for the joined key.
pub fn derive_key(parts: &[&str]) -> Result<String> {
    if parts.is_empty() {
        return Err(Error::new(ErrorCode::InvalidKey, "parts", "no parts to join"));
    }
    let mut len = parts.len() - 1;
    for (i, part) in parts.iter().enumerate() {
        if part.is_empty() {
            return Err(Error::new(ErrorCode::InvalidKey, format!("parts[{i}]"), format!("part {i} is empty")));
        }
        if let Some(pos) = first_invisible(part) {
            let c = part[pos..].chars().next().unwrap_or('\0');
            return Err(Error::new(
                ErrorCode::InvalidKey,
                format!("parts[{i}]"),
                format!(
                    "part {i} has {} at position {pos}; only visible ascii (0x21-0x7e) is allowed",
                    describe_char(c)
                ),
            ));
        }
        if let Some(pos) = part.bytes().position(|b| b == b':') {
            return Err(Error::new(
                ErrorCode::InvalidKey,
                format!("parts[{i}]"),
                format!("part {i} contains the separator ':' at position {pos}"),
            ));
        }
        len += part.len();
    }
    let mut key = String::with_capacity(len);
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            key.push(':');
        }
        key.push_str(part);
    }
    validate_key(&key, DEFAULT_MAX_KEY_LEN)?;
    Ok(key)
}

/// Prefixes a key with its tenant so that no two tenants' keys collide.
///
/// The result is `len(tenant) ":" tenant ":" key`, the length in bytes in
/// decimal: `scoped_key("acme", "order-1001")` is `"4:acme:order-1001"`.
/// Because the length comes first, `("a:b", "c")` gives `3:a:b:c` and
/// `("a", "b:c")` gives `1:a:b:c`, which differ. The result may be longer
/// than 255 characters; pass it through [`storage_key`] before it becomes a
/// database key.
///
/// # Errors
/// `invalid_key` (field `tenant`) when the tenant is empty or has a character
/// that is not visible ASCII; then any error of [`validate_key`] for `key`
/// with the default maximum.
pub fn scoped_key(tenant: &str, key: &str) -> Result<String> {
    if tenant.is_empty() {
        return Err(Error::new(ErrorCode::InvalidKey, "tenant", "is empty"));
    }
    if let Some(pos) = first_invisible(tenant) {
        return Err(bad_char("tenant", "tenant", tenant, pos));
    }
    validate_key(key, DEFAULT_MAX_KEY_LEN)?;
    let mut out = String::with_capacity(tenant.len() + key.len() + 6);
    out.push_str(&tenant.len().to_string());
    out.push(':');
    out.push_str(tenant);
    out.push(':');
    out.push_str(key);
    Ok(out)
}

/// Returns the form of `key` to store in a column of at most `max_len` bytes.
///
/// A key of at most `max_len` characters is returned unchanged; a longer one
/// becomes `"sha256:"` followed by the first `min(64, max_len − 7)` lowercase
/// hex digits of its SHA-256 (database index limits: MySQL's InnoDB allows
/// 767 bytes, 191 utf8mb4 characters, in its older row formats). The prefix
/// cannot collide with a user key, since [`validate_key`] rejects keys that
/// start with it.
///
/// # Errors
/// - `out_of_range` (field `max_len`) when `max_len` is below 39, which would
///   keep fewer than 128 bits of the hash;
/// - `invalid_key` when `key` is empty, starts with `sha256:` or has a
///   character that is not visible ASCII (long keys, such as scoped ones, are
///   fine).
pub fn storage_key(key: &str, max_len: usize) -> Result<String> {
    if max_len < MIN_STORAGE_KEY_LEN {
        return Err(Error::new(
            ErrorCode::OutOfRange,
            "max_len",
            format!("is {max_len}, below the minimum of {MIN_STORAGE_KEY_LEN} (128 bits of hash)"),
        ));
    }
    validate_key(key, usize::MAX)?;
    if key.len() <= max_len {
        return Ok(key.to_owned());
    }
    let hex_len = (max_len - HASHED_KEY_PREFIX.len()).min(64);
    Ok(format!("{HASHED_KEY_PREFIX}{}", &sha256_hex(key.as_bytes())[..hex_len]))
}

/// Checks a key as a record stores it: a user key (any length) or a
/// [`storage_key`] result, `sha256:` and 32 to 64 lowercase hex digits.
///
/// # Errors
/// `invalid_key` (field `key`) for anything else: what [`validate_key`]
/// refuses, and a `sha256:` key that [`storage_key`] cannot have produced.
pub fn validate_record_key(key: &str) -> Result<()> {
    let Some(hex) = key.strip_prefix(HASHED_KEY_PREFIX) else {
        return validate_key(key, usize::MAX);
    };
    let lower_hex = hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if !(MIN_STORAGE_KEY_LEN - HASHED_KEY_PREFIX.len()..=64).contains(&hex.len()) || !lower_hex {
        return Err(Error::new(
            ErrorCode::InvalidKey,
            "key",
            "a sha256: key must be 32 to 64 lowercase hex digits, as storage_key writes it",
        ));
    }
    Ok(())
}

/// Formats 16 random bytes as a version 4 UUID, for a key with no business id.
///
/// The caller supplies the randomness (the core reads none): the bindings
/// draw it from the operating system. The version and variant bits are set,
/// so 122 of the 128 bits are kept: `xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`,
/// lowercase. Mint a key once per logical operation and reuse it for every
/// retry; a key minted per attempt deduplicates nothing.
pub fn mint_key(entropy: [u8; 16]) -> String {
    let mut b = entropy;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let mut out = String::with_capacity(36);
    for (i, byte) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push(HEX[(byte >> 4) as usize] as char);
        out.push(HEX[(byte & 15) as usize] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code<T: std::fmt::Debug>(r: Result<T>) -> &'static str {
        r.unwrap_err().code()
    }

    #[test]
    fn validates_keys() {
        assert!(validate_key("order-1001:charge:v1", 255).is_ok());
        assert!(validate_key("!~", 255).is_ok());
        assert_eq!(code(validate_key("", 255)), "invalid_key");
        let e = validate_key("abc def", 255).unwrap_err();
        assert_eq!(e.code(), "invalid_key");
        assert!(e.reason().contains("U+0020 space at position 3"), "{e}");
        let e = validate_key("caf\u{e9}", 255).unwrap_err();
        assert!(e.reason().contains("U+00E9 '\u{e9}' at position 3"), "{e}");
        let e = validate_key("a\u{1}", 255).unwrap_err();
        assert!(e.reason().contains("U+0001 control character at position 1"), "{e}");
        assert!(validate_key(&"a".repeat(255), 255).is_ok());
        assert_eq!(code(validate_key(&"a".repeat(256), 255)), "invalid_key");
        assert_eq!(code(validate_key("sha256:abc", 255)), "invalid_key");
        assert!(validate_key("sha256", 255).is_ok());
        assert_eq!(code(validate_key("a", 0)), "out_of_range");
    }

    #[test]
    fn derives_keys() {
        assert_eq!(derive_key(&["order-1001", "charge", "v1"]).unwrap(), "order-1001:charge:v1");
        let e = derive_key(&["a", "b:c"]).unwrap_err();
        assert_eq!(e.field(), "parts[1]");
        assert_eq!(derive_key(&["a", ""]).unwrap_err().field(), "parts[1]");
        assert_eq!(code(derive_key(&[])), "invalid_key");
        assert_eq!(code(derive_key(&["sha256", "x"])), "invalid_key");
    }

    #[test]
    fn scopes_keys_without_collisions() {
        assert_eq!(scoped_key("a:b", "c").unwrap(), "3:a:b:c");
        assert_eq!(scoped_key("a", "b:c").unwrap(), "1:a:b:c");
        assert_eq!(code(scoped_key("", "k")), "invalid_key");
        assert_eq!(code(scoped_key("t t", "k")), "invalid_key");
    }

    #[test]
    fn storage_keys() {
        assert_eq!(storage_key("short", 39).unwrap(), "short");
        let long = "k".repeat(300);
        let s = storage_key(&long, 191).unwrap();
        assert_eq!(s.len(), 71);
        assert!(s.starts_with("sha256:"));
        assert_eq!(storage_key(&long, 39).unwrap().len(), 39);
        assert_eq!(&storage_key(&long, 39).unwrap(), &s[..39]);
        assert_eq!(code(storage_key("k", 38)), "out_of_range");
    }

    #[test]
    fn mints_uuid_v4() {
        let k = mint_key([0xff; 16]);
        assert_eq!(k, "ffffffff-ffff-4fff-bfff-ffffffffffff");
        assert_eq!(mint_key([0; 16]), "00000000-0000-4000-8000-000000000000");
        assert!(validate_key(&k, 255).is_ok());
    }
}
