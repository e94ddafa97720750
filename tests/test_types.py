"""mypy finds no error in app/ and runtime/ (issue #29, "Done when").

It runs with the project's own configuration ([tool.mypy] in pyproject.toml): the default level
everywhere, strict on the wire (runtime.protocol, app.runtime_link), the scheduler and the chat logic.
A new error fails this test, with mypy's words for each; a line that must stay as it is carries
`# type: ignore[code]` and its reason.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Where the issue asks for --strict: a wrong result type on the wire or in the conversation must not run.
STRICT_PACKAGES = ["runtime.protocol", "runtime.scheduler", "app.runtime_link", "app.chat"]
# What `mypy --strict` turns on that can be set per module (mypy --help lists them; warn_redundant_casts is global).
STRICT_FLAGS = {
    "disallow_any_generics": True, "disallow_subclassing_any": True, "disallow_untyped_calls": True,
    "disallow_untyped_defs": True, "disallow_incomplete_defs": True, "check_untyped_defs": True,
    "disallow_untyped_decorators": True, "warn_unused_ignores": True, "warn_return_any": True,
    "implicit_reexport": False, "strict_equality": True, "extra_checks": True,
}


def test_mypy_finds_no_error_in_app_and_runtime():
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--no-pretty", "--show-error-codes"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    errors = [line for line in run.stdout.splitlines() if ": error: " in line]
    assert not errors, f"mypy found {len(errors)} errors:\n" + "\n".join(errors)
    # 2 is mypy's own failure (a bad configuration, a crash, a file it could not read), which names no line.
    assert run.returncode == 0, f"mypy did not run: {run.stdout[-2000:]}{run.stderr[-2000:]}"


def test_mypy_is_strict_only_where_the_issue_asks():
    """`strict = true` in an override would make every module strict: mypy takes it as the run's setting.

    So the strict packages spell out --strict's per-module flags, and nothing else gets them.
    """
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert set(config["files"]) == {"app", "runtime"}
    assert "strict" not in config, "the default level everywhere; strict only in the overrides below"
    assert config.get("warn_redundant_casts"), "--strict's one global flag"
    strict_modules: set[str] = set()
    for override in config.get("overrides", []):
        modules = [override["module"]] if isinstance(override["module"], str) else override["module"]
        assert "strict" not in override, f"{modules}: mypy applies an override's `strict` to the whole run"
        if all(override.get(flag) == value for flag, value in STRICT_FLAGS.items()):
            strict_modules.update(modules)
    for package in STRICT_PACKAGES:
        assert {package, f"{package}.*"} <= strict_modules, f"{package} and its submodules need --strict's flags"
    assert strict_modules <= {name for package in STRICT_PACKAGES for name in (package, f"{package}.*")}
