#!/usr/bin/env bash
# check-wasm-core.sh — build the core crate (no default features: no OS
# entropy) for wasm32-unknown-unknown, proving it stays pure and portable;
# and retrycore-js (bindings-js), the JS bindings' shared half, which must
# stay free of napi and wasm-bindgen.
#
# Uses a rustup wasm32 target when one is installed, else Debian's rustc-web
# with -Zbuild-std (see scripts/build-wasm.sh for the why of each setting).
set -euo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET=wasm32-unknown-unknown
unset RUSTFLAGS CARGO_ENCODED_RUSTFLAGS CARGO_BUILD_RUSTFLAGS
export CARGO_TARGET_DIR="$REPO_ROOT/target/wasm"
ARGS=(build -q --lib -p retrycore -p retrycore-js --no-default-features --target "$TARGET" -j "${WASM_JOBS:-2}"
  --manifest-path "$REPO_ROOT/Cargo.toml")
if command -v rustup >/dev/null 2>&1 && rustup target list --installed 2>/dev/null | grep -qx "$TARGET"; then
  echo "[check-wasm-core] rustup $TARGET target"
  cargo "${ARGS[@]}"
else
  echo "[check-wasm-core] Debian rustc-web with -Zbuild-std"
  env RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1 \
    CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER=/usr/bin/rust-lld \
    /usr/bin/cargo "${ARGS[@]}" -Zbuild-std=std,panic_abort
fi
echo "[check-wasm-core] retrycore and retrycore-js build for $TARGET"
