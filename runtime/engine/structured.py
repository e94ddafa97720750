"""Structured output: a JSON schema turned into a GBNF grammar by llama.cpp's own converter.

The converter (`llama_cpp.llama_grammar`, a port of llama.cpp's
json-schema-to-grammar) enforces a subset of JSON Schema and ignores the rest.
A request must get JSON that validates, every time, so a schema is refused, with
the reason, when it uses a keyword the grammar would not enforce (number bounds,
`not`, `oneOf`, ...), rather than have the keyword silently dropped. Annotations
(title, description, examples, ...) and keywords JSON Schema itself ignores are
fine. The schema is checked against its metaschema first (jsonschema), so a
typo in a type name is named as such.
"""

from __future__ import annotations

import copy
import json
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


class SchemaError(ValueError):
    """A schema that is not valid JSON Schema, or that a grammar cannot enforce; the message says why."""


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
    return converter.format_grammar()


def check_json(text: str, schema: dict[str, Any]) -> Any:
    """The parsed document if `text` is JSON that validates against `schema`; raises otherwise."""
    document = json.loads(text)
    jsonschema.validate(document, schema)
    return document


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
    pattern = node.get("pattern")
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
