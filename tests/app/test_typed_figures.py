"""No raw key reads on reply figures or protocol data in app/ (issue #29): a reply's figures travel as
dataclasses (GenerationStats inside a ReplyRecord, MetricsResult, the fetch's notifications), so a
misspelt figure fails the type checker instead of showing "—" or raising KeyError in a widget.

The check walks app/'s syntax trees for `x["key"]` and `x.get("key")` with a string key where either
the key is a figure (a GenerationStats field, or finish_reason), or `x` is named as figure or result
data is named in this code base (stats, figures, result, ...). Only the decoders that turn outside
JSON into those dataclasses, once, may read keys: they are listed in DECODERS.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from runtime.protocol import GenerationStats

APP = Path(__file__).resolve().parents[2] / "app"

FIGURE_KEYS = frozenset(f.name for f in dataclasses.fields(GenerationStats)) | {"finish_reason"}
# Names this code base gives to figures, records, runtime results and the events that carry them.
DATA_NAMES = frozenset({"stats", "figures", "record", "live", "generation", "result", "outcome", "event", "usage", "chunk", "progress", "metrics"})
# (file under app/, function): where outside JSON is read, once, into its dataclass.
DECODERS = {
    ("storage/reply_record.py", "from_stored_form"),
    ("storage/store.py", "_message"),  # a messages row into a Message: `thinking_ms` is a column, not a figure read  # the store's `stats` column, as every Lokal wrote it
    ("remote/client.py", "parse_chunk"),  # an OpenAI server's stream events
}


def _name_of(node: ast.expr) -> str | None:
    """`stats` for stats, self.stats, message.stats and stats["a"] (the innermost name of a chain)."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def raw_key_reads(source: str) -> list[tuple[int, str, str | None]]:
    """(line, the expression, the enclosing function) of each raw key read on figure or result data in `source`."""
    tree = ast.parse(source)
    found: list[tuple[int, str, str | None]] = []

    def visit(node: ast.AST, function: str | None) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        target: ast.expr | None = None
        key: ast.expr | None = None
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            target, key = node.value, node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
            target, key = node.func.value, node.args[0]
        if target is not None and isinstance(key, ast.Constant) and isinstance(key.value, str):
            if key.value in FIGURE_KEYS or _name_of(target) in DATA_NAMES:
                found.append((node.lineno, ast.unparse(node), function))
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, None)
    return found


def test_no_raw_key_reads_on_figures_or_results_in_app():
    offenders = []
    for path in sorted(APP.rglob("*.py")):
        relative = path.relative_to(APP).as_posix()
        for line, expression, function in raw_key_reads(path.read_text(encoding="utf-8")):
            if (relative, function) not in DECODERS:
                offenders.append(f"app/{relative}:{line}: {expression}")
    assert not offenders, "read these through their dataclasses (GenerationStats, ReplyRecord, the protocol's results):\n" + "\n".join(offenders)


def test_the_check_finds_the_reads_it_forbids():
    """What app/ held before typed figures (issue #29), each of which the check must catch."""
    old = '''
def reply_footer(message):
    stats = message.stats or {}
    return figures.speed(stats["decode_tokens_per_s"])

def render(self):
    speed = self.stats.get("decode_tokens_per_s")

def on_finished(figures):
    return figures.get("finish_reason", "stop")

def on_stdout(event):
    return event["progress"]["done"]

def anything(data):
    return data["prompt_tokens"], data.get("speedup")
'''
    assert [expression for _line, expression, _function in raw_key_reads(old)] == [
        "stats['decode_tokens_per_s']",
        "self.stats.get('decode_tokens_per_s')",
        "figures.get('finish_reason', 'stop')",
        "event['progress']['done']",
        "event['progress']",
        "data['prompt_tokens']",
        "data.get('speedup')",
    ]
    # Key reads on other data stay allowed: a settings dict, a SQLite row, a dict of widgets.
    assert raw_key_reads('row["state"]; self.buttons["edit"]; fields.get("content"); os.environ.get("HOME")') == []
