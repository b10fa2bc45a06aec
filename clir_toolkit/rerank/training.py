"""What the training of every family of rerankers shares: its dev measure, its log lines,
the settings it records and what it reports.

Both trainers — the word-level models' (:mod:`clir_toolkit.rerank.word.train`) and the
fine-tuned sentence encoders' (:mod:`clir_toolkit.rerank.sentence.tuned`) — keep the epoch
with the best :data:`DEV_MEASURE` on the dev split, print their progress with :func:`log`,
record their settings in the model file (:func:`recorded_settings`) and return a
:class:`TrainReport` (the ``train`` of the reranker contract, :mod:`clir_toolkit.rerank.contract`).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEV_MEASURE = "nDCG@10"
"""The measure the best epoch is chosen by, on the dev split."""


@dataclass
class EpochRecord:
    """One epoch: phase (``parallel`` pre-training or ``relevance``), mean loss, dev score."""

    epoch: int
    phase: str
    loss: float
    dev: float | None
    seconds: float


@dataclass
class TrainReport:
    """What a training did (either family's: a fine-tuned encoder has no vocabularies, 0)."""

    output: Path
    checkpoint: Path
    model: str
    loss: str
    device: str
    examples: int
    query_vocab_size: int
    doc_vocab_size: int
    start_epoch: int
    best_epoch: int
    best_dev: float | None
    history: list[EpochRecord] = field(default_factory=list)
    seconds: float = 0.0


def recorded_settings(config: Any) -> dict[str, Any]:
    """The JSON-serialisable settings of a config (a dataclass) recorded in the model file."""
    values = dataclasses.asdict(config)
    return {k: str(v) if isinstance(v, Path) else v for k, v in values.items()}


def log(config: Any, message: str) -> None:
    """Progress of a training (any config with ``verbose``) on stderr, unless it is off."""
    if config.verbose:
        print(message, file=sys.stderr, flush=True)


def mean_measure(qrels: Sequence[Any], rows: Sequence[Any], measure: str) -> float:
    """Mean of an ir_measures measure over the qrels' queries (0 for unanswered ones)."""
    import ir_measures

    from clir_toolkit.evaluate import parse_measures

    parsed = parse_measures(measure)[0]
    judged = {q.qid for q in qrels}
    values = dict.fromkeys(judged, 0.0)
    run = [ir_measures.ScoredDoc(r.qid, r.docid, float(r.score)) for r in rows if r.qid in judged]
    qrel_records = [ir_measures.Qrel(q.qid, q.docid, int(q.relevance)) for q in qrels]
    for metric in ir_measures.iter_calc([parsed], qrel_records, run):
        if metric.query_id in values:
            values[metric.query_id] = float(metric.value)
    return sum(values.values()) / len(values) if values else 0.0
