"""Hostile inputs to ``wass-chat``: every one is a one-line error and exit code 2, never a
traceback, and nothing is written (the project rule, docs/commands.md).

The cases are what a fuzz pass over the commands found (issue #45): malformed or mistyped
WfFormat files, impossible platforms, non-SWF traces, broken settings, unreadable weights and
Lua sources, NaN options, a read-only data home. Each is run through the real CLI entry point
(``wass_chat.cli.main``) in this process, except the read-only home, which needs a process
without root's permission override."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from wass_chat.cli import main

Builder = Callable[[Path], list[str]]

_CHAIN = {
    "name": "chain-3",
    "schemaVersion": "1.6",
    "workflow": {
        "specification": {
            "tasks": [
                {
                    "name": f"t{i}",
                    "id": f"t{i}",
                    "parents": [f"t{i - 1}"] if i else [],
                    "children": [f"t{i + 1}"] if i < 2 else [],
                    "inputFiles": [f"f{i}"],
                    "outputFiles": [f"f{i + 1}"],
                }
                for i in range(3)
            ],
            "files": [{"id": f"f{i}", "sizeInBytes": 1000} for i in range(4)],
        },
        "execution": {
            "makespanInSeconds": 0.0,
            "executedAt": "1970-01-01T00:00:00Z",
            "tasks": [{"id": f"t{i}", "runtimeInSeconds": 10.0, "coreCount": 1} for i in range(3)],
        },
    },
}


def _spec(doc: dict) -> dict:
    return doc["workflow"]["specification"]


def _mutated(mutate: Callable[[dict], object]) -> str:
    doc = json.loads(json.dumps(_CHAIN))
    mutate(doc)
    return json.dumps(doc)


_RUNTIME = '"runtimeInSeconds": 10.0'
# name -> file content (text, or bytes); "<dir>" reads a directory instead of a file.
HOSTILE_WORKFLOWS: dict[str, str | bytes] = {
    "malformed JSON": '{"name": "x", "workflow": {',
    "empty file": "",
    "a directory": "<dir>",
    "binary": bytes(range(256)) * 4,
    "non-UTF-8": '{"name": "caf\xe9"}'.encode("latin-1"),
    "a JSON list": "[1, 2, 3]",
    "runtime a string": _mutated(
        lambda d: d["workflow"]["execution"]["tasks"][0].update(runtimeInSeconds="fast")
    ),
    "runtime negative": _mutated(
        lambda d: d["workflow"]["execution"]["tasks"][0].update(runtimeInSeconds=-5)
    ),
    "runtime NaN": json.dumps(_CHAIN).replace(_RUNTIME, '"runtimeInSeconds": NaN', 1),
    "runtime Infinity": json.dumps(_CHAIN).replace(_RUNTIME, '"runtimeInSeconds": Infinity', 1),
    "cores zero": _mutated(lambda d: d["workflow"]["execution"]["tasks"][0].update(coreCount=0)),
    "file size a string": _mutated(lambda d: _spec(d)["files"][0].update(sizeInBytes="big")),
    "file size negative": _mutated(lambda d: _spec(d)["files"][0].update(sizeInBytes=-1)),
    "missing id and name": _mutated(
        lambda d: (_spec(d)["tasks"][0].pop("id"), _spec(d)["tasks"][0].pop("name"))
    ),
    "duplicate id": _mutated(lambda d: _spec(d)["tasks"][1].update(id="t0")),
    "self-loop": _mutated(lambda d: _spec(d)["tasks"][0]["parents"].append("t0")),
    "cycle": _mutated(
        lambda d: (
            _spec(d)["tasks"][0]["parents"].append("t2"),
            _spec(d)["tasks"][2]["children"].append("t0"),
        )
    ),
    "unknown parent": _mutated(lambda d: _spec(d)["tasks"][1]["parents"].append("ghost")),
    "parents not a list": _mutated(lambda d: _spec(d)["tasks"][1].update(parents="t0")),
    "tasks not a list": _mutated(lambda d: _spec(d).update(tasks={"a": 1})),
    "no workflow key": _mutated(lambda d: d.pop("workflow")),
    "unknown input file": _mutated(lambda d: _spec(d)["tasks"][0]["inputFiles"].append("nope")),
}

WORKFLOW_COMMANDS: dict[str, Builder] = {
    "workflow validate": lambda f: ["workflow", "validate", str(f)],
    "workflow show": lambda f: ["workflow", "show", str(f)],
    "simulate": lambda f: ["simulate", str(f)],
    "submit --dry-run": lambda f: ["submit", str(f), "--platform", "demo", "--dry-run"],
}

_NODE = "{name: n1, cores: 4, speed: 1Gf, memory: 8GiB, bandwidth: 1Gbps}"
HOSTILE_PLATFORMS: dict[str, str | bytes] = {
    "zero-speed nodes": "name: p\nnodes:\n- {name: n1, cores: 4, speed: 0}\n",
    "NaN speed": "name: p\nnodes:\n- {name: n1, cores: 4, speed: .nan}\n",
    "zero cores": "name: p\nnodes:\n- {name: n1, cores: 0}\n",
    "no nodes": "name: p\nnodes: []\n",
    "duplicate node": f"name: p\nnodes:\n- {_NODE}\n- {_NODE}\n",
    "broken YAML": "nodes: [a, b\n  : :",
    "a scalar": "42\n",
    "binary": bytes(range(256)),
}
PLATFORM_COMMANDS: dict[str, Callable[[Path, Path], list[str]]] = {
    "platform show": lambda p, w: ["platform", "show", str(p)],
    "simulate --platform": lambda p, w: ["simulate", str(w), "--platform", str(p)],
    "submit --platform": lambda p, w: ["submit", str(w), "--platform", str(p), "--dry-run"],
}

# Inputs that printed a traceback (or were accepted) before issue #45's fixes:
# id -> (files to create in the test's folder D, the command line with {D} for it, environment;
# an environment value naming one of the files is given as its path).
Files = dict[str, str | bytes]
_CHAIN_FILE: Files = {"w.json": json.dumps(_CHAIN)}
_DEMOS = "workflow demos"
_EXPORT = "plugin export --no-nodes -o {D}/o.lua --weights"
OTHER_CASES: dict[str, tuple[Files, str, dict[str, str]]] = {
    "whatif --sacct a .parquet that is not Parquet": (
        {"j.parquet": "not parquet"},
        "whatif cluster --sacct {D}/j.parquet",
        {},
    ),
    "whatif --swf an empty file": ({"t.swf": ""}, "whatif cluster --swf {D}/t.swf", {}),
    "whatif --swf a file that is not SWF": (
        {"t.swf": "hello world\nthis is not swf\n"},
        "whatif cluster --swf {D}/t.swf",
        {},
    ),
    "whatif --swf only unusable jobs": (
        {"t.swf": " ".join(["1", "0", "0", "-1"] + ["-1"] * 14) + "\n"},
        "whatif cluster --swf {D}/t.swf",
        {},
    ),
    "whatif --swf a damaged .swf.gz": (
        {"t.swf.gz": b"\x1f\x8bjunkjunk"},
        "whatif cluster --swf {D}/t.swf.gz",
        {},
    ),
    "submit --scale nan": (
        _CHAIN_FILE,
        "submit {D}/w.json --platform demo --dry-run --scale nan",
        {},
    ),
    "workflow generate --ccr nan": (
        {},
        "workflow generate chain --tasks 5 --ccr nan -o {D}/g.json",
        {},
    ),
    "plugin export --weights a .npz that is not one": (
        {"h.npz": "not npz"},
        f"{_EXPORT} {{D}}/h.npz",
        {},
    ),
    "plugin export --weights a .pt that is not one": (
        {"h.pt": "not pt"},
        f"{_EXPORT} {{D}}/h.pt",
        {},
    ),
    "plugin export --weights binary": (
        {"h.bin": bytes(range(256)) * 3},
        f"{_EXPORT} {{D}}/h.bin",
        {},
    ),
    "plugin bench --template binary": (
        {"t.lua": bytes(range(256)) * 3},
        "plugin bench --jobs 3 --template {D}/t.lua",
        {},
    ),
    "plugin bench --template not Lua": (
        {"t.lua": "{not lua"},
        "plugin bench --jobs 3 --template {D}/t.lua",
        {},
    ),
    "agent eval --model not a GGUF": (
        {"m.gguf": "nope"},
        "agent eval --limit 1 --model {D}/m.gguf",
        {},
    ),
    "a settings file in another encoding": (
        {"c.toml": b"\xff\xfe\x00home"},
        _DEMOS,
        {"WASS_CONFIG": "c.toml"},
    ),
    "a negative Ollama timeout": ({}, _DEMOS, {"WASS_OLLAMA_TIMEOUT": "-2"}),
    "a Chroma port out of range": (
        {"c.toml": "chroma_port = 99999\n"},
        _DEMOS,
        {"WASS_CONFIG": "c.toml"},
    ),
    "an Ollama host that is not http": (
        {"c.toml": 'ollama_host = "ftp://x"\n'},
        _DEMOS,
        {"WASS_CONFIG": "c.toml"},
    ),
    "an Ollama host that is not a host": (
        {"c.toml": 'ollama_host = "not a url"\n'},
        _DEMOS,
        {"WASS_CONFIG": "c.toml"},
    ),
    "an empty partition": ({}, _DEMOS, {"WASS_SLURM_PARTITION": ""}),
    "an idle-GPU time of 0 minutes": ({}, _DEMOS, {"WASS_GPU_IDLE_CANCEL_AFTER_MIN": "0"}),
    "a GPU job id that is no number": ({}, "gpu idle --propose-cancel 12;rm", {}),
    "a proposal id that is no proposal's": ({}, "gpu approve ../../etc --digest x --yes", {}),
    "the OpenAI backend with no base URL": ({}, _DEMOS, {"WASS_MODEL_BACKEND": "openai"}),
    "an unknown model backend": ({}, _DEMOS, {"WASS_MODEL_BACKEND": "openia"}),
    "an API key variable's name that is a key": (
        {},
        _DEMOS,
        {"WASS_OPENAI_API_KEY_ENV": "sk-0123456789abcdef"},
    ),
    "ask --model-url that is not http": (
        {},
        "ask --model-backend openai --model-url ftp://gateway/v1 --model m hello",
        {},
    ),
    "ask --model-backend unknown": ({}, "ask --model-backend openia hello", {}),
    "ask --model-backend openai with no URL": ({}, "ask --model-backend openai hello", {}),
    "ask --api-key-file that others may read": (
        {"k.key": "sk-0123456789abcdef"},
        "ask --model-backend openai --model-url http://127.0.0.1:9/v1 --model m "
        "--api-key-file {D}/k.key hello",
        {},
    ),
    "a data home that is a file": ({"home-file": "x"}, "runs", {"WASS_HOME": "home-file"}),
}


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def _assert_one_line_exit_2(
    argv: list[str], capsys: pytest.CaptureFixture[str], watched: Path
) -> str:
    before = _files(watched)
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2, (code, err)
    assert "Traceback" not in err and "\n" not in err and err.startswith("error: "), err
    assert _files(watched) == before, "a refused input wrote something"
    return err


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    from wass_chat.config import settings

    home = tmp_path / "home"
    monkeypatch.setenv("WASS_HOME", str(home))
    monkeypatch.delenv("WASS_CONFIG", raising=False)
    settings.cache_clear()
    yield home
    settings.cache_clear()


def _write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


@pytest.mark.parametrize("command", list(WORKFLOW_COMMANDS))
@pytest.mark.parametrize("case", list(HOSTILE_WORKFLOWS))
def test_a_hostile_workflow_is_one_line_and_exit_2(
    case: str, command: str, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content = HOSTILE_WORKFLOWS[case]
    target = tmp_path / "in" if content == "<dir>" else _write(tmp_path / "wf.json", content)
    target.mkdir(exist_ok=True) if content == "<dir>" else None
    _assert_one_line_exit_2(WORKFLOW_COMMANDS[command](target), capsys, tmp_path)


@pytest.mark.parametrize("command", list(PLATFORM_COMMANDS))
@pytest.mark.parametrize("case", list(HOSTILE_PLATFORMS))
def test_a_hostile_platform_is_one_line_and_exit_2(
    case: str, command: str, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    platform = _write(tmp_path / "p.yaml", HOSTILE_PLATFORMS[case])
    workflow = _write(tmp_path / "wf.json", json.dumps(_CHAIN))
    _assert_one_line_exit_2(PLATFORM_COMMANDS[command](platform, workflow), capsys, tmp_path)


@pytest.mark.parametrize("case", list(OTHER_CASES))
def test_an_input_that_tracebacked_or_was_accepted_is_one_line_and_exit_2(
    case: str,
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from wass_chat.config import settings

    files, command, env = OTHER_CASES[case]
    if case.startswith("plugin bench") and shutil.which("lua5.1") is None:
        pytest.skip("lua5.1 is not installed")
    for name, content in files.items():
        _write(tmp_path / name, content)
    for key, value in env.items():
        monkeypatch.setenv(key, str(tmp_path / value) if value in files else value)
    settings.cache_clear()
    argv = command.replace("{D}", str(tmp_path)).split()
    err = _assert_one_line_exit_2(argv, capsys, tmp_path)
    if env:
        assert "invalid config" in err, err  # the setting is named, not a later failure


def test_a_jobs_count_below_one_is_refused_before_anything_runs(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["kb", "seed", "--jobs", "0", "--recipes", "montage"]) == 2
    err = capsys.readouterr().err
    assert "Invalid value for '--jobs'" in err and "Traceback" not in err
    assert not (home / "kb").exists()


def _without_root_override() -> list[str]:
    """A prefix that runs a command without the permission override root has, so a read-only
    folder is read-only to it (as it is to any other user); empty when not root."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("root without setpriv cannot drop its permission override")
    caps = "-dac_override,-dac_read_search,-fowner"
    return ["setpriv", f"--bounding-set={caps}", f"--inh-caps={caps}"]


READ_ONLY_HOME_COMMANDS = {
    "kb stats": ["kb", "stats"],
    "sacct synth": ["sacct", "synth", "--jobs", "20"],
    "sacct import": ["sacct", "import", "--from-file", "{export}"],
}


@pytest.mark.parametrize("command", list(READ_ONLY_HOME_COMMANDS))
def test_a_read_only_data_home_is_one_line_and_exit_2(command: str, tmp_path: Path) -> None:
    """As root the test drops CAP_DAC_OVERRIDE (setpriv), so the 0555 folders bind it."""
    home = tmp_path / "home"
    (home / "sacct").mkdir(parents=True)
    (home / "kb").mkdir()
    export = tmp_path / "export.txt"
    export.write_text("JobID|State|Elapsed\n1|COMPLETED|00:01:00\n")
    for folder in (home / "sacct", home / "kb", home):
        folder.chmod(0o555)
    argv = [a.replace("{export}", str(export)) for a in READ_ONLY_HOME_COMMANDS[command]]
    env = {**os.environ, "WASS_HOME": str(home)}
    env.pop("WASS_CONFIG", None)
    try:
        done = subprocess.run(
            [*_without_root_override(), sys.executable, "-m", "wass_chat.cli", *argv],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        err = done.stderr.strip()
        assert "Traceback" not in err and "\n" not in err and err.startswith("error: "), err
        assert str(home) in err  # names the folder it cannot write
        assert _files(home) == []
    finally:
        for folder in (home, home / "sacct", home / "kb"):
            folder.chmod(0o755)


def test_a_workflow_above_the_planning_bound_is_refused_in_one_line_and_eft_runs_it(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from policy.base import MAX_PLANNED_TASKS

    big = tmp_path / "big.json"
    tasks = str(MAX_PLANNED_TASKS + 1)
    assert main(["workflow", "generate", "chain", "--tasks", tasks, "-o", str(big)]) == 0
    capsys.readouterr()
    for argv in (
        ["simulate", str(big)],
        ["simulate", str(big), "--scheduler", "minmin"],
        ["submit", str(big), "--platform", "demo", "--dry-run"],
    ):
        err = _assert_one_line_exit_2(argv, capsys, tmp_path)
        assert f"{MAX_PLANNED_TASKS + 1:,} tasks" in err and "--scheduler eft" in err, err
    assert main(["simulate", str(big), "--scheduler", "eft", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["makespan"] > 0
