"""Starting a reranker's embedding tables: rows from ``.vec`` files, the pretrained subword
table, or tied query rows.

``--embeddings`` (or ``--query-embeddings`` and ``--doc-embeddings``) initialise the rows of
the vocabulary words that a ``.vec`` file has (:func:`load_embeddings`), such as the
bilingual vectors of ``clir embed train``; the other rows keep their random start.
``--tie-embeddings`` starts each query word that the document vocabulary also has with its
document vector (:func:`tie_query_rows`), so that a monolingual model begins with exact
matches (K-NRM's exact-match kernel). ``--embeddings use-m3-tokens`` (K-NRM's default)
starts every row with its piece's vector in USE-m3's multilingual subword table
(:mod:`clir_toolkit.rerank.data.subwords`), whose pieces the vocabulary then holds;
``--embeddings none`` keeps the random start.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.errors import ClirError, UsageError
from clir_toolkit.rerank.data.vocabulary import Vocabulary
from clir_toolkit.rerank.training import log
from clir_toolkit.rerank.word.train_config import NO_EMBEDDINGS, TrainConfig, uses_subwords

if TYPE_CHECKING:
    import torch


def tie_query_rows(model: Any, query_vocab: Vocabulary, doc_vocab: Vocabulary) -> int:
    """Start each query word that the document vocabulary also has with its document vector.

    A word then has cosine 1 with itself, which K-NRM's exact-match kernel counts: the
    monolingual model of the thesis (one vocabulary) within the two-table models here.
    Returns the number of rows tied.
    """
    import torch

    pairs = [
        (i, doc_vocab.id(w)) for i, w in enumerate(query_vocab.words) if i > 1 and w in doc_vocab
    ]
    if not pairs:
        return 0
    rows = torch.tensor([q for q, _ in pairs], dtype=torch.long)
    vectors = model.doc_embedding.weight.detach()[torch.tensor([d for _, d in pairs])]
    model.load_embeddings("query", vectors.clone(), rows)
    return len(pairs)


def _embedding_rows(path: Path, vocab: Vocabulary) -> tuple[int, torch.Tensor, torch.Tensor]:
    """``(dimension, vectors, row ids)`` of the vocabulary words that ``path`` (.vec) has.

    A word is looked up as itself and as ``language:word``, the form of the bilingual files
    ``clir embed train`` writes (``en:library``, ``fr:bibliothèque`` in one space); the
    prefixed form wins when a file has both. :func:`clir_toolkit.resources.embeddings.load_vec`
    keeps only the words asked for, so a file of millions of vectors costs one pass, not its
    size in memory.
    """
    import torch

    from clir_toolkit.resources.embeddings import load_vec

    prefix = f"{vocab.language}:"
    words = vocab.words[2:]
    vectors = load_vec(path, vocabulary={*words, *(prefix + word for word in words)})
    ids, matrix = [], []
    for i, word in enumerate(vocab.words):
        if i < 2:
            continue
        row = vectors.index.get(prefix + word, vectors.index.get(word))
        if row is not None:
            ids.append(i)
            matrix.append(row)
    rows = torch.tensor(ids, dtype=torch.long)
    values = torch.as_tensor(vectors.vectors[matrix], dtype=torch.float32)
    return vectors.dim, values.reshape(-1, vectors.dim), rows


def embedding_files(config: TrainConfig) -> dict[str, Path]:
    """The ``.vec`` file of each side (``query``, ``doc``): its own, else ``--embeddings``
    (none for the named sources ``use-m3-tokens`` and ``none``)."""
    if uses_subwords(config):
        return {}
    files = {}
    for side, specific in (("query", config.query_embeddings), ("doc", config.doc_embeddings)):
        chosen = specific or config.embeddings
        if chosen is not None and str(chosen) != NO_EMBEDDINGS:
            files[side] = chosen
    return files


def _subword_rows(vocab: Vocabulary) -> tuple[torch.Tensor, torch.Tensor]:
    """``(vectors, row ids)`` of every row but padding: each piece's row of the subword
    table; the out-of-vocabulary row (a piece unseen in training) gets ``<unk>``'s."""
    import torch

    from clir_toolkit.rerank.data import subwords

    pieces = [subwords.UNKNOWN, *vocab.words[2:]]
    values = torch.as_tensor(subwords.piece_vectors(pieces), dtype=torch.float32)
    return values, torch.arange(1, len(vocab), dtype=torch.long)


def load_subwords(config: TrainConfig, model: Any, vocabs: Mapping[str, Vocabulary]) -> int:
    """Start every row of both tables with the subword table's vectors; returns the pieces."""
    from clir_toolkit.rerank.data import subwords

    if not callable(getattr(model, "load_embeddings", None)):
        raise UsageError(f"the {config.model} model takes no pre-trained embeddings")
    expected = _model_dim(model)
    if expected is not None and expected != subwords.DIM:
        raise UsageError(
            f"{subwords.SOURCE} has vectors of dimension {subwords.DIM}, but the model's "
            f"embeddings have {expected} (pass --dim {subwords.DIM}, or --embeddings none)"
        )
    for side in ("query", "doc"):  # a shared table gets the same rows twice
        values, rows = _subword_rows(vocabs[side])
        model.load_embeddings(side, values, rows)
    count = len(vocabs["doc"]) - 2
    log(config, f"{subwords.SOURCE}: initialised {count} pieces from USE-m3's subword table")
    return count


def load_embeddings(
    config: TrainConfig, model: Any, vocabs: Mapping[str, Vocabulary]
) -> dict[str, int]:
    """Initialise embedding rows from ``.vec`` files; returns the rows found per side."""
    if uses_subwords(config):
        count = load_subwords(config, model, vocabs)
        return {"query": count, "doc": count}
    found = {}
    files = embedding_files(config)
    if files and not callable(getattr(model, "load_embeddings", None)):
        raise UsageError(f"the {config.model} model takes no pre-trained embeddings")
    for side, path in files.items():
        dim, values, rows = _embedding_rows(path, vocabs[side])
        count = int(rows.numel())
        expected = _model_dim(model)
        if expected is not None and dim != expected:
            raise ClirError(
                f"{path}: vectors of dimension {dim}, but the model's embeddings have {expected} "
                f"(pass --dim {dim} or use vectors of dimension {expected})"
            )
        if count:
            model.load_embeddings(side, values, rows)
        found[side] = count
        log(config, f"{path}: initialised {count} of {len(vocabs[side]) - 2} {side} words")
    return found


def _model_dim(model: Any) -> int | None:
    config = model.config()
    value = config.get("dim")
    return int(value) if value is not None else None


def embedding_dim(config: TrainConfig) -> int | None:
    """The dimension of the first embedding file, or of the subword table (so that ``dim``
    may be left out)."""
    from clir_toolkit.resources.embeddings import load_vec

    if uses_subwords(config):
        from clir_toolkit.rerank.data.subwords import DIM

        return DIM

    for path in embedding_files(config).values():
        return load_vec(path, limit=1).dim
    return None
