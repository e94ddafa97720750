"""Structured output: a JSON schema turned into a GBNF grammar by llama.cpp's own converter.

The converter (`llama_cpp.llama_grammar`, a port of llama.cpp's
json-schema-to-grammar) enforces a subset of JSON Schema and ignores the rest.
A request must get JSON that validates, every time, so a schema is refused, with
the reason, when it uses a keyword the grammar would not enforce (number bounds,
`not`, `oneOf`, ...), rather than have the keyword silently dropped. Annotations
(title, description, examples, ...) and keywords JSON Schema itself ignores are
fine. The schema is checked against its metaschema first (jsonschema), so a
typo in a type name is named as such.

Every grammar, raw or converted, is checked here before llama.cpp's GBNF parser
sees it (check_grammar): that parser recurses once per nested group, so deep
nesting overflows a thread's stack (512 KiB on macOS) and kills the process, and
it expands `{m,n}` into rules one by one, so an inverted range (n < m wraps
around in its unsigned arithmetic) or a grammar full of large ranges exhausts
memory. Both are refused with the limit they passed.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import jsonschema
from llama_cpp import llama_grammar

# Any JSON object (response_format json_object).
ANY_OBJECT: dict[str, Any] = {"type": "object"}

# Keywords that constrain values and that the converter does not turn into grammar rules.
UNENFORCED = {
    "not": "negation",
    "if": "conditional schemas",
    "then": "conditional schemas",
    "else": "conditional schemas",
    "oneOf": "exactly-one unions (use anyOf)",
    "allOf": "schema intersections",
    "minimum": "number bounds",
    "maximum": "number bounds",
    "exclusiveMinimum": "number bounds",
    "exclusiveMaximum": "number bounds",
    "multipleOf": "number multiples",
    "uniqueItems": "unique array items",
    "contains": "array contains",
    "minContains": "array contains",
    "maxContains": "array contains",
    "minProperties": "property counts",
    "maxProperties": "property counts",
    "patternProperties": "property name patterns",
    "propertyNames": "property name schemas",
    "dependentRequired": "dependent properties",
    "dependentSchemas": "dependent schemas",
    "dependencies": "dependent properties",
    "unevaluatedProperties": "unevaluated properties",
    "unevaluatedItems": "unevaluated items",
}
# Of the string constraints the converter applies only one (its first of these), so two would drop one.
STRING_CONSTRAINTS = ("pattern", "format", "minLength/maxLength")
ENFORCED_FORMATS = {"date", "time", "date-time", "uuid", "uuid1", "uuid2", "uuid3", "uuid4", "uuid5"}
# llama_grammar's JSON string character lets control characters through, which JSON forbids inside a string.
STRICT_CHAR = r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])'


# Groups nested in groups. llama.cpp's parser (and its sampler, which walks the groups as it parses them)
# recurses once per level: in a thread with a 512 KiB stack, macOS's default, 1,100 levels parse and 1,300
# crash the process (measured with the starter model's vocabulary; 8 MiB, Linux's default, crashes under
# 50,000). A quarter of that. A schema's maxLength / maxItems nests one group per optional item, so this
# bounds those too (past their minimum).
MAX_GRAMMAR_NESTING = 256
# llama.cpp's own MAX_REPETITION_THRESHOLD: past it, it refuses a lower bound and silently drops an upper one.
MAX_REPETITION = 2000
# The copies all `{m,n}` of one grammar make together: each is a rule llama.cpp builds and keeps.
MAX_REPETITIONS_TOTAL = 100_000
_REPEAT = re.compile(r"\{[ \t\r\n]*([0-9]+)[ \t\r\n]*(?:(,)[ \t\r\n]*([0-9]*)[ \t\r\n]*)?\}")
COUNTS = ("minLength", "maxLength", "minItems", "maxItems")
_PATTERN_COUNT = re.compile(r"(?<=[{,])\s*([0-9]+)(?=\s*[,}])")  # the numbers of a regex's {m,n}
_ENDS = {'"': '"', "[": "]", "<": ">"}  # string literal, character class, token: their content is not syntax


class SchemaError(ValueError):
    """A schema that is not valid JSON Schema, or that a grammar cannot enforce; the message says why."""


class GrammarError(ValueError):
    """A GBNF grammar past a limit that keeps llama.cpp's parser within its stack and memory; the message names the limit."""


def check_grammar(grammar: str) -> None:
    """Refuse a grammar nested deeper than MAX_GRAMMAR_NESTING or with `{m,n}` past the repetition limits.

    A single linear scan that knows only what hides syntax (strings, character classes,
    tokens, comments); everything else is left to llama.cpp's parser to accept or refuse.
    """
    depth = total = 0
    i, n = 0, len(grammar)
    while i < n:
        c = grammar[i]
        if c in _ENDS:
            i = _skip_literal(grammar, i, _ENDS[c])
            continue
        if c == "#":
            end = grammar.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == "(":
            depth += 1
            if depth > MAX_GRAMMAR_NESTING:
                raise GrammarError(f"groups are nested more than {MAX_GRAMMAR_NESTING} deep (the limit for nested parentheses, and for a schema's maxLength or maxItems)")
        elif c == ")":
            depth = max(depth - 1, 0)
        elif c == "{":
            match = _REPEAT.match(grammar, i)
            if match is None:
                raise GrammarError(f"a repetition at offset {i} is not of the form {{m}}, {{m,}} or {{m,n}} with plain numbers")
            low, comma, high = match.group(1), match.group(2), match.group(3)
            shown = match.group(0) if len(match.group(0)) <= 40 else match.group(0)[:37] + "..."
            top = _bound(low if not comma else high or low)
            if _bound(low) > MAX_REPETITION or (comma and high and top > MAX_REPETITION):
                raise GrammarError(f"the repetition {shown} goes past {MAX_REPETITION}, the limit for a bound of {{m,n}}")
            if comma and high and top < _bound(low):
                raise GrammarError(f"the repetition {shown} has its upper bound below its lower one")
            total += max(top, _bound(low))
            if total > MAX_REPETITIONS_TOTAL:
                raise GrammarError(f"the repetitions {{m,n}} together make more than {MAX_REPETITIONS_TOTAL} copies, the limit for one grammar")
            i = match.end()
            continue
        i += 1


def _bound(digits: str) -> int:
    # int() of thousands of digits is slow or refused (sys.int_info.str_digits_check_threshold): anything that long is over every limit.
    return int(digits) if len(digits) <= 9 else MAX_REPETITIONS_TOTAL + 1


def _skip_literal(grammar: str, start: int, end: str) -> int:
    """The index past a string literal, character class or token that opens at `start` (backslash escapes inside)."""
    i = start + 1
    while i < len(grammar):
        c = grammar[i]
        if c == "\\" and end != ">":
            i += 2
            continue
        if c == end:
            return i + 1
        i += 1
    return len(grammar)


def schema_grammar(schema: Any) -> str:
    """GBNF (root rule "root") for exactly the JSON documents that validate against `schema`."""
    if not isinstance(schema, dict):
        raise SchemaError(f"the schema must be a JSON object, not {type(schema).__name__}")
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "the top level"
        raise SchemaError(f"not a valid JSON Schema at {where}: {exc.message}") from None
    _check_enforceable(schema, "#")
    converter = llama_grammar.SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    try:
        resolved = converter.resolve_refs(copy.deepcopy(schema), "schema")  # it rewrites references in place
        converter.visit(resolved, "")
    except (AssertionError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise SchemaError(f"cannot turn this schema into a grammar: {exc}") from None
    if "char" in converter._rules:
        converter._rules["char"] = STRICT_CHAR
    grammar = converter.format_grammar()
    try:
        check_grammar(grammar)
    except GrammarError as exc:
        raise SchemaError(f"its grammar would be too large: {exc}") from None
    return grammar


def _check_enforceable(node: Any, path: str) -> None:
    if isinstance(node, list):
        for i, item in enumerate(node):
            _check_enforceable(item, f"{path}/{i}")
        return
    if not isinstance(node, dict):
        return
    for keyword, what in UNENFORCED.items():
        if keyword in node:
            raise SchemaError(f"{path}/{keyword}: {what} cannot be enforced by a grammar; leave it out or check it after the reply")
    ref = node.get("$ref")
    if isinstance(ref, str) and not ref.startswith("#"):
        raise SchemaError(f"{path}/$ref: only references inside the schema (#/...) are followed, not {ref!r}")
    fmt = node.get("format")
    used = [name for name, present in zip(STRING_CONSTRAINTS, ("pattern" in node, fmt in ENFORCED_FORMATS, "minLength" in node or "maxLength" in node)) if present]
    if len(used) > 1:
        raise SchemaError(f"{path}: {' and '.join(used)} together cannot be enforced by one grammar rule; keep one")
    for keyword in COUNTS:
        # The converter writes out one copy (and one nested group) per item: bounded before it runs.
        if isinstance(node.get(keyword), int) and not isinstance(node.get(keyword), bool) and node[keyword] > MAX_REPETITION:
            raise SchemaError(f"{path}/{keyword}: at most {MAX_REPETITION} can be enforced by a grammar")
    pattern = node.get("pattern")
    if isinstance(pattern, str) and any(_bound(number) > MAX_REPETITION for number in _PATTERN_COUNT.findall(pattern)):
        raise SchemaError(f"{path}/pattern: a repetition {{m,n}} past {MAX_REPETITION} cannot be enforced by a grammar")
    if isinstance(pattern, str) and not (pattern.startswith("^") and pattern.endswith("$")):
        raise SchemaError(f"{path}/pattern: a pattern must be anchored (^...$) to be enforced as the whole string")
    properties = node.get("properties")
    required = node.get("required")
    if isinstance(required, list) and node.get("additionalProperties") is not True and not isinstance(node.get("additionalProperties"), dict):
        missing = [name for name in required if not isinstance(properties, dict) or name not in properties]
        if missing:
            raise SchemaError(f"{path}/required: {', '.join(map(str, missing))} must also be in properties")
    for key, value in node.items():
        if key in ("enum", "const", "default", "examples"):
            continue  # values, not schemas
        if key == "properties" and isinstance(value, dict):
            for name, sub in value.items():
                _check_enforceable(sub, f"{path}/properties/{name}")
        elif key in ("$defs", "definitions") and isinstance(value, dict):
            for name, sub in value.items():
                _check_enforceable(sub, f"{path}/{key}/{name}")
        elif isinstance(value, (dict, list)):
            _check_enforceable(value, f"{path}/{key}")
