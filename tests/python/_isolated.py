"""Runs a snippet of Python in a child process, so that a crash (SIGABRT from an exhausted
allocator, a segfault) or a hang fails one test instead of killing or stalling pytest.

The child has an address-space limit (an unbounded allocation fails fast there, not on the
machine), `faulthandler.dump_traceback_later(timeout, exit=True)` (a hang prints every
thread's stack and exits), and the parent's own timeout on top.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
from typing import Any

MEMORY_LIMIT = 3 << 30  # bytes of address space for the child

PRELUDE = """
import faulthandler, json, sys
faulthandler.dump_traceback_later({timeout}, exit=True)
def report(value):
    sys.stdout.write("\\n@@REPORT@@" + json.dumps(value) + "\\n")
    sys.stdout.flush()
"""


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run(code: str, timeout: float = 30.0) -> Any:
    """Runs `code` (which calls `report(value)` once) and returns the value it reported;
    fails with the child's output when it crashed, hung or reported nothing."""
    src = PRELUDE.format(timeout=timeout) + textwrap.dedent(code)
    env = dict(os.environ, PYTHONFAULTHANDLER="1")
    p = subprocess.run(
        [sys.executable, "-c", src],
        capture_output=True,
        text=True,
        timeout=timeout + 10,
        preexec_fn=_limit,
        env=env,
    )
    out = p.stdout.rsplit("@@REPORT@@", 1)
    if p.returncode != 0 or len(out) != 2:
        raise AssertionError(f"child exited with {p.returncode}\nstdout:\n{p.stdout[-4000:]}\nstderr:\n{p.stderr[-8000:]}")
    return json.loads(out[1])
