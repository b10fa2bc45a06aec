"""Where and how one ``clir run`` works: its workspace, its options, what it builds on demand.

A :class:`RunContext` is passed to every recipe runner instead of module-level switches: the
:class:`Workspace` (where collections, indexes, runs and models live), ``quiet``, and
``force`` with the time the run started. :meth:`RunContext.reusable` is the reuse rule of
every file a run makes: fresh by :mod:`clir_toolkit.freshness` (same inputs, parameters and
code of the modules it depends on) and, under ``clir run --force``, made by this run — so a
forced run makes everything again, but a model or a first stage that two recipes share only
once.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.collection.builder import family as collection_family
from clir_toolkit.freshness import is_fresh
from clir_toolkit.progress import log

if TYPE_CHECKING:
    from clir_toolkit.experiments.records import Recipe

AUTO_EMBED_DIM = 100
AUTO_EMBED_EPOCHS = 10


@dataclass(frozen=True)
class Workspace:
    """Where collections, indexes and runs live (relative to the repository root)."""

    data: Path = Path("data")
    indexes: Path = Path("indexes")
    runs: Path = Path("runs")
    models: Path = Path("models")

    def collection_name(self, family: str, language: str, variant: str) -> str:
        """``manpages-en-fr``, ``ddtp-en-fr-hard``: the family's name of the collection."""
        return collection_family(family).collection_name(language, variant)

    def collection(self, family: str, language: str, variant: str) -> Path:
        return self.data / self.collection_name(family, language, variant)

    def index(self, family: str, language: str, variant: str) -> Path:
        return self.indexes / self.collection_name(family, language, variant)

    def run(self, recipe: Recipe, language: str, split: str) -> Path:
        name = self.collection_name(recipe.collection, language, recipe.variant)
        return self.runs / name / split / f"{recipe.name}.trec"


@dataclass(frozen=True)
class RunContext:
    """One ``clir run``: its workspace, whether it is quiet, and whether it was forced."""

    workspace: Workspace = field(default_factory=Workspace)
    quiet: bool = False
    force: bool = False
    """``clir run --force``: make every file again, even a fresh one (once per run)."""
    started: float = field(default_factory=time.time)
    """When the run began (``time.time()``): under ``force``, files made since are reused."""

    def log(self, message: str) -> None:
        """A progress line on stderr, unless the run is quiet."""
        log(self.quiet, message)

    def reusable(self, path: Path, key: str, code: Sequence[str] | None = None) -> bool:
        """Whether to reuse ``path``: fresh for ``key`` and the code of the modules ``code``
        (:func:`~clir_toolkit.freshness.is_fresh`) and, under ``force``, made by this run."""
        if self.force and path.is_file() and path.stat().st_mtime < self.started:
            return False
        return is_fresh(path, key, code)


def ensure_collection(context: RunContext, family: str, language: str, variant: str) -> Path:
    """The family's collection en→language, built if it is not there yet."""
    path = context.workspace.collection(family, language, variant)
    if not (path / "manifest.json").is_file():
        context.log(f"building collection {path}")
        collection_family(family).build(language, path, variant, not context.quiet)
    return path


def ensure_index(context: RunContext, family: str, language: str, variant: str) -> Path:
    """The index of that collection, built if missing or built from another collection."""
    from clir_toolkit.index import build_index, is_index_of

    collection = ensure_collection(context, family, language, variant)
    index = context.workspace.index(family, language, variant)
    if not is_index_of(index, collection):
        context.log(f"indexing {collection} → {index}")
        build_index(collection, index, verbose=False)
    return index


def ensure_vectors(
    context: RunContext, family: str, language: str, variant: str, encoder: str
) -> Path:
    """The index of that collection holding its documents' vectors by ``encoder``, in the
    installed version: added (as ``clir index --dense ENCODER`` adds them, without rebuilding
    Lucene) when it holds none, another encoder's or another version's."""
    from clir_toolkit.encoders import encoder_fingerprint
    from clir_toolkit.index import add_dense_vectors, read_index_info

    index = ensure_index(context, family, language, variant)
    record = read_index_info(index).dense
    fingerprint = encoder_fingerprint(encoder)
    if record is None or (record.encoder, record.fingerprint) != (encoder, fingerprint):
        context.log(f"adding the documents' {encoder} vectors to {index}")
        collection = context.workspace.collection(family, language, variant)
        add_dense_vectors(index, encoder, collection, verbose=False)
    return index


def resolve_auto_resources(
    options: dict[str, Any], language: str, context: RunContext
) -> dict[str, Any]:
    """Replace ``"auto"`` resources by files under ``data/``, built when missing.

    ``parallel = "auto"``: the gettext parallel text en→language (``clir resource parallel``);
    ``embed = "auto"``: aligned embeddings trained offline (``clir embed train``).
    """
    options = dict(options)
    if options.get("parallel") == "auto":
        path = context.workspace.data / "parallel" / f"en-{language}.tsv"
        if not path.is_file():
            from clir_toolkit.resources.parallel import collect_parallel

            collect_parallel(language, path)
        options["parallel"] = str(path)
    if options.get("embed") == "auto":
        path = context.workspace.data / "embeddings" / f"en-{language}.vec"
        if not path.is_file():
            from clir_toolkit.translate.embed_train import train_bilingual_embeddings

            # Smaller than `clir embed train`'s defaults (300-d, 20 epochs) so that the
            # recipes stay within their time budget on two cores.
            train_bilingual_embeddings(
                language, path, dim=AUTO_EMBED_DIM, epochs=AUTO_EMBED_EPOCHS, progress=False
            )
        options["embed"] = str(path)
    return options
