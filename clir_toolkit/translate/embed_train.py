"""Training cross-lingual word embeddings offline: skip-gram per language + Procrustes.

The embedding translator (:mod:`clir_toolkit.translate.embedding`, thesis §5.3) needs
English and target-language word vectors in *one* space. None can be installed here, so
this module trains them from the text on the machine, in the offline recipe of Smith et
al. 2017 (the thesis' reference [8]). It runs the steps and reports; each step lives in
the module named beside it:

1. **Text.** One text per line in each language: gettext catalog messages and any corpus
   (:func:`clir_toolkit.resources.monolingual.collect_monolingual`), or files you give
   (:mod:`clir_toolkit.translate.embed_text`).
2. **Tokens.** Lower-cased words (:func:`~clir_toolkit.translate.embed_text.tokenizer_for`):
   English split as query words are
   (:func:`clir_toolkit.query.source_words`), so that every query word can meet its
   vector; Chinese segmented by jieba and Japanese by MeCab (``fugashi`` + ``unidic-lite``)
   exactly as the index and the reranker segment them, so that the vectors can initialise
   a reranker's vocabulary.
3. **Monolingual vectors.** Skip-gram with negative sampling (Mikolov et al. 2013, gensim's
   ``Word2Vec(sg=1)``), trained separately on each language
   (:mod:`clir_toolkit.translate.skipgram`).
4. **Seed dictionary.** Single-word dictionary entries whose both sides have a vector
   (:func:`~clir_toolkit.translate.seed_pairs.seed_pairs`), split into training and
   held-out pairs by a hash of the English word
   (:func:`~clir_toolkit.translate.seed_pairs.split_pairs`), so that all translations of a
   word fall on one side.
5. **Alignment.** Both spaces normalised (unit length, centred), the English one rotated
   onto the other by orthogonal Procrustes, optionally refined with mutual CSLS nearest
   neighbours (:func:`clir_toolkit.translate.alignment.align`).
6. **Evaluation.** Precision@1 and @5 of word translation on the held-out pairs, by plain
   nearest neighbours and by CSLS (:func:`clir_toolkit.translate.alignment.lexicon_precision`).
7. **Output.** One ``.vec`` file whose words carry their language (``en:list``,
   ``fr:liste``): English vectors mapped into the target space, target vectors as trained,
   all unit length — what ``clir search --translate embed --embed FILE.vec`` reads. A JSON
   report (``FILE.vec.json``) sits beside it.

**Determinism.** English is trained with the given seed and the other language with
``seed + 1`` (so that the two spaces share nothing before the alignment). gensim's
skip-gram is deterministic for a given seed only with one worker thread (several threads
interleave their updates in the order the scheduler picks), so ``workers=1`` is the
default: the same text, dictionary and seed give a byte-identical ``.vec`` file. More
workers train faster but give slightly different vectors each time.

**Caches.** Collected text and skip-gram vectors are kept between runs
(:mod:`clir_toolkit.translate.embed_cache`): the English side is collected and trained once
for all target languages.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from clir_toolkit.errors import ClirError, UsageError
from clir_toolkit.files import atomic_write
from clir_toolkit.params import Param, check_options, declare
from clir_toolkit.translate.dictionary import DEFAULT_DICTIONARIES, DICTIONARY_PARAMS
from clir_toolkit.translate.embed_cache import cached_text, cached_word2vec, default_cache_dir
from clir_toolkit.translate.embed_text import (
    MAN_ROOT,
    SOURCE_LANGUAGE,
    collect_text,
    tokenise_file,
    tokenizer_for,
)
from clir_toolkit.translate.seed_pairs import seed_pairs, split_pairs
from clir_toolkit.translate.skipgram import SKIPGRAM_PARAMS

__all__ = [
    "DEFAULT_DICTIONARIES",
    "EMBED_TRAIN_PARAMS",
    "EmbedReport",
    "format_report",
    "report_path",
    "train_bilingual_embeddings",
]

EMBED_TRAIN_PARAMS = {
    **declare(Param("lang", str, doc="document language, e.g. fr", flag="--lang")),
    **SKIPGRAM_PARAMS,
    **declare(Param("refine", int, doc="refinement steps after the seed alignment", minimum=0,
                    maximum=5, flag="--refine")),
}  # fmt: skip
"""The options of :func:`train_bilingual_embeddings` checked by their declarations
(``clir embed train``): the skip-gram's own
(:data:`~clir_toolkit.translate.skipgram.SKIPGRAM_PARAMS`), the language and ``refine``."""


@dataclass
class EmbedReport:
    """What :func:`train_bilingual_embeddings` did and how well the alignment translates."""

    lang: str
    output: str
    dictionary: str
    dim: int
    epochs: int
    min_count: int
    window: int
    seed: int
    refine: int
    workers: int
    source_tokenizer: str
    target_tokenizer: str
    #: Tokenised text: ``{"en": {"lines", "tokens"}, lang: {...}}``.
    corpus: dict[str, dict[str, int]]
    #: Words with a vector, per language.
    vocabulary: dict[str, int]
    #: Single-word dictionary pairs with both words in the vocabularies, and their split.
    seed_pairs: int
    train_pairs: int
    test_pairs: int
    #: Pairs behind each Procrustes solve (the seed, then each refinement's dictionary).
    alignment_pairs: list[int]
    #: Held-out English words with a gold translation, and ``precision[method][k]``.
    test_words: int
    precision: dict[str, dict[int, float]]
    #: Wall-clock seconds per stage.
    seconds: dict[str, float] = field(default_factory=dict)
    #: Languages whose skip-gram vectors came from the cache
    #: (:func:`~clir_toolkit.translate.embed_cache.cached_word2vec`).
    reused_vectors: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, indent=2) + "\n"


def format_report(report: EmbedReport) -> str:
    """A short human-readable summary of :class:`EmbedReport`."""
    lines = [f"wrote {report.output}"]
    for lang in (SOURCE_LANGUAGE, report.lang):
        stats = report.corpus[lang]
        lines.append(
            f"{lang:<3} text {stats['lines']:>9,} lines {stats['tokens']:>11,} tokens   "
            f"vocabulary {report.vocabulary[lang]:>8,} words"
        )
    lines.append(f"tokens: en {report.source_tokenizer}; {report.lang} {report.target_tokenizer}")
    lines.append(
        f"skip-gram {report.dim}-d, {report.epochs} epochs, window {report.window}, "
        f"min count {report.min_count}, seed {report.seed}, {report.workers} worker(s)"
    )
    lines.append(
        f"seed pairs   {report.seed_pairs:,} from {report.dictionary} "
        f"({report.train_pairs:,} train, {report.test_pairs:,} held out); "
        f"Procrustes on {' -> '.join(f'{n:,}' for n in report.alignment_pairs)} pairs "
        f"({report.refine} refinement(s))"
    )
    for method, by_k in report.precision.items():
        scores = "  ".join(f"P@{k} {100 * p:5.1f}" for k, p in by_k.items())
        lines.append(f"{method.upper():<5} {scores}   on {report.test_words:,} held-out words")
    if report.reused_vectors:
        lines.append(
            f"vectors reused from the cache for: {', '.join(report.reused_vectors)} "
            "(same text and settings)"
        )
    lines.append(
        "seconds: " + ", ".join(f"{stage} {value:.1f}" for stage, value in report.seconds.items())
    )
    return "\n".join(lines)


def train_bilingual_embeddings(
    lang: str,
    out: Path,
    *,
    source_text: Path | None = None,
    target_text: Path | None = None,
    dictionary: str | None = None,
    dim: int = 300,
    epochs: int = 20,
    min_count: int = 3,
    window: int = 5,
    seed: int = 1,
    test_fraction: float = 0.2,
    refine: int = 2,
    workers: int = 1,
    source_corpora: Sequence[Path] = (),
    target_corpora: Sequence[Path] = (),
    work_dir: Path | None = None,
    man_root: Path | None = MAN_ROOT,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    progress: bool = True,
) -> EmbedReport:
    """Train English–``lang`` word vectors in one space and write them to ``out`` (``.vec``).

    ``source_text`` and ``target_text`` hold one English / ``lang`` text per line; a side
    not given is collected from the gettext catalogs of the machine plus the given
    ``*_corpora`` (``corpus.jsonl`` files) into ``work_dir`` (a temporary directory,
    removed afterwards, unless given). ``dictionary`` is a
    :func:`~clir_toolkit.resources.dictionary.load_dictionary` spec (default:
    :data:`DEFAULT_DICTIONARIES`). See the module docstring for the steps.

    The defaults suit the few million words of a machine's catalogs and manual pages:
    300 dimensions (the thesis'), 20 epochs (gensim's 5 are meant for corpora of hundreds
    of millions of words; on English–French man pages 20 epochs gave clearly better
    translations) and two refinement steps (MUSE's refinement, without the seed pairs).
    ``out`` and ``out.json``-beside-it are written atomically; the same inputs and ``seed``
    give a byte-identical ``out`` when ``workers=1``.

    Collected text and monolingual vectors are cached in ``cache_dir`` (default
    :func:`~clir_toolkit.translate.embed_cache.default_cache_dir`; ``use_cache=False``
    turns the cache off): the English side is then collected and trained once for all
    target languages. The report lists the languages whose vectors came from the cache.
    """
    import numpy as np

    from clir_toolkit.analysis import normalise_language
    from clir_toolkit.resources.dictionary import load_dictionary
    from clir_toolkit.resources.embeddings import save_vec
    from clir_toolkit.translate.alignment import (
        AlignedSpace,
        align,
        lexicon_precision,
        normalise,
    )

    code = normalise_language(lang)
    if code == SOURCE_LANGUAGE:
        raise UsageError(
            f"{EMBED_TRAIN_PARAMS['lang'].flag} is the document language; English is always "
            "the source side"
        )
    dictionary_spec = dictionary or DEFAULT_DICTIONARIES.get(code)
    if dictionary_spec is None:
        raise UsageError(
            f"no default dictionary for '{code}': give one with "
            f"{DICTIONARY_PARAMS['dictionary'].flag} (a source<TAB>target TSV file, or "
            "freedict:eng-XXX)"
        )
    values = {"dim": dim, "epochs": epochs, "min_count": min_count, "window": window,
              "workers": workers, "refine": refine}  # fmt: skip
    check_options(values, [EMBED_TRAIN_PARAMS[name] for name in values])
    for given in (source_text, target_text):
        if given is not None and not Path(given).is_file():
            raise ClirError(f"{given}: no such text file (give one text per line, UTF-8)")
    out = Path(out)
    seconds: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[stage] = round(now - clock, 2)
        clock = now

    bilingual = load_dictionary(dictionary_spec)  # fail early on a bad spec
    lap("dictionary")

    scratch = Path(tempfile.mkdtemp(prefix="clir-embed-"))
    work = Path(work_dir) if work_dir is not None else scratch
    work.mkdir(parents=True, exist_ok=True)
    try:
        sides = {
            SOURCE_LANGUAGE: (source_text, source_corpora),
            code: (target_text, target_corpora),
        }
        cache = (cache_dir or default_cache_dir()) if use_cache else None
        texts: dict[str, Path] = {}
        for side_lang, (given, corpora) in sides.items():
            if given is not None:
                texts[side_lang] = Path(given)
                continue
            if cache is not None and work_dir is None:
                try:
                    texts[side_lang] = cached_text(side_lang, corpora, man_root, cache)
                    continue
                except OSError:  # a cache directory that cannot be written is skipped
                    pass
            texts[side_lang] = collect_text(side_lang, work / f"{side_lang}.txt", corpora, man_root)
        lap("collect")

        tokenizers = {side_lang: tokenizer_for(side_lang) for side_lang in sides}
        corpus: dict[str, dict[str, int]] = {}
        vocabularies: dict[str, list[str]] = {}
        vectors: dict[str, Any] = {}
        reused_vectors: list[str] = []
        for offset, side_lang in enumerate(sides):
            tokens_file = scratch / f"{side_lang}.tokens"
            stats = tokenise_file(
                texts[side_lang], tokens_file, tokenizers[side_lang][0], progress=progress
            )
            corpus[side_lang] = {"lines": stats.lines, "tokens": stats.tokens}
            lap(f"tokenise {side_lang}")
            vocabularies[side_lang], vectors[side_lang], reused = cached_word2vec(
                tokens_file,
                side_lang,
                cache,
                dim=dim,
                epochs=epochs,
                min_count=min_count,
                window=window,
                # English gets ``seed``, the other language ``seed + 1``: had both the same,
                # words of equal frequency rank would start from the same random vector, and
                # the spaces would look aligned before any alignment.
                seed=seed + offset,
                workers=workers,
                progress=progress,
            )
            if reused:
                reused_vectors.append(side_lang)
            lap(f"skip-gram {side_lang}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    source_words, target_words = vocabularies[SOURCE_LANGUAGE], vocabularies[code]
    pairs = seed_pairs(bilingual, source_words, target_words, tokenizers[code][0])
    train, test = split_pairs(pairs, test_fraction)
    if len(train) < 2:
        raise UsageError(
            f"only {len(train)} training pair(s) of {dictionary_spec} have both words in the "
            f"vocabularies: give more text, a lower {EMBED_TRAIN_PARAMS['min_count'].flag} or "
            "a larger dictionary"
        )
    source_vectors = normalise(vectors[SOURCE_LANGUAGE])
    target_vectors = normalise(vectors[code])
    source_index = {word: i for i, word in enumerate(source_words)}
    target_index = {word: i for i, word in enumerate(target_words)}
    w, sizes = align(
        source_vectors,
        target_vectors,
        [(source_index[s], target_index[t]) for s, t in train],
        refine=refine,
    )
    mapped = source_vectors @ w
    lap("align")

    space = AlignedSpace(source_words, mapped, target_words, target_vectors)
    scores = lexicon_precision(space, test, at=(1, 5))
    lap("evaluate")

    save_vec(
        out,
        [f"{SOURCE_LANGUAGE}:{word}" for word in source_words]
        + [f"{code}:{word}" for word in target_words],
        np.vstack([space.source_vectors, space.target_vectors]),
    )
    lap("write")

    report = EmbedReport(
        lang=code,
        output=str(out),
        dictionary=dictionary_spec,
        dim=dim,
        epochs=epochs,
        min_count=min_count,
        window=window,
        seed=seed,
        refine=refine,
        workers=workers,
        source_tokenizer=tokenizers[SOURCE_LANGUAGE][1],
        target_tokenizer=tokenizers[code][1],
        corpus=corpus,
        vocabulary={SOURCE_LANGUAGE: len(source_words), code: len(target_words)},
        seed_pairs=len(pairs),
        train_pairs=len(train),
        test_pairs=len(test),
        alignment_pairs=sizes,
        test_words=scores.words,
        precision=scores.precision,
        seconds=seconds,
        reused_vectors=reused_vectors,
    )
    with atomic_write(report_path(out)) as handle:
        handle.write(report.to_json())
    return report


def report_path(vec: Path) -> Path:
    """Where the JSON report of ``vec`` goes: ``FILE.vec`` → ``FILE.vec.json``."""
    return vec.with_name(vec.name + ".json")
