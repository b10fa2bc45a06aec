"""The word-level family's side of the reranker contract (:mod:`clir_toolkit.rerank.contract`).

K-NRM, the dual encoder and the plug-in architectures (:mod:`clir_toolkit.rerank.models`)
are trained from word ids by :func:`clir_toolkit.rerank.word.train.train_reranker`, saved
with their vocabularies (:mod:`clir_toolkit.rerank.word.model_file`), and score a run's
candidates in batches of padded id matrices (:mod:`clir_toolkit.rerank.word.batches`) —
batches that workers of a Ray cluster can score as well (:mod:`clir_toolkit.distributed`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.rerank.contract import ScoredCandidates, ScoreRequest
from clir_toolkit.rerank.data.subwords import SOURCE as SUBWORD_SOURCE
from clir_toolkit.rerank.word.model_file import MODEL_FORMAT, LoadedReranker

if TYPE_CHECKING:
    import torch

    from clir_toolkit.rerank.training import TrainReport
    from clir_toolkit.rerank.word.train_config import TrainConfig

SUBWORD_INTERPOLATION = 0.4
"""λ with the first stage of a K-NRM on USE-m3's subword table when none is given, chosen by
transfer: the best mean dev nDCG@10 over six cells where the model reranks the zero-shot
hybrid of a collection it was not trained on (man pages fr ↔ de, man pages ↔ DDTP;
``transfer/DEFAULTS.md``). A model is mostly used on such a collection. The λ chosen before,
0.8, was the best on the French man pages' own dev split, and off them it fell below the
hybrid it reranked in every cell. ``--interpolate 1`` ranks by the model alone; ``clir rerank
score --dev-run`` chooses λ on a collection's own dev split, where it has judgements."""


def interpolation_for(reranker: LoadedReranker, interpolate: float | None) -> float | None:
    """λ as given, or the measured default of the model's kind when none is given:
    :data:`SUBWORD_INTERPOLATION` for a K-NRM on USE-m3's subword table, the model alone
    (None) for the word-level models."""
    if interpolate is None and reranker.doc_vocab.tokens == SUBWORD_SOURCE:
        return SUBWORD_INTERPOLATION
    return interpolate


class WordLevel:
    """Word-level rerankers: trained from word ids, scored in batches (also on Ray)."""

    name = "word-level reranker"
    model_format = MODEL_FORMAT
    distributable = True

    def train(self, config: TrainConfig) -> TrainReport:
        """:func:`clir_toolkit.rerank.word.train.train_reranker`."""
        from clir_toolkit.rerank.word.train import train_reranker

        return train_reranker(config)

    def load(
        self, path: Path, data: Mapping[str, Any], device: str | torch.device
    ) -> LoadedReranker:
        """:func:`clir_toolkit.rerank.word.model_file.load_model`: the model and its
        vocabularies and lengths."""
        from clir_toolkit.rerank.word.model_file import load_model

        return load_model(path, device, data)

    def score(self, path: Path, data: Mapping[str, Any], request: ScoreRequest) -> ScoredCandidates:
        """The candidates encoded as in training (documents through the tensor cache) and
        scored in batches on ``device``."""
        from clir_toolkit.rerank.word.batches import encode_run, score_encoded

        r = request
        reranker = self.load(path, data, r.device)
        ranked, encoded = encode_run(reranker, r.collection, r.topics, r.run, r.depth, r.cache_dir)
        neural = score_encoded(reranker.model, encoded, r.device, r.batch_size, r.precision)
        return ScoredCandidates(
            ranked, neural, reranker.model_type, str(r.device),
            interpolation_for(reranker, r.interpolate),
        )  # fmt: skip


WORD_LEVEL = WordLevel()
"""The word-level family."""
