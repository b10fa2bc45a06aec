"""A fine-tuned sentence encoder's model: two towers over frozen vectors, read and scored.

What :mod:`clir_toolkit.rerank.sentence.tuned` trains and writes, and what scoring a run
(``clir rerank score --model FILE``) and a dense search over fine-tuned towers (``clir
search --model FILE``, :mod:`clir_toolkit.search.dense`) read back: the model
(:class:`TunedEncoder`, the dual encoder's two towers of Liu et al., *Cross-Lingual Document
Retrieval with Smooth Learning*, §3.1, as affine maps over a pretrained encoder's vectors,
scored by the smooth cosine of eq. 1), its model file (:func:`load_tuned`, every key checked)
and the scores of a run's candidates (:func:`score_run_tuned`). Kept apart from the training
so that what reads a model does not depend on the code that trains one.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import Tensor, nn

from clir_toolkit.errors import FormatError
from clir_toolkit.rerank.sentence.tuned_config import MODEL_FORMAT, MODEL_TYPE, TUNED_PARAMS
from clir_toolkit.rerank.sentence.tuned_examples import Split
from clir_toolkit.rerank.word.dual import smooth_cosine

if TYPE_CHECKING:
    from clir_toolkit.encoders import SentenceEncoder
    from clir_toolkit.rerank.candidates import RunCandidates


class TunedEncoder(nn.Module):
    """Two affine maps over frozen sentence vectors, scored by the smooth cosine (eq. 1)."""

    model_type = MODEL_TYPE

    def __init__(self, dim: int, epsilon: float = TUNED_PARAMS["epsilon"].default) -> None:
        super().__init__()
        if dim < 1:
            raise ValueError(f"dim must be at least 1, got {dim}")
        if not 0 <= float(epsilon) < float("inf"):  # NaN fails too
            raise ValueError(f"epsilon must be a finite number at least 0, got {epsilon}")
        if epsilon < 0:
            raise ValueError(f"epsilon must be >= 0, got {epsilon}")
        self.dim, self.epsilon = dim, float(epsilon)
        self.query = nn.Linear(dim, dim)
        self.document = nn.Linear(dim, dim)
        with torch.no_grad():  # the identity: before training, the encoder's own ranking
            for layer in (self.query, self.document):
                nn.init.eye_(layer.weight)
                nn.init.zeros_(layer.bias)

    def config(self) -> dict[str, Any]:
        """The keyword arguments that rebuild this model (stored in the model file)."""
        return {"dim": self.dim, "epsilon": self.epsilon}

    def forward(self, queries: Tensor, documents: Tensor) -> Tensor:
        """``[B]`` scores of the rows of ``queries`` and ``documents`` (``[B, dim]`` each)."""
        return smooth_cosine(self.query(queries), self.document(documents), self.epsilon)


def document_vectors(
    encoder: SentenceEncoder, corpus: Path, cache_dir: Path, docids: Sequence[str], verbose: bool
) -> tuple[dict[str, int], np.ndarray]:
    """Each docid's row in the vectors of ``docids`` (through the encoder's vector cache)."""
    from clir_toolkit.rerank.sentence.pretrained import VectorCache

    rows, vectors, _ = VectorCache(encoder, corpus, cache_dir).vectors(docids, verbose)
    return rows, vectors


def score_candidates(
    model: Any, split: Split, doc_row: Mapping[str, int], documents: Tensor
) -> dict[tuple[str, str], float]:
    """The model's score of every (qid, candidate) of ``split``."""
    was_training = model.training
    model.eval()
    scores: dict[tuple[str, str], float] = {}
    try:
        with torch.inference_mode():
            mapped_queries = model.query(torch.from_numpy(split.queries))
            for qid, docids in split.candidates.items():
                if not docids:
                    continue
                q = mapped_queries[split.query_row[qid]].expand(len(docids), -1)
                d = model.document(documents[[doc_row[docid] for docid in docids]])
                values = smooth_cosine(q, d, model.epsilon)
                scores.update(zip(((qid, docid) for docid in docids), values.tolist(), strict=True))
    finally:
        model.train(was_training)
    return scores


MODEL_KEYS = {
    "format": "str",
    "model_type": "str",
    "config": "table",
    "state_dict": "tensors",
    "encoder": "str",
    "encoder_fingerprint": "str",
    "max_chars": "count",
    "training": "table?",
    "history": "list?",
}


def is_tuned_model(data: Any) -> bool:
    """Whether an object read from a model file is a fine-tuned encoder's."""
    return isinstance(data, dict) and data.get("format") == MODEL_FORMAT


def load_tuned(path: Path, data: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The model of a file's ``data`` (already read with weights only), checked key by key."""
    from clir_toolkit.rerank.model_io import check_record, check_state_dict, meta_skeleton

    what = "a fine-tuned encoder of clir_toolkit"
    record = check_record(path, data, MODEL_KEYS, what)
    config = record["config"]
    try:
        dim, epsilon = int(config["dim"]), float(config["epsilon"])
        # shapes only: checked against the file before allocating
        skeleton = meta_skeleton(lambda: TunedEncoder(dim, epsilon))
    except (KeyError, TypeError, ValueError, RuntimeError, OverflowError) as exc:
        raise FormatError(path, None, f"not {what}: bad config ({exc})") from None
    check_state_dict(path, record["state_dict"], skeleton, what)
    model = TunedEncoder(dim, epsilon)
    model.load_state_dict(record["state_dict"])
    return model.eval(), record


def read_towers(path: Path) -> tuple[Any, str]:
    """The fine-tuned encoder of the file ``path`` and the name of the encoder it was trained
    over: the towers ``clir search --model`` searches through."""
    from clir_toolkit.errors import ClirError
    from clir_toolkit.rerank.model_io import read_model_file

    data = read_model_file(path)
    if not is_tuned_model(data):
        raise ClirError(
            f"{path}: not a fine-tuned encoder, whose towers --model needs (train one with: "
            "clir rerank train --pretrained NAME ...)"
        )
    model, record = load_tuned(path, data)
    return model, str(record["encoder"])


def score_run_tuned(
    path: Path,
    data: Mapping[str, Any],
    read: RunCandidates,
    cache_dir: str | Path | None,
    verbose: bool,
) -> tuple[dict[tuple[str, str], float], str]:
    """Scores of ``read``'s candidates by the fine-tuned encoder of ``path``, and its name."""
    from clir_toolkit.encoders import load_encoder
    from clir_toolkit.rerank.data.documents import cache_dir_for
    from clir_toolkit.rerank.sentence.pretrained import encode_batched

    model, record = load_tuned(path, data)
    encoder = load_encoder(record["encoder"], device="cpu")
    if model.dim != encoder.dim:
        raise FormatError(
            path, None, f"its towers take vectors of {model.dim} dimensions, its encoder "
            f"{encoder.name} makes {encoder.dim}", "fine-tune the model again over this encoder",
        )  # fmt: skip
    if encoder.fingerprint != record["encoder_fingerprint"] and verbose:
        print(
            f"clir: warning: {path} was trained on {record['encoder_fingerprint']}, "
            f"now installed: {encoder.fingerprint}; scores may differ",
            file=sys.stderr,
        )
    qids = list(read.candidates)
    queries = encode_batched(
        encoder, [read.query_texts[q] for q in qids], True, "encoding queries", verbose
    )
    wanted = [docid for q in qids for docid in read.candidates[q]]
    doc_row, vectors = document_vectors(
        encoder, read.collection.corpus, cache_dir_for(read.collection.root, cache_dir),
        wanted, verbose,
    )  # fmt: skip
    split = Split({q: i for i, q in enumerate(qids)}, queries, read.candidates, {})
    scores = score_candidates(model, split, doc_row, torch.from_numpy(vectors))
    return scores, f"{MODEL_TYPE}-{encoder.name}"
