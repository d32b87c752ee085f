//! Expands the Python surface declared in `src/surface.rs` into pyo3 code:
//! one `$OUT_DIR/<module>.rs` per module of the crate, which that module
//! includes at its end (so the generated items see the module's private
//! helpers and fields).
//!
//! The declaration language, one item per line (`#` comments, `///` docs
//! that attach to the next item or field):
//!
//! - `module name`: the items below go to `$OUT_DIR/name.rs`;
//! - `class Rust[ = Py] { field: Type, … }` (the braces may span lines):
//!   a value class — a frozen `#[pyclass]` struct named `Py` in Python
//!   (default: `Rust`), every field public and a read-only attribute
//!   (`priv field: Type`: public in Rust only);
//!   followed by its members, indented:
//!   - `repr "…"`: `__repr__` formats the string, `{field}` and
//!     `{field:?}` standing for the fields (Rust's `format!` syntax; a
//!     `bool` shows as `True` or `False`); further `repr` lines continue
//!     the string;
//!   - `truthy`: `__bool__` answers True;
//!   - `subclass`: Python may subclass it (the facade's classes do).
//!
//!   `class Rust[ = Py] from Core { … }` also says which core value the
//!   class is made from: a struct (`retrycore::breaker::Transition`; the
//!   expansion is `impl From<&Core> for Rust`) or an enum's variant
//!   (`Gate::Proceed`: its second-to-last segment is capitalised; the
//!   expansion is `fn gate_obj(py, &Gate) -> PyResult<Py<PyAny>>`, the
//!   declared class of each variant, so every variant needs one). A field
//!   `name: Type` takes the core's field of its name (`*name`, or
//!   `name.clone()` for a `String`); `name: Type = how` converts another:
//!   `code(f)` is `f.code()`, `secs(f)` a `Duration` in seconds,
//!   `secs?(f)` an `Option<Duration>`, `ns(f)` nanoseconds in seconds,
//!   `f` the field as it is, and anything else a Rust expression (no
//!   commas) whose first word is the core field it reads. The core's
//!   fields are bound by reference.
//! - `methods Rust`: the `#[pymethods]` of a class the module defines, one
//!   member per indented item:
//!   `[new|static|get] name(params) -> [try] Ret = body` — `new` is the
//!   constructor, `static` a static method, `get` a getter (no
//!   parentheses), anything else a `&self` method. `try` says the body
//!   returns a `PyResult`. The body is Rust; lines indented deeper than
//!   the member continue it. `py` is passed when the body or a conversion
//!   names it; a return type naming `'py` ties the arguments to it. A
//!   `()` body that converts arguments is statements, each ending in `;`.
//! - `functions`: the module's `#[pyfunction]`s, declared as members are.
//! - `group Name of noun { a, b, … }`: keyword parameters that members take
//!   together: a parameter `p: ..Name` stands for `a=None, b=None, …`
//!   (each an `Option<Obj>`) and the body sees `p = Name { a, b, … }`. The
//!   expansion defines the struct `Name<'py>` and `Name::of_dict`, which
//!   reads the same fields from a dict (another key is `unknown_key`,
//!   "is not a noun field").
//!
//! Docs: a Python-visible item's documentation is written once, as its
//! docstring in `python/retrycore/_native.pyi` (what type checkers and IDEs
//! read). This script reads the stub's docstrings ([`stub_docs`]), attaches
//! them as `#[doc]` to the items it generates (a class, a field's getter, a
//! method or function; not `new` or a dunder, whose docs Python never shows)
//! and writes each to `$OUT_DIR/doc/<name>.txt` (`Policy.delay`, `derive_key`)
//! for the hand-written items, which take it with `stub_doc!` (`lib.rs`). A
//! generated item without a docstring, or with a `///` doc here, fails the
//! build. `///` docs on `priv` fields and groups are for Rust readers only.
//!
//! `$OUT_DIR/exports.rs` holds `add_declared`, which adds every declared
//! function and every class with declared members to the module (`lib.rs`).
//!
//! Parameters are `name: kind`, a lone `*` making the rest keyword-only.
//! The kind says what Python passes and how the body sees it (`n` is the
//! name, also the field an error names). The conversions run in parameter
//! order before the body, those a member names after its return type
//! (`-> Ret reads a, b = …`) first, in that order (which error a call with
//! two bad arguments gets); an argument the body reads only sometimes, or
//! between its own steps, is an `obj` the body reads itself.
//!
//! | kind      | the body sees                                   | default |
//! |-----------|-------------------------------------------------|---------|
//! | `obj`     | `&Obj`, as passed                               |         |
//! | `obj?`    | `Option<&Obj>`, as passed                       | None    |
//! | `nullable`| `Option<&Obj>`: required, may be None           |         |
//! | `any?`    | `Option<Py<PyAny>>`, as passed                  | None    |
//! | `count`   | `u64` (`conv::to_count`)                        |         |
//! | `u32`     | `u32` (`conv::to_count` up to `u32::MAX`)       |         |
//! | `istr`    | `String` read by the module's `s` (`idem`)      |         |
//! | `f64`     | `f64` (`conv::to_f64`)                          |         |
//! | `secs`    | nanoseconds (`conv::secs`)                      |         |
//! | `instant` | nanoseconds on the monotonic clock              |         |
//! | `wall`    | Unix epoch milliseconds (`conv::wall_arg`)      |         |
//! | `str`     | `String` (`conv::to_str`)                       |         |
//! | `json`    | a `retrycore::json::Value` document (`conv::to_json`)|         |
//! | `host`    | a JSON value to fingerprint (`conv::to_host_json`) |      |
//! | `bool`    | `bool` (`conv::to_bool`)                        |         |
//! | `class<T>`| `&Bound<T>` of a native class (`conv::class_arg`) |       |
//! | `list<kind>` | `Vec<T>` of a list or tuple (`conv::list_arg`) |      |
//! | `kind?`   | `Option<T>` of any kind above: read when given and not None | None |
//! | `nullable kind` | the same, but required                    |         |
//! | `kind = v`| `T`, `v` when left out or None                  | None    |
//! | `now?`    | nanoseconds, the clock's when left out          | None    |
//! | `hook?`   | `Option<Py<PyAny>>`, a callable or None         | None    |
//! | `~f`      | what `f(n)?` returns for the `Option<&Obj>`     | None    |
//! | `=f`      | what `f(n)?` returns for the `&Obj`             |         |

use std::collections::BTreeMap;
use std::fmt::Write;

/// The stub whose docstrings are the native items' docs.
const STUB: &str = "python/retrycore/_native.pyi";

/// Docstrings by qualified name (`Policy.delay`), and each class's Python
/// name by its Rust name.
struct Docs {
    text: BTreeMap<String, String>,
    py_names: BTreeMap<String, String>,
}

/// A value class.
#[derive(Default)]
struct Class {
    doc: Vec<String>,
    rust: String,
    py: String,
    /// (docs, name, type)
    fields: Vec<(Vec<String>, String, String)>,
    repr: Option<String>,
    truthy: bool,
    subclass: bool,
    /// The core value it is made from (`class … from Core`), if any.
    from: Option<String>,
    /// (field, how it converts) for the fields that say `= how`.
    how: BTreeMap<String, String>,
}

/// A member of a `#[pymethods]` block.
struct Member {
    doc: Vec<String>,
    /// `new`, `static`, `get` or `fn`.
    form: String,
    name: String,
    /// (name, kind); a `*` marks where the keyword-only ones begin.
    params: Vec<(String, String)>,
    fallible: bool,
    ret: String,
    /// The parameters whose conversions run first, in this order (`reads a, b`).
    reads: Vec<String>,
    body: Vec<String>,
}

/// A module's declared items, in order.
#[derive(Default)]
struct Module {
    name: String,
    /// (name, what its fields describe, fields)
    groups: Vec<(String, String, Vec<String>)>,
    classes: Vec<Class>,
    /// (class, members)
    methods: Vec<(String, Vec<Member>)>,
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed={STUB}");
    let stub = std::fs::read_to_string(STUB).unwrap_or_else(|e| panic!("{STUB}: {e}"));
    let text_docs = stub_docs(&stub).unwrap_or_else(|e| panic!("{STUB}: {e}"));
    let text = std::fs::read_to_string("src/surface.rs").expect("src/surface.rs");
    let decls = declarations(&text).unwrap_or_else(|e| panic!("src/surface.rs: {e}"));
    let modules = parse(decls).unwrap_or_else(|e| panic!("src/surface.rs: {e}"));
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let doc_dir = out.join("doc");
    std::fs::create_dir_all(&doc_dir).expect("$OUT_DIR/doc");
    for (name, doc) in &text_docs {
        std::fs::write(doc_dir.join(format!("{name}.txt")), doc).expect("$OUT_DIR/doc");
    }
    let docs = Docs { text: text_docs, py_names: py_names(&modules) };
    let groups: Vec<(String, Vec<String>)> =
        modules.iter().flat_map(|m| m.groups.iter().map(|(n, _, f)| (n.clone(), f.clone()))).collect();
    let mut exports = String::from("// @generated by bindings-python/build.rs from src/surface.rs\n");
    exports.push_str("/// Adds the classes and functions `src/surface.rs` declares to the module.\n");
    exports.push_str("fn add_declared(m: &Bound<'_, PyModule>) -> PyResult<()> {\n");
    for m in &modules {
        let mut classes: Vec<&str> = m.classes.iter().map(|c| c.rust.as_str()).collect();
        for (c, _) in m.methods.iter().filter(|(c, _)| !c.is_empty()) {
            if !classes.contains(&c.as_str()) {
                classes.push(c);
            }
        }
        for c in classes {
            let _ = writeln!(exports, "    m.add_class::<crate::{}::{c}>()?;", m.name);
        }
        for (_, f) in m.methods.iter().filter(|(c, _)| c.is_empty()) {
            for f in f {
                let _ = writeln!(exports, "    m.add_function(wrap_pyfunction!(crate::{}::{}, m)?)?;", m.name, f.name);
            }
        }
    }
    exports.push_str("    Ok(())\n}\n");
    std::fs::write(out.join("exports.rs"), exports).expect("exports.rs");
    for m in modules {
        let mut code = String::from("// @generated by bindings-python/build.rs from src/surface.rs\n");
        for (name, noun, fields) in &m.groups {
            group(&mut code, name, noun, fields);
        }
        for c in &m.classes {
            // A class with declared members gets its `__repr__` in their block.
            let own = m.methods.iter().any(|(k, _)| k == &c.rust);
            class(&mut code, c, !own, &docs).unwrap_or_else(|e| panic!("src/surface.rs: class {}: {e}", c.rust));
        }
        conversions(&mut code, &m.classes);
        for (class, members) in &m.methods {
            let extra = m.classes.iter().find(|c| &c.rust == class).map(class_methods).unwrap_or_default();
            methods(&mut code, class, members, &groups, &extra, &docs)
                .unwrap_or_else(|e| panic!("src/surface.rs: methods {class}: {e}"));
        }
        let path = out.join(format!("{}.rs", m.name));
        std::fs::write(&path, code).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

/// The text of the `DECLARATIONS` raw string.
fn declarations(text: &str) -> Result<&str, String> {
    let start = text.find("r#\"").ok_or("no DECLARATIONS raw string")? + 3;
    let len = text[start..].find("\"#").ok_or("unterminated DECLARATIONS")?;
    Ok(&text[start..start + len])
}

fn docs(doc: &mut Vec<String>) -> Vec<String> {
    std::mem::take(doc)
}

fn parse(decls: &str) -> Result<Vec<Module>, String> {
    let mut modules: Vec<Module> = Vec::new();
    let mut doc = Vec::new();
    // Whether indented items are members of a `methods` or `functions` block.
    let mut in_methods = false;
    let mut lines = decls.lines().enumerate().map(|(i, l)| (i + 1, l.trim_end())).peekable();
    while let Some((n, raw)) = lines.next() {
        let line = raw.trim();
        let at = |e: String| format!("declaration line {n}: {e}");
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(d) = line.strip_prefix("///") {
            doc.push(d.strip_prefix(' ').unwrap_or(d).to_owned());
        } else if let Some(m) = line.strip_prefix("module ") {
            modules.push(Module { name: m.trim().to_owned(), ..Module::default() });
            in_methods = false;
        } else if let Some(c) = line.strip_prefix("methods ").or((line == "functions").then_some("")) {
            let m = modules.last_mut().ok_or_else(|| at("`methods` before any `module`".into()))?;
            m.methods.push((c.trim().to_owned(), Vec::new()));
            in_methods = true;
        } else if in_methods && raw.starts_with(' ') {
            let indent = raw.len() - raw.trim_start().len();
            let mut text = line.to_owned();
            let mut body = Vec::new();
            // Continuation lines: indented deeper than the member.
            while let Some((_, next)) = lines.peek() {
                let next_indent = next.len() - next.trim_start().len();
                if next.trim().is_empty() || next_indent <= indent {
                    break;
                }
                let (_, next) = lines.next().unwrap_or_default();
                if body.is_empty() && body_at(&text).is_none() && !text.ends_with(" =") {
                    text.push(' ');
                    text.push_str(next.trim());
                } else {
                    body.push(next[indent..].to_owned());
                }
            }
            let mut m = member(&text).map_err(at)?;
            m.doc = docs(&mut doc);
            m.body.extend(body);
            let (_, members) =
                modules.last_mut().and_then(|m| m.methods.last_mut()).ok_or_else(|| at("no class".into()))?;
            members.push(m);
        } else if let Some(rest) = line.strip_prefix("group ") {
            let (name, list) = rest.split_once('{').ok_or_else(|| at("a group needs `{ fields }`".into()))?;
            let mut list = list.to_owned();
            while !list.contains('}') {
                let (_, l) = lines.next().ok_or_else(|| at("unterminated `{`".into()))?;
                list.push_str(l);
            }
            let fields = list.trim_end().trim_end_matches('}').split(',');
            let fields = fields.map(|f| f.trim().to_owned()).filter(|f| !f.is_empty()).collect();
            let m = modules.last_mut().ok_or_else(|| at("a group before any `module`".into()))?;
            let (name, noun) = name.split_once(" of ").ok_or_else(|| at("a group needs `Name of noun`".into()))?;
            m.groups.push((name.trim().to_owned(), noun.trim().to_owned(), fields));
            // A group's docs describe the declaration; nothing shows them.
            doc.clear();
            in_methods = false;
        } else if let Some(rest) = line.strip_prefix("class ") {
            let (head, body) = rest.split_once('{').ok_or_else(|| at("a class needs `{ fields }`".into()))?;
            let mut body = body.to_owned();
            while !body.contains('}') {
                let (_, l) = lines.next().ok_or_else(|| at("unterminated `{`".into()))?;
                body.push('\n');
                body.push_str(l.trim());
            }
            let (head, from) = match head.split_once(" from ") {
                Some((h, f)) => (h, Some(f.trim().to_owned())),
                None => (head, None),
            };
            let (rust, py) = match head.split_once('=') {
                Some((r, p)) => (r.trim().to_owned(), p.trim().to_owned()),
                None => (head.trim().to_owned(), head.trim().to_owned()),
            };
            let mut c = Class { doc: docs(&mut doc), rust, py, from, ..Class::default() };
            c.fields = fields(body.trim_end().trim_end_matches('}')).map_err(at)?;
            for (_, name, ty) in &mut c.fields {
                if let Some((t, how)) = ty.split_once(" = ") {
                    c.how.insert(name.clone(), how.trim().to_owned());
                    *ty = t.trim().to_owned();
                }
            }
            if c.from.is_none() && !c.how.is_empty() {
                return Err(at("a field's `= how` needs the class's `from Core`".into()));
            }
            let m = modules.last_mut().ok_or_else(|| at("a class before any `module`".into()))?;
            m.classes.push(c);
        } else if let Some(r) = line.strip_prefix("repr ") {
            let c = last(&mut modules).map_err(at)?;
            c.repr.get_or_insert_with(String::new).push_str(r.trim().trim_matches('"'));
        } else if line == "truthy" {
            last(&mut modules).map_err(at)?.truthy = true;
        } else if line == "subclass" {
            last(&mut modules).map_err(at)?.subclass = true;
        } else {
            return Err(at(format!("cannot read {line:?}")));
        }
    }
    Ok(modules)
}

fn last(modules: &mut [Module]) -> Result<&mut Class, String> {
    modules.last_mut().and_then(|m| m.classes.last_mut()).ok_or_else(|| "a member outside a class".to_owned())
}

/// Where a member's ` = body` begins: the first ` = ` outside its
/// parameters (a parameter's default is written `name: kind = v`).
fn body_at(text: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ' ' if depth == 0 && text[i..].starts_with(" = ") => return Some(i),
            _ => {}
        }
    }
    None
}

/// Reads `[new|static|get] name(params) -> [try] Ret [reads a, b] = body`.
fn member(text: &str) -> Result<Member, String> {
    let (head, body) = match text.strip_suffix(" =") {
        Some(head) => (head, ""),
        None => {
            let at = body_at(text).ok_or_else(|| format!("a member needs ` = body`: {text:?}"))?;
            (&text[..at], &text[at + 3..])
        }
    };
    let (sig, ret) = head.split_once(" -> ").ok_or_else(|| format!("a member needs `-> Ret`: {text:?}"))?;
    let (form, sig) = match sig.split_once(' ') {
        Some((f @ ("new" | "static" | "get"), rest)) => (f, rest),
        _ => ("fn", sig),
    };
    let (name, params) = match sig.split_once('(') {
        Some((n, p)) => (n, p.strip_suffix(')').ok_or_else(|| format!("unclosed `(`: {sig:?}"))?),
        None => (sig, ""),
    };
    let mut ps = Vec::new();
    for p in params.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if p == "*" {
            ps.push(("*".to_owned(), String::new()));
            continue;
        }
        let (n, k) = p.split_once(':').ok_or_else(|| format!("a parameter needs `name: kind`: {p:?}"))?;
        ps.push((n.trim().to_owned(), k.trim().to_owned()));
    }
    let (ret, reads) = match ret.split_once(" reads ") {
        Some((r, list)) => (r, list.split(',').map(|n| n.trim().to_owned()).collect()),
        None => (ret, vec![]),
    };
    let (fallible, ret) = match ret.trim().strip_prefix("try ") {
        Some(r) => (true, r.trim()),
        None => (false, ret.trim()),
    };
    let body = if body.trim().is_empty() { vec![] } else { vec![body.trim().to_owned()] };
    Ok(Member {
        doc: vec![],
        form: form.to_owned(),
        name: name.trim().to_owned(),
        params: ps,
        fallible,
        ret: ret.to_owned(),
        reads,
        body,
    })
}

/// A parameter kind: the Rust type pyo3 extracts (`lt`: the lifetime
/// arguments of `Obj`, if tied), and the conversion the body sees (`{n}`
/// standing for the name), if any. `names` are the classes' Python names
/// (for a `class<T>`'s error).
fn kind(k: &str, lt: &str, names: &BTreeMap<String, String>) -> Result<(String, Option<String>), String> {
    if let Some(f) = k.strip_prefix('~') {
        return Ok((format!("Option<&Obj{lt}>"), Some(format!("{f}({{n}})?"))));
    }
    if let Some(f) = k.strip_prefix('=') {
        return Ok((format!("&Obj{lt}"), Some(format!("{f}({{n}})?"))));
    }
    let (ty, conv) = match k {
        "obj" => ("&Obj", ""),
        "obj?" | "nullable" => ("Option<&Obj>", ""),
        "any?" => ("Option<Py<PyAny>>", ""),
        "now?" => ("Option<&Obj>", "conv::now_or_clock({n})?"),
        "hook?" => ("Option<Py<PyAny>>", "crate::policy::hook(py, {n}, \"{n}\")?"),
        _ => {
            // A reader of one value; `kind?` (or `nullable kind`) reads it
            // when given and not None, `kind = default` also.
            let (base, default) = match k.split_once(" = ") {
                Some((b, d)) => (b.trim(), Some(d.trim())),
                None => (k, None),
            };
            let (base, opt) = match base.strip_prefix("nullable ") {
                Some(b) => (b, true),
                None => base.strip_suffix('?').map_or((base, default.is_some()), |b| (b, true)),
            };
            let read = reader(base, names).ok_or_else(|| format!("unknown kind {k:?}"))?;
            let ty = if opt { format!("Option<&Obj{lt}>") } else { format!("&Obj{lt}") };
            let conv = match default {
                _ if !opt => read.replace("{x}", "{n}") + "?",
                None => format!("conv::opt({{n}}, |x| {})?", read.replace("{x}", "x")),
                Some(d) => format!("conv::opt({{n}}, |x| {})?.unwrap_or({d})", read.replace("{x}", "x")),
            };
            return Ok((ty, Some(conv)));
        }
    };
    let ty = ty.replace("Obj", &format!("Obj{lt}"));
    Ok((ty, (!conv.is_empty()).then(|| conv.to_owned())))
}

/// The reader of a value kind: a `PyResult` of what the body sees, `{x}`
/// standing for the `&Obj` and `{n}` for the name. `class<T>` is a native
/// class's object (`&Bound<T>`; else "must be a CircuitBreaker", its Python
/// name, or "a dict" for pyo3's `PyDict`); `list<kind>` a `Vec` of the
/// kind's values, read from a list or tuple ("must be a list of str").
fn reader(base: &str, names: &BTreeMap<String, String>) -> Option<String> {
    if let Some(t) = base.strip_prefix("class<").and_then(|t| t.strip_suffix('>')) {
        let py = names.get(t).cloned().or_else(|| t.strip_prefix("Py").map(str::to_lowercase))?;
        return Some(format!("conv::class_arg::<{t}>({{x}}, \"{{n}}\", \"a {py}\")"));
    }
    if let Some(k) = base.strip_prefix("list<").and_then(|t| t.strip_suffix('>')) {
        let (read, what) = (reader(k, names)?, if k == "f64" { "floats" } else { k });
        let each = format!("{}.iter().map(|x| {}).collect::<PyResult<Vec<_>>>()", "{it}", read.replace("{x}", "x"));
        let list = format!("conv::list_arg({{x}}, \"{{n}}\", \"a list of {what}\")?");
        return Some(format!("{{ let it = {list}; {} }}", each.replace("{it}", "it")));
    }
    Some(
        match base {
            "bool" => "conv::to_bool({x}, \"{n}\")",
            "count" => "conv::to_count({x}, \"{n}\", u64::MAX)",
            "u32" => "conv::to_count({x}, \"{n}\", u32::MAX.into()).map(|v| v as u32)",
            "istr" => "s({x}, \"{n}\")",
            "f64" => "conv::to_f64({x}, \"{n}\")",
            "secs" => "conv::secs({x}, \"{n}\")",
            "instant" => "conv::instant({x}, \"{n}\")",
            "wall" => "conv::wall_arg({x}, \"{n}\")",
            "str" => "conv::to_str({x}, \"{n}\")",
            "json" => "conv::to_json({x}, conv::Mode::Document)",
            "host" => "conv::to_host_json({x})",
            _ => return None,
        }
        .to_owned(),
    )
}

/// Whether a parameter of kind `k` may be left out (then it is None).
fn optional(k: &str) -> bool {
    k.ends_with('?') || k.starts_with('~') || k.contains(" = ")
}

/// Whether a parameter of kind `k` must be passed but may be None.
fn nullable(k: &str) -> bool {
    k == "nullable" || k.starts_with("nullable ")
}

/// Whether `text` names `word` (as a whole identifier).
fn names(text: &str, word: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| w == word)
}

/// A `#[pymethods]` block, or (`class` empty) the module's functions.
fn methods(
    out: &mut String,
    class: &str,
    members: &[Member],
    groups: &[(String, Vec<String>)],
    extra: &str,
    docs: &Docs,
) -> Result<(), String> {
    let functions = class.is_empty();
    let prefix = match docs.py_names.get(class) {
        _ if functions => String::new(),
        Some(py) => format!("{py}."),
        None => return Err(format!("no `#[pyclass]` struct {class} found in src")),
    };
    if !functions {
        let _ = writeln!(out, "#[pymethods]\nimpl {class} {{\n{extra}");
    }
    for m in members {
        // A return naming `'py` ties the arguments' lifetime to it.
        let tied = m.ret.contains("'py");
        let lt = if tied { "<'py>" } else { "" };
        let mut args = Vec::new();
        let mut sig = Vec::new();
        let mut convs: Vec<(&str, String)> = Vec::new();
        for (n, k) in &m.params {
            if n == "*" {
                sig.push("*".to_owned());
                continue;
            }
            if let Some(g) = k.strip_prefix("..") {
                let (_, fields) =
                    groups.iter().find(|(name, _)| name == g).ok_or_else(|| format!("unknown group {g:?}"))?;
                for f in fields {
                    sig.push(format!("{f}=None"));
                    args.push(format!("{f}: Option<Obj{lt}>"));
                }
                convs.push((n.as_str(), format!("let {n} = {g} {{ {} }};", fields.join(", "))));
                continue;
            }
            let (ty, conv) = kind(k, lt, &docs.py_names)?;
            sig.push(if optional(k) { format!("{n}=None") } else { n.clone() });
            args.push(format!("{n}: {ty}"));
            if let Some(c) = conv {
                convs.push((n.as_str(), format!("let {n} = {};", c.replace("{n}", n))));
            }
        }
        // `reads a, b`: those conversions first, in that order.
        for (i, r) in m.reads.iter().enumerate() {
            let at = convs.iter().position(|(n, _)| n == r).ok_or_else(|| format!("{}: reads {r:?}?", m.name))?;
            let c = convs.remove(at);
            convs.insert(i, c);
        }
        let convs: Vec<String> = convs.into_iter().map(|(_, c)| c).collect();
        let body = m.body.join("\n");
        // `x.py()` is a method, not the `py` argument.
        let uses_py = names(&body.replace(".py", ""), "py") || convs.iter().any(|c| names(c, "py"));
        let mut all = Vec::new();
        match m.form.as_str() {
            _ if functions => {}
            "new" | "static" => {}
            _ => all.push("&self".to_owned()),
        }
        if uses_py {
            all.push(format!("py: Python<{}>", if tied { "'py" } else { "'_" }));
        }
        all.extend(args);
        if m.form != "new" && !m.name.starts_with("__") {
            doc_attr(out, "    ", &doc_of(docs, &format!("{prefix}{}", m.name), &m.doc)?);
        } else if !m.doc.is_empty() {
            return Err(format!("{}: write its docs in {STUB} (`__new__` or the class), not as `///`", m.name));
        }
        match m.form.as_str() {
            _ if functions => out.push_str("    #[pyfunction]\n"),
            "new" => out.push_str("    #[new]\n"),
            "static" => out.push_str("    #[staticmethod]\n"),
            "get" => out.push_str("    #[getter]\n"),
            _ => {}
        }
        // Without defaults or `*`, pyo3's own signature is the same.
        if m.params.iter().any(|(n, k)| n == "*" || optional(k) || nullable(k) || k.starts_with("..")) {
            let _ = writeln!(out, "    #[pyo3(signature = ({}))]", sig.join(", "));
        }
        let ret = match (m.fallible || !convs.is_empty(), m.ret.as_str()) {
            (true, r) => format!(" -> PyResult<{r}>"),
            (false, "()") => String::new(),
            (false, r) => format!(" -> {r}"),
        };
        let _ = writeln!(out, "    #[allow(clippy::too_many_arguments)]");
        let vis = if functions { "pub " } else { "" };
        let _ = writeln!(out, "    {vis}fn {}{lt}({}){ret} {{", m.name, all.join(", "));
        for c in &convs {
            let _ = writeln!(out, "        {c}");
        }
        let wrap = !m.fallible && !convs.is_empty();
        if wrap && m.ret == "()" {
            // The body is statements (each ending in `;`).
            let _ = writeln!(out, "{body}\n        Ok(())");
        } else if wrap {
            let _ = writeln!(out, "        Ok({{\n{body}\n        }})");
        } else {
            let _ = writeln!(out, "{body}");
        }
        out.push_str("    }\n\n");
    }
    if !functions {
        out.push_str("}\n\n");
    }
    Ok(())
}

/// A group's struct (each field an `Option<Obj>`) and its reader of a dict
/// of fields (`of_dict`: a key that is not a field is `unknown_key`).
fn group(out: &mut String, name: &str, noun: &str, fields: &[String]) {
    let _ = writeln!(out, "/// The keyword fields of a {noun}.\n#[derive(Default)]\npub struct {name}<'py> {{");
    for f in fields {
        let _ = writeln!(out, "    pub {f}: Option<Obj<'py>>,");
    }
    let _ = writeln!(out, "}}\n\nimpl<'py> {name}<'py> {{");
    let _ = writeln!(out, "    /// Reads a dict of fields: a key that is not one is `unknown_key`.");
    let _ = writeln!(out, "    fn of_dict(d: &Bound<'py, PyDict>) -> PyResult<{name}<'py>> {{");
    let _ = writeln!(out, "        let mut f = {name}::default();\n        for (key, v) in d.iter() {{");
    let _ = writeln!(out, "            match conv::to_str(&key, {noun:?})?.as_str() {{");
    for f in fields {
        let _ = writeln!(out, "                {f:?} => f.{f} = Some(v),");
    }
    let why = format!("is not a {noun} field");
    let _ = writeln!(out, "                key => return Err(conv::err(d.py(), ErrorCode::UnknownKey, key, {why:?})),");
    let _ = writeln!(out, "            }}\n        }}\n        Ok(f)\n    }}\n}}\n");
}

/// Reads `field: Type, …` with `///` docs on lines of their own.
fn fields(body: &str) -> Result<Vec<(Vec<String>, String, String)>, String> {
    let mut out = Vec::new();
    let mut doc = Vec::new();
    for line in body.lines().map(str::trim) {
        if let Some(d) = line.strip_prefix("///") {
            doc.push(d.trim().to_owned());
            continue;
        }
        for f in line.split(',').map(str::trim).filter(|f| !f.is_empty()) {
            let (name, ty) = f.split_once(':').ok_or_else(|| format!("a field needs `name: Type`: {f:?}"))?;
            out.push((docs(&mut doc), name.trim().to_owned(), ty.trim().to_owned()));
        }
    }
    Ok(out)
}

fn doc_attrs(out: &mut String, indent: &str, doc: &[String]) {
    for d in doc {
        let _ = writeln!(out, "{indent}#[doc = {:?}]", format!(" {d}"));
    }
}

/// One `#[doc]` holding the whole text (pyo3 keeps it as it is: it starts
/// with no space to strip).
fn doc_attr(out: &mut String, indent: &str, doc: &str) {
    let _ = writeln!(out, "{indent}#[doc = {doc:?}]");
}

/// The docs of the Python item `name`: its docstring in the stub, the one
/// place they are written (`declared`, a `///` doc on it here, is refused).
fn doc_of(docs: &Docs, name: &str, declared: &[String]) -> Result<String, String> {
    if !declared.is_empty() {
        return Err(format!("{name}: write its docs as its docstring in {STUB}, not as `///`"));
    }
    docs.text.get(name).cloned().ok_or_else(|| format!("{name} has no docstring in {STUB}"))
}

/// The Python name of every `#[pyclass]`, by its Rust name: the declared
/// value classes', and those of the structs in `src/*.rs` (`name = "…"`,
/// else the struct's own name).
fn py_names(modules: &[Module]) -> BTreeMap<String, String> {
    let mut names: BTreeMap<String, String> =
        modules.iter().flat_map(|m| &m.classes).map(|c| (c.rust.clone(), c.py.clone())).collect();
    let files = std::fs::read_dir("src").expect("src").filter_map(|e| e.ok()).map(|e| e.path());
    for text in files.filter_map(|p| std::fs::read_to_string(p).ok()) {
        let mut py = None;
        for line in text.lines().map(str::trim) {
            if let Some(attr) = line.strip_prefix("#[pyclass(") {
                let name = attr.split("name = \"").nth(1).and_then(|n| n.split('"').next());
                py = Some(name.map(str::to_owned));
            } else if let (Some(name), Some(rust)) = (py.clone(), line.strip_prefix("pub struct ")) {
                let rust = rust.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or_default();
                names.insert(rust.to_owned(), name.unwrap_or_else(|| rust.to_owned()));
                py = None;
            }
        }
    }
    names
}

/// Python's `inspect.cleandoc`: the first line without its leading
/// whitespace, the common indentation of the others removed, leading and
/// trailing blank lines dropped.
fn cleandoc(text: &str) -> String {
    let text = text.replace('\t', "        ");
    let mut lines: Vec<&str> = text.split('\n').collect();
    let margin = lines[1..]
        .iter()
        .filter(|l| !l.trim_start().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines[0] = lines[0].trim_start();
    for l in &mut lines[1..] {
        *l = l.get(margin..).unwrap_or("");
    }
    let first = lines.iter().position(|l| !l.trim().is_empty()).unwrap_or(lines.len());
    let last = lines.iter().rposition(|l| !l.trim().is_empty()).map_or(first, |i| i + 1);
    lines[first..last].join("\n")
}

/// The docstrings of a stub, by qualified name (`Policy.delay`,
/// `Outer.Inner.f`). The subset stubs use: `class` and `def` (their
/// headers may span lines; decorators such as `@property`,
/// `@staticmethod`, `@classmethod` and `@overload` are skipped; an
/// overloaded name has one docstring at most), nested classes, and a
/// docstring as the body's first line, `"""…"""` or `r"""…"""` (a plain
/// one without backslashes, so its text is what Python reads).
fn stub_docs(stub: &str) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    // (indentation, qualified name) of the enclosing classes.
    let mut scopes: Vec<(usize, String)> = Vec::new();
    let lines: Vec<&str> = stub.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let (n, line) = (i + 1, lines[i]);
        let at = |e: &str| format!("line {n}: {e}");
        let text = line.trim();
        i += 1;
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        while scopes.last().is_some_and(|(d, _)| *d >= indent) {
            scopes.pop();
        }
        if text.starts_with("\"\"\"") || text.starts_with("r\"\"\"") {
            // A docstring of no declaration (the module's).
            i = docstring(&lines, i - 1).map_err(|e| at(&e))?.1;
            continue;
        }
        let Some(rest) = text.strip_prefix("class ").or(text.strip_prefix("def ")).or(text.strip_prefix("async def "))
        else {
            continue;
        };
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let qual = scopes.iter().map(|(_, s)| s.as_str()).chain([name.as_str()]).collect::<Vec<_>>().join(".");
        // The header ends where its brackets close on a line ending in `:` (a
        // body follows) or `...` (none).
        let mut depth = 0i32;
        let mut j = i - 1;
        let has_body = loop {
            let l = lines[j].split(" #").next().unwrap_or_default().trim_end();
            depth += l.matches(['(', '[', '{']).count() as i32 - l.matches([')', ']', '}']).count() as i32;
            if depth <= 0 && (l.ends_with(':') || l.ends_with("...")) {
                break l.ends_with(':');
            }
            j += 1;
            if j == lines.len() {
                return Err(at("unterminated declaration"));
            }
        };
        i = j + 1;
        if text.starts_with("class ") {
            scopes.push((indent, qual.clone()));
        }
        let next = lines[i..].iter().position(|l| !l.trim().is_empty()).map(|k| i + k);
        let quoted = |k: &usize| ["\"\"\"", "r\"\"\""].iter().any(|q| lines[*k].trim_start().starts_with(q));
        let Some(first) = next.filter(|k| has_body && quoted(k)) else {
            continue;
        };
        let (doc, after) = docstring(&lines, first).map_err(|e| format!("line {}: {e}", first + 1))?;
        i = after;
        if out.insert(qual.clone(), doc).is_some() {
            return Err(at(&format!("{qual} has two docstrings")));
        }
    }
    Ok(out)
}

/// The cleaned docstring starting on line `k`, and the index of the line after it.
fn docstring(lines: &[&str], k: usize) -> Result<(String, usize), String> {
    let t = lines[k].trim_start();
    let (raw, t) = match t.strip_prefix('r') {
        Some(t) => (true, t),
        None => (false, t),
    };
    let t = t.strip_prefix("\"\"\"").ok_or("a docstring is written `\"\"\"…\"\"\"`")?;
    let mut text = String::new();
    let mut rest = t;
    let mut end = k;
    loop {
        if let Some(at) = rest.find("\"\"\"") {
            text.push_str(&rest[..at]);
            break;
        }
        text.push_str(rest);
        text.push('\n');
        end += 1;
        rest = lines.get(end).ok_or("unterminated docstring")?;
    }
    if !raw && text.contains('\\') {
        return Err("a docstring with a backslash must be raw (`r\"\"\"`)".into());
    }
    Ok((cleandoc(&text), end + 1))
}

/// The field names a `repr` string refers to.
fn placeholders(fmt: &str) -> Vec<&str> {
    let mut names = Vec::new();
    for part in fmt.split('{').skip(1) {
        let name = part.split(['}', ':']).next().unwrap_or("");
        if !name.is_empty() && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// A value class; with `methods`, its `__repr__` / `__bool__` in a block of their own.
fn class(out: &mut String, c: &Class, methods: bool, docs: &Docs) -> Result<(), String> {
    doc_attr(out, "", &doc_of(docs, &c.py, &c.doc)?);
    let sub = if c.subclass { ", subclass" } else { "" };
    let _ = writeln!(out, "#[pyclass(frozen{sub}, name = {:?}, module = \"retrycore._native\")]", c.py);
    let _ = writeln!(out, "pub struct {} {{", c.rust);
    for (doc, name, ty) in &c.fields {
        match name.strip_prefix("priv ") {
            Some(name) => {
                doc_attrs(out, "    ", doc);
                _ = writeln!(out, "    pub {name}: {ty},");
            }
            None => {
                doc_attr(out, "    ", &doc_of(docs, &format!("{}.{name}", c.py), doc)?);
                _ = writeln!(out, "    #[pyo3(get)]\n    pub {name}: {ty},");
            }
        }
    }
    out.push_str("}\n\n");
    if methods && (c.repr.is_some() || c.truthy) {
        let _ = writeln!(out, "#[pymethods]\nimpl {} {{\n{}}}\n", c.rust, class_methods(c));
    }
    Ok(())
}

/// The `__repr__` and `__bool__` a value class declares.
fn class_methods(c: &Class) -> String {
    let mut out = String::new();
    if let Some(fmt) = &c.repr {
        let names = placeholders(fmt).join(", ");
        let _ = writeln!(out, "    fn __repr__(&self) -> String {{");
        let _ = writeln!(out, "        let Self {{ {names}, .. }} = self;");
        // A bool shows as Python writes it.
        for (_, name, _) in c.fields.iter().filter(|(_, n, t)| t == "bool" && placeholders(fmt).contains(&n.as_str())) {
            let _ = writeln!(out, "        let {name} = if *{name} {{ \"True\" }} else {{ \"False\" }};");
        }
        let _ = writeln!(out, "        format!(\"{fmt}\")\n    }}");
    }
    if c.truthy {
        out.push_str("    fn __bool__(&self) -> bool {\n        true\n    }\n");
    }
    out
}

/// A variant path (`Gate::Proceed`) split into its enum and variant; None
/// for a struct (`retrycore::breaker::Transition`).
fn variant(from: &str) -> Option<(&str, &str)> {
    let (e, v) = from.rsplit_once("::")?;
    let last = e.rsplit("::").next().unwrap_or(e);
    last.starts_with(char::is_uppercase).then_some((e, v))
}

/// The expression of a field of a class made from a core value, and the
/// core field it reads (see the module docs).
fn field_source(name: &str, ty: &str, how: Option<&str>) -> (String, String) {
    // A `&'static str` is taken through auto-deref (clippy's `explicit_auto_deref`).
    let plain = |f: &str| match ty {
        _ if ty.contains("String") => format!("{f}.clone()"),
        _ if ty.starts_with('&') => f.to_owned(),
        _ => format!("*{f}"),
    };
    let Some(how) = how else { return (plain(name), name.to_owned()) };
    let word = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_alphanumeric() || c == '_');
    if word(how) {
        return (plain(how), how.to_owned());
    }
    if let Some((f, arg)) = how.strip_suffix(')').and_then(|h| h.split_once('(')).filter(|(_, a)| word(a)) {
        let expr = match f {
            "code" => Some(format!("{arg}.code()")),
            "secs" => Some(format!("dur_secs(*{arg})")),
            "secs?" => Some(format!("{arg}.map(dur_secs)")),
            "ns" => Some(format!("to_secs(*{arg})")),
            _ => None,
        };
        if let Some(expr) = expr {
            return (expr, arg.to_owned());
        }
    }
    let first = how.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or_default();
    (how.to_owned(), first.to_owned())
}

/// A class's struct literal from the bound core fields, and the fields it binds.
fn literal(c: &Class) -> (String, Vec<String>) {
    let mut bound: Vec<String> = Vec::new();
    let mut inits = Vec::new();
    for (_, name, ty) in &c.fields {
        let name = name.strip_prefix("priv ").unwrap_or(name);
        let (expr, source) = field_source(name, ty, c.how.get(name).map(String::as_str));
        if !bound.contains(&source) {
            bound.push(source);
        }
        inits.push(if expr == name { expr } else { format!("{name}: {expr}") });
    }
    (format!("{} {{ {} }}", c.rust, inits.join(", ")), bound)
}

/// The conversions of the classes made from core values (`class … from Core`).
fn conversions(out: &mut String, classes: &[Class]) {
    let mut enums: Vec<(&str, Vec<String>)> = Vec::new();
    for c in classes {
        let Some(from) = &c.from else { continue };
        let (lit, bound) = literal(c);
        let bound = bound.join(", ");
        match variant(from) {
            None => {
                let _ = writeln!(out, "impl From<&{from}> for {} {{", c.rust);
                let _ = writeln!(out, "    fn from(v: &{from}) -> Self {{");
                let _ = writeln!(out, "        let {from} {{ {bound}, .. }} = v;\n        {lit}\n    }}\n}}\n");
            }
            Some((e, _)) => {
                let arm = format!("        {from} {{ {bound}, .. }} => Py::new(py, {lit})?.into_any(),");
                match enums.iter_mut().find(|(n, _)| *n == e) {
                    Some((_, arms)) => arms.push(arm),
                    None => enums.push((e, vec![arm])),
                }
            }
        }
    }
    for (e, arms) in enums {
        let name = e.rsplit("::").next().unwrap_or(e);
        let snake: String = name
            .chars()
            .enumerate()
            .flat_map(|(i, ch)| {
                let sep = (i > 0 && ch.is_uppercase()).then_some('_');
                sep.into_iter().chain(ch.to_lowercase())
            })
            .collect();
        let _ = writeln!(out, "/// A core `{name}` as the declared class of its variant.");
        let _ = writeln!(out, "fn {snake}_obj(py: Python<'_>, v: &{e}) -> PyResult<Py<PyAny>> {{\n    Ok(match v {{");
        let _ = writeln!(out, "{}\n    }})\n}}\n", arms.join("\n"));
    }
}
