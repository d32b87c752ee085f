#!/usr/bin/env bash
# Regenerates every generated vector file into a temporary directory and
# fails when a checked-in file differs from what its generator writes.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python3 "$ROOT/tests/vectors/gen/backoff_reference.py" --check
python3 "$ROOT/tests/vectors/gen/profiles.py" --check
python3 "$ROOT/tests/vectors/gen/execute.py" --check
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
VECTORS_OUT="$T" python3 "$ROOT/tests/vectors/gen/idempotency/make_vectors.py" >/dev/null
VECTORS_OUT="$T" python3 "$ROOT/tests/vectors/gen/idempotency/make_vectors2.py" >/dev/null
for f in "$T"/*.json; do
  if ! cmp -s "$f" "$ROOT/tests/vectors/idempotency/$(basename "$f")"; then
    echo "tests/vectors/idempotency/$(basename "$f") drifted from tests/vectors/gen/idempotency/; regenerate it" >&2
    exit 1
  fi
done
echo "idempotency vectors match their generators"
