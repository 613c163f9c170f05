"""Slurm integration: the commands backend, platforms from Slurm, submission plans, runs, plugin.

Modules: ``commands`` (sbatch/scontrol/squeue/sacct/scancel as argv lists), ``backend`` (pyslurm
detection), ``nodes`` (``platform_from_slurm``), ``submission`` (workflow + scheduler -> sbatch
argv), ``runs`` (submit all-or-nothing, status, cancel),
``plugin`` (job_submit.lua, policy head export).
"""
