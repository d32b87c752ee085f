#!/usr/bin/env bash
# install-wasm-toolchain.sh — install what retrycore's WebAssembly build and its
# JS-runtime tests need. Idempotent: every step checks first and skips what is
# already present, then prints a summary of what it did.
#
# What it installs
#   1. Debian packages (only where apt-get exists):
#        rustc-web cargo-web rust-web-src rust-web-llvm lld-22   (Rust 1.96 + std source,
#            used by scripts/build-wasm.sh with -Zbuild-std when rustup has no
#            wasm32-unknown-unknown target; /usr/bin/rust-lld is the wasm linker)
#        chromium                                                 (headless browser tests;
#            tests drive /usr/bin/chromium with npm playwright-core, never a downloaded browser)
#      The Rust packages are skipped when rustup already has the wasm32-unknown-unknown
#      target (e.g. a developer laptop), unless WASM_FORCE_DEBIAN_RUST=1.
#   2. wasm-bindgen-cli, pinned to exactly $WASM_BINDGEN_VERSION (must equal the
#      `wasm-bindgen = "=X"` pin in bindings-wasm/Cargo.toml), into a project-local
#      cargo root ($WASM_TOOLS_ROOT, default <repo>/target/tools) so it does not
#      depend on ~/.cargo state. Built from crates.io WITHOUT --locked: its lockfile
#      names webpki-roots 1.0.11, which the registry here does not serve.
#      Takes ~2 min on 2 cores.
#   3. binaryen's wasm-opt from npm (binaryen@$BINARYEN_VERSION, a Node.js build) into
#      $WASM_TOOLS_ROOT/binaryen. NOT Debian's `binaryen` package: bookworm ships
#      version 108, and binaryen <= 109 rewrites wasm-bindgen's `__wbindgen_externrefs`
#      table export to point at the funcref table (even with no passes), so the module
#      fails at init with "WebAssembly.Table.set(): Argument 1 is invalid for table".
#      Skipped (with a note) when npm is not available; build-wasm.sh then skips wasm-opt.
#
# Environment knobs
#   WASM_BINDGEN_VERSION   wasm-bindgen-cli version (default below; the single place it is set)
#   BINARYEN_VERSION       npm binaryen version providing wasm-opt (default below)
#   WASM_TOOLS_ROOT        cargo install --root for wasm-bindgen-cli, and npm prefix parent
#                          for binaryen (default <repo>/target/tools)
#   WASM_INSTALL_CHROMIUM  1 (default) / 0 — install Debian chromium
#   WASM_FORCE_DEBIAN_RUST 1 — install rustc-web & co even when rustup has the wasm32 target
#   WASM_JOBS              cargo -j for building wasm-bindgen-cli (default 2)
#   APT_UPDATE             auto (default: update only if something must be installed and the
#                          package lists are missing/older than 24h or lack a candidate) | always | never
set -euo pipefail

WASM_BINDGEN_VERSION="${WASM_BINDGEN_VERSION:-0.2.130}"
BINARYEN_VERSION="${BINARYEN_VERSION:-132.0.0}"

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
WASM_TOOLS_ROOT="${WASM_TOOLS_ROOT:-$REPO_ROOT/target/tools}"
WASM_INSTALL_CHROMIUM="${WASM_INSTALL_CHROMIUM:-1}"
WASM_FORCE_DEBIAN_RUST="${WASM_FORCE_DEBIAN_RUST:-0}"
WASM_JOBS="${WASM_JOBS:-2}"
APT_UPDATE="${APT_UPDATE:-auto}"

DID=()      # summary lines: what this run did or skipped
log() { printf '[install-wasm] %s\n' "$*" >&2; }
did() { DID+=("$*"); log "$*"; }
die() { printf '[install-wasm] ERROR: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------------------
# Privileges for apt: root as is, else sudo (non-interactive) when available.
# ---------------------------------------------------------------------------
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo -n)
  fi
fi

# Is the rustup wasm32 target installed (for the toolchain active in the repo)?
rustup_has_wasm32() {
  command -v rustup >/dev/null 2>&1 &&
    (cd "$REPO_ROOT" && rustup target list --installed 2>/dev/null) |
      grep -qx 'wasm32-unknown-unknown'
}

# dpkg says the package is fully installed?
deb_installed() {
  [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" = "install ok installed" ]
}

# True when the apt lists are missing or older than 24 hours. Stale lists are a real
# pitfall here: with old lists the candidate for rustc-web was 1.85, not 1.96.
apt_lists_stale() {
  local fresh
  fresh="$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null | head -n1)"
  [ -z "$fresh" ]
}

apt_has_candidate() {
  local cand
  cand="$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')"
  [ -n "$cand" ] && [ "$cand" != "(none)" ]
}

# ---------------------------------------------------------------------------
# 1. Debian packages
# ---------------------------------------------------------------------------
WANT=()
if [ "$WASM_FORCE_DEBIAN_RUST" = 1 ] || ! rustup_has_wasm32; then
  WANT+=(rustc-web cargo-web rust-web-src rust-web-llvm lld-22)
else
  did "skip Debian rustc-web: rustup already has the wasm32-unknown-unknown target"
fi
if [ "$WASM_INSTALL_CHROMIUM" = 1 ]; then
  WANT+=(chromium)
fi

if [ "${#WANT[@]}" -eq 0 ]; then
  did "skip apt: nothing wanted"
elif ! command -v apt-get >/dev/null 2>&1; then
  did "skip apt: apt-get not found (install ${WANT[*]} equivalents by hand)"
else
  MISSING=()
  for p in "${WANT[@]}"; do
    if deb_installed "$p"; then
      did "skip $p: already installed ($(dpkg-query -W -f='${Version}' "$p"))"
    else
      MISSING+=("$p")
    fi
  done

  if [ "${#MISSING[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ] && [ "${#SUDO[@]}" -eq 0 ]; then
      die "need root or sudo to install: ${MISSING[*]}"
    fi
    need_update=0
    case "$APT_UPDATE" in
      always) need_update=1 ;;
      never) need_update=0 ;;
      auto)
        if apt_lists_stale; then
          need_update=1
        else
          for p in "${MISSING[@]}"; do
            apt_has_candidate "$p" || need_update=1
          done
        fi
        ;;
      *) die "APT_UPDATE must be auto, always or never (got '$APT_UPDATE')" ;;
    esac
    if [ "$need_update" = 1 ]; then
      log "apt-get update"
      ${SUDO[@]+"${SUDO[@]}"} apt-get update -q >/dev/null
      did "ran apt-get update"
    fi
    for p in "${MISSING[@]}"; do
      apt_has_candidate "$p" || die "no apt candidate for $p (not Debian bookworm with security updates?)"
    done
    log "apt-get install ${MISSING[*]}"
    start=$SECONDS
    ${SUDO[@]+"${SUDO[@]}"} env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -q --no-install-recommends "${MISSING[@]}" >/dev/null
    did "installed ${MISSING[*]} in $((SECONDS - start))s"
  fi

  if deb_installed rustc-web; then
    did "rustc-web: $(/usr/bin/rustc --version); std source: $(
      [ -f /usr/lib/rustlib/src/rust/library/Cargo.lock ] && echo present || echo MISSING)"
  fi
  if [ -x /usr/bin/chromium ]; then
    did "chromium: $(/usr/bin/chromium --version 2>/dev/null | head -n1)"
  fi
fi

# ---------------------------------------------------------------------------
# 2. wasm-bindgen-cli, exact version, project-local root
# ---------------------------------------------------------------------------
WB="$WASM_TOOLS_ROOT/bin/wasm-bindgen"
if [ -x "$WB" ] && [ "$("$WB" --version 2>/dev/null)" = "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
  did "skip wasm-bindgen-cli: $WB is already $WASM_BINDGEN_VERSION"
else
  # Any cargo builds the host tool: rustup's if present, else Debian's (then its own rustc).
  if command -v cargo >/dev/null 2>&1; then
    CARGO=(cargo)
  elif [ -x /usr/bin/cargo ]; then
    CARGO=(env RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc /usr/bin/cargo)
  else
    die "no cargo found to build wasm-bindgen-cli"
  fi
  log "cargo install wasm-bindgen-cli =$WASM_BINDGEN_VERSION --root $WASM_TOOLS_ROOT (takes ~2 min on 2 cores)"
  start=$SECONDS
  # No --locked (see header). --force replaces a different installed version in this root.
  "${CARGO[@]}" install wasm-bindgen-cli --version "=$WASM_BINDGEN_VERSION" \
    --root "$WASM_TOOLS_ROOT" --force -j "$WASM_JOBS"
  [ "$("$WB" --version)" = "wasm-bindgen $WASM_BINDGEN_VERSION" ] ||
    die "installed $WB does not report $WASM_BINDGEN_VERSION"
  did "installed wasm-bindgen-cli $WASM_BINDGEN_VERSION into $WASM_TOOLS_ROOT in $((SECONDS - start))s"
fi

# ---------------------------------------------------------------------------
# 3. wasm-opt from npm binaryen (see header for why not Debian's binaryen)
# ---------------------------------------------------------------------------
BINARYEN_DIR="$WASM_TOOLS_ROOT/binaryen"
WASM_OPT_BIN="$BINARYEN_DIR/node_modules/.bin/wasm-opt"
want_opt="wasm-opt version ${BINARYEN_VERSION%%.*}"
if [ -x "$WASM_OPT_BIN" ] && "$WASM_OPT_BIN" --version 2>/dev/null | grep -Eq "^$want_opt( |$)"; then
  did "skip binaryen: $WASM_OPT_BIN is already ${BINARYEN_VERSION%%.*}"
elif ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  did "skip binaryen: node/npm not found (build-wasm.sh will not run wasm-opt)"
else
  mkdir -p "$BINARYEN_DIR"
  [ -f "$BINARYEN_DIR/package.json" ] ||
    printf '{ "private": true, "description": "retrycore build tool: wasm-opt" }\n' >"$BINARYEN_DIR/package.json"
  start=$SECONDS
  (cd "$BINARYEN_DIR" && npm install --no-fund --no-audit --save-exact --loglevel=error \
    "binaryen@$BINARYEN_VERSION" >/dev/null)
  "$WASM_OPT_BIN" --version | grep -Eq "^$want_opt( |$)" ||
    die "$WASM_OPT_BIN does not report binaryen ${BINARYEN_VERSION%%.*}"
  did "installed npm binaryen@$BINARYEN_VERSION ($WASM_OPT_BIN) in $((SECONDS - start))s"
fi

# ---------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------
echo "install-wasm-toolchain: done"
for line in ${DID[@]+"${DID[@]}"}; do
  echo "  - $line"
done
