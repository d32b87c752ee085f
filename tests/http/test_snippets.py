"""The integration snippets of README.md and docs/python.md are tested files: each
```python block that imports ``retrycore.integrations`` is, verbatim, the block of
quickstart_integrations.py marked with its document, which runs against a local server.
The table of docs/python.md ("What each fault gets") is the matrix's oracle.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_matrix import CATEGORY, RULE

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = Path(__file__).with_name("quickstart_integrations.py")


def _blocks(doc: str) -> list:
    text = (ROOT / doc).read_text()
    return [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "retrycore.integrations" in b]


def _marked(doc: str) -> str:
    text = QUICKSTART.read_text()
    return text.split(f"# --- {doc}\n", 1)[1].split("# --- end\n", 1)[0]


@pytest.mark.parametrize("doc", ["README.md", "docs/python.md"])
def test_the_snippet_is_the_tested_file(doc: str) -> None:
    assert _blocks(doc) == [_marked(doc)]


def test_the_snippets_run() -> None:
    out = subprocess.run([sys.executable, str(QUICKSTART)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "every snippet ran" in out.stdout


def test_the_docs_table_is_the_matrix_oracle() -> None:
    text = (ROOT / "docs/python.md").read_text()
    table = text.split("### What each fault gets\n", 1)[1].split("\n\n", 2)[1]
    rows = {}
    for line in table.splitlines()[2:]:
        fault, category, get, post, _ = [c.strip() for c in line.strip("|").split("|")]
        rows[fault.strip("`")] = (category, get, post)
    expected = {}
    for fault, categories in CATEGORY.items():
        category = " or ".join(f"`{c}`" for c in sorted(categories))
        rules = {RULE.get(c, "never") for c in categories}
        get = "retried" if rules <= {"always", "if_idempotent"} else "once"
        post = "retried" if rules == {"always"} else ("once" if "always" not in rules else "per category")
        expected[fault] = (category, get, post)
    assert rows == expected
