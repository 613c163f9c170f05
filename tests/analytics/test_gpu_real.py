"""GPU use read from other projects' real exports, against the figures those projects assert.

Sources (fixtures/real/README.md has the commits and licences):

* reportseff (troycomi/reportseff, MIT): ``tests/conftest.py``'s jobstats fixtures and the GPU
  figures its ``tests/test_job.py`` asserts (``job.gpu``, ``job.gpu_mem`` and per GPU);
* Princeton jobstats (PrincetonUniversity/jobstats): two GPU jobs of ``tests/test_jobstats.py``,
  one whose summary recorded no GPU although AllocTRES held one (its ``gpu_util_error_code`` 1);
* hb-jobinfo (rug-cit-hpc/hb-jobinfo, MIT): the sacct TRES usage of two V100/A100 jobs and
  ``Max GPU utilization`` / ``Max GPU memory used`` of its ``test/data/expected_output``.

Tolerances: utilisation within 1 point, memory within 0.05 GB.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.analytics.conftest import FIXTURES
from tests.analytics.test_real_exports import HB_FORMAT
from wass_chat.analytics.gpu_usage import NOT_RECORDED
from wass_chat.analytics.job_efficiency import JobEfficiency, describe_job, jobs_efficiency
from wass_chat.sacct.cache import SacctCache
from wass_chat.sacct.ingest import ingest_file
from wass_chat.sacct.parse import parse_sacct_file

REAL = FIXTURES / "real"
GB = 1e9


def gpu_of(path: Path, columns: list[str] | None = None) -> dict[str, JobEfficiency]:
    result = parse_sacct_file(path, columns=columns)
    assert result.malformed == 0 and result.bad_values == {}, (result.malformed, result.bad_values)
    return {j.job_id: j for j in jobs_efficiency(result.jobs.lazy())}


def gpu(job: JobEfficiency) -> dict:
    assert job.gpu is not None, job.job_id
    return job.gpu


def test_reportseff_gpu_figures_job_by_job():
    """reportseff tests/test_job.py: test_single_gpu, test_multi_gpu, test_bad_gpu,
    test_bad_gpu_utilization (job.gpu and job.gpu_mem), and the CPU-only jobs (job.gpu None)."""
    jobs = gpu_of(REAL / "reportseff_gpu.txt")
    assert len(jobs) == 7  # every allocation imported (steps are their jobs')
    want = {  # job id: (gpu, gpu_mem) as reportseff asserts them
        "8197399": (29.4, 99.8),
        "8189521": (3.5, 30.1),
        "45352405": (0.0, 1.0),
        "46044267": (4.8, 11.1),
    }
    for job_id, (util, memory) in want.items():
        g = gpu(jobs[job_id])
        assert g["recorded"] and g["source"].startswith("jobstats AdminComment")
        assert g["utilisation_pct"] == pytest.approx(util, abs=1.0), job_id
        assert g["memory_share_pct"] == pytest.approx(memory, abs=1.0), job_id
    # test_multi_gpu's per-GPU entries: 3.5, 3.5, 3.2, 3.8 on tiger-i19g9
    per_gpu = dict(gpu(jobs["8189521"])["per_gpu_pct"])
    assert per_gpu == pytest.approx(
        {"tiger-i19g9/0": 3.5, "tiger-i19g9/1": 3.5, "tiger-i19g9/2": 3.2, "tiger-i19g9/3": 3.8}
    )
    # single_gpu: 16 GB used of one 17 GB GPU (the comment's bytes)
    single = gpu(jobs["8197399"])
    assert single["memory_peak_bytes"] / GB == pytest.approx(17.04, abs=0.05)
    assert single["memory_per_gpu_bytes"] / GB == pytest.approx(17.07, abs=0.05)
    # bad_gpu: no utilisation recorded for its one GPU: reportseff counts it 0, so it is idle
    assert gpu(jobs["45352405"])["gpu_hours_idle"] == pytest.approx(7 + 42 / 60 + 18 / 3600)
    # test_single_core, test_multi_node, test_short_job: no GPU at all
    for job_id in ("39889258_1426", "8205048", "8205464"):
        assert jobs[job_id].gpu is None, job_id


def test_reportseff_multi_node_multi_gpu_is_the_mean_over_nodes():
    """reportseff test_multi_node_multi_gpu: job 5.5 (nodes 7.5 and 3.5), memory 30.1."""
    g = gpu(gpu_of(REAL / "reportseff_gpu_multinode.txt")["8189521"])
    assert g["utilisation_pct"] == pytest.approx(5.5, abs=1.0)
    assert g["memory_share_pct"] == pytest.approx(30.1, abs=1.0)
    assert g["gpus"] == 8 and g["held_source"].startswith("jobstats")
    per_gpu = dict(g["per_gpu_pct"])
    assert per_gpu["tiger-i19g10/3"] == pytest.approx(7.8) and len(per_gpu) == 8


def test_jobstats_gpu_jobs_and_a_summary_without_gpus():
    """jobstats tests: simple_gpu_job 60155093 (its JSON: 98.6% on GPU 1, 83.3 of 85.9 GB);
    gpu_utilization_missing 45122291 (AllocTRES gres/gpu=1, summary with "gpus": 0: not
    recorded, never 0%). Its export prints times as epoch seconds (SLURM_TIME_FORMAT=%s)."""
    jobs = gpu_of(REAL / "jobstats_gpu.txt")
    assert set(jobs) == {"60155093", "45122291"}
    busy = gpu(jobs["60155093"])
    assert busy["utilisation_pct"] == pytest.approx(98.6, abs=1.0)
    assert busy["memory_peak_bytes"] / GB == pytest.approx(83.31, abs=0.05)
    assert busy["memory_share_pct"] == pytest.approx(97.0, abs=1.0)
    assert busy["held_source"] == "AllocTRES gres/gpu" and busy["gpus"] == 1
    assert jobs["60155093"].start == "2024-11-04T12:29:27"
    missing = gpu(jobs["45122291"])
    assert not missing["recorded"] and missing["utilisation_pct"] is None
    assert missing["not_recorded_why"].startswith(NOT_RECORDED)
    text = describe_job(jobs["45122291"].to_dict())
    assert NOT_RECORDED in text and "AutoDetect=nvml" in text
    assert "GPU utilisation" not in text  # no figure, least of all 0%


def test_hb_jobinfo_sacct_gpu_usage_from_the_steps():
    """hb-jobinfo expected_output/7965768: "Max GPU utilization: 90%", "Max GPU memory used:
    19.55G" (gres/gpumem=20500736K on the batch step; .extern shows 0, the job row nothing);
    expected_output/7939708: 0% and 0 on an A100 that it held for 4 s."""
    jobs = gpu_of(REAL / "hb_jobinfo_sacct.txt", columns=HB_FORMAT)
    v100 = gpu(jobs["7965768"])
    assert v100["utilisation_pct"] == pytest.approx(90, abs=1.0)
    assert v100["peak_utilisation_pct"] == pytest.approx(90, abs=1.0)
    assert v100["memory_peak_bytes"] / 2**30 == pytest.approx(19.55, abs=0.05)
    assert v100["gpu_type"] == "v100" and v100["gpus"] == 1
    assert "step 7965768.batch" in v100["source"]
    assert v100["memory_per_gpu_bytes"] == 32 * 2**30  # 19.55 GiB fits only the 32 GB V100
    a100 = gpu(jobs["7939708"])
    assert a100["recorded"] and a100["utilisation_pct"] == 0
    assert a100["memory_peak_bytes"] == 0 and a100["gpu_type"] == "a100"
    # the GPU jobs of 2023, before the site recorded GPU use, and a job without GPUs
    assert jobs["5908801_3"].gpu is None  # AllocTRES without gres/gpu: no GPU held


def test_every_real_gpu_row_imports_into_the_cache(tmp_path: Path):
    cache = SacctCache(tmp_path / "cache")
    for name in ("reportseff_gpu.txt", "jobstats_gpu.txt"):
        record = ingest_file(cache, REAL / name)
        assert record.malformed == 0 and record.bad_values == {}, name
        assert record.rows_written == len((REAL / name).read_text().splitlines()) - 1
    stored = cache.scan().filter(pl.col("js_gpus").is_not_null()).collect()
    assert sorted(stored["job_id"]) == ["45352405", "46044267", "60155093", "8189521", "8197399"]
