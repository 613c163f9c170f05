"""Offline intent classification: nearest exemplar in all-MiniLM-L6-v2 sentence-embedding space.

A message (names already replaced by what they are, see
:func:`wass_chat.agent.understanding.slots.delexicalise`) is spell-corrected against the exemplars'
own vocabulary (``comapre`` -> ``compare``: difflib ratio >= 0.8, >= 0.75 up to five letters; only
words of four letters or more), embedded with :mod:`wass_chat.agent.understanding.minilm`, and
scored against every exemplar of every intent (:mod:`wass_chat.agent.understanding.nlu_exemplars`
plus the examples of :data:`wass_chat.agent.understanding.intents.INTENTS`). An intent's score is
the cosine similarity of its nearest exemplar. The router
(:mod:`wass_chat.agent.understanding.router`) decides from the ranking: act, ask back, or admit it
did not understand. The exemplars' vectors ship in the package (``nlu_vectors.npz``): embedding them
takes seconds on one core, so the cold start is the model load only.
"""

from __future__ import annotations

import difflib
import hashlib
import logging
import re
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Protocol

import numpy as np

from wass_chat.agent.understanding.intents import INTENTS
from wass_chat.agent.understanding.nlu_exemplars import EXEMPLARS
from wass_chat.agent.understanding.slots import delexicalise

log = logging.getLogger(__name__)


class Encoder(Protocol):
    """Anything that turns texts into unit-length vectors (one row per text)."""

    def encode(self, texts: list[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class Reading:
    """One candidate intent for a message and its score (cosine of the nearest exemplar)."""

    intent: str
    score: float
    exemplar: str


def exemplars() -> dict[str, tuple[str, ...]]:
    """Every intent's exemplars: the table's examples plus :data:`EXEMPLARS`."""
    merged = {name: tuple(texts) for name, texts in EXEMPLARS.items()}
    for spec in INTENTS:
        merged[spec.name] = tuple(dict.fromkeys((*spec.examples, *merged.get(spec.name, ()))))
    return merged


_WORD = re.compile(r"[A-Za-z']+")


class SpellFixer:
    """Corrects words the exemplars do not know to the closest word they do."""

    def __init__(self, texts: list[str], extra: tuple[str, ...] = ()) -> None:
        vocab = {w.lower() for t in texts for w in _WORD.findall(t)} | set(extra)
        self.vocab = frozenset(vocab)
        self._long = sorted(w for w in vocab if len(w) >= 3)

    def fix(self, text: str) -> str:
        def repl(match: re.Match[str]) -> str:
            word = match.group(0)
            lowered = word.lower()
            if len(lowered) < 4 or lowered in self.vocab:
                return word
            cutoff = 0.75 if len(lowered) <= 5 else 0.8  # one swap in a short word: hlep
            hit = difflib.get_close_matches(lowered, self._long, n=1, cutoff=cutoff)
            return hit[0] if hit else word

        return re.sub(r"(?<![\w.-])[A-Za-z']+(?![\w.-])", repl, text)


_COMMON = (
    "the",
    "a",
    "an",
    "is",
    "are",
    "was",
    "were",
    "my",
    "our",
    "me",
    "please",
    "pls",
    "now",
    "still",
    "so",
    "long",
    "what",
    "why",
    "who",
    "which",
    "how",
    "when",
    "for",
    "in",
    "on",
    "of",
    "to",
    "with",
    "and",
    "or",
    "last",
    "week",
    "month",
    "yesterday",
    "today",
    "time",
    "whatif",
    "dont",
    "don't",
    "cant",
    "can't",
    "isnt",
    "hasnt",
    "didnt",
    "wont",
    "done",
)


class IntentClassifier:
    """Nearest-exemplar intent scores for a message."""

    def __init__(self, encoder: Encoder, examples: dict[str, tuple[str, ...]] | None = None):
        examples = examples or exemplars()
        self.encoder = encoder
        self.labels = [name for name, texts in examples.items() for _ in texts]
        self.texts = [text for texts in examples.values() for text in texts]
        self.intents = tuple(examples)
        self.spelling = SpellFixer(self.texts, _COMMON)
        self.matrix = exemplar_vectors(encoder, self.texts)

    def rank(self, text: str) -> list[Reading]:
        """Intents by descending score (each intent once)."""
        vector = self.encoder.encode([self.spelling.fix(text)])[0]
        sims = self.matrix @ vector
        best: dict[str, Reading] = {}
        for index in np.argsort(-sims):
            label = self.labels[index]
            if label not in best:
                best[label] = Reading(label, float(sims[index]), self.texts[index])
        return sorted(best.values(), key=lambda r: -r.score)


VECTORS_FILE = "nlu_vectors.npz"
"""The exemplars' embeddings, shipped in the package: embedding them takes seconds on one core."""


def texts_digest(texts: list[str]) -> str:
    """What the shipped vectors were computed from (exemplar texts and the model's package)."""
    from wass_chat.agent.understanding.minilm import MODEL_PACKAGE

    return hashlib.sha256("\n".join([MODEL_PACKAGE, DELEXICALISED, *texts]).encode()).hexdigest()


DELEXICALISED = "delexicalised-2"
"""Exemplars are embedded with their names and periods replaced, as messages are (bump this
when :func:`~wass_chat.agent.understanding.slots.delexicalise` changes)."""


def exemplar_vectors(encoder: Encoder, texts: list[str]) -> np.ndarray:
    """The shipped vectors of ``texts`` (delexicalised) when they match; else embedded now."""
    path = Path(__file__).with_name(VECTORS_FILE)
    if path.is_file() and getattr(encoder, "shippable", False):
        with np.load(path) as data:
            if str(data["digest"]) == texts_digest(texts):
                return np.asarray(data["vectors"], dtype=np.float32)
        log.info("exemplar vectors are stale (exemplars changed); embedding them now")
    return encoder.encode([delexicalise(t) for t in texts])


def write_exemplar_vectors(encoder: Encoder | None = None) -> Path:
    """Embed every exemplar and store the vectors next to this module (after editing them)."""
    from wass_chat.agent.understanding.minilm import shared_model

    encoder = encoder or shared_model()
    texts = [text for group in exemplars().values() for text in group]
    path = Path(__file__).with_name(VECTORS_FILE)
    vectors = encoder.encode([delexicalise(t) for t in texts])
    np.savez_compressed(path, vectors=vectors, digest=np.array(texts_digest(texts)))
    return path


@dataclass(frozen=True)
class LoadTimes:
    """How long the classifier took to become ready, in seconds (see :func:`shared_classifier`)."""

    model_s: float
    exemplars_s: float
    exemplar_count: int


_times: list[LoadTimes] = []


@cache
def shared_classifier() -> IntentClassifier:
    """The process's classifier: the model loads and the exemplars embed on first use only."""
    from wass_chat.agent.understanding.minilm import shared_model

    start = time.perf_counter()
    model = shared_model()
    loaded = time.perf_counter()
    classifier = IntentClassifier(model)
    _times.append(LoadTimes(loaded - start, time.perf_counter() - loaded, len(classifier.texts)))
    return classifier


def load_times() -> LoadTimes | None:
    """The shared classifier's load times, once it has loaded."""
    return _times[-1] if _times else None
