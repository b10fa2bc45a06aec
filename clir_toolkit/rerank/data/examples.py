"""The reranker's training examples: graded (query, document) pairs and their tensors.

Graded qrels give the positives (2 = relevant, 1 = partially relevant); the first-stage run's
top candidates that the qrels do not mark relevant are the negatives (grade 0)
(:func:`relevance_examples`). Sasaki et al.'s CLIR data and Liu et al.'s experiments sample
40 irrelevant pages per query and vary their number from 20 to 100 (*Cross-Lingual Document
Retrieval with Smooth Learning*, §5 and Fig. 5): ``negatives_per_query``. Pointwise losses
(SOSL, MSE, proportional odds, 3Part) train on (query, document, grade) triples; the pairwise
hinge loss of K-NRM on (query, better document, worse document) triples drawn afresh each
epoch from those (:func:`epoch_pairs`). Sentence pairs of a parallel corpus give pre-training
examples of the same form (:func:`parallel_examples`).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clir_toolkit.errors import ClirError, FormatError

if TYPE_CHECKING:
    import torch

    from clir_toolkit.formats import Qrel, RunRow

MAX_GRADE = 2


@dataclass(frozen=True, slots=True)
class Example:
    """One pointwise example: document ``docid`` has grade 0, 1 or 2 for query ``qid``."""

    qid: str
    docid: str
    grade: int


def candidates_by_query(run: Iterable[RunRow], depth: int | None = None) -> dict[str, list[str]]:
    """Each query's docids in the order trec_eval reads the run, cut at ``depth``."""
    from clir_toolkit.formats import sort_run

    ranked: dict[str, list[str]] = {}
    for row in sort_run(run):
        docs = ranked.setdefault(row.qid, [])
        if depth is None or len(docs) < depth:
            docs.append(row.docid)
    return ranked


def relevance_examples(
    qrels: Iterable[Qrel],
    run: Iterable[RunRow],
    negatives_per_query: int = 40,
    qids: Iterable[str] | None = None,
) -> list[Example]:
    """Pointwise examples: judged relevant documents and the run's top non-relevant ones.

    For each query with at least one document of positive grade, every such document is an
    example with its grade (capped at 2), and the first ``negatives_per_query`` documents of
    the run that are not judged relevant (unjudged, or judged 0) are examples of grade 0.
    Queries without a relevant document teach nothing about ranking and are left out;
    ``qids`` restricts the queries (to those that have topics).
    """
    if negatives_per_query < 0:
        raise ClirError(f"negatives_per_query must be 0 or more, not {negatives_per_query}")
    grades: dict[str, dict[str, int]] = {}
    for qrel in qrels:
        grades.setdefault(qrel.qid, {})[qrel.docid] = qrel.relevance
    ranked = candidates_by_query(run)
    allowed = set(qids) if qids is not None else None
    examples: list[Example] = []
    for qid in sorted(grades):
        if allowed is not None and qid not in allowed:
            continue
        judged = grades[qid]
        positives = sorted(docid for docid, grade in judged.items() if grade > 0)
        if not positives:
            continue
        examples.extend(Example(qid, d, min(judged[d], MAX_GRADE)) for d in positives)
        negatives = [d for d in ranked.get(qid, []) if judged.get(d, 0) <= 0]
        examples.extend(Example(qid, d, 0) for d in negatives[:negatives_per_query])
    return examples


def read_parallel_tsv(path: str | Path) -> list[tuple[str, str]]:
    """Sentence pairs ``english<TAB>foreign``, one per line (blank lines are skipped)."""
    pairs: list[tuple[str, str]] = []
    try:
        raw_lines = Path(path).read_bytes().splitlines()
    except OSError as exc:
        raise FormatError(path, None, f"cannot read the file: {exc.strerror}") from None
    for number, raw in enumerate(raw_lines, start=1):
        try:
            text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError:
            raise FormatError(path, number, "invalid UTF-8", "save the file as UTF-8") from None
        if not text.strip():
            continue
        columns = text.split("\t")
        if len(columns) != 2 or not columns[0].strip() or not columns[1].strip():
            raise FormatError(
                path,
                number,
                f"expected 'english<TAB>foreign', found {len(columns)} column(s)",
                "write one sentence pair per line, separated by one tab",
            )
        pairs.append((columns[0].strip(), columns[1].strip()))
    if not pairs:
        raise FormatError(path, None, "no sentence pairs", "write 'english<TAB>foreign' lines")
    return pairs


@dataclass(frozen=True)
class ParallelData:
    """Pre-training data from sentence pairs, in the form of relevance examples.

    Each English sentence is a query (qid ``p<i>``) whose translation (docid ``p<i>``) is
    relevant (grade 2); ``negatives`` other foreign sentences, drawn at random, are not.
    """

    queries: dict[str, str]
    documents: dict[str, str]
    examples: list[Example]


def parallel_examples(
    pairs: Sequence[tuple[str, str]], negatives: int = 4, seed: int = 0
) -> ParallelData:
    """Turn sentence pairs into :class:`ParallelData` (seeded, so reproducible)."""
    if len(pairs) < 2 and negatives > 0:
        raise ClirError("parallel pre-training needs at least two sentence pairs")
    rng = random.Random(seed)
    queries = {f"p{i}": english for i, (english, _) in enumerate(pairs)}
    documents = {f"p{i}": foreign for i, (_, foreign) in enumerate(pairs)}
    examples: list[Example] = []
    count = min(negatives, len(pairs) - 1)
    for i in range(len(pairs)):
        examples.append(Example(f"p{i}", f"p{i}", MAX_GRADE))
        others = rng.sample(range(len(pairs) - 1), count)
        examples.extend(Example(f"p{i}", f"p{j + (j >= i)}", 0) for j in others)
    return ParallelData(queries, documents, examples)


# ---------------------------------------------------------------------------------------------
# Tensors for a list of examples
# ---------------------------------------------------------------------------------------------


@dataclass
class EncodedExamples:
    """Examples as row indices into a query matrix and a document matrix.

    ``queries`` is ``int64[Q, Lq]`` and ``documents`` ``int64[D, Ld]``; pointwise examples
    have ``grades``; pairwise ones use ``docs`` for the better and ``worse`` for the worse.
    """

    queries: torch.Tensor
    documents: torch.Tensor
    query_index: torch.Tensor
    doc_index: torch.Tensor
    grades: torch.Tensor | None = None
    worse_index: torch.Tensor | None = None

    def __len__(self) -> int:
        return int(self.query_index.shape[0])


def index_examples(
    examples: Sequence[Example],
    query_rows: Mapping[str, int],
    doc_rows: Mapping[str, int],
    queries: torch.Tensor,
    documents: torch.Tensor,
) -> EncodedExamples:
    """Look up each example's query and document in the encoded matrices."""
    import torch

    q = torch.tensor([query_rows[e.qid] for e in examples], dtype=torch.long)
    docs = torch.tensor([doc_rows[e.docid] for e in examples], dtype=torch.long)
    grades = torch.tensor([e.grade for e in examples], dtype=torch.long)
    return EncodedExamples(queries, documents, q, docs, grades=grades)


def graded_pairs(points: EncodedExamples) -> torch.Tensor:
    """Every (better, worse) pair of one query's examples whose grades differ.

    ``int64[P, 2]``: indices into ``points`` of the better and the worse example, query by
    query in the order of ``points``.
    """
    import numpy as np
    import torch

    assert points.grades is not None, "pairs are made of pointwise examples"
    queries, grades = points.query_index.numpy(), points.grades.numpy()
    order = np.argsort(queries, kind="stable")
    starts = np.flatnonzero(np.r_[True, queries[order][1:] != queries[order][:-1]])
    parts = [np.zeros((0, 2), dtype=np.int64)]
    for start, end in zip(starts, [*starts[1:], len(order)], strict=True):
        members = order[start:end]
        better, worse = np.nonzero(grades[members][:, None] > grades[members][None, :])
        parts.append(np.stack([members[better], members[worse]], axis=1))
    return torch.from_numpy(np.concatenate(parts))


def epoch_pairs(
    points: EncodedExamples, generator: torch.Generator, per_query: int | None = None
) -> EncodedExamples:
    """One epoch's pairwise examples: each query's (better, worse) pairs, at most
    ``per_query`` of them drawn afresh each epoch (all of them when ``per_query`` is None).

    All pairs of a query are every document of a higher grade above every one of a lower
    grade: on the man pages a median of 23 a query (16,901 for 639 queries), but on DDTP,
    where a package's siblings are partially relevant, a median of 81 and up to 6,641 (3.2
    million for 11k queries). Drawing at most ``per_query`` (default of training: 80) keeps
    98 % of the man pages' pairs and an epoch of DDTP at 668,000; over the epochs the draws
    cover the rest. Pairing each outranked document with one better document only, which
    was tried first, kept a third of the man pages' pairs and lost a quarter of K-NRM's dev
    nDCG@10 (0.26 → 0.19, bilingual fr). The draw depends only on ``generator``.
    """
    import torch

    pairs = graded_pairs(points)
    if per_query is not None and len(pairs):
        query = points.query_index[pairs[:, 0]]
        # A random order within each query, then the first per_query of each.
        shuffled = torch.argsort(torch.rand(len(pairs), generator=generator), stable=True)
        order = shuffled[torch.argsort(query[shuffled], stable=True)]
        sorted_query = query[order]
        rank = torch.arange(len(order)) - torch.searchsorted(sorted_query, sorted_query)
        pairs = pairs[torch.sort(order[rank < per_query]).values]
    return EncodedExamples(
        points.queries,
        points.documents,
        points.query_index[pairs[:, 0]],
        points.doc_index[pairs[:, 0]],
        worse_index=points.doc_index[pairs[:, 1]],
    )
