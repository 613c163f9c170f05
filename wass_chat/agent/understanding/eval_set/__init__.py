"""The offline router's evaluation questions (``dev.json`` to tune on, ``heldout.json`` to report).

Each question is written the way people type (typos, fragments, no slash, any word order) with
the intent and the tool arguments it should produce; see
:mod:`wass_chat.agent.understanding.nlu_eval`.
"""
