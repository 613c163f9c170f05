"""Understanding a message: from what a person typed to an intent and the tool's arguments.

The one table of intents and slash commands (:mod:`.intents`), the offline router
(:mod:`.router`) with its nearest-exemplar classifier on all-MiniLM-L6-v2 (:mod:`.nlu`,
:mod:`.minilm`, :mod:`.nlu_exemplars`, the shipped ``nlu_vectors.npz``), the slot parsers (job
ids, runs, nodes, periods and what-if changes in words), the wording rules that license a
submission or mark a question out of scope, the glossary of Slurm codes, the repair of tool calls
small models write as text (:mod:`.parse`), and the router's evaluation questions and their
measurement (:mod:`.eval_set`, :mod:`.nlu_eval`). Nothing here computes a fact or writes an answer.
"""
