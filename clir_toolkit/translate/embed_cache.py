"""Caches of ``clir embed train``: the English side is the same for every target language.

Collected text (:func:`cached_text`) and monolingual skip-gram vectors
(:func:`cached_word2vec`) are kept under :func:`default_cache_dir`, each entry named by the
toolkit's freshness rule (:func:`clir_toolkit.freshness.cache_key`: what it was made from
and the code that made it), so that English is collected and trained once for all target
languages.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clir_toolkit.files import atomic_write, file_stamps
from clir_toolkit.freshness import cache_key
from clir_toolkit.translate.embed_text import collect_text
from clir_toolkit.translate.skipgram import train_word2vec

__all__ = ["TEXT_CODE", "VECTORS_CODE", "cached_text", "cached_word2vec", "default_cache_dir"]

TEXT_CODE = ("clir_toolkit.translate.embed_text", __name__)
"""The code collected text depends on (:func:`clir_toolkit.freshness.code_fingerprint`)."""
VECTORS_CODE = ("clir_toolkit.translate.skipgram", __name__)
"""The code skip-gram vectors depend on."""


def default_cache_dir() -> Path:
    """``$CLIR_DATA/cache/embeddings``: collected text and monolingual skip-gram vectors."""
    from clir_toolkit.files import data_dir

    return data_dir() / "cache" / "embeddings"


def cached_text(lang: str, corpora: Sequence[Path], man_root: Path | None, cache_dir: Path) -> Path:
    """The collected ``lang`` text, from ``cache_dir`` while none of its sources changed.

    English text (every catalog's English side and every English man page: some 650,000
    lines, 20 s to collect) is the same whichever language it is aligned with; this cache
    collects it once. An entry is named by the path, size and modification time of every
    source file (:func:`monolingual_sources`: thousands of man pages, whose sha256 would
    cost as much as collecting them) and the code that collects them; a superseded entry is
    removed.
    """
    from clir_toolkit.resources.monolingual import monolingual_sources

    sources = monolingual_sources(lang, corpora, man_root=man_root)
    stamps = file_stamps(sources)
    key = cache_key({"lang": lang, "sources": stamps}, TEXT_CODE)
    cached = cache_dir / f"text-{lang}-{key[:16]}.txt"
    if cached.is_file():
        return cached
    cache_dir.mkdir(parents=True, exist_ok=True)
    collect_text(lang, cached, corpora, man_root)
    for old in cache_dir.glob(f"text-{lang}-*.txt"):
        if old != cached:
            old.unlink(missing_ok=True)
    return cached


def cached_word2vec(
    tokens_file: Path, lang: str, cache_dir: Path | None, **settings: Any
) -> tuple[list[str], Any, bool]:
    """:func:`train_word2vec` on ``tokens_file``, or its earlier result: ``(words, vectors,
    reused)``.

    Skip-gram with one worker is deterministic, so vectors trained on the same tokens with
    the same settings (and gensim version) can be reused exactly: training English once
    instead of once per target language saves over two minutes per language at 100
    dimensions. Entries are named by the tokens' sha256, the settings, gensim's version and
    the code that trains them; a damaged entry is trained again.
    """
    import gensim
    import numpy as np

    from clir_toolkit.files import sha256_file

    if cache_dir is None:
        return (*train_word2vec(tokens_file, **settings), False)
    public = {k: v for k, v in settings.items() if k != "progress"}
    made_from = {
        "tokens": sha256_file(tokens_file),
        "settings": public,
        "gensim": gensim.__version__,
    }
    key = cache_key(made_from, VECTORS_CODE)
    cached = cache_dir / f"skipgram-{lang}-{key[:16]}.npz"
    try:
        with np.load(cached, allow_pickle=False) as saved:
            return [str(w) for w in saved["words"]], saved["vectors"], True
    except (OSError, ValueError, KeyError):  # not trained yet, or a damaged entry
        pass
    words, vectors = train_word2vec(tokens_file, **settings)
    with contextlib.suppress(OSError):
        cache_dir.mkdir(parents=True, exist_ok=True)
        with atomic_write(cached, "wb", encoding=None, own=True) as handle:
            np.savez(handle, words=np.array(words, dtype=str), vectors=vectors)
    return words, vectors, False
