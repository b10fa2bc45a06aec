"""The reranker's data: tokens, vocabularies, documents, cached tensors and training examples.

A neural reranker sees token ids, not text. This module turns the toolkit's files (a
collection's ``corpus.jsonl``, topics, qrels and a first-stage run) into the tensors that
:mod:`clir_toolkit.rerank.train` and :mod:`clir_toolkit.rerank.score` feed to a model:

1. **Tokens** (:func:`rerank_tokens`). The same scheme for every language, in pure Python,
   because the reranker also runs on GPU hosts without Java: lower-cased Unicode word tokens
   with the ``stopwordsiso`` stop words removed and no stemming. Chinese (jieba) and
   Japanese (MeCab) are segmented exactly as the index and the embeddings segment them
   (:func:`clir_toolkit.analysis.python_tokens`); runs of Thai or Hangul, which have no
   spaces between words, become overlapping character bigrams, as Lucene's ``CJKAnalyzer``
   does. The reranker's
   vocabulary is its own, so its terms need not be BM25's stemmed terms.
2. **Vocabularies** (:class:`Vocabulary`). One for the query language and one for the
   document language, as in the thesis' bilingual training (Zhao, *Neural CLIR*, §6.1.3:
   "separate vocabulary is used for English and Chinese terms"). Id 0 pads, id 1 stands for
   every word outside the vocabulary (words seen fewer than ``min_count`` times in training).
3. **Documents** (:func:`load_documents`). Only the documents a run needs are kept, read in
   one pass over the corpus.
4. **Tensor cache** (:class:`DocumentEncoder`). Encoded documents are saved with
   ``torch.save`` under ``<collection>/.cache/rerank/``, keyed by the corpus' sha256, the
   vocabulary's hash, the language and the maximum length, so that training epochs and
   repeated scoring never tokenise a document twice.
5. **Training examples** (:func:`relevance_examples`, :func:`epoch_pairs`,
   :func:`parallel_examples`). Graded qrels give the positives (2 = relevant, 1 = partially
   relevant); the first-stage run's top candidates that the qrels do not mark relevant are
   the negatives (grade 0). Sasaki et al.'s CLIR data and Liu et al.'s experiments sample
   40 irrelevant pages per query and vary their number from 20 to 100 (*Cross-Lingual
   Document Retrieval with Smooth Learning*, §5 and Fig. 5): ``negatives_per_query``.
   Pointwise losses (SOSL, MSE, proportional odds, 3Part) train on (query, document, grade)
   triples; the pairwise hinge loss of K-NRM on (query, better document, worse document)
   triples drawn afresh each epoch from those (:func:`epoch_pairs`).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.errors import ClirError, FormatError
from clir_toolkit.files import atomic_write, sha256_file

if TYPE_CHECKING:
    import torch

    from clir_toolkit.formats import Qrel, RunRow

PAD = "<pad>"
OOV = "<oov>"
PAD_ID = 0
OOV_ID = 1

#: Bump when :func:`rerank_tokens` changes, so that cached tensors are not reused.
ANALYSIS_VERSION = 2  # 2: Japanese by MeCab, as the index

_WORD = re.compile(r"\w+", re.UNICODE)
# Scripts written without spaces between words: Hiragana, Katakana, CJK ideographs (for
# Japanese), Hangul syllables and Thai. Their runs become character bigrams.
_UNSPACED = re.compile(
    r"[\u0e00-\u0e7f\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+"
)


# ---------------------------------------------------------------------------------------------
# Tokens
# ---------------------------------------------------------------------------------------------


def _bigrams(run: str) -> list[str]:
    """Overlapping character bigrams of a run of unspaced script (one character alone stays)."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _word_tokens(text: str) -> list[str]:
    """Lower-cased Unicode word tokens; runs of unspaced scripts become bigrams."""
    tokens: list[str] = []
    position = 0
    for match in _UNSPACED.finditer(text):
        tokens.extend(m.group().lower() for m in _WORD.finditer(text, position, match.start()))
        tokens.extend(_bigrams(match.group()))
        position = match.end()
    tokens.extend(m.group().lower() for m in _WORD.finditer(text, position))
    return tokens


@cache
def _spec(language: str) -> Any:
    from clir_toolkit.analysis import analyzer_for

    return analyzer_for(language)


def rerank_tokens(language: str, text: str) -> list[str]:
    """The reranker's tokens of ``text`` in ``language`` (an ISO 639-1 code).

    Chinese (``jieba``) and languages without a Lucene analyzer (``simple``) are tokenised
    exactly as the index tokenises them. For Lucene languages, whose analyzers run in Java,
    a pure-Python approximation is used: Unicode words, lower-cased, ``stopwordsiso`` stop
    words removed, no stemming; unspaced scripts (Thai, Hangul, and kana or kanji in a text
    of another language) become character bigrams.
    """
    from clir_toolkit.analysis import python_tokens, stopwords

    spec = _spec(language)
    if spec.pretokenized:
        return python_tokens(spec, text)
    stop = stopwords(spec.language)
    return [token for token in _word_tokens(text) if token not in stop]


# ---------------------------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------------------------


class Vocabulary:
    """Words ↔ ids for one language: id 0 is ``<pad>``, id 1 is ``<oov>``, then the words.

    Words are ordered by decreasing training frequency (ties alphabetically), so the same
    texts always give the same ids.
    """

    def __init__(self, words: Sequence[str], language: str) -> None:
        if list(words[:2]) != [PAD, OOV]:
            raise ValueError(f"a vocabulary starts with {PAD} and {OOV}")
        self.words: list[str] = list(words)
        self.language = language
        self._ids = {word: index for index, word in enumerate(self.words)}
        if len(self._ids) != len(self.words):
            raise ValueError("a vocabulary lists each word once")

    @classmethod
    def build(
        cls,
        token_lists: Iterable[Sequence[str]],
        language: str,
        min_count: int = 1,
        max_size: int | None = None,
    ) -> Vocabulary:
        """Count the words of ``token_lists``; keep those seen at least ``min_count`` times.

        ``max_size`` caps the number of words (besides ``<pad>`` and ``<oov>``), keeping the
        most frequent.
        """
        if min_count < 1:
            raise ClirError(f"min_count must be at least 1, not {min_count}")
        counts: Counter[str] = Counter()
        for tokens in token_lists:
            counts.update(tokens)
        counts.pop(PAD, None)
        counts.pop(OOV, None)
        kept = sorted(
            (word for word, count in counts.items() if count >= min_count),
            key=lambda word: (-counts[word], word),
        )
        if max_size is not None:
            kept = kept[:max_size]
        return cls([PAD, OOV, *kept], language)

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self._ids

    def id(self, word: str) -> int:
        """The id of ``word``; :data:`OOV_ID` for a word outside the vocabulary."""
        return self._ids.get(word, OOV_ID)

    def encode(self, tokens: Sequence[str], max_len: int) -> list[int]:
        """Exactly ``max_len`` ids: the first ``max_len`` tokens, padded with :data:`PAD_ID`."""
        ids = [self._ids.get(token, OOV_ID) for token in tokens[:max_len]]
        return ids + [PAD_ID] * (max_len - len(ids))

    def to_dict(self) -> dict[str, Any]:
        return {"language": self.language, "words": self.words}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Vocabulary:
        """The vocabulary :meth:`to_dict` wrote; ValueError when ``data`` is not one."""
        if not isinstance(data, Mapping) or set(data) != {"language", "words"}:
            raise ValueError("expected the keys 'language' and 'words'")
        words, language = data["words"], data["language"]
        if not isinstance(language, str) or not language:
            raise ValueError("its language is not a language code")
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise ValueError("its words are not a list of strings")
        return cls(words, language)

    def fingerprint(self) -> str:
        """sha256 of the language and the words in id order."""
        payload = json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def save(self, path: str | Path) -> None:
        """Write the vocabulary as JSON (atomically)."""
        with atomic_write(path) as handle:
            json.dump(self.to_dict(), handle, ensure_ascii=False)
            handle.write("\n")

    @classmethod
    def load(cls, path: str | Path) -> Vocabulary:
        """Read a vocabulary written by :meth:`save`."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            return cls.from_dict(data)
        except OSError as exc:
            raise FormatError(path, None, f"cannot read the vocabulary: {exc.strerror}") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise FormatError(path, None, f"not a vocabulary file ({exc})") from None


# ---------------------------------------------------------------------------------------------
# Documents
# ---------------------------------------------------------------------------------------------


def load_documents(corpus: str | Path, docids: Iterable[str]) -> dict[str, str]:
    """The texts of ``docids``, read in one pass over ``corpus`` (stops once all are found).

    A docid missing from the corpus is an error: the run was made on another collection.
    """
    from clir_toolkit.formats import iter_corpus
    from clir_toolkit.progress import progress_bar

    wanted = set(docids)
    texts: dict[str, str] = {}
    if not wanted:
        return texts
    progress = progress_bar(
        total=len(wanted), desc="reading documents", unit="doc", leave=False
    )
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
        with atomic_write(memo_path) as handle:
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
    cache_dir: str | Path, corpus: str | Path, key: Mapping[str, Any], suffix: str
) -> Path:
    """The cache file of ``corpus``' documents encoded as ``key`` describes.

    The one cache rule of the rerankers: the file name is a hash of the corpus' sha256
    (:func:`corpus_fingerprint`) and of ``key`` (what else the encoding depends on: a
    vocabulary, an encoder and its version, a maximum length), so that a change of either
    selects another file instead of reusing stale rows.
    """
    full = {"corpus_sha256": corpus_fingerprint(corpus, cache_dir), **key}
    digest = hashlib.sha256(json.dumps(full, sort_keys=True).encode("utf-8")).hexdigest()
    return Path(cache_dir) / f"docs-{digest[:24]}{suffix}"


class DocumentEncoder:
    """Documents of a corpus as padded id tensors, cached on disk.

    The cache file holds the docids encoded so far and their ids (``int32[N, max_len]``).
    It is keyed by the corpus' sha256, the vocabulary's hash, the analysis version and
    ``max_len``; a request for documents not yet cached reads the corpus once for them and
    rewrites the file with the union.
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
            "analysis_version": ANALYSIS_VERSION,
        }
        self.cache_path = document_cache_path(self.cache_dir, self.corpus, key, ".pt")

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
            texts = load_documents(self.corpus, need_text) if need_text else {}
            language = self.vocabulary.language
            new_rows = []
            for docid in missing:
                doc_tokens = tokens.get(docid)
                if doc_tokens is None:
                    doc_tokens = rerank_tokens(language, texts[docid])
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
            with atomic_write(self.cache_path, "wb", encoding=None) as handle:
                torch.save({"docids": docids, "ids": ids.to(torch.int32)}, handle)
        except OSError as exc:
            cannot_cache(self.cache_path, exc)


def encode_texts(texts: Sequence[str], vocabulary: Vocabulary, max_len: int) -> torch.Tensor:
    """``int64[len(texts), max_len]`` ids of short texts (queries, parallel sentences)."""
    import torch

    rows = [vocabulary.encode(rerank_tokens(vocabulary.language, text), max_len) for text in texts]
    return torch.tensor(rows, dtype=torch.long).reshape(-1, max_len)


# ---------------------------------------------------------------------------------------------
# Training examples
# ---------------------------------------------------------------------------------------------

MAX_GRADE = 2


@dataclass(frozen=True, slots=True)
class Example:
    """One pointwise example: document ``docid`` has grade 0, 1 or 2 for query ``qid``."""

    qid: str
    docid: str
    grade: int


def candidates_by_query(run: Iterable[RunRow], depth: int | None = None) -> dict[str, list[str]]:
    """Each query's docids in the order trec_eval reads the run, cut at ``depth``."""
    from clir_toolkit.formats import sort_run

    ranked: dict[str, list[str]] = {}
    for row in sort_run(run):
        docs = ranked.setdefault(row.qid, [])
        if depth is None or len(docs) < depth:
            docs.append(row.docid)
    return ranked


def relevance_examples(
    qrels: Iterable[Qrel],
    run: Iterable[RunRow],
    negatives_per_query: int = 40,
    qids: Iterable[str] | None = None,
) -> list[Example]:
    """Pointwise examples: judged relevant documents and the run's top non-relevant ones.

    For each query with at least one document of positive grade, every such document is an
    example with its grade (capped at 2), and the first ``negatives_per_query`` documents of
    the run that are not judged relevant (unjudged, or judged 0) are examples of grade 0.
    Queries without a relevant document teach nothing about ranking and are left out;
    ``qids`` restricts the queries (to those that have topics).
    """
    if negatives_per_query < 0:
        raise ClirError(f"negatives_per_query must be 0 or more, not {negatives_per_query}")
    grades: dict[str, dict[str, int]] = {}
    for qrel in qrels:
        grades.setdefault(qrel.qid, {})[qrel.docid] = qrel.relevance
    ranked = candidates_by_query(run)
    allowed = set(qids) if qids is not None else None
    examples: list[Example] = []
    for qid in sorted(grades):
        if allowed is not None and qid not in allowed:
            continue
        judged = grades[qid]
        positives = sorted(docid for docid, grade in judged.items() if grade > 0)
        if not positives:
            continue
        examples.extend(Example(qid, d, min(judged[d], MAX_GRADE)) for d in positives)
        negatives = [d for d in ranked.get(qid, []) if judged.get(d, 0) <= 0]
        examples.extend(Example(qid, d, 0) for d in negatives[:negatives_per_query])
    return examples


def read_parallel_tsv(path: str | Path) -> list[tuple[str, str]]:
    """Sentence pairs ``english<TAB>foreign``, one per line (blank lines are skipped)."""
    pairs: list[tuple[str, str]] = []
    try:
        raw_lines = Path(path).read_bytes().splitlines()
    except OSError as exc:
        raise FormatError(path, None, f"cannot read the file: {exc.strerror}") from None
    for number, raw in enumerate(raw_lines, start=1):
        try:
            text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError:
            raise FormatError(path, number, "invalid UTF-8", "save the file as UTF-8") from None
        if not text.strip():
            continue
        columns = text.split("\t")
        if len(columns) != 2 or not columns[0].strip() or not columns[1].strip():
            raise FormatError(
                path,
                number,
                f"expected 'english<TAB>foreign', found {len(columns)} column(s)",
                "write one sentence pair per line, separated by one tab",
            )
        pairs.append((columns[0].strip(), columns[1].strip()))
    if not pairs:
        raise FormatError(path, None, "no sentence pairs", "write 'english<TAB>foreign' lines")
    return pairs


@dataclass(frozen=True)
class ParallelData:
    """Pre-training data from sentence pairs, in the form of relevance examples.

    Each English sentence is a query (qid ``p<i>``) whose translation (docid ``p<i>``) is
    relevant (grade 2); ``negatives`` other foreign sentences, drawn at random, are not.
    """

    queries: dict[str, str]
    documents: dict[str, str]
    examples: list[Example]


def parallel_examples(
    pairs: Sequence[tuple[str, str]], negatives: int = 4, seed: int = 0
) -> ParallelData:
    """Turn sentence pairs into :class:`ParallelData` (seeded, so reproducible)."""
    if len(pairs) < 2 and negatives > 0:
        raise ClirError("parallel pre-training needs at least two sentence pairs")
    rng = random.Random(seed)
    queries = {f"p{i}": english for i, (english, _) in enumerate(pairs)}
    documents = {f"p{i}": foreign for i, (_, foreign) in enumerate(pairs)}
    examples: list[Example] = []
    count = min(negatives, len(pairs) - 1)
    for i in range(len(pairs)):
        examples.append(Example(f"p{i}", f"p{i}", MAX_GRADE))
        others = rng.sample(range(len(pairs) - 1), count)
        examples.extend(Example(f"p{i}", f"p{j + (j >= i)}", 0) for j in others)
    return ParallelData(queries, documents, examples)


# ---------------------------------------------------------------------------------------------
# Tensors for a list of examples
# ---------------------------------------------------------------------------------------------


@dataclass
class EncodedExamples:
    """Examples as row indices into a query matrix and a document matrix.

    ``queries`` is ``int64[Q, Lq]`` and ``documents`` ``int64[D, Ld]``; pointwise examples
    have ``grades``; pairwise ones use ``docs`` for the better and ``worse`` for the worse.
    """

    queries: torch.Tensor
    documents: torch.Tensor
    query_index: torch.Tensor
    doc_index: torch.Tensor
    grades: torch.Tensor | None = None
    worse_index: torch.Tensor | None = None

    def __len__(self) -> int:
        return int(self.query_index.shape[0])


def index_examples(
    examples: Sequence[Example],
    query_rows: Mapping[str, int],
    doc_rows: Mapping[str, int],
    queries: torch.Tensor,
    documents: torch.Tensor,
) -> EncodedExamples:
    """Look up each example's query and document in the encoded matrices."""
    import torch

    q = torch.tensor([query_rows[e.qid] for e in examples], dtype=torch.long)
    docs = torch.tensor([doc_rows[e.docid] for e in examples], dtype=torch.long)
    grades = torch.tensor([e.grade for e in examples], dtype=torch.long)
    return EncodedExamples(queries, documents, q, docs, grades=grades)


def graded_pairs(points: EncodedExamples) -> torch.Tensor:
    """Every (better, worse) pair of one query's examples whose grades differ.

    ``int64[P, 2]``: indices into ``points`` of the better and the worse example, query by
    query in the order of ``points``.
    """
    import numpy as np
    import torch

    assert points.grades is not None, "pairs are made of pointwise examples"
    queries, grades = points.query_index.numpy(), points.grades.numpy()
    order = np.argsort(queries, kind="stable")
    starts = np.flatnonzero(np.r_[True, queries[order][1:] != queries[order][:-1]])
    parts = [np.zeros((0, 2), dtype=np.int64)]
    for start, end in zip(starts, [*starts[1:], len(order)], strict=True):
        members = order[start:end]
        better, worse = np.nonzero(grades[members][:, None] > grades[members][None, :])
        parts.append(np.stack([members[better], members[worse]], axis=1))
    return torch.from_numpy(np.concatenate(parts))


def epoch_pairs(
    points: EncodedExamples, generator: torch.Generator, per_query: int | None = None
) -> EncodedExamples:
    """One epoch's pairwise examples: each query's (better, worse) pairs, at most
    ``per_query`` of them drawn afresh each epoch (all of them when ``per_query`` is None).

    All pairs of a query are every document of a higher grade above every one of a lower
    grade: on the man pages a median of 23 a query (16,901 for 639 queries), but on DDTP,
    where a package's siblings are partially relevant, a median of 81 and up to 6,641 (3.2
    million for 11k queries). Drawing at most ``per_query`` (default of training: 80) keeps
    98 % of the man pages' pairs and an epoch of DDTP at 668,000; over the epochs the draws
    cover the rest. Pairing each outranked document with one better document only, which
    was tried first, kept a third of the man pages' pairs and lost a quarter of K-NRM's dev
    nDCG@10 (0.26 → 0.19, bilingual fr). The draw depends only on ``generator``.
    """
    import torch

    pairs = graded_pairs(points)
    if per_query is not None and len(pairs):
        query = points.query_index[pairs[:, 0]]
        # A random order within each query, then the first per_query of each.
        shuffled = torch.argsort(torch.rand(len(pairs), generator=generator), stable=True)
        order = shuffled[torch.argsort(query[shuffled], stable=True)]
        sorted_query = query[order]
        rank = torch.arange(len(order)) - torch.searchsorted(sorted_query, sorted_query)
        pairs = pairs[torch.sort(order[rank < per_query]).values]
    return EncodedExamples(
        points.queries,
        points.documents,
        points.query_index[pairs[:, 0]],
        points.doc_index[pairs[:, 0]],
        worse_index=points.doc_index[pairs[:, 1]],
    )


def tokenize_all(
    texts: Mapping[str, str], language: str, desc: str = "tokenising"
) -> dict[str, list[str]]:
    """id → tokens of every text, with a progress bar."""
    from clir_toolkit.progress import progress_bar

    return {
        key: rerank_tokens(language, text)
        for key, text in progress_bar(texts.items(), desc=desc, unit="text", leave=False)
    }


def cache_dir_for(collection_root: str | Path, cache_dir: str | Path | None) -> Path:
    """``cache_dir`` if given, else the collection's default (:func:`default_cache_dir`)."""
    return Path(cache_dir) if cache_dir is not None else default_cache_dir(collection_root)
