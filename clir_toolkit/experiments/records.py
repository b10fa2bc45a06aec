"""The records the recipe modules pass between them: a recipe as read from its file, the
runs it wrote for one language, and what RESULTS.md reports of a reranked row.

They sit below every other module of :mod:`clir_toolkit.experiments`: the reader
(:mod:`~clir_toolkit.experiments.recipe`), the runners and the report writers all use them,
and none of those needs another to name them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class RerankDetails:
    """What RESULTS.md reports about a reranked row besides its measures."""

    first_stage: str
    model: Path
    model_description: str
    trained_on: str
    tested_with: str
    summary: dict[str, Any]
    reused: bool
    query_oov: dict[str, float]
    sweep: dict[str, Any] = field(default_factory=dict)
    figure: str | None = None
    figure_title: str | None = None
    training_scores: dict[int, list[float]] = field(default_factory=dict)
    thresholds: tuple[float, float] | None = None


@dataclass(frozen=True)
class Recipe:
    """One system, as read from its TOML file."""

    path: Path
    name: str
    title: str
    group: str
    languages: tuple[str, ...]
    collection: str = "manpages"
    variant: str = "standard"
    topics: str = "english"
    baseline: bool = False
    kind: str = "search"
    search: dict[str, Any] = field(default_factory=dict)
    tune: dict[str, list[Any]] = field(default_factory=dict)
    rerank: dict[str, Any] = field(default_factory=dict)
    pipeline: dict[str, Any] = field(default_factory=dict)
    #: Moved onto another collection than its file declares (:func:`~clir_toolkit.
    #: experiments.recipe.retarget`): a model's trainer run where ``[rerank]
    #: train_collection`` says, and the recipes it names with it.
    retargeted: bool = False

    @property
    def groups(self) -> tuple[str, ...]:
        """The groups the row belongs to (``group`` may list several, joined by " / ")."""
        return tuple(g.strip() for g in self.group.split(" / "))


@dataclass
class RecipeOutcome:
    """The runs one recipe wrote for one language (``runs``: split → run file).

    A rerank recipe also names the first-stage run it reranked on each split, which
    RESULTS.md tests it against, and the details of its reranker.
    """

    recipe: Recipe
    language: str
    runs: dict[str, Path]
    chosen: dict[str, Any]
    seconds: float
    first_stage: dict[str, Path] = field(default_factory=dict)
    rerank: RerankDetails | None = None
