//! The generator that expands the low-level JS surface declared in
//! `bindings-js/src/surface.rs` (`DECLARATIONS`) into the exports of both FFI crates
//! ([`generate`]): `#[napi]` items for `bindings-node`, `#[wasm_bindgen]`
//! items for `bindings-wasm`. Each crate's `build.rs` includes this file (a
//! build-time tool, not part of the crate; `tests/surface.rs` runs its tests) and
//! writes the expansion to `$OUT_DIR/surface.rs`, which the crate includes.
//!
//! A method is declared once, with its JS name, its arguments' kinds and its
//! return convention; what a kind means in each host (napi's `Vec<String>`,
//! wasm's `&JsValue` read by `strings`) is the generator's per-target table,
//! and the host glue it calls (`OrThrow`, `hot`, `js`, `strings`, …) is the
//! crate's. The function each declaration calls lives in this crate.
//!
//! The declaration language, one item per line (`#` comments, `///` docs):
//!
//! - `fn jsName(params) -> ret = path`: a module function calling
//!   `retrycore_js::path` (default: the snake_case name at the crate root);
//! - `class NativeX = Type<H>` … `end`: a class over `Type`, `H` being the
//!   host (`Node`, `Wasm`); its members are `new(params) -> try Self`
//!   (constructor), `static jsName(params) -> ret` (factory),
//!   `get jsName -> ret` (getter), `ref` / `mut jsName(params) -> ret`
//!   (`&self` / `&mut self` methods calling the same-named method of `Type`).
//!
//! Parameters are `jsName: kind`, kinds being `f64`, `bool`, `str` (passed as
//! `&str`), `string` (owned), `strs` (`&[String]`), `nums` (`&[f64]`), a class
//! name (passed by reference to its inner value), and with a trailing `?` the
//! optional ones (`str?` as `Option<&str>`, `strs?` as a lazily read
//! `StrList`, `nums?` as `Option<Vec<f64>>`). A group
//! `Path{field: kind, …; absent, …}` passes the fields as separate JS
//! parameters and builds the struct `Path` of them, the fields after `;`
//! being `None`.
//!
//! A member may be followed by `js publicName(param, …)` (or `js get
//! publicName`): the public wrapper of `lib/retrycore.ts` that only checks its
//! arguments and calls the member ([`typescript_wrappers`]). Each backend
//! parameter is named once (an optional one may be left out), as
//! `public[=backend][:field]` (backend name and error field default to the
//! public name), in the public order; its check
//! follows from its kind and name (`now`: a monotonic time; `wallNowMs`,
//! `nowMs`: a wall-clock time; a `str` `seed`: a 64-bit integer). After the parameters, `parsed` answers the
//! returned JSON text parsed, and `fired` passes what the call returns
//! through the object's `_fired` (which fires its hooks). A member may have
//! several wrappers.
//!
//! Returns are `f64`, `u32`, `bool`, `string`, `static` (`&'static str`),
//! `json`, `f64s`, `f64?`, `()`, `Self`, a class name, or `Class?`, followed
//! by `<T>` to name the TypeScript type (required for `json`); prefixed
//! with `try` when the call returns a `Result` (napi throws
//! it through the error factory, wasm returns `Result<_, JsErr>`), or `hot`
//! for the hot paths: napi throws the same way, wasm answers a number and
//! `NaN` on error, and the package's `backend.js` throws `takeError()` (its
//! wrappers of exactly these members are generated from this list by
//! `bindings-wasm/scripts/package.mjs`).
//!
//! This file is also compiled by the build scripts: it uses nothing but `std`.

use std::fmt::Write;

/// The FFI crate a surface is generated for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `bindings-node` (napi-rs): `#[napi]` items, errors thrown through `Env`.
    Napi,
    /// `bindings-wasm` (wasm-bindgen): `#[wasm_bindgen]` items, hot paths answer `NaN`.
    Wasm,
}

/// One JS parameter: its JS name and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// The JS name (camelCase).
    pub js: String,
    /// The kind, without `?` (`f64`, `str`, `strs`, a class name, …).
    pub kind: String,
    /// Whether `null` / `undefined` is accepted (`kind?`).
    pub optional: bool,
}

/// An argument of the call: a parameter, or a group of them built into a struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// One parameter passed as it is converted.
    One(Param),
    /// `Path{…; absent…}`: the struct `path` built of `fields`, `absent` being `None`.
    Group {
        /// The struct's path in `retrycore_js`.
        path: String,
        /// The fields the JS side passes, in order.
        fields: Vec<Param>,
        /// The fields left `None` (JS names).
        absent: Vec<String>,
    },
}

/// What a member is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Member {
    /// A module function.
    Function,
    /// A class constructor.
    Constructor,
    /// A static factory.
    Factory,
    /// A getter.
    Getter,
    /// A `&self` method.
    Ref,
    /// A `&mut self` method.
    Mut,
}

/// How a member returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Convention {
    /// The call cannot fail.
    Plain,
    /// The call returns a `Result`.
    Try,
    /// A hot path: a `Result` that wasm answers as a number (`NaN`: see `takeError`).
    Hot,
}

/// One declared function or class member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Method {
    /// Its doc lines.
    pub doc: Vec<String>,
    /// What it is.
    pub member: Member,
    /// The JS name (camelCase).
    pub js: String,
    /// The call's arguments.
    pub args: Vec<Arg>,
    /// How it returns.
    pub convention: Convention,
    /// The return kind (`f64`, `json`, `Self`, `NativeBreaker?`, …).
    pub ret: String,
    /// The TypeScript type of the return when the declaration names it
    /// (`json<Verdict>`; required for `json`).
    pub ts: Option<String>,
    /// The called function's path in `retrycore_js` (module functions).
    pub path: String,
    /// The public wrappers generated for it (`js …` lines).
    pub wrappers: Vec<Wrapper>,
}

/// A public wrapper (`js name(params)` / `js get name`) of a declared member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrapper {
    /// The public name.
    pub js: String,
    /// Whether it is a getter.
    pub getter: bool,
    /// Its parameters, in the public order: (public name, backend name, error field).
    pub params: Vec<(String, String, String)>,
    /// `parsed`: it answers the JSON text the member returns, parsed.
    pub parsed: bool,
    /// `fired`: it hands what the member returns to the object's `_fired` (hooks).
    pub fired: bool,
}

/// Reads a `js …` line's rest (`name(a, b=c:field) [parsed] [fired]` or `get name`).
fn wrapper(s: &str) -> Result<Wrapper, String> {
    if let Some(name) = s.strip_prefix("get ") {
        return Ok(Wrapper {
            js: name.trim().to_owned(),
            getter: true,
            params: Vec::new(),
            parsed: false,
            fired: false,
        });
    }
    let (js, rest) = s.split_once('(').ok_or_else(|| format!("js wrapper without parameters: {s}"))?;
    let (rest, flags) = rest.rsplit_once(')').ok_or_else(|| format!("unclosed js wrapper: {s}"))?;
    let flags: Vec<&str> = flags.split_whitespace().collect();
    if let Some(f) = flags.iter().find(|f| !["parsed", "fired"].contains(f)) {
        return Err(format!("unknown js wrapper flag {f}: {s}"));
    }
    let params = split_top(rest)
        .iter()
        .map(|p| {
            let (names, field) = p.split_once(':').unwrap_or((p, ""));
            let (public, backend) = names.split_once('=').unwrap_or((names, names));
            let field = if field.is_empty() { public } else { field };
            (public.trim().to_owned(), backend.trim().to_owned(), field.trim().to_owned())
        })
        .collect();
    Ok(Wrapper {
        js: js.trim().to_owned(),
        getter: false,
        params,
        parsed: flags.contains(&"parsed"),
        fired: flags.contains(&"fired"),
    })
}

/// One declared class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Class {
    /// Its doc lines.
    pub doc: Vec<String>,
    /// The JS name.
    pub js: String,
    /// The inner type in `retrycore_js` (`H` is the host).
    pub inner: String,
    /// Its members.
    pub members: Vec<Method>,
}

/// The parsed declarations.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Surface {
    /// The module functions.
    pub functions: Vec<Method>,
    /// The classes.
    pub classes: Vec<Class>,
}

/// Turns `camelCase` into `snake_case` (`nextU64` → `next_u64`).
pub fn snake(js: &str) -> String {
    let mut out = String::new();
    for c in js.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Splits at top-level commas (not inside `{}`).
fn split_top(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0);
    for c in s.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur).trim().to_owned());
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_owned());
    }
    out
}

/// The parameter kinds besides class names.
const KINDS: [&str; 6] = ["f64", "bool", "str", "string", "strs", "nums"];

fn param(s: &str) -> Result<Param, String> {
    let (js, kind) = s.split_once(':').ok_or_else(|| format!("parameter without a kind: {s}"))?;
    let kind = kind.trim();
    let (kind, optional) = match kind.strip_suffix('?') {
        Some(k) => (k, true),
        None => (kind, false),
    };
    if !(KINDS.contains(&kind) || is_class(kind)) {
        return Err(format!("unknown kind {kind} in {s}"));
    }
    Ok(Param { js: js.trim().to_owned(), kind: kind.to_owned(), optional })
}

fn arg(s: &str) -> Result<Arg, String> {
    let Some((path, rest)) = s.split_once('{') else {
        return param(s).map(Arg::One);
    };
    let body = rest.strip_suffix('}').ok_or_else(|| format!("unclosed group: {s}"))?;
    let (given, absent) = body.split_once(';').unwrap_or((body, ""));
    Ok(Arg::Group {
        path: path.trim().to_owned(),
        fields: split_top(given).iter().map(|f| param(f)).collect::<Result<_, _>>()?,
        absent: split_top(absent),
    })
}

/// Reads one member line (`[kind] jsName(params) -> [try|hot] ret [= path]`).
fn method(line: &str, doc: Vec<String>, in_class: bool) -> Result<Method, String> {
    let (head, path) = match line.rsplit_once(" = ") {
        Some((h, p)) => (h, p.trim().to_owned()),
        None => (line, String::new()),
    };
    let (sig, ret) = head.rsplit_once("->").ok_or_else(|| format!("no return: {line}"))?;
    let ret = ret.trim();
    let (convention, ret) = match ret.split_once(' ') {
        Some(("try", r)) => (Convention::Try, r),
        Some(("hot", r)) => (Convention::Hot, r),
        _ => (Convention::Plain, ret),
    };
    let (ret, ts) = match ret.split_once('<') {
        Some((r, t)) => (r, Some(t.strip_suffix('>').ok_or_else(|| format!("unclosed type: {line}"))?.to_owned())),
        None => (ret, None),
    };
    if ret == "json" && ts.is_none() {
        return Err(format!("a json return names its TypeScript type (`json<T>`): {line}"));
    }
    let sig = sig.trim();
    let (word, rest) = if sig.starts_with("new(") { ("", sig) } else { sig.split_once(' ').unwrap_or(("", sig)) };
    let member = match (in_class, word) {
        (false, "fn") => Member::Function,
        (true, "static") => Member::Factory,
        (true, "get") => Member::Getter,
        (true, "ref") => Member::Ref,
        (true, "mut") => Member::Mut,
        (true, "") if rest.starts_with("new(") => Member::Constructor,
        _ => return Err(format!("unknown member: {line}")),
    };
    let (js, args) = match rest.split_once('(') {
        Some((js, a)) => (js.trim(), split_top(a.trim().strip_suffix(')').ok_or("unclosed parameters")?)),
        None => (rest.trim(), Vec::new()),
    };
    let args = args.iter().map(|a| arg(a)).collect::<Result<_, _>>()?;
    let path = if path.is_empty() { snake(js) } else { path };
    Ok(Method { doc, member, js: js.to_owned(), args, convention, ret: ret.to_owned(), ts, path, wrappers: Vec::new() })
}

/// Parses declarations (`DECLARATIONS`, or another text in the same language).
pub fn parse(text: &str) -> Result<Surface, String> {
    let mut s = Surface::default();
    let mut doc = Vec::new();
    let mut class: Option<Class> = None;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(d) = line.strip_prefix("///") {
            doc.push(d.to_owned());
        } else if let Some(w) = line.strip_prefix("js ") {
            let last = match class.as_mut() {
                Some(c) => c.members.last_mut(),
                None => s.functions.last_mut(),
            };
            let m = last.ok_or_else(|| format!("`js` before any member: {line}"))?;
            m.wrappers.push(wrapper(w)?);
        } else if let Some(c) = line.strip_prefix("class ") {
            let (js, inner) = c.split_once(" = ").ok_or_else(|| format!("class without a type: {line}"))?;
            let members = Vec::new();
            class = Some(Class { doc: std::mem::take(&mut doc), js: js.to_owned(), inner: inner.to_owned(), members });
        } else if line == "end" {
            s.classes.push(class.take().ok_or("`end` outside a class")?);
        } else if let Some(c) = class.as_mut() {
            c.members.push(method(line, std::mem::take(&mut doc), true)?);
        } else {
            s.functions.push(method(line, std::mem::take(&mut doc), false)?);
        }
    }
    if class.is_some() {
        return Err("a class has no `end`".to_owned());
    }
    Ok(s)
}

fn is_class(kind: &str) -> bool {
    kind.starts_with(|c: char| c.is_ascii_uppercase())
}

impl Target {
    /// The host type (`retrycore_js::Host`) the crate defines.
    fn host(self) -> &'static str {
        match self {
            Target::Napi => "crate::Node",
            Target::Wasm => "crate::Wasm",
        }
    }

    /// The Rust type of a parameter.
    fn param_type(self, p: &Param) -> String {
        let base = match (self, p.kind.as_str()) {
            (_, "f64") => "f64".to_owned(),
            (_, "bool") => "bool".to_owned(),
            (Target::Napi, "str" | "string") => "String".to_owned(),
            (Target::Wasm, "str") if !p.optional => "&str".to_owned(),
            (Target::Wasm, "str" | "string") => "String".to_owned(),
            (Target::Napi, "strs") => "Vec<String>".to_owned(),
            (Target::Napi, "nums") => "Vec<f64>".to_owned(),
            (Target::Wasm, "strs" | "nums") => return "JsValue".to_owned(),
            (_, k) if is_class(k) => return format!("&{k}"),
            // `parse` admits no other kind.
            (_, k) => k.to_owned(),
        };
        if p.optional {
            format!("Option<{base}>")
        } else {
            base
        }
    }

    /// The expression that passes a parameter to the called function.
    fn pass(self, p: &Param) -> String {
        let n = snake(&p.js);
        match (self, p.kind.as_str(), p.optional) {
            (_, k, _) if is_class(k) => format!("&{n}.inner"),
            (_, "str", true) => format!("{n}.as_deref()"),
            (Target::Napi, "str" | "strs" | "nums", false) => format!("&{n}"),
            (Target::Wasm, "strs", false) => format!("&crate::strings(&{n}, {:?})?.unwrap_or_default()", p.js),
            (Target::Wasm, "nums", false) => format!("&crate::numbers(&{n}, {:?})?.unwrap_or_default()", p.js),
            (Target::Wasm, "strs", true) => format!("crate::Strings(&{n})"),
            (Target::Wasm, "nums", true) => format!("crate::numbers(&{n}, {:?})?", p.js),
            _ => n,
        }
    }

    /// The parameter as the exported function declares it.
    fn declare(self, p: &Param, trailing_optional: bool) -> String {
        let n = snake(&p.js);
        let ty = self.param_type(p);
        if self == Target::Napi {
            return format!("{n}: {ty}");
        }
        let mut attrs = Vec::new();
        if n != p.js {
            attrs.push(format!("js_name = {}", p.js));
        }
        let ts = match p.kind.as_str() {
            "f64" => "number",
            "bool" => "boolean",
            "str" | "string" => "string",
            "strs" => "Array<string>",
            "nums" => "Array<number>",
            _ => "",
        };
        if p.optional {
            let which = if trailing_optional { "unchecked_optional_param_type" } else { "unchecked_param_type" };
            attrs.push(format!("{which} = \"{ts} | undefined | null\""));
        } else if ty == "JsValue" {
            attrs.push(format!("unchecked_param_type = \"{ts}\""));
        }
        if attrs.is_empty() {
            format!("{n}: {ty}")
        } else {
            format!("#[wasm_bindgen({})] {n}: {ty}", attrs.join(", "))
        }
    }

    /// The Rust return type, and wasm's TypeScript return type when it must be named.
    fn ret_type(self, m: &Method, class: &str) -> (String, Option<String>) {
        let r = m.ret.as_str();
        if self == Target::Wasm && m.convention == Convention::Hot {
            return ("f64".to_owned(), None);
        }
        let (napi, wasm, ts): (String, &str, Option<String>) = match r {
            "Self" if m.member == Member::Constructor => ("Self".to_owned(), class, None),
            "Self" => (class.to_owned(), class, None),
            "static" => ("&'static str".to_owned(), "String", None),
            "string" => ("String".to_owned(), "String", None),
            "json" => ("Value".to_owned(), "JsValue", Some("any".to_owned())),
            "f64s" => ("Vec<f64>".to_owned(), "JsValue", Some("Array<number>".to_owned())),
            "f64?" => ("Option<f64>".to_owned(), "JsValue", Some("number | null".to_owned())),
            _ => match r.strip_suffix('?') {
                Some(c) => (format!("Option<{c}>"), "JsValue", Some(format!("{c} | null"))),
                None => (r.to_owned(), r, None),
            },
        };
        match (self, m.convention) {
            (Target::Napi, Convention::Plain) => (napi, None),
            (Target::Napi, _) => (format!("Result<{napi}>"), None),
            (Target::Wasm, Convention::Plain) => (wasm.to_owned(), ts),
            (Target::Wasm, _) => (format!("Result<{wasm}, crate::JsErr>"), ts),
        }
    }

    /// Wraps the called function's value `v` into what the export returns.
    fn wrap(self, m: &Method, class: &str, v: &str) -> String {
        let r = m.ret.as_str();
        match (self, r) {
            (_, "Self") => format!("{class} {{ inner: {v} }}"),
            (Target::Napi, "f64?") => v.to_owned(),
            // napi-rs converts serde_json's value: the core's converts to it
            // here, or in `OrThrow` for a `try` return.
            (Target::Napi, "json") if m.convention == Convention::Plain => format!("{v}.into()"),
            (Target::Wasm, "static") => format!("{v}.to_owned()"),
            (Target::Wasm, "json") => format!("crate::js(&{v})"),
            (Target::Wasm, "f64s") => format!("crate::js(&Value::from({v}))"),
            (Target::Wasm, "f64?") => format!("{v}.map_or(JsValue::NULL, JsValue::from_f64)"),
            (Target::Napi, c) if c.ends_with('?') => format!("{v}.map(|inner| {} {{ inner }})", &c[..c.len() - 1]),
            (Target::Wasm, c) if c.ends_with('?') => {
                format!("{v}.map_or(JsValue::NULL, |inner| {} {{ inner }}.into())", &c[..c.len() - 1])
            }
            _ => v.to_owned(),
        }
    }

    /// The call of the shared function with the converted arguments.
    fn call(self, m: &Method, inner: &str) -> String {
        let mut args = Vec::new();
        for a in &m.args {
            match a {
                Arg::One(p) => args.push(self.pass(p)),
                Arg::Group { path, fields, absent } => {
                    let field = |p: &Param| match (snake(&p.js), self.pass(p)) {
                        (n, v) if n == v => n,
                        (n, v) => format!("{n}: {v}"),
                    };
                    let mut f: Vec<String> = fields.iter().map(field).collect();
                    f.extend(absent.iter().map(|a| format!("{}: None", snake(a))));
                    args.push(format!("::retrycore_js::{path} {{ {} }}", f.join(", ")));
                }
            }
        }
        let args = args.join(", ");
        let host = self.host();
        match m.member {
            Member::Function => format!("::retrycore_js::{}({args})", m.path.replace("<H>", &format!("<{host}>"))),
            Member::Constructor | Member::Factory => {
                let ty = inner.split('<').next().unwrap_or(inner);
                format!("::retrycore_js::{ty}::{}({args})", snake(&m.js))
            }
            _ => format!("self.inner.{}({args})", snake(&m.js)),
        }
    }

    /// One exported function or member.
    fn member(self, out: &mut String, m: &Method, class: &str, inner: &str) {
        for d in &m.doc {
            let _ = writeln!(out, "///{d}");
        }
        if self == Target::Wasm && m.convention == Convention::Hot {
            out.push_str("///\n/// Answers `NaN` on error (see `takeError`).\n");
        }
        let rust = match (self, m.js.as_str()) {
            // wasm-bindgen's own `free()` is replaced by the session `free(id)`;
            // the Rust name must differ from the generated one.
            (Target::Wasm, "free") => "free_session".to_owned(),
            (_, "new") => "new".to_owned(),
            _ => snake(&m.js),
        };
        let (ret, ts) = self.ret_type(m, class);
        let mut attrs: Vec<String> = Vec::new();
        match (self, m.member) {
            (Target::Napi, Member::Constructor) => attrs.push("constructor".into()),
            (Target::Napi, Member::Factory) => attrs.push("factory".into()),
            (Target::Wasm, Member::Constructor) => attrs.push("constructor".into()),
            (_, Member::Getter) => attrs.push("getter".into()),
            _ => {}
        }
        match self {
            Target::Napi => attrs.push("catch_unwind".into()),
            Target::Wasm if m.member != Member::Constructor => attrs.push(format!("js_name = {}", m.js)),
            Target::Wasm => {}
        }
        if let Some(ts) = ts {
            attrs.push(format!("unchecked_return_type = \"{ts}\""));
        }
        let macro_name = if self == Target::Napi { "napi" } else { "wasm_bindgen" };
        let _ = writeln!(out, "#[{macro_name}({})]", attrs.join(", "));
        out.push_str("#[allow(clippy::too_many_arguments)]\n");
        let mut params = Vec::new();
        match m.member {
            Member::Ref | Member::Getter => params.push("&self".to_owned()),
            Member::Mut => params.push("&mut self".to_owned()),
            _ => {}
        }
        let fallible = m.convention != Convention::Plain;
        if self == Target::Napi && fallible {
            params.push("env: Env".to_owned());
        }
        let flat: Vec<&Param> = m
            .args
            .iter()
            .flat_map(|a| match a {
                Arg::One(p) => vec![p],
                Arg::Group { fields, .. } => fields.iter().collect(),
            })
            .collect();
        for (i, p) in flat.iter().enumerate() {
            let trailing = flat[i..].iter().all(|q| q.optional);
            params.push(self.declare(p, trailing));
        }
        let arrow = if ret == "()" { String::new() } else { format!(" -> {ret}") };
        let _ = writeln!(out, "pub fn {rust}({}){arrow} {{", params.join(", "));
        let call = self.call(m, inner);
        let body = match (self, m.convention) {
            (_, Convention::Plain) => self.wrap(m, class, &call),
            (Target::Napi, _) => format!("{}.or_throw(&env)", self.wrap_result(m, class, &call)),
            (Target::Wasm, Convention::Try) => format!("Ok({})", self.wrap(m, class, &format!("{call}?"))),
            (Target::Wasm, Convention::Hot) => format!("crate::hot(|| {call})"),
        };
        let _ = writeln!(out, "    {body}\n}}\n");
    }

    /// `call` with its `Ok` value wrapped (napi).
    fn wrap_result(self, m: &Method, class: &str, call: &str) -> String {
        let w = self.wrap(m, class, "v");
        if w == "v" {
            call.to_owned()
        } else {
            format!("{call}.map(|v| {w})")
        }
    }
}

/// Whether napi also offers member `m` as a function bound to its object
/// (`bound()`, bindings-node/src/bound.rs): a hot method of numbers and flags.
pub fn bindable(m: &Method) -> bool {
    matches!(m.member, Member::Ref | Member::Mut)
        && m.convention == Convention::Hot
        && m.args.iter().all(|a| match a {
            Arg::One(p) => p.kind == "f64" || (p.kind == "bool" && !p.optional),
            Arg::Group { .. } => false,
        })
}

/// napi: the `bound()` method of `class` (inside its `impl`) and, after it,
/// the callback of each [`bindable`] member: the member's call, with the
/// object from the callback's data instead of an unwrapped `this`.
fn napi_bound(class: &str, inner: &str, members: &[Method]) -> (String, String) {
    let hot: Vec<&Method> = members.iter().filter(|m| bindable(m)).collect();
    if hot.is_empty() {
        return (String::new(), String::new());
    }
    let cb = |m: &Method| format!("{}_{}_bound", snake(class).trim_start_matches('_'), snake(&m.js));
    let list: Vec<String> = hot.iter().map(|m| format!("(\"{}\", {})", m.js, cb(m))).collect();
    let method = format!(
        "/// The hot methods as functions bound to this object: no `this` to unwrap per call\n\
         /// (bindings-node/src/bound.rs).\n\
         #[napi(catch_unwind)]\n\
         pub fn bound(&self, env: Env, me: napi::bindgen_prelude::Reference<{class}>) -> Result<napi::JsObject> {{\n    \
         crate::bound::object(env, me, &[{}])\n}}\n\n",
        list.join(", ")
    );
    let mut callbacks = String::new();
    for m in hot {
        let params: Vec<&Param> =
            m.args.iter().filter_map(|a| if let Arg::One(p) = a { Some(p) } else { None }).collect();
        let names: Vec<String> = params.iter().map(|p| snake(&p.js)).collect();
        let mut body = String::new();
        for p in &params {
            let ty = Target::Napi.param_type(p);
            let n = snake(&p.js);
            let _ = writeln!(
                body,
                "            let {n} = <{ty} as napi::bindgen_prelude::FromNapiValue>::from_napi_value(env, {n})?;"
            );
        }
        let call = Target::Napi.call(m, inner).replacen("self.", "me.", 1);
        let ret = Target::Napi.ret_type(m, class).0;
        let ret = ret.strip_prefix("Result<").and_then(|r| r.strip_suffix('>')).unwrap_or(&ret).to_owned();
        let v = if ret == "()" { "()" } else { "v" };
        let _ = writeln!(
            callbacks,
            "/// `{class}.{}` bound to its object (`bound`).\n\
             unsafe extern \"C\" fn {}(env: napi::sys::napi_env, info: napi::sys::napi_callback_info) -> napi::sys::napi_value {{\n    \
             // SAFETY: Node calls it with a live env and callback info, as a function `{class}::bound` made.\n    \
             unsafe {{\n        \
             crate::bound::call::<{class}, {}>(env, info, |me, [{}]| {{\n{body}            \
             let {v} = {call}.or_throw(&Env::from_raw(env))?;\n            \
             <{ret} as napi::bindgen_prelude::ToNapiValue>::to_napi_value(env, {v})\n        }})\n    }}\n}}\n",
            m.js,
            cb(m),
            names.len(),
            names.join(", "),
        );
    }
    (method, callbacks)
}

/// Expands the surface `declarations` for `target`: the Rust items its crate includes.
pub fn generate(declarations: &str, target: Target) -> Result<String, String> {
    generate_subset(declarations, target, None)
}

/// Keeps what `subset` names (`bindings-js/src/surface.rs`, `LITE`): the
/// functions and classes listed, without the `-Class.member`s listed. A
/// name the surface does not declare is an error.
pub fn filter(mut s: Surface, subset: &str) -> Result<Surface, String> {
    let names: Vec<&str> = subset.split_whitespace().collect();
    for n in &names {
        let known = match n.strip_prefix('-').and_then(|m| m.split_once('.')) {
            Some((c, m)) => s.classes.iter().any(|k| k.js == c && k.members.iter().any(|x| x.js == m)),
            None => s.functions.iter().any(|f| f.js == *n) || s.classes.iter().any(|c| c.js == *n),
        };
        if !known {
            return Err(format!("the subset names {n}, which the surface does not declare"));
        }
    }
    s.functions.retain(|f| names.contains(&f.js.as_str()));
    s.classes.retain(|c| names.contains(&c.js.as_str()));
    for c in &mut s.classes {
        let js = c.js.clone();
        c.members.retain(|m| !names.contains(&format!("-{js}.{}", m.js).as_str()));
    }
    Ok(s)
}

/// [`generate`] for the subset named by `subset` (see [`filter`]), or the whole surface.
pub fn generate_subset(declarations: &str, target: Target, subset: Option<&str>) -> Result<String, String> {
    let s = parse(declarations)?;
    let s = match subset {
        Some(names) => filter(s, names)?,
        None => s,
    };
    let mut out = String::from(
        "// @generated by bindings-js/codegen/surface.rs from bindings-js/src/surface.rs; do not edit.\n\n",
    );
    for f in &s.functions {
        target.member(&mut out, f, "", "");
    }
    for c in &s.classes {
        let inner = c.inner.replace("<H>", &format!("<{}>", target.host()));
        let attr = if target == Target::Napi { "#[napi]" } else { "#[wasm_bindgen]" };
        for d in &c.doc {
            let _ = writeln!(out, "///{d}");
        }
        let _ = writeln!(out, "{attr}\npub struct {} {{\n    inner: ::retrycore_js::{inner},\n}}\n", c.js);
        let _ = writeln!(out, "{attr}\nimpl {} {{", c.js);
        for m in &c.members {
            target.member(&mut out, m, &c.js, &inner);
        }
        let (bound, callbacks) =
            if target == Target::Napi { napi_bound(&c.js, &inner, &c.members) } else { Default::default() };
        out.push_str(&bound);
        out.push_str("}\n\n");
        out.push_str(&callbacks);
    }
    Ok(out)
}

/// The TypeScript type of a parameter kind, class names becoming their
/// backend interfaces (`NativeBreaker` → `BackendBreaker`).
fn ts_kind(kind: &str) -> String {
    match kind {
        "f64" => "number".to_owned(),
        "bool" => "boolean".to_owned(),
        "strs" => "string[]".to_owned(),
        "nums" => "number[]".to_owned(),
        "str" | "string" => "string".to_owned(),
        c => backend_name(c),
    }
}

fn backend_name(class: &str) -> String {
    format!("Backend{}", class.strip_prefix("Native").unwrap_or(class))
}

/// The TypeScript return type of a member of `class`.
fn ts_ret(m: &Method, class: &str) -> String {
    if let Some(t) = &m.ts {
        return t.clone();
    }
    match m.ret.as_str() {
        "f64" | "u32" => "number".to_owned(),
        "bool" => "boolean".to_owned(),
        "string" | "static" => "string".to_owned(),
        "f64s" => "number[]".to_owned(),
        "f64?" => "number | null".to_owned(),
        "()" => "void".to_owned(),
        "Self" => backend_name(class),
        r => match r.strip_suffix('?') {
            Some(c) => format!("{} | null", backend_name(c)),
            None => backend_name(r),
        },
    }
}

/// One member's TypeScript signature (`name(params): ret`).
fn ts_signature(m: &Method, class: &str) -> String {
    let flat: Vec<&Param> = m
        .args
        .iter()
        .flat_map(|a| match a {
            Arg::One(p) => vec![p],
            Arg::Group { fields, .. } => fields.iter().collect(),
        })
        .collect();
    let params: Vec<String> = flat
        .iter()
        .enumerate()
        .map(|(i, p)| match (p.optional, flat[i..].iter().all(|q| q.optional)) {
            (true, true) => format!("{}?: {}", p.js, ts_kind(&p.kind)),
            (true, false) => format!("{}: {} | undefined", p.js, ts_kind(&p.kind)),
            _ => format!("{}: {}", p.js, ts_kind(&p.kind)),
        })
        .collect();
    format!("{}({}): {}", m.js, params.join(", "), ts_ret(m, class))
}

fn ts_doc(out: &mut String, indent: &str, doc: &[String], internal: bool) {
    let tag = if internal { " @internal" } else { "" };
    match doc {
        [] => {}
        [one] => {
            let _ = writeln!(out, "{indent}/**{one}{tag} */");
        }
        _ => {
            let _ = writeln!(out, "{indent}/**");
            for d in doc {
                let _ = writeln!(out, "{indent} *{d}");
            }
            if internal {
                let _ = writeln!(out, "{indent} *{tag}");
            }
            let _ = writeln!(out, "{indent} */");
        }
    }
}

/// Writes the TypeScript interfaces of the surface `declarations`
/// (`bindings-node/lib/surface.d.ts`): `BackendSurface` (the module
/// functions and the classes' constructors and factories) and one
/// `Backend<Class>` interface per class. The types a `json<T>` return names
/// are imported from the public declarations `lib/api.d.ts`, the backend's
/// own (`Backend…`, `SessionStatus`) from `lib/backend.d.ts`.
pub fn typescript(declarations: &str) -> Result<String, String> {
    let s = parse(declarations)?;
    let generated: Vec<String> = s.classes.iter().map(|c| backend_name(&c.js)).collect();
    let mut imported = std::collections::BTreeSet::new();
    let every = s.functions.iter().chain(s.classes.iter().flat_map(|c| &c.members));
    for t in every.filter_map(|m| m.ts.as_deref()) {
        for word in t.split(|c: char| !c.is_ascii_alphanumeric() && c != '_') {
            let known = ["Record", "ReturnType", "Array"].contains(&word) || generated.iter().any(|g| g == word);
            if word.starts_with(|c: char| c.is_ascii_uppercase()) && !known {
                imported.insert(word.to_owned());
            }
        }
    }
    let mut out = String::from(
        "// @generated by bindings-js/codegen/surface.rs from bindings-js/src/surface.rs; do not edit\n\
         // (RETRYCORE_BLESS=1 cargo test -p retrycore-js --test surface rewrites it).\n",
    );
    let (internal, public): (Vec<&str>, Vec<&str>) =
        imported.iter().map(String::as_str).partition(|t| t.starts_with("Backend") || *t == "SessionStatus");
    let _ = writeln!(out, "import type {{ {} }} from './api';", public.join(", "));
    let _ = writeln!(out, "import type {{ {} }} from './backend';\n", internal.join(", "));
    out.push_str("/** The low-level functions and classes both JS bindings export. @internal */\n");
    out.push_str("export interface BackendSurface {\n");
    for f in &s.functions {
        ts_doc(&mut out, "  ", &f.doc, false);
        let _ = writeln!(out, "  {};", ts_signature(f, ""));
    }
    for c in &s.classes {
        let ctors: Vec<&Method> = c.members.iter().filter(|m| m.member == Member::Constructor).collect();
        let statics: Vec<String> =
            c.members.iter().filter(|m| m.member == Member::Factory).map(|m| ts_signature(m, &c.js)).collect();
        let ty = match (ctors.as_slice(), statics.is_empty()) {
            ([new], true) => {
                format!("new {}", ts_signature(new, &c.js).replacen("new(", "(", 1).replacen("): ", ") => ", 1))
            }
            ([], false) => format!("{{ {} }}", statics.join("; ")),
            _ => return Err(format!("class {}: one constructor or factories only", c.js)),
        };
        ts_doc(&mut out, "  ", &c.doc, false);
        let _ = writeln!(out, "  {}: {ty};", c.js);
    }
    out.push_str("}\n");
    for c in &s.classes {
        out.push('\n');
        ts_doc(&mut out, "", &c.doc, true);
        let _ = writeln!(out, "export interface {} {{", backend_name(&c.js));
        for m in c.members.iter().filter(|m| !matches!(m.member, Member::Constructor | Member::Factory)) {
            ts_doc(&mut out, "  ", &m.doc, false);
            if m.member == Member::Getter {
                let _ = writeln!(out, "  readonly {}: {};", m.js, ts_ret(m, &c.js));
            } else {
                let _ = writeln!(out, "  {};", ts_signature(m, &c.js));
            }
        }
        let hot: Vec<String> = c.members.iter().filter(|m| bindable(m)).map(|m| format!("'{}'", m.js)).collect();
        if !hot.is_empty() {
            out.push_str("  /** napi only: the hot methods as functions bound to this object (no `this` to unwrap per call). */\n");
            let _ = writeln!(out, "  bound?(): Pick<{}, {}>;", backend_name(&c.js), hot.join(" | "));
        }
        out.push_str("}\n");
    }
    Ok(out)
}

/// The kind lists of the core's `host_tables()` the TypeScript unions derive
/// from: each exported `as const` array's name and the table's key (a list
/// of names, or of `{code, …}` objects).
pub const TABLE_LISTS: &[(&str, &str)] = &[
    ("BACKOFF_KINDS", "backoff_kinds"),
    ("JITTERS", "jitters"),
    ("BREAKER_KINDS", "breaker_kinds"),
    ("BUDGET_KINDS", "budget_kinds"),
    ("CATEGORIES", "categories"),
    ("GIVE_UP_REASONS", "give_up_reasons"),
    ("REJECT_REASONS", "reject_reasons"),
    ("PROFILES", "profiles"),
];

/// Writes `bindings-node/lib/generated.ts`: the [`TABLE_LISTS`] as `as const`
/// arrays, `list(key)` reading each from the core's `host_tables()` (the
/// compiler needs them at build time for the unions; `tests/js/tables.test.cjs`
/// checks them against the backend's tables at run time too), and from the
/// surface `declarations` one interface per group struct (`FailureArgs`,
/// `RecordArgs`: every field any member's group passes) and, for each member
/// taking a group, a function that calls it with the group given as that
/// object, its fields spread in the member's declared order
/// ([`typescript_groups`]); and `INFO`, what `retrycore_js::info()` answers
/// (the core's tables, the packing rules, the lint codes), given as
/// `info`: the text of a JavaScript object literal. The JS layer reads its
/// tables from here, not from the backend, so that neither the wasm module
/// nor the addon carries code to build them at every load.
pub fn typescript_module(declarations: &str, list: &dyn Fn(&str) -> Vec<String>, info: &str) -> Result<String, String> {
    let mut out = String::from(
        "// @generated by bindings-js/codegen/surface.rs from retrycore::tables::host_tables() and\n\
         // bindings-js/src/surface.rs; do not edit (RETRYCORE_BLESS=1 cargo test -p retrycore-js --test surface rewrites it).\n\n",
    );
    out.push_str("import type { BackendInfo } from './backend';\n");
    out.push_str(&typescript_groups(declarations)?);
    out.push_str("\n// The kind lists the TypeScript unions derive from.\n");
    for (name, key) in TABLE_LISTS {
        let items: Vec<String> = list(key).iter().map(|n| format!("'{n}'")).collect();
        let _ = writeln!(out, "/** `host_tables().{key}`. */\nexport const {name} = [{}] as const;", items.join(", "));
    }
    let _ = writeln!(
        out,
        "\n/** `retrycore_js::info()`: the core's tables (`host_tables()`), the packing rules and the lint codes. */\n\
         export const INFO: BackendInfo = {info};"
    );
    Ok(out)
}

/// The group structs' interfaces and the calls that spread them (see [`typescript_module`]).
pub fn typescript_groups(declarations: &str) -> Result<String, String> {
    let s = parse(declarations)?;
    let owned: Vec<(&str, &Method)> = s
        .functions
        .iter()
        .map(|m| ("", m))
        .chain(s.classes.iter().flat_map(|c| c.members.iter().map(move |m| (c.js.as_str(), m))))
        .collect();
    // Each group struct's fields, in the order first met.
    let mut groups: Vec<(String, Vec<Param>)> = Vec::new();
    for (_, m) in &owned {
        for a in &m.args {
            let Arg::Group { path, fields, .. } = a else { continue };
            let name = path.rsplit("::").next().unwrap_or(path).to_owned();
            let i = match groups.iter().position(|(g, _)| *g == name) {
                Some(i) => i,
                None => {
                    groups.push((name, Vec::new()));
                    groups.len() - 1
                }
            };
            for f in fields {
                match groups[i].1.iter().find(|g| g.js == f.js) {
                    Some(g) if g.kind != f.kind => return Err(format!("{path}: field {} has two kinds", f.js)),
                    Some(_) => {}
                    None => groups[i].1.push(Param { optional: true, ..f.clone() }),
                }
            }
        }
    }
    let mut imported = std::collections::BTreeSet::new();
    let mut body = String::new();
    for (name, fields) in &groups {
        let _ = writeln!(
            body,
            "/** The fields of a `{name}` group, as the calls below take it. */\nexport interface {name} {{"
        );
        for f in fields {
            let _ = writeln!(body, "  {}?: {};", f.js, ts_kind(&f.kind));
        }
        body.push_str("}\n\n");
    }
    for (class, m) in &owned {
        if !m.args.iter().any(|a| matches!(a, Arg::Group { .. })) {
            continue;
        }
        let (target, prefix) = if class.is_empty() {
            ("BackendSurface".to_owned(), String::new())
        } else {
            let b = backend_name(class);
            let p = b.trim_start_matches("Backend").to_ascii_lowercase();
            (b, p)
        };
        imported.insert(target.clone());
        let mut params = vec![format!("n: Pick<{target}, '{}'>", m.js)];
        let mut pass = Vec::new();
        for a in &m.args {
            match a {
                Arg::One(p) => {
                    let opt = if p.optional { " | undefined" } else { "" };
                    params.push(format!("{}: {}{opt}", p.js, ts_kind(&p.kind)));
                    pass.push(p.js.clone());
                }
                Arg::Group { path, fields, .. } => {
                    let name = path.rsplit("::").next().unwrap_or(path);
                    params.push(format!("g: {name}"));
                    pass.extend(fields.iter().map(|f| format!("g.{}", f.js)));
                }
            }
        }
        let ret = ts_ret(m, class);
        for word in ret.split(|c: char| !c.is_ascii_alphanumeric() && c != '_') {
            if word.starts_with(|c: char| c.is_ascii_uppercase()) && !["Record", "ReturnType", "Array"].contains(&word)
            {
                imported.insert(word.to_owned());
            }
        }
        let js = if prefix.is_empty() {
            m.js.clone()
        } else {
            format!("{prefix}{}{}", m.js[..1].to_ascii_uppercase(), &m.js[1..])
        };
        let owner = if class.is_empty() { String::new() } else { format!("{class}.") };
        let _ = writeln!(body, "/** `{owner}{}` with its group given as one object. */", m.js);
        let _ = writeln!(body, "export function {js}({}): {ret} {{", params.join(", "));
        let _ = writeln!(body, "  return n.{}({});\n}}\n", m.js, pass.join(", "));
    }
    typescript_wrappers(&s, &mut body, &mut imported)?;
    let (surface, rest): (Vec<String>, Vec<String>) =
        imported.into_iter().partition(|t| t.starts_with("Backend") && t != "BackendGate" && t != "BackendDecision");
    let (internal, api): (Vec<String>, Vec<String>) = rest.into_iter().partition(|t| t.starts_with("Backend"));
    let mut out = String::new();
    let _ = writeln!(out, "import type {{ {} }} from './surface';", surface.join(", "));
    if !api.is_empty() {
        let _ = writeln!(out, "import type {{ {} }} from './api';", api.join(", "));
    }
    if !internal.is_empty() {
        let _ = writeln!(out, "import type {{ {} }} from './backend';", internal.join(", "));
    }
    out.push('\n');
    out.push_str(body.trim_end());
    out.push('\n');
    Ok(out)
}

/// The TypeScript types a type names (its capitalised words but the built-in generics).
fn type_names(t: &str, into: &mut std::collections::BTreeSet<String>) {
    for word in t.split(|c: char| !c.is_ascii_alphanumeric() && c != '_') {
        if word.starts_with(|c: char| c.is_ascii_uppercase()) && !["Record", "ReturnType", "Array"].contains(&word) {
            into.insert(word.to_owned());
        }
    }
}

/// The public wrappers of the `js` lines: module functions calling the
/// backend, and per class an abstract `<Name>Members` base whose methods and
/// getters call the object's `_native`, each argument checked by the host's
/// checker for its kind (`Host`, set by `lib/retrycore.ts`).
pub fn typescript_wrappers(
    s: &Surface,
    body: &mut String,
    imported: &mut std::collections::BTreeSet<String>,
) -> Result<(), String> {
    body.push_str(
        "\n// The public wrappers that only check their arguments and call the backend\n\
         // (the `js` lines of bindings-js/src/surface.rs); lib/retrycore.ts exports them.\n\n\
         /** The argument checks of lib/retrycore.ts and the backend, set by its `setBackend`. */\n\
         export interface Host {\n  n: BackendSurface;\n  str(v: unknown, field: string): string;\n  \
         num(v: unknown, field: string): number;\n  nums(v: unknown, field: string): number[];\n  \
         time(v: unknown): number;\n  wall(v: unknown, field: string): number;\n  u64(v: unknown, field: string): string;\n}\n\n\
         let H: Host;\n\n/** Sets the checks and the backend the wrappers use. */\n\
         export function setHost(h: Host): void {\n  H = h;\n}\n\n\
         /** The checks and the backend, for the public code outside lib/retrycore.ts (lib/limiters.ts). */\n\
         export function host(): Host {\n  return H;\n}\n",
    );
    imported.insert("BackendSurface".to_owned());
    let classes = s.classes.iter().map(|c| (c.js.as_str(), &c.members));
    for (class, members) in std::iter::once(("", &s.functions)).chain(classes) {
        let wrapped: Vec<(&Method, &Wrapper)> =
            members.iter().flat_map(|m| m.wrappers.iter().map(move |w| (m, w))).collect();
        if wrapped.is_empty() {
            continue;
        }
        let (indent, recv) = if class.is_empty() { ("", "H.n") } else { ("  ", "this._native") };
        if !class.is_empty() {
            let b = backend_name(class);
            imported.insert(b.clone());
            let name = class.strip_prefix("Native").unwrap_or(class);
            let _ = writeln!(body, "\n/** The public members that only check their arguments and call a `{class}`. */");
            let _ = writeln!(
                body,
                "export abstract class {name}Members {{\n  /** @internal */\n  abstract get _native(): {b};"
            );
            if wrapped.iter().any(|(_, w)| w.fired) {
                body.push_str("  /** @internal Fires the hooks of what a call caused, then answers what it returned. */\n  abstract _fired<T>(r: T): T;\n");
            }
        } else if wrapped.iter().any(|(_, w)| w.fired) {
            return Err("a module function cannot be `fired`".to_owned());
        }
        for (m, w) in wrapped {
            let ret = if w.parsed { "Record<string, unknown>".to_owned() } else { ts_ret(m, class) };
            type_names(&ret, imported);
            if w.getter {
                if m.member != Member::Getter {
                    return Err(format!("js get {}: {} is not a getter", w.js, m.js));
                }
                let _ =
                    writeln!(body, "\n{indent}get {}(): {ret} {{\n{indent}  return {recv}.{};\n{indent}}}", w.js, m.js);
                continue;
            }
            let params: Vec<&Param> = m
                .args
                .iter()
                .map(|a| match a {
                    Arg::One(p) => Ok(p),
                    Arg::Group { .. } => Err(format!("js {}: {} takes a group", w.js, m.js)),
                })
                .collect::<Result<_, _>>()?;
            if w.params.len() > params.len() {
                return Err(format!(
                    "js {}: names {} of the {} parameters of {}",
                    w.js,
                    w.params.len(),
                    params.len(),
                    m.js
                ));
            }
            // Each backend parameter in its order, from the public parameter naming it.
            let mut pass = Vec::new();
            let mut optional = Vec::new();
            for p in &params {
                let Some((public, _, field)) = w.params.iter().find(|(_, b, _)| *b == p.js) else {
                    // An optional parameter the wrapper does not name is left out.
                    if !p.optional {
                        return Err(format!("js {}: no parameter is {}'s {}", w.js, m.js, p.js));
                    }
                    pass.push("undefined".to_owned());
                    continue;
                };
                let (check, opt) = match (p.kind.as_str(), p.js.as_str(), p.optional) {
                    ("f64", "now", false) => (format!("H.time({public})"), true),
                    ("f64", "wallNowMs" | "nowMs", false) => (format!("H.wall({public}, '{field}')"), true),
                    ("f64", _, true) => {
                        (format!("{public} === undefined ? undefined : H.num({public}, '{field}')"), true)
                    }
                    ("f64", _, false) => (format!("H.num({public}, '{field}')"), false),
                    ("str", "seed", false) => (format!("H.u64({public}, '{field}')"), false),
                    ("str", _, false) => (format!("H.str({public}, '{field}')"), false),
                    ("nums", _, false) => (format!("H.nums({public}, '{field}')"), false),
                    ("bool", _, false) => (format!("{public} === true"), true),
                    (k, n, _) => return Err(format!("js {}: no check for {n}: {k}", w.js)),
                };
                pass.push(check);
                optional.push((public.clone(), opt));
            }
            let sig: Vec<String> = w
                .params
                .iter()
                .enumerate()
                .map(|(i, (public, _, _))| {
                    let opt = |name: &String| optional.iter().any(|(p, o)| p == name && *o);
                    let trailing = w.params[i..].iter().all(|(p, _, _)| opt(p));
                    format!("{public}{}: unknown", if trailing { "?" } else { "" })
                })
                .collect();
            let export = if class.is_empty() { "export function " } else { "" };
            let mut call = format!("{recv}.{}({})", m.js, pass.join(", "));
            if w.parsed {
                call = format!("JSON.parse({call})");
            }
            if w.fired {
                call = format!("this._fired({call})");
            }
            let _ = writeln!(body, "\n{indent}{export}{}({}): {ret} {{", w.js, sig.join(", "));
            let _ = writeln!(body, "{indent}  return {call};\n{indent}}}");
        }
        if !class.is_empty() {
            body.push_str("}\n");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrycore_js::surface::{DECLARATIONS, LITE};

    #[test]
    fn the_declarations_parse_and_name_each_member_once() {
        let s = parse(DECLARATIONS).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for f in &s.functions {
            assert!(seen.insert(f.js.clone()), "{} twice", f.js);
        }
        assert_eq!(s.classes.len(), 7);
        for c in &s.classes {
            let mut names = std::collections::BTreeSet::new();
            for m in &c.members {
                assert!(names.insert(m.js.clone()), "{}.{} twice", c.js, m.js);
            }
        }
    }

    #[test]
    fn the_lite_subset_names_what_the_surface_declares() {
        let lite = filter(parse(DECLARATIONS).unwrap(), LITE).unwrap();
        assert!(lite.functions.iter().any(|f| f.js == "classify"));
        let policy = lite.classes.iter().find(|c| c.js == "NativePolicy").unwrap();
        assert!(policy.members.iter().all(|m| m.js != "fromJson"));
        assert!(policy.members.iter().any(|m| m.js == "fromOptions"));
        assert!(lite.classes.iter().all(|c| c.js != "NativeLimiter"));
        assert!(filter(parse(DECLARATIONS).unwrap(), "classify noSuchFunction").is_err());
        assert!(filter(parse(DECLARATIONS).unwrap(), "-NativePolicy.noSuchMember").is_err());
    }

    #[test]
    fn names_and_groups() {
        assert_eq!(snake("formatRfc3339"), "format_rfc3339");
        assert_eq!(snake("nextU64"), "next_u64");
        let m = method("mut f(id: f64, G{a: strs?; bC}) -> hot ()", vec![], true).unwrap();
        assert_eq!(m.convention, Convention::Hot);
        let Arg::Group { fields, absent, .. } = &m.args[1] else { panic!("a group") };
        assert_eq!((fields[0].optional, absent.as_slice()), (true, ["bC".to_owned()].as_slice()));
        assert!(parse("class X = Y\n").is_err());
        assert!(parse("fn f() -> ()\nend\n").is_err());
        assert!(parse("fn f(x: text) -> ()\n").is_err());
    }

    #[test]
    fn js_wrappers_check_each_parameter_by_kind() {
        let s = parse("fn f(now: f64, text: str, n: f64?) -> try f64\njs g(t=text:field, n, now)\n").unwrap();
        let (mut body, mut imported) = (String::new(), std::collections::BTreeSet::new());
        typescript_wrappers(&s, &mut body, &mut imported).unwrap();
        assert!(body.contains("export function g(t: unknown, n?: unknown, now?: unknown): number {"), "{body}");
        assert!(
            body.contains("return H.n.f(H.time(now), H.str(t, 'field'), n === undefined ? undefined : H.num(n, 'n'));")
        );
        // Every backend parameter is named once, and only known kinds are checked.
        let fails = |text: &str| {
            let s = parse(text).unwrap();
            typescript_wrappers(&s, &mut String::new(), &mut std::collections::BTreeSet::new()).is_err()
        };
        assert!(fails("fn f(a: str, b: str) -> string\njs g(a)\n"));
        assert!(fails("fn f(a: str) -> string\njs g(b)\n"));
        assert!(!fails("fn f(a: str?) -> string\njs g()\n"));
        assert!(fails("fn f(a: strs) -> string\njs g(a)\n"));
        assert!(parse("js g()\n").is_err());
        assert!(parse("fn f() -> ()\njs g() loud\n").is_err());
        assert!(fails("fn f() -> ()\njs g() fired\n"));
        let s = parse("class NativeX = X<H>\n  ref f() -> string\n  js g() parsed\n  js h() fired\nend\n").unwrap();
        let mut body = String::new();
        typescript_wrappers(&s, &mut body, &mut std::collections::BTreeSet::new()).unwrap();
        assert!(body.contains("  g(): Record<string, unknown> {\n    return JSON.parse(this._native.f());"), "{body}");
        assert!(
            body.contains("abstract _fired<T>(r: T): T;") && body.contains("return this._fired(this._native.f());")
        );
    }

    /// `bindings-node/lib/surface.d.ts` is the generator's output.
    #[test]
    fn the_typescript_interfaces_are_generated() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../bindings-node/lib/surface.d.ts");
        let want = typescript(DECLARATIONS).unwrap();
        if std::env::var_os("RETRYCORE_BLESS").is_some() {
            std::fs::write(path, &want).unwrap();
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(have == want, "{path} drifted from bindings-js/src/surface.rs: RETRYCORE_BLESS=1 cargo test -p retrycore-js --test surface");
    }

    /// A JSON object as a JavaScript literal, one line per member of it and of
    /// its `tables` (reviewable diffs, compact values).
    fn info_literal(v: &retrycore::json::Value) -> String {
        let obj = v.as_object().expect("info() is an object");
        let mut out = String::from("{\n");
        for (k, v) in obj {
            match v.as_object() {
                Some(inner) if k == "tables" => {
                    out.push_str(&format!("  {}: {{\n", serde_json::to_string(k).unwrap()));
                    for (k, v) in inner {
                        out.push_str(&format!("    {}: {},\n", serde_json::to_string(k).unwrap(), v));
                    }
                    out.push_str("  },\n");
                }
                _ => out.push_str(&format!("  {}: {},\n", serde_json::to_string(k).unwrap(), v)),
            }
        }
        out.push('}');
        out
    }

    /// `bindings-node/lib/generated.ts` holds the core's kind lists, the group calls and the tables (`INFO`).
    #[test]
    fn the_typescript_tables_are_generated() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../bindings-node/lib/generated.ts");
        let t = retrycore::tables::host_tables();
        let list = |key: &str| -> Vec<String> {
            let items = t[key].as_array().unwrap_or_else(|| panic!("host_tables().{key} is a list"));
            items.iter().map(|v| v.get("code").unwrap_or(v).as_str().expect("a name").to_owned()).collect()
        };
        let want = typescript_module(DECLARATIONS, &list, &info_literal(&retrycore_js::info())).unwrap();
        if std::env::var_os("RETRYCORE_BLESS").is_some() {
            std::fs::write(path, &want).unwrap();
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            have == want,
            "{path} drifted from host_tables() or bindings-js/src/surface.rs: RETRYCORE_BLESS=1 cargo test -p retrycore-js --test surface"
        );
    }

    #[test]
    fn both_targets_expand() {
        let napi = generate(DECLARATIONS, Target::Napi).unwrap();
        let wasm = generate(DECLARATIONS, Target::Wasm).unwrap();
        assert!(napi.contains("pub fn try_acquire(&mut self, env: Env, now: f64) -> Result<f64> {"));
        // napi's hot methods of numbers and flags, also as functions bound to their object.
        assert!(napi.contains("crate::bound::object(env, me, &[(\"tryAcquire\", native_breaker_try_acquire_bound), "));
        assert!(napi.contains("unsafe extern \"C\" fn native_policy_delay_bound("));
        assert!(!napi.contains("native_breaker_record_failure_bound"), "a group is not bound");
        assert!(!wasm.contains("_bound"));
        assert!(wasm.contains("pub fn try_acquire(&mut self, now: f64) -> f64 {"));
        assert!(wasm.contains("pub fn free_session(&mut self, id: f64) {"));
    }
}
