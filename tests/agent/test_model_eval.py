"""The model tool-call harness: how a model's reply becomes the tool it called."""

from __future__ import annotations

import json

from wass_chat.agent.model_eval import first_call, tools_prompt
from wass_chat.agent.tools import TOOL_NAMES


def test_native_and_text_tool_calls_are_both_read() -> None:
    native = {"tool_calls": [{"function": {"name": "job_why", "arguments": '{"jobid": "7"}'}}]}
    assert first_call(native) == ("job_why", {"jobid": "7"})
    text = {"content": '{"name": "simulate", "arguments": {"add_nodes": 4}}'}
    assert first_call(text) == ("simulate", {"add_nodes": 4})
    assert first_call({"content": "Hello! How can I help?"}) == ("", {})


def test_the_prompt_offers_every_tool_with_its_parameters() -> None:
    prompt = tools_prompt("SYSTEM")
    offered = [json.loads(line) for line in prompt.splitlines() if line.startswith("{")]
    assert [tool["name"] for tool in offered] == list(TOOL_NAMES)
    assert next(t for t in offered if t["name"] == "job_why")["parameters"] == {"jobid": "string"}
