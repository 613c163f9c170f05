"""Build of the simulators' compiled cores (``sim._core``, sources in sim/csrc/; and
``sim.batch._core``, the batch simulator's, sources in sim/batch/csrc/).

Everything else about the package is in pyproject.toml; this file exists only to declare the C
extension. ``pip install -e .`` (what ``make setup`` runs) compiles it in place with the system's
C compiler and no extra dependency. ``-ffp-contract=off`` forbids fused multiply-adds, so every
floating-point operation rounds as the pure-Python engine's does (bit-identical results). The
sources' digest is compiled in: sim.fast refuses a core built from other sources.
"""

import runpy
from pathlib import Path

from setuptools import Extension, setup

source_hash = runpy.run_path("sim/core_hash.py")["source_hash"]
FLAGS = ["-O2", "-ffp-contract=off", "-fno-fast-math", "-std=c11"]

setup(
    ext_modules=[
        Extension(
            "sim._core",
            sources=[
                f"sim/csrc/{name}.c"
                for name in (
                    "util",
                    "network",
                    "estimate",
                    "run",
                    "records",
                    "view",
                    "chooser",
                    "instance",
                    "module",
                )
            ],
            depends=["sim/csrc/core.h"],
            define_macros=[("CORE_SOURCE_HASH", f'"{source_hash()}"')],
            extra_compile_args=FLAGS,
        ),
        # The batch (job-queue) simulator's core: sources in sim/batch/csrc/, its own digest.
        Extension(
            "sim.batch._core",
            sources=[f"sim/batch/csrc/{n}.c" for n in ("heap", "engine", "backfill", "module")],
            depends=["sim/batch/csrc/batch.h"],
            define_macros=[("CORE_SOURCE_HASH", f'"{source_hash(Path("sim/batch/csrc"))}"')],
            extra_compile_args=FLAGS,
        ),
    ]
)
