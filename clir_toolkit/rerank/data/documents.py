"""The documents a reranker reads: from the corpus, encoded as ids, cached on disk.

Only the documents a run needs are read (:func:`load_documents`): where their lines start
when the corpus is JSON Lines and there is a cache directory
(:mod:`clir_toolkit.formats.corpus_offsets`), else in one pass over the corpus. Encoded documents are saved with ``torch.save`` under
``<collection>/.cache/rerank/`` (:class:`DocumentEncoder`), keyed by the corpus' sha256, the
vocabulary's hash, the language, the maximum length and the code that encodes them, so that
training epochs and repeated scoring never tokenise a document twice.
:func:`document_cache_path` names the rerankers' cache files by the toolkit's freshness rule
(:func:`clir_toolkit.freshness.cache_key`); the pretrained encoders' vector caches
(:mod:`clir_toolkit.rerank.sentence.pretrained`) follow it too.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.errors import ClirError
from clir_toolkit.files import atomic_write, sha256_file
from clir_toolkit.freshness import cache_key
from clir_toolkit.rerank.data.tokens import WORDS, scheme_version
from clir_toolkit.rerank.data.vocabulary import Vocabulary

if TYPE_CHECKING:
    import torch


def load_documents(
    corpus: str | Path, docids: Iterable[str], cache_dir: str | Path | None = None
) -> dict[str, str]:
    """The texts of ``docids``. With ``cache_dir``, a JSON Lines corpus is read where those
    documents' lines start (:mod:`clir_toolkit.formats.corpus_offsets`: the offsets are found
    in one pass once and kept there); otherwise in one pass over ``corpus`` (stopping once all
    are found).

    A docid missing from the corpus is an error: the run was made on another collection.
    """
    from clir_toolkit.formats import iter_corpus
    from clir_toolkit.formats.corpus_offsets import corpus_offsets
    from clir_toolkit.progress import progress_bar

    wanted = set(docids)
    texts: dict[str, str] = {}
    if not wanted:
        return texts
    offsets = None
    if cache_dir is not None:
        fingerprint = corpus_fingerprint(corpus, cache_dir)
        offsets = corpus_offsets(Path(corpus), fingerprint, Path(cache_dir))
    if offsets is not None:
        texts = offsets.read(wanted)
    else:
        progress = progress_bar(total=len(wanted), desc="reading documents", unit="doc",
                                leave=False)  # fmt: skip
        with progress:
            for doc in iter_corpus(corpus):
                if doc.id in wanted:
                    texts[doc.id] = doc.contents
                    progress.update(1)
                    if len(texts) == len(wanted):
                        break
    missing = sorted(wanted - texts.keys())
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise ClirError(
            f"{corpus}: {len(missing)} document(s) of the run are not in the corpus ({shown}); "
            "rerank a run with the collection it was retrieved from"
        )
    return texts


def corpus_fingerprint(corpus: str | Path, cache_dir: str | Path) -> str:
    """sha256 of the corpus file, remembered in ``cache_dir`` by size and modification time.

    Hashing a corpus of gigabytes takes seconds; the memo makes repeated runs instant while a
    changed file (other size or time) is hashed again.
    """
    path = Path(corpus).resolve()
    stat = path.stat()
    memo_path = Path(cache_dir) / "corpus-sha256.json"
    key = f"{path}|{stat.st_size}|{stat.st_mtime_ns}"
    memo: dict[str, str] = {}
    if memo_path.is_file():
        try:
            loaded = json.loads(memo_path.read_text(encoding="utf-8"))
            if isinstance(loaded, dict):
                memo = {str(k): str(v) for k, v in loaded.items()}
        except (OSError, ValueError):
            memo = {}
    if key in memo:
        return memo[key]
    digest = sha256_file(path)
    memo[key] = digest
    try:
        with atomic_write(memo_path, own=True) as handle:
            json.dump(memo, handle, indent=1, sort_keys=True)
    except OSError as exc:
        cannot_cache(memo_path, exc)
    return digest


def cannot_cache(path: Path, exc: OSError) -> None:
    """Caching is an optimisation: a read-only place costs time, not the result."""
    print(
        f"clir: note: cannot write the cache {path} ({exc.strerror}); "
        "continuing without it (pass --cache-dir to choose a writable place)",
        file=sys.stderr,
    )


def default_cache_dir(collection_root: str | Path) -> Path:
    """Where a collection's encoded documents are cached: ``<collection>/.cache/rerank``."""
    return Path(collection_root) / ".cache" / "rerank"


def document_cache_path(
    cache_dir: str | Path,
    corpus: str | Path,
    key: Mapping[str, Any],
    suffix: str,
    code: Sequence[str],
) -> Path:
    """The cache file of ``corpus``' documents encoded as ``key`` describes by ``code``.

    The file name is the freshness rule's :func:`~clir_toolkit.freshness.cache_key` of the
    corpus' sha256 (:func:`corpus_fingerprint`), of ``key`` (what else the encoding depends
    on: a vocabulary, an encoder and its version, a maximum length) and of the code of the
    modules ``code``, so that a change of any of them selects another file instead of
    reusing stale rows.
    """
    full = {"corpus_sha256": corpus_fingerprint(corpus, cache_dir), **key}
    return Path(cache_dir) / f"docs-{cache_key(full, code)[:24]}{suffix}"


class DocumentEncoder:
    """Documents of a corpus as padded id tensors, cached on disk.

    The cache file holds the docids encoded so far and their ids (``int32[N, max_len]``).
    It is keyed by the corpus' sha256, the vocabulary's hash, the analysis version,
    ``max_len`` and the code of this module and what it imports; a request for documents
    not yet cached reads the corpus once for them and rewrites the file with the union.
    """

    def __init__(
        self,
        corpus: str | Path,
        vocabulary: Vocabulary,
        max_len: int,
        cache_dir: str | Path,
    ) -> None:
        self.corpus = Path(corpus)
        self.vocabulary = vocabulary
        self.max_len = max_len
        self.cache_dir = Path(cache_dir)
        key = {
            "vocabulary": vocabulary.fingerprint(),
            "language": vocabulary.language,
            "max_len": max_len,
            "analysis_version": scheme_version(vocabulary.tokens),
        }
        if vocabulary.tokens != WORDS:
            key["tokens"] = vocabulary.tokens
        self.cache_path = document_cache_path(self.cache_dir, self.corpus, key, ".pt", (__name__,))

    def _read_cache(self) -> tuple[list[str], torch.Tensor] | None:
        import torch

        if not self.cache_path.is_file():
            return None
        try:
            data = torch.load(self.cache_path, map_location="cpu", weights_only=True)
            docids, ids = list(data["docids"]), data["ids"]
        except Exception:  # a damaged cache file is rebuilt, never trusted
            return None
        if ids.dim() != 2 or ids.shape[0] != len(docids) or ids.shape[1] != self.max_len:
            return None
        return docids, ids

    def encode(
        self,
        docids: Iterable[str],
        tokens: Mapping[str, Sequence[str]] | None = None,
    ) -> tuple[dict[str, int], torch.Tensor]:
        """Row of each docid and the ``int64[N, max_len]`` ids of all the rows.

        ``tokens`` may hold already tokenised documents (training tokenises them to build the
        vocabulary); the others are read from the corpus and tokenised once.
        """
        import torch

        wanted = list(dict.fromkeys(docids))
        cached = self._read_cache()
        known_ids, known = cached if cached is not None else ([], torch.zeros(0, self.max_len))
        row = {docid: index for index, docid in enumerate(known_ids)}
        missing = [docid for docid in wanted if docid not in row]
        if missing:
            tokens = tokens or {}
            need_text = [docid for docid in missing if docid not in tokens]
            texts = load_documents(self.corpus, need_text, self.cache_dir) if need_text else {}
            new_rows = []
            for docid in missing:
                doc_tokens = tokens.get(docid)
                if doc_tokens is None:
                    doc_tokens = self.vocabulary.tokenize(texts[docid], self.max_len)
                new_rows.append(self.vocabulary.encode(doc_tokens, self.max_len))
            added = torch.tensor(new_rows, dtype=torch.int32).reshape(-1, self.max_len)
            known = torch.cat([known.to(torch.int32), added])
            for docid in missing:
                row[docid] = len(row)
            known_ids = known_ids + missing
            self._write_cache(known_ids, known)
        return row, known.to(torch.long)

    def _write_cache(self, docids: list[str], ids: torch.Tensor) -> None:
        import torch

        try:
            with atomic_write(self.cache_path, "wb", encoding=None, own=True) as handle:
                torch.save({"docids": docids, "ids": ids.to(torch.int32)}, handle)
        except OSError as exc:
            cannot_cache(self.cache_path, exc)


def cache_dir_for(collection_root: str | Path, cache_dir: str | Path | None) -> Path:
    """``cache_dir`` if given, else the collection's default (:func:`default_cache_dir`)."""
    return Path(cache_dir) if cache_dir is not None else default_cache_dir(collection_root)
