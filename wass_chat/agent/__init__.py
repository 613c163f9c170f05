"""The chat agent: LangChain on a local Ollama model, plus a deterministic offline mode.

The session level lives here (sessions, events, the approval gate, cancellation, the toolbox,
untrusted text kept as data); what a message asks is read in :mod:`.understanding`, the facts
an answer rests on are computed in :mod:`.facts`, and answers are written and checked in
:mod:`.answers`.
"""
