"""The fault servers of tests/http/faults.py for the JS matrix (matrix.test.mjs): one
``FaultServer`` process, driven by JSON lines on stdin, answered on stdout.

    {"faults": ["503", ...]}  ->  {"ports": [p1, ...], "faults": [...all of FAULTS...], "timeout": s, "patient": s}
    {"collect": true}         ->  {"seen": {"<port>": [calls, ["<request head and body>", ...]]}}
    {"close": true}           ->  (exits)
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from faults import FAULTS, PATIENT, TIMEOUT, FaultServer, drop_connect_verified  # noqa: E402


def main() -> None:
    server = FaultServer()
    cases = []
    try:
        for line in sys.stdin:
            msg = json.loads(line)
            if "faults" in msg:
                new = [server.case(f) for f in msg["faults"]]
                cases.extend(new)
                drop = [c.port for c in new if c.fault == "drop_connect"]
                answer = {
                    "ports": [c.port for c in new], "faults": list(FAULTS), "timeout": TIMEOUT, "patient": PATIENT,
                    "drop_connect_verified": all(drop_connect_verified(p) for p in drop[:1]),
                }
            elif "collect" in msg:
                server.collect()
                answer = {"seen": {str(c.port): [c.calls, [r.decode("latin-1") for r in c.requests]] for c in cases}}
            else:
                break
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
    finally:
        server.close()


if __name__ == "__main__":
    main()
