"""A reranker's scores of a first stage's candidates, kept by ``clir run`` and reused.

Scoring is the slow half of a rerank recipe that reuses its model: K-NRM over 300 subword
pieces scores the top 100 candidates of ddtp-en-fr-hard's dev and test splits (375,162
pairs) in about 10 minutes on two CPU cores. Two recipes often score the same candidates with
the same model (``knrm-subword`` and ``knrm-subword-interp``, whose ``model_from`` names the
first, differ only in λ), and a second ``clir run`` of unchanged recipes scored everything
again. So the scores are a product like runs and models, under the one rule of
:mod:`clir_toolkit.freshness`: kept in ``runs/<collection>/<split>/scores/<key>.tsv``, named
by their key so that any recipe asking for the same scores finds them, and reused while
fresh (``clir run --force`` scores again, once per run).

The key holds everything the scores depend on: the model file, the topics the model reads,
the first-stage run (each by its sha256), the collection's documents (its fingerprint, as
a model's key has it), the depth and the kind of device (a GPU sums in another order than
the CPU: K-NRM's scores differ by up to 9e-7). The code is that of the scorers
(:data:`SCORE_CODE`). A file holds one line per pair, ``qid<TAB>docid<TAB>score``, the
score written exactly (``repr`` of the float).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.freshness import digest, mark_fresh
from clir_toolkit.registry import homes

if TYPE_CHECKING:
    from clir_toolkit.experiments.context import RunContext

Scores = dict[tuple[str, str], float]

SCORE_CODE = (
    "clir_toolkit.rerank.word.batches", "clir_toolkit.rerank.word.model_file",
    "clir_toolkit.rerank.sentence.tuned_model", *homes("rerankers"),
)  # fmt: skip
"""The code scores depend on (:func:`clir_toolkit.freshness.code_fingerprint`): the two
families' scorers and the architectures they build by name."""


def scores_path(context: RunContext, collection: Path, split: str, key: str) -> Path:
    """Where the scores of ``key`` are kept: beside the split's runs, named by the key."""
    return context.workspace.runs / collection.name / split / "scores" / f"{key[:24]}.tsv"


def kept_scores(
    context: RunContext,
    collection: Path,
    split: str,
    inputs: Mapping[str, Path],
    settings: Mapping[str, Any],
    score: Callable[[], Scores],
    pairs: Collection[tuple[str, str]],
) -> Scores:
    """``score()``, or the scores kept from an earlier call with the same ``inputs`` (files,
    hashed) and ``settings`` by the same code. Kept scores are used only when they are a
    finite score for each of ``pairs`` (the candidates) and nothing else: a file damaged or
    edited since (its sidecar rewritten too) is scored again, not trusted."""
    from clir_toolkit.files import sha256_file

    key = digest({"inputs": {name: sha256_file(path) for name, path in inputs.items()},
                  "settings": dict(settings)})  # fmt: skip
    path = scores_path(context, collection, split, key)
    if context.reusable(path, key, SCORE_CODE):
        kept = read_scores(path)
        if kept is not None and kept.keys() == set(pairs):
            context.log(f"reusing the scores {path} (same model, topics, run and documents)")
            return kept
        context.log(f"{path}: not the scores of these candidates; scoring them again")
    scores = score()
    write_scores(path, scores)
    mark_fresh(path, key, {"inputs": {name: str(p) for name, p in inputs.items()},
                           "pairs": len(scores)}, code=SCORE_CODE)  # fmt: skip
    return scores


def write_scores(path: Path, scores: Scores) -> None:
    """One ``qid<TAB>docid<TAB>score`` line per pair, written whole or not at all."""
    from clir_toolkit.files import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, own=True) as handle:
        for (qid, docid), score in scores.items():
            handle.write(f"{qid}\t{docid}\t{score!r}\n")


def read_scores(path: Path) -> Scores | None:
    """The pairs and scores of a file of :func:`write_scores`; None when a line is not one
    (three fields, a finite score, each pair once) or the file cannot be read as text."""
    scores: Scores = {}
    try:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                fields = line.rstrip("\n").split("\t")
                if len(fields) != 3:
                    return None
                qid, docid, text = fields
                value = float(text)
                if not math.isfinite(value) or (qid, docid) in scores:
                    return None
                scores[qid, docid] = value
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return scores
