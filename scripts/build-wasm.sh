#!/usr/bin/env bash
# build-wasm.sh <crate-dir> <out-dir>
#
# Build a wasm-bindgen cdylib crate for wasm32-unknown-unknown and generate JS
# bindings for three consumers:
#   <out-dir>/web      ES module, `init()`/`initSync()` (browsers, workers, Deno, workerd)
#   <out-dir>/bundler  ES module importing the .wasm directly (webpack/vite; Deno >= 2.1)
#   <out-dir>/node     CommonJS for Node.js (`require()`)
# then shrinks each *_bg.wasm with `wasm-opt -Oz` when a binaryen >= 110 is available.
#
# Toolchain choice (WASM_TOOLCHAIN=auto|rustup|debian, default auto):
#   rustup  — when `rustup target list --installed` has wasm32-unknown-unknown
#             (a developer laptop): plain `cargo build --target wasm32-unknown-unknown`.
#   debian  — otherwise: Debian's rustc-web 1.96 + its std source, std rebuilt with
#             RUSTC_BOOTSTRAP=1 `/usr/bin/cargo -Zbuild-std=std,panic_abort`, linked by
#             /usr/bin/rust-lld. RUSTC must point at /usr/bin/rustc explicitly: with
#             ~/.cargo/bin first on PATH, /usr/bin/cargo would otherwise run rustup's
#             rustc and look for rust-src in the rustup toolchain.
# Both use a separate target dir (<workspace>/target/wasm) so the wasm build (and
# a different rustc) never invalidates the native build's artifacts.
#
# Install prerequisites with scripts/install-wasm-toolchain.sh.
#
# Environment knobs
#   WASM_TOOLCHAIN   auto | rustup | debian
#   WASM_TARGET_DIR  cargo target dir (default <workspace>/target/wasm)
#   WASM_PROFILE     cargo profile (default release)
#   WASM_CARGO_ARGS  extra cargo build args, word-split (e.g. "--locked --features x")
#   WASM_RUSTFLAGS   RUSTFLAGS for the wasm build. The caller's RUSTFLAGS are NOT
#                    inherited (native flags such as -Ctarget-cpu=native break wasm).
#   WASM_BINDGEN     path to wasm-bindgen (default <repo>/target/tools/bin/wasm-bindgen, then PATH)
#   WASM_OPT         auto (default: run if a wasm-opt >= 110 is found) | 0 (skip) | 1 (required)
#   WASM_OPT_BIN     path to wasm-opt (default <repo>/target/tools/binaryen/node_modules/.bin/wasm-opt, then PATH)
#   WASM_KEEP_NAMES  1 keeps the wasm "name" section (function names in stack traces;
#                    ~55 KB on a small crate). Default strips it.
#   WASM_JOBS        cargo -j (default 2)
#   WASM_SIZE_FLAGS  1 (default) | 0. On the debian path, the flags that only a std
#                    built from source allows and that cut ~80 KB (docs/js.md, "Size"):
#                    -Cpanic=immediate-abort (a panic is a bare `unreachable` trap: no
#                    hook, no message formatting; panics are bugs here either way),
#                    -Zlocation-detail=none (no source paths) and std's
#                    `optimize_for_size` feature (small sorts, number formatting).
#                    0 keeps panic messages for debugging.
set -euo pipefail

log() { printf '[build-wasm] %s\n' "$*" >&2; }
die() { printf '[build-wasm] ERROR: %s\n' "$*" >&2; exit 1; }

[ "$#" -eq 2 ] || die "usage: $0 <crate-dir> <out-dir>"
[ -f "$1/Cargo.toml" ] || die "$1/Cargo.toml not found"
CRATE_DIR="$(cd "$1" && pwd)"
mkdir -p "$2"
OUT_DIR="$(cd "$2" && pwd)"

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
TARGET=wasm32-unknown-unknown
WASM_TOOLCHAIN="${WASM_TOOLCHAIN:-auto}"
WASM_PROFILE="${WASM_PROFILE:-release}"
WASM_OPT="${WASM_OPT:-auto}"
WASM_KEEP_NAMES="${WASM_KEEP_NAMES:-0}"
WASM_JOBS="${WASM_JOBS:-2}"
WASM_SIZE_FLAGS="${WASM_SIZE_FLAGS:-1}"

# ---------------------------------------------------------------------------
# 1. Pick the toolchain
# ---------------------------------------------------------------------------
rustup_has_wasm32() {
  command -v rustup >/dev/null 2>&1 &&
    (cd "$CRATE_DIR" && rustup target list --installed 2>/dev/null) | grep -qx "$TARGET"
}
debian_recipe_ok() {
  [ -x /usr/bin/cargo ] && [ -x /usr/bin/rustc ] && [ -x /usr/bin/rust-lld ] &&
    [ -f /usr/lib/rustlib/src/rust/library/Cargo.lock ]
}

if [ "$WASM_TOOLCHAIN" = auto ]; then
  if rustup_has_wasm32; then
    WASM_TOOLCHAIN=rustup
  elif debian_recipe_ok; then
    WASM_TOOLCHAIN=debian
  else
    die "no wasm toolchain: neither a rustup $TARGET target nor Debian rustc-web + rust-web-src + rust-web-llvm (run scripts/install-wasm-toolchain.sh)"
  fi
fi

# The caller's native RUSTFLAGS must not leak into the wasm build.
unset RUSTFLAGS CARGO_ENCODED_RUSTFLAGS CARGO_BUILD_RUSTFLAGS CARGO_TARGET_DIR
RUSTFLAGS_LIST=()

BUILD_ARGS=(build --lib --profile "$WASM_PROFILE" --target "$TARGET" -j "$WASM_JOBS"
  --manifest-path "$CRATE_DIR/Cargo.toml" --message-format=json-render-diagnostics)
case "$WASM_TOOLCHAIN" in
  rustup)
    rustup_has_wasm32 || die "WASM_TOOLCHAIN=rustup but rustup has no $TARGET target"
    CARGO=(cargo)
    ;;
  debian)
    debian_recipe_ok || die "WASM_TOOLCHAIN=debian but rustc-web/rust-web-src/rust-web-llvm are missing (run scripts/install-wasm-toolchain.sh)"
    # Pin every tool to Debian's 1.96 (see header), enable -Z flags on a stable rustc.
    CARGO=(env RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1
      CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER=/usr/bin/rust-lld /usr/bin/cargo)
    # std's own dependencies (dlmalloc, hashbrown, ...) come from crates.io.
    BUILD_ARGS+=("-Zbuild-std=std,panic_abort")
    case "$WASM_SIZE_FLAGS" in
      1)
        # `optimize_for_size` replaces the default std features (panic-unwind, which
        # panic=abort does not use). -Cpanic=immediate-abort must come after the
        # profile's -Cpanic=abort: cargo puts RUSTFLAGS last, with --target given.
        BUILD_ARGS+=("-Zbuild-std-features=optimize_for_size")
        RUSTFLAGS_LIST+=(-Zunstable-options -Cpanic=immediate-abort -Zlocation-detail=none)
        ;;
      0) ;;
      *) die "WASM_SIZE_FLAGS must be 0 or 1 (got '$WASM_SIZE_FLAGS')" ;;
    esac
    ;;
  *) die "WASM_TOOLCHAIN must be auto, rustup or debian (got '$WASM_TOOLCHAIN')" ;;
esac
if [ -n "${WASM_CARGO_ARGS:-}" ]; then
  # shellcheck disable=SC2206  # word splitting is intended
  BUILD_ARGS+=($WASM_CARGO_ARGS)
fi
if [ -n "${WASM_RUSTFLAGS:-}" ]; then
  # shellcheck disable=SC2206  # word splitting is intended
  RUSTFLAGS_LIST+=($WASM_RUSTFLAGS)
fi
if [ "${#RUSTFLAGS_LIST[@]}" -gt 0 ]; then
  export RUSTFLAGS="${RUSTFLAGS_LIST[*]}"
fi

WS_MANIFEST="$("${CARGO[@]}" locate-project --workspace --message-format plain \
  --manifest-path "$CRATE_DIR/Cargo.toml")"
WS_ROOT="$(dirname "$WS_MANIFEST")"
export CARGO_TARGET_DIR="${WASM_TARGET_DIR:-$WS_ROOT/target/wasm}"

log "toolchain: $WASM_TOOLCHAIN ($("${CARGO[@]}" --version); rustc: $(
  if [ "$WASM_TOOLCHAIN" = debian ]; then /usr/bin/rustc --version; else (cd "$CRATE_DIR" && rustc --version); fi))"
log "target dir: $CARGO_TARGET_DIR"

# ---------------------------------------------------------------------------
# 2. cargo build; the cdylib's .wasm path is read from cargo's JSON messages
# ---------------------------------------------------------------------------
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
start=$SECONDS
(cd "$CRATE_DIR" && "${CARGO[@]}" "${BUILD_ARGS[@]}") >"$TMP/cargo.json" ||
  die "cargo build failed"
log "cargo build took $((SECONDS - start))s"

grep '"reason":"compiler-artifact"' "$TMP/cargo.json" |
  grep -o '"[^"]*\.wasm"' | tr -d '"' | sort -u >"$TMP/wasm-files" || true
case "$(wc -l <"$TMP/wasm-files" | tr -d ' ')" in
  1) WASM_IN="$(cat "$TMP/wasm-files")" ;;
  0) die "cargo produced no .wasm; does $CRATE_DIR/Cargo.toml have crate-type = [\"cdylib\"]?" ;;
  *) die "several .wasm artifacts, expected one: $(tr '\n' ' ' <"$TMP/wasm-files")" ;;
esac
log "built $WASM_IN"

# ---------------------------------------------------------------------------
# 3. wasm-bindgen (exactly the version the crate locked)
# ---------------------------------------------------------------------------
WB="${WASM_BINDGEN:-}"
if [ -z "$WB" ]; then
  for cand in "$REPO_ROOT/target/tools/bin/wasm-bindgen" "$WS_ROOT/target/tools/bin/wasm-bindgen"; do
    if [ -x "$cand" ]; then WB="$cand"; break; fi
  done
fi
if [ -z "$WB" ]; then
  WB="$(command -v wasm-bindgen || true)"
fi
{ [ -n "$WB" ] && [ -x "$WB" ]; } ||
  die "wasm-bindgen not found (run scripts/install-wasm-toolchain.sh or set WASM_BINDGEN)"

CLI_VERSION="$("$WB" --version | awk '{print $2}')"
LOCK_VERSION=""
if [ -f "$WS_ROOT/Cargo.lock" ]; then
  LOCK_VERSION="$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/"/, "", $3); print $3; exit}' \
    "$WS_ROOT/Cargo.lock")"
fi
if [ -n "$LOCK_VERSION" ] && [ "$LOCK_VERSION" != "$CLI_VERSION" ]; then
  die "wasm-bindgen crate is $LOCK_VERSION (Cargo.lock) but $WB is $CLI_VERSION; pin both to the same version (WASM_BINDGEN_VERSION=$LOCK_VERSION scripts/install-wasm-toolchain.sh)"
fi
log "wasm-bindgen $CLI_VERSION ($WB)"

WB_FLAGS=()
if [ "$WASM_KEEP_NAMES" != 1 ]; then
  WB_FLAGS+=(--remove-name-section)
fi
for t in web bundler nodejs; do
  case "$t" in nodejs) dir=node ;; *) dir="$t" ;; esac
  rm -rf "${OUT_DIR:?}/$dir"
  "$WB" --target "$t" --out-dir "$OUT_DIR/$dir" ${WB_FLAGS[@]+"${WB_FLAGS[@]}"} "$WASM_IN" ||
    die "wasm-bindgen --target $t failed"
  # Tell Node how to read the .js files regardless of any package.json above out-dir
  # (the nodejs output is CommonJS and breaks under a parent "type": "module").
  case "$t" in
    nodejs) printf '{ "type": "commonjs" }\n' >"$OUT_DIR/$dir/package.json" ;;
    *) printf '{ "type": "module" }\n' >"$OUT_DIR/$dir/package.json" ;;
  esac
done

# ---------------------------------------------------------------------------
# 4. wasm-opt -Oz (binaryen >= 110). Feature flags come from the module's
#    target_features section (bulk-memory, reference-types, ... as rustc emits them).
#    binaryen <= 109 (Debian bookworm ships 108) corrupts wasm-bindgen output even
#    with no passes: the `__wbindgen_externrefs` export is rewritten to the funcref
#    table and init fails with "WebAssembly.Table.set(): Argument 1 is invalid".
#    Such a wasm-opt is refused. Search order: $WASM_OPT_BIN, the npm binaryen that
#    install-wasm-toolchain.sh puts in target/tools/binaryen, then PATH.
# ---------------------------------------------------------------------------
MIN_BINARYEN=110
find_wasm_opt() {
  local c v
  for c in "${WASM_OPT_BIN:-}" \
    "$REPO_ROOT/target/tools/binaryen/node_modules/.bin/wasm-opt" \
    "$WS_ROOT/target/tools/binaryen/node_modules/.bin/wasm-opt" \
    "$(command -v wasm-opt || true)"; do
    if [ -z "$c" ] || [ ! -x "$c" ]; then continue; fi
    v="$("$c" --version 2>/dev/null | awk '{print $3}')"
    if [ -n "$v" ] && [ "$v" -ge "$MIN_BINARYEN" ] 2>/dev/null; then
      echo "$c"; return 0
    fi
    log "ignoring $c (binaryen version '${v:-?}' < $MIN_BINARYEN breaks wasm-bindgen's externref table)"
  done
  return 1
}
OPT=""
case "$WASM_OPT" in
  0) log "wasm-opt skipped (WASM_OPT=0)" ;;
  1) OPT="$(find_wasm_opt)" || die "WASM_OPT=1 but no wasm-opt >= $MIN_BINARYEN found (run scripts/install-wasm-toolchain.sh)" ;;
  auto) OPT="$(find_wasm_opt)" ||
      log "no usable wasm-opt: outputs are not size-optimised (run scripts/install-wasm-toolchain.sh)" ;;
  *) die "WASM_OPT must be auto, 0 or 1 (got '$WASM_OPT')" ;;
esac
if [ -n "$OPT" ]; then
  OPT_FLAGS=(-Oz)
  if [ "$WASM_KEEP_NAMES" = 1 ]; then OPT_FLAGS+=(-g); fi
  start=$SECONDS
  prev_sum="" prev_out=""
  for f in "$OUT_DIR"/web/*_bg.wasm "$OUT_DIR"/bundler/*_bg.wasm "$OUT_DIR"/node/*_bg.wasm; do
    sum="$(cksum <"$f")"
    if [ "$sum" = "$prev_sum" ]; then
      cp "$prev_out" "$f"          # the three targets usually share one identical .wasm
      continue
    fi
    "$OPT" "${OPT_FLAGS[@]}" "$f" -o "$f.opt" || die "wasm-opt failed on $f"
    mv "$f.opt" "$f"
    prev_sum="$sum" prev_out="$f"
  done
  log "wasm-opt ${OPT_FLAGS[*]} took $((SECONDS - start))s ($("$OPT" --version), $OPT)"
fi

# ---------------------------------------------------------------------------
# 5. Report sizes
# ---------------------------------------------------------------------------
size_line() {
  printf '  %-8s raw %8d B  gzip -9 %8d B  %s\n' "$1" "$(wc -c <"$2")" "$(gzip -9c "$2" | wc -c)" "$2"
}
# What this build was, for tests/wasm/size.test.mjs: the size budgets hold for the
# shipped build only (debian toolchain with the size flags, wasm-opt, no extra
# features or rustflags, names stripped, the profile's opt-level).
size_flags=0
if [ "$WASM_TOOLCHAIN" = debian ] && [ "$WASM_SIZE_FLAGS" = 1 ]; then size_flags=1; fi
json_str() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }
cat >"$OUT_DIR/.wasm-build.json" <<JSON
{
  "toolchain": $(json_str "$WASM_TOOLCHAIN"),
  "profile": $(json_str "$WASM_PROFILE"),
  "opt_level": $(json_str "${CARGO_PROFILE_WASM_RELEASE_OPT_LEVEL:-}"),
  "size_flags": $size_flags,
  "wasm_opt": $(json_str "${OPT:+$("$OPT" --version)}"),
  "keep_names": $WASM_KEEP_NAMES,
  "cargo_args": $(json_str "${WASM_CARGO_ARGS:-}"),
  "rustflags": $(json_str "${WASM_RUSTFLAGS:-}")
}
JSON
echo "build-wasm: done ($WASM_TOOLCHAIN toolchain)"
size_line cargo "$WASM_IN"
for dir in web bundler node; do
  for f in "$OUT_DIR/$dir"/*_bg.wasm; do size_line "$dir" "$f"; done
done
