"""job_submit.lua in a plain Lua 5.1 interpreter: fuzz safety and inference equal to numpy.

Speed is not asserted here: `wass-chat plugin bench` prints it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.slurm.plugin_cases import CLUSTER, Job, fuzz_jobs, random_head, run_plugin
from tests.support import require
from wass_chat.slurm.plugin import render_plugin
from wass_chat.slurm.plugin.bench import bench_inference
from wass_chat.slurm.plugin.head import head_from_state_dict, head_to_lua, inference_token

FUZZ_COUNT = 10_000


@pytest.fixture(scope="module")
def lua_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require(shutil.which("lua5.1") is not None, "lua5.1 is not installed")
    return tmp_path_factory.mktemp("lua")


def write_plugin(directory: Path, text: str) -> Path:
    path = directory / "job_submit.lua"
    path.write_text(text)
    return path


@pytest.mark.slow
def test_fuzz_never_errors_and_changes_only_with_a_valid_token(lua_dir: Path) -> None:
    head = random_head(np.random.default_rng(1))
    plugin = write_plugin(lua_dir, render_plugin(head, CLUSTER))
    jobs = fuzz_jobs(FUZZ_COUNT, head)
    outcomes = run_plugin(plugin, jobs, lua_dir)

    assert all(o.rc == "0" for o in outcomes)
    assert sum(o.errors for o in outcomes) == 0
    applied = 0
    for job, o in zip(jobs, outcomes, strict=True):
        assert set(o.changed) <= {"req_nodes", "admin_comment"}, (job.comment, o)
        if o.req_nodes is not None:
            applied += 1
            assert "wass:v1:" in (job.comment or "")
            assert job.fits(o.req_nodes), (job, o)
        if job.expect_node is not None:
            assert o.req_nodes == job.expect_node, (job.comment, o)
        if "wass:v1:" not in (job.comment or ""):
            assert o.changed == ()
    expected = sum(j.expect_node is not None for j in jobs)
    assert expected > 1000 and applied >= expected
    micros = sorted(o.micros for o in outcomes)
    print(f"fuzz {len(jobs)} jobs, {applied} placed, median {micros[len(micros) // 2]:.1f} us")


@pytest.mark.parametrize("dim", [139, 200])  # the learned head's width (compiled); the loop
def test_inference_matches_numpy(lua_dir: Path, dim: int) -> None:
    """Inference pins each job to numpy's choice, compiled head or loop (speed: plugin bench)."""
    rng = np.random.default_rng(3)
    head = random_head(rng, dim=dim, hidden=64)
    plugin = write_plugin(lua_dir, render_plugin(head, CLUSTER))
    jobs, expected = [], []
    for k in range(100):
        x = rng.normal(size=(4, head.dim))
        token = inference_token("run", f"t{k}", head, CLUSTER.node_names, x)
        jobs.append(Job(comment=token))
        expected.append(CLUSTER.node_names[int(np.argmax(head.scores(x)))])
    outcomes = run_plugin(plugin, jobs, lua_dir)
    assert [o.req_nodes for o in outcomes] == expected
    assert len(set(expected)) > 1  # the head really discriminates


def test_the_compiled_head_scores_exactly_as_the_loop(lua_dir: Path) -> None:
    head = random_head(np.random.default_rng(4), dim=139, hidden=64)
    plugin = write_plugin(lua_dir, render_plugin(head, CLUSTER))
    script = f"""
        slurm = {{SUCCESS = 0, log_info = function() end}}
        dofile({str(plugin)!r})
        local w = WASS_PLUGIN
        math.randomseed(7)
        local x = {{}}
        for i = 1, 3 * w.head.dim do x[i] = math.random() * 4 - 2 end
        local same = 0
        for c = 0, 2 do
            local offset = c * w.head.dim
            local a, b = w.score(w.head, x, offset), w.score_head(w.head, x, offset)
            if a == b then same = same + 1 end
        end
        print(tostring(w.head_compiled) .. " " .. same)
    """
    done = subprocess.run(["lua5.1", "-e", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["true", "3"]


def test_the_benchmark_reports_every_placement_equal_to_numpy(lua_dir: Path) -> None:
    result = bench_inference(jobs=20, candidates=8)
    assert result.agree == result.jobs == 20
    assert 0 < result.p50_us <= result.max_us


def test_stale_model_and_expired_tokens_leave_the_job_unchanged(lua_dir: Path) -> None:
    rng = np.random.default_rng(5)
    head, other = random_head(rng), random_head(rng)
    plugin = write_plugin(lua_dir, render_plugin(head, CLUSTER))
    x = rng.normal(size=(4, head.dim))
    jobs = [
        Job(comment=inference_token("r", "t", other, CLUSTER.node_names, x)),
        Job(comment="wass:v1:run=r;task=t;node=n3;exp=1000"),
        Job(comment="wass:v1:run=r;task=t;node=n3", partition="small"),
        Job(comment="wass:v1:run=r;task=t;node=n1", cores=4),
        Job(comment="wass:v1:run=r;task=t;node=n3;exp=99999999999"),
    ]
    outcomes = run_plugin(plugin, jobs, lua_dir)
    assert [o.req_nodes for o in outcomes] == [None, None, None, None, "n3"]


def test_without_a_head_inference_tokens_are_ignored(lua_dir: Path) -> None:
    rng = np.random.default_rng(6)
    head = random_head(rng)
    plugin = write_plugin(lua_dir, render_plugin(None, CLUSTER))
    token = inference_token("r", "t", head, CLUSTER.node_names, rng.normal(size=(4, head.dim)))
    outcomes = run_plugin(plugin, [Job(comment=token)], lua_dir)
    assert outcomes[0].req_nodes is None and outcomes[0].errors == 0


def test_state_dict_export_equals_array_export() -> None:
    torch = pytest.importorskip("torch")
    layers = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    state = {f"head.{k}": v for k, v in layers.state_dict().items()}
    head = head_from_state_dict(state)
    x = np.random.default_rng(0).normal(size=(3, 5))
    with torch.no_grad():
        reference = layers(torch.tensor(x, dtype=torch.float32)).numpy().reshape(-1)
    np.testing.assert_allclose(head.scores(x), reference, rtol=1e-5, atol=1e-5)
    assert f'id = "{head.id}"' in head_to_lua(head)
