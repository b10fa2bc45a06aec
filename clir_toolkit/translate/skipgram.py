"""Monolingual word vectors: skip-gram with negative sampling, trained with gensim.

Step 3 of ``clir embed train`` (:mod:`clir_toolkit.translate.embed_train`): each language's
vectors are trained separately (Mikolov et al. 2013, gensim's ``Word2Vec(sg=1)``) on the
tokens of :func:`clir_toolkit.translate.embed_text.tokenise_file`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clir_toolkit.errors import UsageError
from clir_toolkit.params import Param, check_options, declare

__all__ = ["SKIPGRAM_PARAMS", "train_word2vec"]

SKIPGRAM_PARAMS = declare(
    Param("dim", int, doc="dimensions of the word vectors", minimum=1, flag="--dim"),
    Param("epochs", int, doc="passes over the text", minimum=1, flag="--epochs"),
    Param("min_count", int, doc="occurrences a word needs to get a vector", minimum=1,
          flag="--min-count"),
    Param("window", int, doc="words on each side that a word predicts", minimum=1,
          flag="--window"),
    Param("workers", int, doc="training threads (1 keeps training deterministic)", minimum=1,
          flag="--workers"),
)  # fmt: skip
"""The skip-gram options of :func:`train_word2vec` (``clir embed train``)."""


def train_word2vec(
    corpus_file: Path,
    *,
    dim: int = 300,
    epochs: int = 5,
    min_count: int = 3,
    window: int = 5,
    seed: int = 1,
    workers: int = 1,
    progress: bool = True,
) -> tuple[list[str], Any]:
    """Skip-gram vectors for the words of a tokenised corpus: ``(words, vectors)``.

    Skip-gram with negative sampling (Mikolov et al. 2013; gensim ``Word2Vec(sg=1,
    negative=5)``): each word's vector is trained to predict the words within ``window``
    positions of it. Words seen fewer than ``min_count`` times get no vector. Words come
    most frequent first. Deterministic for a given ``seed`` when ``workers=1``.
    """
    values = {"dim": dim, "epochs": epochs, "min_count": min_count, "window": window,
              "workers": workers}  # fmt: skip
    check_options(values, [SKIPGRAM_PARAMS[name] for name in values])
    from gensim.models import Word2Vec
    from gensim.models.callbacks import CallbackAny2Vec

    from clir_toolkit.progress import progress_bar

    bar = progress_bar(
        total=epochs,
        desc=f"skip-gram on {corpus_file.name}",
        unit=" epochs",
        show=progress,
        leave=False,
    )

    class EpochBar(CallbackAny2Vec):
        def on_epoch_end(self, model: Any) -> None:
            bar.update(1)

    try:
        model = Word2Vec(
            corpus_file=str(corpus_file),
            vector_size=dim,
            window=window,
            min_count=min_count,
            sg=1,
            negative=5,
            epochs=epochs,
            seed=seed,
            workers=workers,
            callbacks=[EpochBar()],
        )
    except RuntimeError as exc:  # gensim: "you must first build vocabulary before training"
        raise UsageError(
            f"{corpus_file}: no word occurs {min_count} times or more ({exc}); "
            f"give more text or a lower {SKIPGRAM_PARAMS['min_count'].flag}"
        ) from None
    finally:
        bar.close()
    if len(model.wv.index_to_key) == 0:
        raise UsageError(
            f"{corpus_file}: no word occurs {min_count} times or more; "
            f"give more text or a lower {SKIPGRAM_PARAMS['min_count'].flag}"
        )
    return list(model.wv.index_to_key), model.wv.vectors
