"""Slurm integration: the commands backend, platforms from Slurm, submission plans, runs, plugin.

Modules: ``commands`` (sbatch/scontrol/squeue/sacct/scancel as argv lists), ``live`` (what Slurm
says about one job now), ``reasons`` (the pending-reason table), ``advice`` (changes checked
with ``sbatch --test-only``), ``explain`` (why a job waits, runs or ended as it did; the queue),
``nodes`` (``platform_from_slurm``), ``submission`` (workflow + scheduler -> sbatch argv),
``runs`` (journaled submit, status, cancel), ``recovery`` (a run's jobs found by name),
``plugin`` (job_submit.lua, policy head export).
"""
