#!/usr/bin/env python3
"""An independent reference model of retrycore's generator and backoff
arithmetic (docs/backoff.md), written from the docs, not from the Rust code.

It writes the generated vector files under tests/vectors/backoff/ and
tests/vectors/rng/. `--check` regenerates into memory and fails when a
checked-in file differs (the drift test `make test` runs).

Python floats are IEEE-754 doubles and `round()` rounds half to even, so the
same operations in the same order give the same bits as the Rust core.
"""
import json
import sys
from pathlib import Path

MASK = (1 << 64) - 1
U64_MAX = MASK
ROOT = Path(__file__).resolve().parents[1]


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK


class Xoshiro256pp:
    def __init__(self, seed):
        st = seed & MASK
        s = []
        for _ in range(4):
            st, v = splitmix64(st)
            s.append(v)
        self.s = s

    def next_u64(self):
        s = self.s
        result = (rotl((s[0] + s[3]) & MASK, 23) + s[0]) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def next_f64(self):
        return (self.next_u64() >> 11) * (1.0 / (1 << 53))


UNITS = {"ns": 1, "us": 1000, "ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}


def ns(text):
    """Exact `<decimal><unit>` → ns for the simple values the generator uses."""
    for u in ("ns", "us", "ms", "s", "m", "h"):
        pass
    num = text.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = text[len(num):]
    if "." in num:
        i, f = num.split(".")
        v = int(i) * UNITS[unit] + int(f) * UNITS[unit] // 10 ** len(f)
        assert (int(f) * UNITS[unit]) % 10 ** len(f) == 0, text
        return v
    return int(num) * UNITS[unit]


def exponential(initial, multiplier, k, mx):
    if initial == 0.0:
        return 0.0
    if k == 0 or multiplier == 1.0:
        return min(initial, mx)
    ratio = mx / initial
    if multiplier > ratio:
        return mx
    result, base = 1.0, multiplier
    while True:
        if k & 1:
            result *= base
            if result > ratio:
                return mx
        k >>= 1
        if k == 0:
            break
        base *= base
        if base > ratio:
            return mx
    return min(initial * result, mx)


class Backoff:
    def __init__(self, doc):
        self.kind = doc.get("backoff", "exponential")
        self.initial = ns(doc.get("initial", "100ms"))
        self.max = ns(doc["max_delay"]) if "max_delay" in doc else max(20 * 10**9, self.initial)
        self.multiplier = float(doc.get("multiplier", 2.0))
        self.increment = ns(doc["increment"]) if "increment" in doc else self.initial
        j = doc.get("jitter", "none" if self.kind == "decorrelated" else "full")
        if isinstance(j, (int, float)):
            j = {"kind": "proportional", "factor": float(j)}
        if isinstance(j, str):
            j = {"kind": j}
        self.jitter = j
        self.min_delay = ns(doc["min_delay"]) if "min_delay" in doc else 0

    def draws(self):
        return self.kind == "decorrelated" or self.jitter["kind"] != "none"

    def base(self, n, r, prev):
        initial, mx = float(self.initial), float(self.max)
        if self.kind == "constant":
            return min(initial, mx)
        if self.kind == "linear":
            return min(initial + float(self.increment) * float(n - 1), mx)
        if self.kind == "exponential":
            return exponential(initial, self.multiplier, n - 1, mx)
        upper = 3.0 * float(prev) - initial
        return min(max(initial + r * upper, 0.0), mx)

    def delay(self, n, r, prev=None):
        prev = self.initial if prev is None else prev
        mx = float(self.max)
        b = self.base(n, r, prev)
        k = self.jitter["kind"]
        if k == "none":
            x = b
        elif k == "full":
            x = r * b
        elif k == "equal":
            x = b / 2.0 + r * b / 2.0
        elif k == "proportional":
            x = b * (1.0 - self.jitter["factor"] * r)
        elif k == "additive":
            j = float(ns(self.jitter["amount"]))
            c = min(b, max(mx - j, 0.0))
            x = c + r * j
        elif k == "symmetric":
            f = self.jitter["factor"]
            c = min(b, mx / (1.0 + f))
            x = c * (1.0 + f * (2.0 * r - 1.0))
        else:
            raise ValueError(k)
        x = max(min(x, mx), float(self.min_delay))
        # Bounds past 2^53 are not exact as floats: clamp again in integers.
        return max(self.min_delay, min(int(round(x)), U64_MAX, self.max))

    def sequence(self, seed, count):
        g = Xoshiro256pp(seed)
        prev = self.initial
        out = []
        for n in range(1, count + 1):
            r = g.next_f64() if self.draws() else 0.0
            prev = self.delay(n, r, prev)
            out.append(prev)
        return out

    def schedule(self, attempts):
        """The listing (at most 1000 rows) and the worst case over every retry, summed one by one."""
        rows = []
        p0 = p5 = p1 = self.initial
        cl = ch = 0
        for n in range(1, attempts):
            d0, d5, d1 = self.delay(n, 0.0, p0), self.delay(n, 0.5, p5), self.delay(n, 1.0, p1)
            if self.kind == "decorrelated":
                p0, p5, p1 = d0, d5, d1
            lo, hi = min(d0, d1), max(d0, d1)
            cl = min(cl + lo, U64_MAX)
            ch = min(ch + hi, U64_MAX)
            if n <= 1000:
                rows.append({"retry": n, "attempt": n + 1, "low": lo, "mid": d5, "high": hi, "cumulative_high": ch})
        return rows, ch


def num(v):
    """JSON-safe integer: a number up to 2^53, a decimal string beyond."""
    return v if v <= 2**53 else str(v)


POLICIES = [
    {"backoff": "exponential", "jitter": "none"},
    {"backoff": "exponential", "jitter": "full"},
    {"backoff": "exponential", "jitter": "equal"},
    {"backoff": "exponential", "initial": "1s", "max_delay": "30s", "multiplier": 2.0, "jitter": 0.5},
    {"backoff": "exponential", "initial": "250ms", "max_delay": "10s", "multiplier": 1.5, "jitter": {"kind": "symmetric", "factor": 0.2}},
    {"backoff": "exponential", "initial": "100ms", "max_delay": "5s", "jitter": {"kind": "additive", "amount": "1s"}},
    {"backoff": "exponential", "initial": "1ns", "max_delay": "18446744073709551615ns", "multiplier": 1000000.0, "jitter": "none"},
    {"backoff": "exponential", "initial": "7ns", "max_delay": "1h", "multiplier": 3.7, "jitter": "full"},
    {"backoff": "exponential", "initial": "0s", "max_delay": "0s", "jitter": "full"},
    {"backoff": "exponential", "initial": "100ms", "max_delay": "20s", "multiplier": 1.0000001, "jitter": "none"},
    {"backoff": "constant", "initial": "1s", "jitter": "none"},
    {"backoff": "constant", "initial": "1s", "jitter": {"kind": "proportional", "factor": 1.0}},
    {"backoff": "linear", "initial": "200ms", "increment": "300ms", "max_delay": "2s", "jitter": "equal"},
    {"backoff": "linear", "initial": "1ms", "max_delay": "18446744073709551615ns", "jitter": "none"},
    {"backoff": "decorrelated", "initial": "100ms", "max_delay": "20s"},
    {"backoff": "decorrelated", "initial": "1s", "max_delay": "1m", "min_delay": "500ms"},
    {"backoff": "exponential", "initial": "50ms", "max_delay": "2s", "min_delay": "20ms", "jitter": "full"},
    # Bounds past 2^53 ns round when converted to f64; the result is clamped in integers (a proptest finding).
    {"backoff": "decorrelated", "initial": "17589502404310214ns", "max_delay": "17863415052486267ns", "min_delay": "6908329991095033ns"},
    {"backoff": "exponential", "initial": "9007199254740993ns", "max_delay": "9007199254740995ns", "jitter": {"kind": "symmetric", "factor": 0.1}},
]
RETRIES = [1, 2, 3, 4, 7, 10, 31, 64, 65, 1000, 4294967295]
RS = [0.0, 0.25, 0.5, 0.7071067811865476, 0.9999999999999999, 1.0]
SEEDS = [0, 1, 42, 1234567, 18446744073709551615, 9007199254740993]


def generate():
    files = {}
    # rng
    cases = []
    for seed in SEEDS:
        g = Xoshiro256pp(seed)
        u = [str(g.next_u64()) for _ in range(6)]
        f = [g.next_f64() for _ in range(6)]
        cases.append({"name": f"seed {seed}", "seed": str(seed), "u64": u, "f64": f})
    files["rng/xoshiro.json"] = {
        "_comment": "Generated by tests/vectors/gen/backoff_reference.py. xoshiro256++ seeded by SplitMix64 (docs/backoff.md, Determinism): the first six u64 outputs, then the next six draws (x >> 11) * 2^-53. u64 values are decimal strings.",
        "kind": "rng",
        "cases": cases,
    }
    # explicit-r grid
    cases = []
    for i, doc in enumerate(POLICIES):
        b = Backoff(doc)
        for n in RETRIES:
            for r in RS:
                prev = None
                if b.kind == "decorrelated" and n > 1:
                    prev = min(b.max, b.initial * n)
                c = {"name": f"policy {i} retry {n} r {r}", "policy": dict(doc, version=1), "retry": n, "r": r}
                if prev is not None:
                    c["prev"] = num(prev)
                c["expect"] = num(b.delay(n, r, prev))
                cases.append(c)
    files["backoff/grid.json"] = {
        "_comment": "Generated by tests/vectors/gen/backoff_reference.py from an independent model of docs/backoff.md: every backoff kind × jitter at explicit draws r (0 and 1 included), retry numbers up to u32::MAX, multipliers up to 1e6, zero delays and saturation. Delays are whole nanoseconds.",
        "kind": "backoff",
        "cases": cases,
    }
    cases = []
    for i, doc in enumerate(POLICIES):
        b = Backoff(doc)
        for seed in SEEDS[:4]:
            cases.append({"name": f"policy {i} seed {seed}", "policy": dict(doc, version=1), "seed": str(seed),
                          "expect": [num(x) for x in b.sequence(seed, 12)]})
    files["backoff/seeded.json"] = {
        "_comment": "Generated by tests/vectors/gen/backoff_reference.py. Delays of retries 1..12 from a generator seeded with `seed` (one draw per delay iff it draws; decorrelated feeds each delay into the next). Every runtime must reproduce these nanoseconds exactly.",
        "kind": "delay_sequence",
        "cases": cases,
    }
    cases = []
    for i, doc in enumerate(POLICIES):
        for attempts in (1, 3, 6):
            b = Backoff(doc)
            rows, worst = b.schedule(attempts)
            rows = [{k: num(v) for k, v in r.items()} for r in rows]
            cases.append({"name": f"policy {i} attempts {attempts}", "policy": dict(doc, version=1, max_attempts=attempts),
                          "expect": {"rows": rows, "worst_case": num(worst)}})
        # Past the 1000 listed rows the worst case still sums every retry (it once summed only the rows).
        rows, worst = Backoff(doc).schedule(3000)
        cases.append({"name": f"policy {i} attempts 3000: the worst case sums all 2999 retries, not the 1000 listed",
                      "policy": dict(doc, version=1, max_attempts=3000),
                      "expect": {"row_count": 1000, "rows": [{k: num(v) for k, v in r.items()} for r in rows[:3]],
                                 "worst_case": num(worst)}})
    files["backoff/schedule.json"] = {
        "_comment": "Generated by tests/vectors/gen/backoff_reference.py. The schedule listing (docs/backoff.md, Schedules): low / mid / high per retry (r at 0, 0.5, 1; decorrelated follows each path) and the cumulative worst case.",
        "kind": "schedule",
        "cases": cases,
    }
    return files


def emit(files, what, command):
    """Writes `files` (path under tests/vectors -> document), or with --check
    fails when a checked-in file differs from what the generator writes.
    Returns the number of cases."""
    check = "--check" in sys.argv
    stale = []
    total = 0
    for rel, doc in files.items():
        total += len(doc["cases"])
        path = ROOT / rel
        text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(rel)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    if stale:
        print(f"{what} drifted from their generator: " + ", ".join(stale), file=sys.stderr)
        print(f"run: {command}", file=sys.stderr)
        sys.exit(1)
    return total


def main():
    emit(generate(), "vectors", "python3 tests/vectors/gen/backoff_reference.py")
    if "--check" in sys.argv:
        print("generated vectors match their generator")


if __name__ == "__main__":
    main()
