"""The answers: one module per kind of answer, each holding its facts' shape, its verdict and
its Markdown, all in one table (:data:`~wass_chat.answers.kinds.KINDS`).

Tools return plain dicts (they travel as JSON to the model and into the conversation store);
render, verify and the app read them by key, so every kind names the TypedDict of its facts:
declared in its module here, or where the facts are made (:mod:`wass_chat.slurm.explain`,
:mod:`wass_chat.analytics`, :mod:`wass_chat.batch`). Every number a rendering prints comes from
the facts at the precision the verifier accepts, and every string that came from outside
(names of workflows, tasks, jobs, files, users, comments) is shown through
:func:`~wass_chat.agent.safety.literal`, never as Markdown. :mod:`.markdown` prints computed
sentences; :mod:`.kind` is the table's row; :mod:`.checks` holds an answer to its facts.
"""
