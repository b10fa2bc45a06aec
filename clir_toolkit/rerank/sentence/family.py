"""The fine-tuned sentence encoders' side of the reranker contract
(:mod:`clir_toolkit.rerank.contract`).

A pretrained multilingual sentence encoder fine-tuned by smooth learning
(:func:`clir_toolkit.rerank.sentence.tuned.train_tuned`) is saved as its two maps and the
encoder's name (:mod:`clir_toolkit.rerank.sentence.tuned_model`); scoring encodes the
queries and the candidates with that encoder (documents through its vector cache), in one
process: its pairs are vectors, not batches of word ids a cluster could share.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.rerank.contract import ScoredCandidates, ScoreRequest
from clir_toolkit.rerank.sentence.tuned_config import INTERPOLATION, MODEL_FORMAT

if TYPE_CHECKING:
    import torch

    from clir_toolkit.rerank.sentence.tuned_config import TunedConfig
    from clir_toolkit.rerank.training import TrainReport


class FineTuned:
    """Fine-tuned sentence encoders: two maps over a frozen encoder's vectors."""

    name = "fine-tuned encoder"
    model_format = MODEL_FORMAT
    distributable = False

    def train(self, config: TunedConfig) -> TrainReport:
        """:func:`clir_toolkit.rerank.sentence.tuned.train_tuned`."""
        from clir_toolkit.rerank.sentence.tuned import train_tuned

        return train_tuned(config)

    def load(self, path: Path, data: Mapping[str, Any], device: str | torch.device) -> Any:
        """The two maps of the file (on the CPU: they are tiny, and so is their work)."""
        from clir_toolkit.rerank.sentence.tuned_model import load_tuned

        return load_tuned(path, data)[0]

    def score(self, path: Path, data: Mapping[str, Any], request: ScoreRequest) -> ScoredCandidates:
        """Queries and candidates encoded by the file's encoder and mapped by its towers, on
        the CPU; λ defaults to the measured :data:`~.tuned_config.INTERPOLATION`."""
        from clir_toolkit.rerank.candidates import read_candidates
        from clir_toolkit.rerank.sentence.tuned_model import score_run_tuned

        r = request
        read = read_candidates(r.collection, r.topics, r.run, r.depth)
        neural, name = score_run_tuned(path, data, read, r.cache_dir, r.verbose)
        chosen = INTERPOLATION if r.interpolate is None else r.interpolate
        return ScoredCandidates(read.ranked, neural, name, "cpu", chosen)


FINE_TUNED = FineTuned()
"""The family of fine-tuned sentence encoders."""
