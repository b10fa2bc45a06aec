"""The typed records that the readers yield and the writers take: one class per format.

A :class:`Topic` is a line of a topics file, a :class:`Qrel` of a qrels file, a
:class:`RunRow` of a run and a :class:`Doc` a document of a corpus. They are frozen, so a
record read from one file can be handed to any stage without being copied.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Topic:
    """One information need: ``query`` is what the system searches with."""

    qid: str
    query: str
    description: str = ""
    narrative: str = ""
    lang: str = ""


@dataclass(frozen=True, slots=True)
class Qrel:
    """One relevance judgement: document ``docid`` has grade ``relevance`` for ``qid``."""

    qid: str
    docid: str
    relevance: int
    iteration: str = "0"


@dataclass(frozen=True, slots=True)
class RunRow:
    """One retrieved document: its ``rank`` and ``score`` in the ranking for ``qid``."""

    qid: str
    docid: str
    rank: int
    score: float
    tag: str = "clir"


@dataclass(frozen=True, slots=True)
class Doc:
    """One document of a corpus; ``contents`` is the text that gets indexed."""

    id: str
    contents: str
    title: str = ""


PathLike = str | Path
