"""The one contract every family of trained rerankers keeps: train, save, load, score.

Two families of rerankers live in this package, and they differ in everything inside:

* the **word-level** models (:mod:`clir_toolkit.rerank.word`: K-NRM, the dual encoder, a
  plug-in's architecture) learn word embeddings from word ids, in batches of padded id
  matrices, with vocabularies saved in the model file;
* the **fine-tuned sentence encoders** (:mod:`clir_toolkit.rerank.sentence`) learn two maps
  over a frozen pretrained encoder's vectors, with the encoder's name saved instead.

What the rest of the toolkit needs of either is the same four steps, and this module says
what they are (:class:`Reranker`). ``train`` fits a model on a collection's judgements and
*saves* it: one model file, written atomically, whose ``format`` key names its family
(:attr:`Reranker.model_format`). ``load`` reads such a file back, every key checked.
``score`` gives the model's score of each (query, candidate) pair of a first-stage run,
which :mod:`clir_toolkit.rerank.score` turns into the reranked run. The command line
(``clir rerank train``, ``clir rerank score``), the scoring of a run and its distributed
twin on Ray ask which family a model file belongs to once
(:func:`clir_toolkit.rerank.score.reranker_of`) and call the contract, instead of each
choosing between the families with its own conditions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import torch

    from clir_toolkit.formats import RunRow
    from clir_toolkit.rerank.training import TrainReport


@dataclass
class ScoredCandidates:
    """A run's candidates scored by a model: what the reranked run is written from."""

    ranked: dict[str, list[RunRow]]
    """Each query's rows of the first-stage run, in the order trec_eval reads them."""
    neural: dict[tuple[str, str], float]
    """The model's score of each reranked (qid, docid)."""
    model: str
    """The model's name: the reranked run's tag unless another is asked."""
    device: str
    """Where the pairs were scored, in words."""
    interpolate: float | None
    """λ of the interpolation with the first stage: the one asked, else the family's
    measured default (None: the model alone)."""


@dataclass(frozen=True)
class ScoreRequest:
    """What ``clir rerank score`` asks of a model file: the candidates to score and how."""

    collection: str | Path
    topics: str | Path
    run: str | Path
    """The first-stage run whose top :attr:`depth` candidates of each query are scored."""
    depth: int
    device: torch.device
    batch_size: int | None
    """Pairs per scoring batch (None: the device's default)."""
    precision: str
    interpolate: float | None
    """λ asked for (None: the family's measured default)."""
    cache_dir: str | Path | None
    verbose: bool


class Reranker(Protocol):
    """A family of trained rerankers: how its models are trained, saved, loaded and scored."""

    name: str
    """The family, in words (for messages)."""
    model_format: str
    """The ``format`` its model files record: how a file says which family it belongs to."""
    distributable: bool
    """Whether its pairs can be scored in batches by workers of a Ray cluster."""

    def train(self, config: Any) -> TrainReport:
        """Train on ``config``'s judgements and save the model file ``config.output``."""
        ...

    def load(self, path: Path, data: Mapping[str, Any], device: str | torch.device) -> Any:
        """The model of the file ``path``, whose content ``data`` was read with
        :func:`clir_toolkit.rerank.model_io.read_model_file`; every key checked."""
        ...

    def score(self, path: Path, data: Mapping[str, Any], request: ScoreRequest) -> ScoredCandidates:
        """The scores of the top ``request.depth`` candidates of each query of the request's
        run by the model of the file ``path`` (content ``data``), and the interpolation
        they are ranked with."""
        ...
