"""Fixtures shared by the store and middleware suites."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def servers() -> Iterator[Dict[str, str]]:
    """PostgreSQL, MariaDB and Redis, started once for the session (scripts/test-servers.sh)
    unless RETRYCORE_TEST_POSTGRES / _MARIADB / _REDIS name running ones."""
    names = {"postgresql": "RETRYCORE_TEST_POSTGRES", "mariadb": "RETRYCORE_TEST_MARIADB",
             "redis": "RETRYCORE_TEST_REDIS"}
    if all(os.environ.get(v) for v in names.values()):
        yield {k: os.environ[v] for k, v in names.items()}
        return
    tmp = tempfile.mkdtemp(prefix="retrycore-servers.")
    script = str(ROOT / "scripts" / "test-servers.sh")
    subprocess.run([script, "start", tmp], check=True)
    try:
        env: Dict[str, str] = {}
        for line in Path(tmp, "env").read_text().splitlines():
            name, _, value = line.removeprefix("export ").partition("=")
            env[name] = value
        yield {k: env[v] for k, v in names.items()}
    finally:
        subprocess.run([script, "stop", tmp], check=False)
        subprocess.run(["rm", "-rf", tmp], check=False)
