"""The examples a fine-tuned encoder (:mod:`clir_toolkit.rerank.sentence.tuned`) trains on.

A split's judged documents and first-stage candidates (:func:`read_split`); per query, its
judged relevant documents with their grades and the pool of its top ``depth`` non-relevant
candidates (:func:`training_pool`); and each epoch's pointwise examples, every relevant
document and ``negatives`` candidates drawn afresh from the pool, seeded by the epoch
(:func:`epoch_examples`; Liu et al., *Smooth Learning*, §5: 40 negatives per query).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from clir_toolkit.errors import ClirError

if TYPE_CHECKING:
    from clir_toolkit.encoders import SentenceEncoder


@dataclass
class Split:
    """One split's queries and candidates as rows of the query and document matrices."""

    query_row: dict[str, int]
    queries: np.ndarray  # float32[Q, dim], unit rows
    candidates: dict[str, list[str]]  # qid -> top ``depth`` docids in trec_eval order
    grades: dict[str, dict[str, int]]  # qid -> docid -> grade (qrels)


def read_split(
    encoder: SentenceEncoder, topics: Path, qrels: Path | None, run: Path, depth: int,
    verbose: bool, only_topics: bool = False, first: int | None = None,
) -> Split:  # fmt: skip
    """Encode the topics that the run answers; read the candidates and the qrels.

    A query of the run without a topic is an error, unless ``only_topics`` (training: a
    topics file may pick a subset of the run's queries, e.g. to train on fewer of them);
    ``first`` keeps the first N topics of the file only.
    """
    from clir_toolkit.formats import read_qrels, read_run, read_topics
    from clir_toolkit.rerank.data.examples import candidates_by_query
    from clir_toolkit.rerank.sentence.pretrained import encode_batched

    texts = {topic.qid: topic.query for topic in read_topics(topics)[:first]}
    candidates = candidates_by_query(read_run(run), depth)
    if only_topics:
        candidates = {qid: docids for qid, docids in candidates.items() if qid in texts}
    missing = [qid for qid in candidates if qid not in texts]
    if missing:
        raise ClirError(
            f"{topics}: no topic for {len(missing)} query id(s) of the run {run} "
            f"({', '.join(missing[:5])}); pass the topics the run was made from"
        )
    qids = list(candidates)
    vectors = encode_batched(encoder, [texts[q] for q in qids], True, "encoding queries", verbose)
    grades: dict[str, dict[str, int]] = {}
    for qrel in read_qrels(qrels) if qrels is not None else []:
        grades.setdefault(qrel.qid, {})[qrel.docid] = qrel.relevance
    return Split({q: i for i, q in enumerate(qids)}, vectors, candidates, grades)


@dataclass
class TrainingPool:
    """Per training query: its relevant documents with grades, and its negative candidates."""

    query_rows: np.ndarray  # int64[P], one per query with a relevant document
    positives: list[list[tuple[int, int]]]  # (document row, grade) per query
    negatives: list[np.ndarray]  # document rows of the non-relevant candidates per query


def training_pool(split: Split, doc_row: Mapping[str, int]) -> TrainingPool:
    """Queries with at least one relevant document that has a vector, in qid order."""
    from clir_toolkit.rerank.data.examples import MAX_GRADE

    rows, positives, negatives = [], [], []
    for qid in sorted(split.query_row):
        judged = split.grades.get(qid, {})
        relevant = [
            (doc_row[d], min(g, MAX_GRADE)) for d, g in sorted(judged.items())
            if g > 0 and d in doc_row
        ]  # fmt: skip
        if not relevant:
            continue
        rows.append(split.query_row[qid])
        positives.append(relevant)
        negatives.append(
            np.array([doc_row[d] for d in split.candidates[qid] if judged.get(d, 0) <= 0],
                     dtype=np.int64)
        )  # fmt: skip
    return TrainingPool(np.array(rows, dtype=np.int64), positives, negatives)


def epoch_examples(pool: TrainingPool, negatives: int, seed: int, epoch: int) -> np.ndarray:
    """``int64[N, 3]`` rows (query row, document row, grade) of one epoch, in random order.

    Every relevant document of each query once, and ``negatives`` of its non-relevant
    candidates drawn without replacement; the draw and the order depend only on
    ``(seed, epoch)``, so a run is reproducible and each epoch sees other negatives.
    """
    rng = np.random.default_rng([seed, epoch])
    parts = []
    for query, relevant, pool_negatives in zip(
        pool.query_rows, pool.positives, pool.negatives, strict=True
    ):
        chosen = (
            rng.choice(pool_negatives, size=negatives, replace=False)
            if len(pool_negatives) > negatives
            else pool_negatives
        )
        block = np.zeros((len(relevant) + len(chosen), 3), dtype=np.int64)
        block[:, 0] = query
        block[: len(relevant), 1:] = relevant
        block[len(relevant) :, 1] = chosen
        parts.append(block)
    examples = np.concatenate(parts) if parts else np.zeros((0, 3), dtype=np.int64)
    return examples[rng.permutation(len(examples))]
