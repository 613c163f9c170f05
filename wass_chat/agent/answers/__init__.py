"""Writing answers from the facts and checking them against the facts.

The deterministic Markdown renderings of every fact kind (:mod:`.render`, :mod:`.render_cluster`,
:mod:`.render_batch`) and how they print quantities (:mod:`.units`); the system prompt of the
online model (:mod:`.prompt`); the verifier that holds a model's text to the facts
(:mod:`.verify`) and the stricter check of the deterministic answers (:mod:`.answer_check`); and
the report's summary written by the local model and checked the same way
(:mod:`.report_overview`).
"""
