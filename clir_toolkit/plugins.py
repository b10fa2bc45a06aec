"""Plug-ins: components a user's package adds by name, without editing the toolkit.

A package declares a component in an *entry-point group* of its ``pyproject.toml``, the
mechanism PyTerrier uses for its dataset providers and pytest for its plug-ins::

    [project.entry-points."clir_toolkit.translators"]
    my-translator = "my_package.translate:MyTranslator"

Once the package is installed (``pip install -e .``), ``my-translator`` is a name like the
built-in ones: ``clir search --translate my-translator`` and ``translate =
"my-translator"`` in a recipe accept it, and the toolkit imports ``MyTranslator`` only when
it is used. Groups, and what a component is called with:

* ``clir_toolkit.translators``: a class or function ``(target_lang: str) -> Translator``
  (:class:`clir_toolkit.translate.Translator`: ``name`` and ``translate(queries)``); set
  ``structured = True`` on it when its queries give weighted alternatives per source term,
  so that searches pool them with Pirkola's structure by default.
* ``clir_toolkit.expanders``: a class or function ``() -> expander`` whose
  ``expand(queries)`` returns the English structured queries with terms added (as
  :class:`clir_toolkit.expand.wordnet.WordNetExpander` does), before translation.
* ``clir_toolkit.losses``: a function ``loss(scores, grades) -> Tensor`` (the mean over the
  batch, as :mod:`clir_toolkit.rerank.losses`), or ``loss(better_scores, worse_scores)``
  with ``pairwise = True`` on it; or a ``torch.nn.Module`` class, made with no arguments,
  whose parameters are trained with the model.
* ``clir_toolkit.rerankers``: a ``torch.nn.Module`` class built as
  ``Model(query_vocab_size, doc_vocab_size, dim=300)``, whose ``forward(query_ids,
  doc_ids)`` scores ``LongTensor[B, n]`` and ``[B, m]`` token ids (0 pads, 1 is the unknown
  word) as ``Tensor[B]``, and whose ``config()`` returns the keyword arguments that rebuild
  it (saved in the model file). Optional: ``load_embeddings(side, vectors, rows)`` for
  ``--embeddings``, ``default_loss`` (else ``sosl``) and ``default_lr`` (else 1e-3).
  ``clir rerank train --model NAME`` trains it like K-NRM and the dual encoder, and
  ``clir rerank score`` reads its model files.
* ``clir_toolkit.encoders``: a subclass of :class:`clir_toolkit.encoders.SentenceEncoder`,
  made as ``Encoder(threads=None, device="cpu")``, that sets ``dim`` and whose
  ``embed(texts, query)`` returns one vector per text (``query`` says queries from
  documents); ``distribution`` names the PyPI package whose name and version the vectors
  depend on (the caches' and indexes' fingerprint), ``interpolation`` its λ with the first
  stage (else 0.7). ``clir index --dense NAME``, ``clir search --dense``, ``clir rerank
  score --pretrained NAME`` and ``clir rerank train --pretrained NAME`` take it.
* ``clir_toolkit.collections``: a subclass of
  :class:`clir_toolkit.collection.builder.CollectionFamily`, made with its name, declaring
  ``languages`` and ``variants`` and building with ``build(language, out, variant,
  progress, **options)``; ``clir collection build NAME`` and a recipe's ``collection =
  "NAME"`` take it.

:mod:`clir_toolkit.registry` lists the built-in names of a kind followed by the installed
plug-ins', looked up the first time they are needed, so that ``clir --help`` stays fast.
"""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING, Any

from clir_toolkit.errors import UsageError

if TYPE_CHECKING:
    from importlib import metadata

TRANSLATORS = "clir_toolkit.translators"
"""The entry-point group of translators."""
EXPANDERS = "clir_toolkit.expanders"
"""The entry-point group of pre-translation query expanders."""
LOSSES = "clir_toolkit.losses"
"""The entry-point group of the rerankers' training losses."""
RERANKERS = "clir_toolkit.rerankers"
"""The entry-point group of word-level reranker models."""
ENCODERS = "clir_toolkit.encoders"
"""The entry-point group of pretrained sentence encoders."""
COLLECTIONS = "clir_toolkit.collections"
"""The entry-point group of collection families (what a recipe's ``collection`` names)."""


def installed(group: str) -> dict[str, metadata.EntryPoint]:
    """The entry points of ``group`` in the installed distributions, by name."""
    return {point.name: point for point in _entry_points(tuple(sys.path)).select(group=group)}


@functools.lru_cache(maxsize=4)
def _entry_points(path: tuple[str, ...]) -> Any:
    """Every installed entry point, read once per ``sys.path`` (reading them means opening
    every distribution's metadata, about 10 ms: once for all groups, not once per group;
    importing ``importlib.metadata`` costs as much again, so it waits for the first read)."""
    from importlib import metadata

    return metadata.entry_points()


def load(group: str, name: str) -> Any:
    """The object that plug-in ``name`` of ``group`` names, imported now.

    A name no package provides, or a plug-in that fails to import, is one UsageError that
    names the package, so that a broken plug-in never shows a traceback.
    """
    point = installed(group).get(name)
    if point is None:
        raise UsageError(f"no installed plug-in provides {name!r} ({group})")
    try:
        return point.load()
    except Exception as exc:  # a plug-in's import error, whatever it is
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise UsageError(
            f"the plug-in {name!r} ({point.value}, entry point of {group}) cannot be "
            f"imported: {detail}"
        ) from None
