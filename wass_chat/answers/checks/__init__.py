"""Checking an answer against the facts it rests on.

The verifier every model's text passes before it is shown (:mod:`.verify`: each number and id
from the facts or the question), the claimed actions and destructive commands it refuses
(:mod:`.claims`), the stricter check of our own deterministic answers (:mod:`.answer_check`),
and that check applied to the report's summary paragraph (:mod:`.overview_check`).
"""
