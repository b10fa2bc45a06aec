"""What the PyTerrier adapters share: PyTerrier itself, or one line saying how to install it,
and the reading of their DataFrames' columns (:mod:`clir_toolkit.integrations.pyterrier`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from clir_toolkit.errors import ResourceError, UsageError

try:
    import pyterrier as pt
except ImportError:
    raise ResourceError(
        "PyTerrier is not installed; install the extra with: pip install 'clir_toolkit[pyterrier]'"
    ) from None

__all__ = ["column_ids", "column_texts", "pt", "require_columns", "results_frame"]


def require_columns(frame: pd.DataFrame, columns: Iterable[str], who: str) -> None:
    """One UsageError naming the columns ``frame`` lacks, and those it has."""
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise UsageError(
            f"{who} needs the column(s) {', '.join(missing)}; "
            f"the DataFrame has: {', '.join(map(str, frame.columns)) or 'none'}"
        )


def column_ids(frame: pd.DataFrame, column: str) -> list[str]:
    """The ids of a column as strings (PyTerrier's qids and docnos are strings; numbers too)."""
    return [str(value) for value in frame[column]]


def column_texts(frame: pd.DataFrame, column: str) -> list[str]:
    """The texts of a column; a value that is not a string (NaN, a number) is a UsageError."""
    values = list(frame[column])
    for position, value in enumerate(values):
        if not isinstance(value, str):
            raise UsageError(
                f"the '{column}' column holds {type(value).__name__} {value!r} in row "
                f"{position + 1}, not text"
            )
    return values


def results_frame(inp: pd.DataFrame, found: Iterable[Sequence[Any]]) -> pd.DataFrame:
    """PyTerrier's results frame: for each query row of ``inp`` in turn, one row per hit of
    ``found`` (its hits, best first) with ``docno``, ``score`` and ``rank`` (from 0)."""
    positions: list[int] = []
    docnos: list[str] = []
    scores: list[float] = []
    ranks: list[int] = []
    for position, hits in enumerate(found):
        for rank, hit in enumerate(hits, start=pt.model.FIRST_RANK):
            positions.append(position)
            docnos.append(hit.docid)
            scores.append(hit.score)
            ranks.append(rank)
    out = inp.iloc[positions].reset_index(drop=True)
    out["docno"] = pd.Series(docnos, dtype=object)
    out["score"] = pd.Series(scores, dtype="float64")
    out["rank"] = pd.Series(ranks, dtype="int64")
    return out
