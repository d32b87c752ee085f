#!/usr/bin/env bash
# ensure-debian.sh PKG... — install the Debian packages a test suite needs,
# idempotently: packages already installed are skipped; apt-get update runs
# only when a package has no install candidate. Needs root (or sudo -n).
# Used by the Makefile for the tools tests call (promtool from `prometheus`)
# and by scripts/test-servers.sh for the database servers.
set -euo pipefail

SUDO=()
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo -n)
fi

installed() {
  [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" = "install ok installed" ]
}

has_candidate() {
  local c
  c="$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')"
  [ -n "$c" ] && [ "$c" != "(none)" ]
}

missing=()
for p in "$@"; do
  installed "$p" || missing+=("$p")
done
[ "${#missing[@]}" -eq 0 ] && exit 0
command -v apt-get >/dev/null 2>&1 || {
  echo "ensure-debian: apt-get not found; install ${missing[*]} by hand" >&2
  exit 1
}
if [ "$(id -u)" -ne 0 ] && [ "${#SUDO[@]}" -eq 0 ]; then
  echo "ensure-debian: need root or sudo to install ${missing[*]}" >&2
  exit 1
fi
for p in "${missing[@]}"; do
  if ! has_candidate "$p"; then
    ${SUDO[@]+"${SUDO[@]}"} apt-get update -q >/dev/null
    break
  fi
done
echo "ensure-debian: installing ${missing[*]}" >&2
# A service the package may start is never used: the suites start their own
# servers on loopback ports they pick.
${SUDO[@]+"${SUDO[@]}"} env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
