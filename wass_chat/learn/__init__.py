"""The cluster's own runs teach the knowledge base: a finished run becomes a real case.

:mod:`.run_cases` reads a decision-log run as Slurm ran it; :mod:`.learner` stores it (when
``status``, ``runs``, the app or ``kb learn RUN`` sees it end); :mod:`.from_sacct` finds past runs
in the accounting cache. The case itself, and what is learned from it, live in ``kb``
(:mod:`kb.real_runs`, :mod:`kb.estimates`, :mod:`kb.calibration`).
"""
