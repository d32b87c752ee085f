//! Compiles the classification tables in `data/*.tsv` into static Rust arrays.
//!
//! The tables are data so people can read and review them (they are
//! rendered in `docs/classification.md`); the build checks them: unknown
//! categories or flags, duplicate names and ambiguous simple names fail it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

const CATEGORIES: &[(&str, &str)] = &[
    ("connect", "Connect"),
    ("not_processed", "NotProcessed"),
    ("overloaded", "Overloaded"),
    ("connection_lost", "ConnectionLost"),
    ("timeout", "Timeout"),
    ("server_error", "ServerError"),
    ("resource_exhausted", "ResourceExhausted"),
    ("conflict", "Conflict"),
    ("invalid_request", "InvalidRequest"),
    ("auth", "Auth"),
    ("not_found", "NotFound"),
    ("open_breaker", "OpenBreaker"),
    ("retry_exhausted", "RetryExhausted"),
    ("cancelled", "Cancelled"),
    ("programming_error", "ProgrammingError"),
];

fn variant(cat: &str, file: &str, line: usize) -> &'static str {
    CATEGORIES
        .iter()
        .find(|(c, _)| *c == cat)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| panic!("{file}:{line}: unknown category {cat:?}"))
}

fn rows(path: &Path) -> Vec<(usize, Vec<String>)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|(i, l)| (i + 1, l.split('\t').map(|c| c.trim().to_owned()).collect()))
        .collect()
}

fn simple(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

fn lit(s: &str) -> String {
    format!("{s:?}")
}

include!("src/name_hash.rs");

/// Writes an open-addressing index over sorted `keys` (slot = row + 1, 0 = empty;
/// linear probing; at most half full, so every probe sequence ends).
fn index(out: &mut String, name: &str, keys: &[&str]) {
    let size = (keys.len() * 2).next_power_of_two().max(2);
    assert!(keys.len() < usize::from(u16::MAX), "too many names for a u16 index");
    let mut slots = vec![0u16; size];
    for (row, k) in keys.iter().enumerate() {
        let mut i = (name_hash(k.as_bytes()) as usize) & (size - 1);
        while slots[i] != 0 {
            i = (i + 1) & (size - 1);
        }
        slots[i] = (row + 1) as u16;
    }
    writeln!(out, "/// Hash index of the table's rows (see `find`).").unwrap();
    writeln!(out, "pub(crate) static {name}: [u16; {size}] = {slots:?};").unwrap();
}

fn main() {
    let data = Path::new("data");
    for f in ["names.tsv", "http_status.tsv", "grpc_codes.tsv"] {
        println!("cargo:rerun-if-changed=data/{f}");
    }
    println!("cargo:rerun-if-changed=src/name_hash.rs");
    let mut out = String::new();

    // Names.
    let file = "data/names.tsv";
    // Flag bits: 1 = defer (wrapper), 2 = refused connection, 4 = raised while connecting.
    let mut exact: BTreeMap<String, (&str, u8)> = BTreeMap::new();
    let mut simple_map: BTreeMap<String, (&str, u8, String)> = BTreeMap::new();
    let mut docs = Vec::new();
    for (line, cols) in rows(&data.join("names.tsv")) {
        let get = |i: usize| cols.get(i).map(String::as_str).unwrap_or("");
        let (name, cat, flags, eco, note) = (get(0), get(1), get(2), get(3), get(4));
        assert!(!name.is_empty(), "{file}:{line}: empty name");
        let v = variant(cat, file, line);
        let mut qualified = false;
        let mut defer = 0u8;
        for flag in flags.split(',').map(str::trim).filter(|f| !f.is_empty()) {
            match flag {
                "qualified" => qualified = true,
                "defer" => defer |= 1,
                "refused" => defer |= 2,
                "connecting" => defer |= 4,
                other => panic!("{file}:{line}: unknown flag {other:?}"),
            }
        }
        if exact.insert(name.to_owned(), (v, defer)).is_some() {
            panic!("{file}:{line}: duplicate name {name:?}");
        }
        if !qualified {
            let mut keys = vec![simple(name).to_owned()];
            if let Some((_, tail)) = simple(name).rsplit_once('$') {
                keys.push(tail.to_owned());
            }
            for key in keys {
                if key == name {
                    continue;
                }
                match simple_map.get(&key) {
                    Some((pv, pd, pname)) if (*pv, *pd) != (v, defer) => panic!(
                        "{file}:{line}: simple name {key:?} of {name:?} is ambiguous with {pname:?}; mark both `qualified`"
                    ),
                    Some(_) => {}
                    None => {
                        simple_map.insert(key, (v, defer, name.to_owned()));
                    }
                }
            }
        }
        docs.push(format!("({}, {}, {}, {}, {})", lit(name), lit(cat), lit(flags), lit(eco), lit(note)));
    }
    for (k, (_, _, n)) in &simple_map {
        if let Some((v, _)) = exact.get(k) {
            let (sv, _, _) = simple_map[k];
            assert_eq!(*v, sv, "{file}: {k:?} is both a name and the simple name of {n:?} with another category");
        }
    }
    writeln!(out, "/// Built-in names by full name: (name, category, flags: 1 defer, 2 refused, 4 connecting)")
        .unwrap();
    writeln!(out, "pub(crate) static EXACT: &[(&str, Category, u8)] = &[").unwrap();
    for (k, (v, d)) in &exact {
        writeln!(out, "    ({}, Category::{v}, {d}),", lit(k)).unwrap();
    }
    writeln!(out, "];").unwrap();
    writeln!(out, "/// Built-in names by simple name (after the last `.`, or the last `$`).").unwrap();
    writeln!(out, "pub(crate) static SIMPLE: &[(&str, Category, u8)] = &[").unwrap();
    for (k, (v, d, _)) in &simple_map {
        writeln!(out, "    ({}, Category::{v}, {d}),", lit(k)).unwrap();
    }
    writeln!(out, "];").unwrap();
    let keys: Vec<&str> = exact.keys().map(String::as_str).collect();
    index(&mut out, "EXACT_INDEX", &keys);
    let keys: Vec<&str> = simple_map.keys().map(String::as_str).collect();
    index(&mut out, "SIMPLE_INDEX", &keys);
    writeln!(out, "/// The names table as written: (name, category, flags, ecosystem, note).").unwrap();
    writeln!(out, "pub(crate) static NAME_ROWS: &[(&str, &str, &str, &str, &str)] = &[").unwrap();
    for d in &docs {
        writeln!(out, "    {d},").unwrap();
    }
    writeln!(out, "];").unwrap();

    // HTTP statuses.
    let file = "data/http_status.tsv";
    let mut http: BTreeMap<u16, (&str, String, String)> = BTreeMap::new();
    for (line, cols) in rows(&data.join("http_status.tsv")) {
        let status: u16 = cols[0].parse().unwrap_or_else(|_| panic!("{file}:{line}: bad status {:?}", cols[0]));
        assert!((100..=599).contains(&status), "{file}:{line}: status out of range");
        let cat = cols.get(1).map(String::as_str).unwrap_or("");
        let v = variant(cat, file, line);
        let note = cols.get(2).cloned().unwrap_or_default();
        assert!(http.insert(status, (v, cat.to_owned(), note)).is_none(), "{file}:{line}: duplicate status");
    }
    writeln!(out, "/// Returns the category the status table gives a status, if any.").unwrap();
    writeln!(out, "pub(crate) fn http_table(status: u16) -> Option<Category> {{\n    Some(match status {{").unwrap();
    for (s, (v, _, _)) in &http {
        writeln!(out, "        {s} => Category::{v},").unwrap();
    }
    writeln!(out, "        _ => return None,\n    }})\n}}").unwrap();
    writeln!(out, "/// The status table as written: (status, category, note).").unwrap();
    writeln!(out, "pub(crate) static HTTP_ROWS: &[(u16, &str, &str)] = &[").unwrap();
    for (s, (_, c, n)) in &http {
        writeln!(out, "    ({s}, {}, {}),", lit(c), lit(n)).unwrap();
    }
    writeln!(out, "];").unwrap();

    // gRPC codes.
    let file = "data/grpc_codes.tsv";
    let mut grpc: BTreeMap<u8, (String, Option<&str>, String, String)> = BTreeMap::new();
    for (line, cols) in rows(&data.join("grpc_codes.tsv")) {
        let code: u8 = cols[0].parse().unwrap_or_else(|_| panic!("{file}:{line}: bad code"));
        assert!(code <= 16, "{file}:{line}: gRPC codes are 0..=16");
        let name = cols.get(1).cloned().unwrap_or_default();
        let cat = cols.get(2).map(String::as_str).unwrap_or("-");
        let v = if cat == "-" { None } else { Some(variant(cat, file, line)) };
        let note = cols.get(3).cloned().unwrap_or_default();
        assert!(grpc.insert(code, (name, v, cat.to_owned(), note)).is_none(), "{file}:{line}: duplicate code");
    }
    assert_eq!(grpc.len(), 17, "{file}: all 17 gRPC codes must be listed");
    writeln!(out, "/// gRPC status names by code.").unwrap();
    writeln!(out, "pub(crate) static GRPC_NAMES: [&str; 17] = [").unwrap();
    for (name, _, _, _) in grpc.values() {
        writeln!(out, "    {},", lit(name)).unwrap();
    }
    writeln!(out, "];").unwrap();
    writeln!(out, "/// The category of each gRPC code (`None` for OK).").unwrap();
    writeln!(out, "pub(crate) static GRPC_TABLE: [Option<Category>; 17] = [").unwrap();
    for (_, v, _, _) in grpc.values() {
        match v {
            Some(v) => writeln!(out, "    Some(Category::{v}),").unwrap(),
            None => writeln!(out, "    None,").unwrap(),
        }
    }
    writeln!(out, "];").unwrap();
    writeln!(out, "/// The gRPC table as written: (code, name, category, note).").unwrap();
    writeln!(out, "pub(crate) static GRPC_ROWS: &[(u8, &str, &str, &str)] = &[").unwrap();
    for (c, (n, _, cat, note)) in &grpc {
        writeln!(out, "    ({c}, {}, {}, {}),", lit(n), lit(cat), lit(note)).unwrap();
    }
    writeln!(out, "];").unwrap();

    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("tables.rs");
    std::fs::write(dest, out).unwrap();

    doc_snippets();
}

/// Collects the ```rust blocks of docs/*.md into one page that `lib.rs`
/// compiles and runs as doc tests (a published crate has no docs/: empty).
fn doc_snippets() {
    let docs = Path::new("../docs");
    println!("cargo:rerun-if-changed=../docs");
    let mut pages: Vec<_> = std::fs::read_dir(docs).into_iter().flatten().flatten().map(|e| e.path()).collect();
    pages.sort();
    let mut out = String::new();
    for page in pages.iter().filter(|p| p.extension().is_some_and(|e| e == "md")) {
        println!("cargo:rerun-if-changed={}", page.display());
        let text = std::fs::read_to_string(page).unwrap_or_default();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("\n```rust\n") {
            let block = &rest[at + 9..];
            let end = block.find("\n```").map_or(block.len(), |e| e + 1);
            writeln!(out, "{}:\n\n```rust\n{}```\n", page.display(), &block[..end]).unwrap();
            rest = &block[end..];
        }
    }
    std::fs::write(Path::new(&std::env::var("OUT_DIR").unwrap()).join("doc_snippets.md"), out).unwrap();
}
