"""Word vectors in the fastText / MUSE text format (``.vec``): read, normalise, write.

Embedding-based query translation replaces each query word by its nearest neighbours in a
cross-lingual embedding space (thesis §2.3; the aligned spaces of Smith et al. 2017 and
MUSE, Conneau et al. 2018). Those spaces are exchanged as ``.vec`` text files: a header line
``<count> <dimension>``, then one word per line followed by its ``dimension`` numbers, all
separated by single spaces, most frequent words first::

    3 4
    the 0.0418 -0.0126 0.0323 0.0150
    file 0.1234 0.0567 -0.0089 0.0712
    fichier 0.1190 0.0601 -0.0102 0.0698

Files without the header (GloVe's text format) are accepted too: the dimension is then
taken from the first line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clir_toolkit.errors import FormatError, UsageError
from clir_toolkit.files import atomic_write
from clir_toolkit.formats import iter_lines, parse_int, parse_number, quoted

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Embeddings", "load_vec", "save_vec"]


@dataclass(frozen=True, eq=False)
class Embeddings:
    """Words and their vectors: row ``index[word]`` of ``vectors`` belongs to ``word``."""

    words: list[str]
    index: dict[str, int]
    #: float32, shape ``(len(words), dim)``.
    vectors: np.ndarray

    @classmethod
    def from_arrays(cls, words: Sequence[str], vectors: np.ndarray) -> Embeddings:
        """Embeddings of ``words`` (unique) with ``vectors`` as rows (converted to float32)."""
        import numpy as np

        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(words):
            raise ValueError(f"{len(words)} words need a matrix of {len(words)} rows")
        index = {word: row for row, word in enumerate(words)}
        if len(index) != len(words):
            raise ValueError("words must be unique")
        return cls(list(words), index, matrix)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self.index

    def vector(self, word: str) -> np.ndarray:
        """The vector of ``word`` (a KeyError names the word when it has none)."""
        try:
            return self.vectors[self.index[word]]
        except KeyError:
            raise KeyError(f"no vector for {word!r}") from None

    def normalised(self) -> Embeddings:
        """The same words with unit-length vectors (zero vectors stay zero), for cosines."""
        import numpy as np

        norms = np.linalg.norm(self.vectors, axis=1, keepdims=True)
        unit = self.vectors / np.where(norms > 0, norms, 1.0)
        return Embeddings(list(self.words), dict(self.index), unit.astype(np.float32))


# Two runs of digits of any script: the shape of a header line. Its numbers must then be
# written with ASCII digits (Python's int() reads "١٢" as 12; no other program does).
_HEADER = re.compile(r"\d+ \d+")
# What the numbers of a vector line are written with: ASCII digits, signs, '.', exponents,
# and the letters of nan/inf (refused, with their own message, once parsed).
_NUMBER_TEXT = re.compile(r"[-+.0-9eE ]*|.*[nN][aA][nN].*|.*[iI][nN][fF].*")
_MAX_COUNT = 2**63 - 1


def _header(path: Path, line: str) -> tuple[int, int] | None:
    """``(count, dim)`` if the first line is a ``.vec`` header, else None."""
    if not _HEADER.fullmatch(line.rstrip()):
        return None
    count, dim = line.split()
    fix = "the header is '<count> <dimension>' in the digits 0-9"
    return (
        parse_int(path, 1, "vector count", count, low=0, high=_MAX_COUNT, fix=fix),
        parse_int(path, 1, "dimension", dim, low=1, high=_MAX_COUNT, fix=fix),
    )


def load_vec(
    path: str | Path, limit: int | None = None, vocabulary: set[str] | None = None
) -> Embeddings:
    """Read a ``.vec`` file; ``limit`` keeps the first N vectors, ``vocabulary`` only those words.

    ``limit`` counts kept vectors (after ``vocabulary``), so ``limit=50000`` on a file sorted
    by frequency keeps the 50,000 most frequent words. A word repeated in the file keeps its
    first vector. Wrong numbers of values, non-numbers and infinities are reported with the
    file and line.
    """
    import numpy as np

    path = Path(path)
    if limit is not None and limit < 0:
        raise UsageError(f"limit must be >= 0, not {limit}")
    words: list[str] = []
    index: dict[str, int] = {}
    rows: list[np.ndarray] = []
    dim: int | None = None
    declared: int | None = None
    lines_read = 0
    for number, line in iter_lines(path):
        if number == 1 and (header := _header(path, line)) is not None:
            declared, dim = header
            continue
        text = line.rstrip()
        fields = text.split(" ")
        if limit is not None and len(words) >= limit:
            break
        if not line.strip():
            raise FormatError(path, number, "empty line", "remove it")
        lines_read += 1
        word, values = fields[0], fields[1:]
        if dim is None:
            dim = len(values)
            if dim == 0:
                raise FormatError(path, number, "a word without numbers", "write: word v1 v2 ...")
        if len(values) != dim:
            raise FormatError(
                path,
                number,
                f"{len(values)} numbers after {quoted(word)}, expected {dim}",
                "every line needs the dimension given by the header or the first line",
            )
        if word in index or (vocabulary is not None and word not in vocabulary):
            continue
        rows.append(_numbers(path, number, values, text[len(word) + 1 :]))
        index[word] = len(words)
        words.append(word)
    if declared is not None and limit is None and lines_read != declared:
        raise FormatError(
            path,
            1,
            f"the header announces {declared} vectors but the file has {lines_read}",
            "the file is truncated or its header is wrong",
        )
    matrix = np.stack(rows) if rows else np.zeros((0, dim or 0), dtype=np.float32)
    return Embeddings(words, index, matrix)


def _numbers(path: Path, number: int, values: list[str], text: str) -> np.ndarray:
    """The numbers of one line (``values``, split from ``text``) as float32; a FormatError
    names the first that is not one.

    numpy reads numbers as Python's float() does, which also takes other scripts' digits
    ("٢"), underscores ("1_0") and surrounding white space: one pattern over the whole text
    (fast) lets through only ASCII notation, checked value by value when it fails.
    """
    import numpy as np

    if _NUMBER_TEXT.fullmatch(text):
        try:
            with np.errstate(over="ignore"):  # too large for float32: caught as infinite below
                row = np.array(values, dtype=np.float32)
        except ValueError:
            row = None
        if row is not None:
            if not np.isfinite(row).all():
                raise FormatError(path, number, "infinite, NaN or too large value")
            return row
    for value in values:
        if value.lstrip("+-").lower() not in ("nan", "inf", "infinity"):
            parse_number(path, number, "", value, "write numbers such as -0.0125 or 1e-3")
    raise FormatError(path, number, "infinite, NaN or too large value")


def save_vec(path: str | Path, words: Sequence[str], vectors: np.ndarray) -> None:
    """Write ``words`` and their ``vectors`` (rows) as a ``.vec`` file, atomically.

    Numbers are written with 9 significant digits, enough for float32 values to read back
    exactly.
    """
    import numpy as np

    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != len(words):
        raise UsageError(f"{len(words)} words but a vector matrix of shape {matrix.shape}")
    if not np.isfinite(matrix).all():
        raise UsageError("the vectors contain infinite or NaN values")
    for word in words:
        if not word or word != "".join(word.split()):
            raise UsageError(f"word {word!r} is empty or contains white space: .vec cannot hold it")
    if len(set(words)) != len(words):
        raise UsageError("the words are not unique")
    with atomic_write(Path(path)) as handle:
        handle.write(f"{matrix.shape[0]} {matrix.shape[1]}\n")
        for word, row in zip(words, matrix, strict=True):
            handle.write(word + " " + " ".join(format(float(value), ".9g") for value in row) + "\n")
