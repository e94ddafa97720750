"""bench/paired.py: which way a figure's new/old ratio is a gain."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from paired import dig, expand, higher_is_better  # noqa: E402  (bench/paired.py)


def test_a_rate_is_better_higher_and_a_time_lower_unless_named():
    assert higher_is_better("prompts.1.modes.auto.decode_tokens_per_s", [])
    assert not higher_is_better("openai_api.ttft_ms_median", [])
    assert higher_is_better("openai_api.ttft_ms_median", ["openai_api.ttft_ms_median"])


def test_a_star_names_every_element_of_a_list_or_object():
    document = {"prompts": [{"modes": {"auto": {"tok_s": 1.0}, "off": {"tok_s": 2.0}}}, {"modes": {"auto": {"tok_s": 3.0}}}]}
    assert [".".join(p) for p in expand(document, "prompts.*.modes.auto.tok_s")] == ["prompts.0.modes.auto.tok_s", "prompts.1.modes.auto.tok_s"]
    assert [dig(document, p) for p in expand(document, "prompts.0.modes.*.tok_s")] == [1.0, 2.0]
    assert expand(document, "prompts.1.modes.auto.tok_s") == [("prompts", "1", "modes", "auto", "tok_s")]
    files = {"files": {"model.Q4_1.gguf": {"ms": 3.0}}}  # a key that holds dots
    assert [dig(files, p) for p in expand(files, "files.*.ms")] == [3.0]


def test_a_star_on_a_number_is_a_clear_error():
    with pytest.raises(SystemExit, match=r"prompts.0.n is 4, not a list or an object"):
        expand({"prompts": [{"n": 4}]}, "prompts.0.n.*")


def test_a_star_figure_is_paired_per_element_across_two_trees(tmp_path):
    import json
    import subprocess

    old = tmp_path / "old"
    old.mkdir()
    # paired.py runs the script from each tree's root: this one tells the trees apart by where it runs.
    script = tmp_path / "fake.py"
    script.write_text(f'import json, os; first = 10.0 if os.getcwd() == {str(old)!r} else 11.0; print(json.dumps({{"prompts": [{{"tok_s": first}}, {{"tok_s": 20.0}}]}}))\n')
    root = Path(__file__).resolve().parents[2]
    run = subprocess.run(
        [sys.executable, str(root / "bench" / "paired.py"), "--baseline", str(old), "--rounds", "2", "--figure", "prompts.*.tok_s", "--", str(script)],
        capture_output=True, text=True, timeout=120, cwd=root,
    )
    assert run.returncode == 0, run.stderr
    figures = json.loads(run.stdout)["figures"]
    assert list(figures) == ["prompts.0.tok_s", "prompts.1.tok_s"]
    assert figures["prompts.0.tok_s"]["new_over_old"]["geomean"] == 1.1 and figures["prompts.1.tok_s"]["new_over_old"]["geomean"] == 1.0
    assert figures["prompts.0.tok_s"]["higher_is_better"] is False  # neither a rate by name nor named so
