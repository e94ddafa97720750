"""bandit, a security linter, finds nothing in app/ and runtime/ (issue #27, "Done when").

It runs with the project's own configuration ([tool.bandit] in pyproject.toml), where each rule it
skips is named with the reason; a single safe line carries `# nosec BXXX` and its reason. A new
finding fails this test, with bandit's words for each.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bandit_finds_nothing_in_app_and_runtime():
    run = subprocess.run(
        [sys.executable, "-m", "bandit", "-c", "pyproject.toml", "-r", "app", "runtime", "-f", "json", "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert run.stdout.strip(), f"bandit did not run: {run.stderr[-2000:]}"
    report = json.loads(run.stdout)
    findings = [f"{r['filename']}:{r['line_number']}: {r['test_id']} {r['issue_text']}" for r in report["results"]]
    assert not findings, "bandit found:\n" + "\n".join(findings)
    assert not report["errors"], f"bandit could not read: {report['errors']}"
    assert run.returncode == 0, run.stderr[-2000:]
