"""mypy catches a misspelt method, a wrong params dataclass and a callback that expects another result.

The calls below are never run: mypy reads them, as it reads app/ and runtime/ in tests/test_types.py.
Each line marked `# error: CODE` must get that error, and the lines not marked none, so the check
proves both that the handles type the calls and that a right call passes. Params of another method's
dataclass read as `misc` ("Cannot infer value of type parameter P"): the handle and the params each
pin P, and they disagree.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CALLS = textwrap.dedent(
    """\
    from __future__ import annotations

    from app.remote.chat_link import RemoteChatLink
    from app.runtime_link import RuntimeLink
    from runtime.client import RuntimeClient
    from runtime.protocol import ChatGenerateParams, ChatGenerateResult, HubSearchParams, ModelLoadParams, ModelsListResult, methods


    def on_reply(result: ChatGenerateResult) -> None: ...


    def calls(link: RuntimeLink, remote: RemoteChatLink, client: RuntimeClient, params: ChatGenerateParams) -> None:
        link.call(methods.CHAT_GENERATE, params, on_result=on_reply)
        link.call(methods.MODELS_LIST, on_result=lambda models: print(models.models[0].path))
        remote.call(methods.CHAT_GENERATE, params, on_result=on_reply)
        listed: ModelsListResult = client.request(methods.MODELS_LIST)
        link.call(methods.CHAT_GENRATE, params)  # error: attr-defined
        link.call("chat.generate", params)  # error: arg-type
        link.call(methods.CHAT_GENERATE, ModelLoadParams("model.gguf"))  # error: misc
        link.call(methods.HUB_SEARCH, HubSearchParams("qwen"), on_result=on_reply)  # error: arg-type
        link.call(methods.MODELS_LIST, on_result=lambda models: print(models.repos))  # error: attr-defined
        remote.call(methods.HUB_SEARCH, HubSearchParams("qwen"))  # error: arg-type
        client.request(methods.MODEL_LOAD, params)  # error: misc
        wrong: ChatGenerateResult = client.request(methods.MODELS_LIST)  # error: assignment
    """
)


def test_mypy_catches_a_misspelt_method_wrong_params_and_a_wrong_result(tmp_path):
    checked = tmp_path / "method_calls.py"
    checked.write_text(CALLS)
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--no-error-summary", "--show-error-codes",
         "--cache-dir", str(tmp_path / "mypy-cache"), str(checked)],  # its own cache: another worker's mypy may be writing the project's
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode in (0, 1), f"mypy did not run: {run.stdout[-2000:]}{run.stderr[-2000:]}"
    # mypy also reports what it finds in the modules these import (tests/test_types.py judges those): only this file counts here.
    found: dict[int, set[str]] = {}
    for line in run.stdout.splitlines():
        match = re.match(rf"{re.escape(str(checked))}:(\d+): error: .*\[([a-z-]+)\]$", line)
        if match:
            found.setdefault(int(match.group(1)), set()).add(match.group(2))
    expected = {number: {mark.split("# error: ")[1]} for number, mark in enumerate(CALLS.splitlines(), 1) if "# error: " in mark}
    assert found == expected, f"mypy said:\n{run.stdout}{run.stderr}"
