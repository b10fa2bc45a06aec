"""Parallel text from Debian's translated package descriptions (DDTP).

Each Debian package description has an English text and, for many languages, a human
translation (the Debian Description Translation Project; apt fetches them as
``Translation-<L>`` lists). Translators keep the structure: a one-line synopsis, then
paragraphs. Aligned line by line, these give tens of thousands of English→L sentence
pairs on software, the domain of the DDTP and man-page collections: parallel text to
estimate IBM Model 1 translation weights (``--dict-mode weighted --parallel``), seed pairs
and training text for cross-lingual embeddings, and pre-training pairs for the reranker.

**Alignment.** The synopses make one pair. The long texts are split into paragraphs (at
blank lines, the `` .`` lines of the deb822 text); where English and translation have as
many paragraphs, the i-th of one is paired with the i-th of the other, else the long text
is skipped (and counted). Blanks are collapsed to one space, so that a pair is one line.
A pair with an empty side, or whose translation is the English text (left untranslated),
is dropped; each pair is written once, at its first place in md5 order, so the same lists
always give the same bytes.

**Exclusion.** The DDTP collections judge these very descriptions: a model trained on the
text of a dev or test description would have seen the answer. ``exclude`` names
collection directories; every description whose md5 is a query id or a document id in
their ``qrels.dev.txt`` or ``qrels.test.txt`` is left out; so is every pair of another
description whose English side or translation is a synopsis or paragraph of a left-out
description (shared boilerplate, "This package provides the documentation.", or the
same translation of a reworded English paragraph): no synopsis or paragraph of a dev or
test description is written. Train descriptions stay: they are what a model may learn from.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from clir_toolkit.collection.ddtp.lists import (
    LANGUAGES,
    check_language,  # the collections' --lang check
    default_lists_dir,
    find_lists,
)
from clir_toolkit.collection.ddtp.queries import split_description
from clir_toolkit.collection.ddtp.records import Descriptions, read_descriptions
from clir_toolkit.errors import ResourceError
from clir_toolkit.files import atomic_write
from clir_toolkit.formats import read_qrels

__all__ = [
    "EXCLUDED_SPLITS",
    "DdtpParallelSummary",
    "aligned_pairs",
    "collect_ddtp_parallel",
    "excluded_descriptions",
    "format_summary",
    "paragraphs",
    "text_units",
]

#: The splits of an excluded collection whose descriptions are left out.
EXCLUDED_SPLITS = ("dev", "test")

Pair = tuple[str, str]


def _collapse(text: str) -> str:
    """``text`` on one line: every run of blanks (tabs, line breaks included) one space."""
    return " ".join(text.split())


def paragraphs(long_text: str) -> list[str]:
    """The paragraphs of a long text (as :func:`split_description` gives it), each on one
    line; blank lines separate them."""
    found: list[str] = []
    current: list[str] = []
    for line in [*long_text.split("\n"), ""]:
        if line.strip():
            current.append(line)
        elif current:
            found.append(_collapse(" ".join(current)))
            current = []
    return found


def _is_translated(pair: Pair) -> bool:
    english, translation = pair
    return bool(english) and bool(translation) and english != translation


def text_units(description: str) -> list[str]:
    """The synopsis, then the paragraphs, of a deb822 description, each on one line."""
    synopsis, long_text = split_description(description)
    return [_collapse(synopsis), *paragraphs(long_text)]


def aligned_pairs(english: str, translated: str) -> tuple[list[Pair], bool]:
    """The pairs of one description (deb822 texts), in order, and whether its long texts
    were aligned (False: paragraph counts differ, only the synopses are paired)."""
    en_units, l_units = text_units(english), text_units(translated)
    aligned = len(en_units) == len(l_units)
    pairs = list(zip(en_units, l_units, strict=True)) if aligned else [(en_units[0], l_units[0])]
    return [pair for pair in pairs if _is_translated(pair)], aligned


def _split_ids(path: Path) -> Iterator[str]:
    """The query and document ids of one qrels file; an empty file (a split a small
    collection left empty) has none."""
    if path.stat().st_size == 0:
        return
    for qrel in read_qrels(path):
        yield qrel.qid
        yield qrel.docid


def excluded_descriptions(collections: Iterable[Path]) -> set[str]:
    """The md5s judged in the dev and test splits of ``collections`` (as queries or as
    documents), or a one-line error for a directory without those qrels."""
    excluded: set[str] = set()
    for collection in collections:
        collection = Path(collection)
        for split in EXCLUDED_SPLITS:
            path = collection / f"qrels.{split}.txt"
            if not path.is_file():
                raise ResourceError(
                    f"{collection}: no {path.name} here, so its {split} descriptions cannot be "
                    "left out; --exclude takes a DDTP collection directory (clir collection "
                    "build ddtp)"
                )
            excluded.update(_split_ids(path))
    return excluded


@dataclass(frozen=True, slots=True)
class DdtpParallelSummary:
    """What :func:`collect_ddtp_parallel` read and wrote."""

    lang: str
    path: Path
    lists: Path
    #: Descriptions with an English text and a translation, not excluded.
    descriptions: int
    #: Such descriptions left out because an excluded collection judges them in dev/test.
    excluded: int
    #: Pairs of kept descriptions not written: an excluded description holds a side of them.
    withheld: int
    #: Kept descriptions whose long texts were skipped: unequal paragraph counts.
    unequal: int
    #: Unique pairs written.
    pairs: int


def _unique_pairs(found: Descriptions, md5s: list[str]) -> tuple[list[Pair], int]:
    """The pairs of ``md5s`` (in this order), each once; and how many of these descriptions
    had unequal paragraph counts."""
    pairs: dict[Pair, None] = {}  # insertion-ordered set
    unequal = 0
    for md5 in md5s:
        described, aligned = aligned_pairs(found.english[md5], found.translated[md5])
        unequal += not aligned
        pairs.update(dict.fromkeys(described))
    return list(pairs), unequal


def _held_out_texts(descriptions: dict[str, str], held_out: set[str]) -> set[str]:
    """Every synopsis and paragraph (aligned or not) of the held-out descriptions."""
    return {
        unit for md5 in held_out if md5 in descriptions for unit in text_units(descriptions[md5])
    }


def collect_ddtp_parallel(
    lang: str,
    out: Path,
    *,
    lists: Path | None = None,
    exclude: Iterable[Path] = (),
    progress: bool = True,
) -> DdtpParallelSummary:
    """Write the English→``lang`` pairs of the DDTP descriptions to a TSV file, atomically.

    ``lists``: the apt lists to read (default: :func:`default_lists_dir`, where ``clir
    collection build ddtp`` keeps them; nothing is fetched). ``exclude``: collection
    directories whose dev and test descriptions are left out (see the module docstring).
    Each line is ``english<TAB>translation``.
    """
    lang = check_language(lang)
    held_out = excluded_descriptions(exclude)
    lists = Path(lists) if lists is not None else default_lists_dir()
    found = read_descriptions(find_lists(lists, LANGUAGES[lang]), LANGUAGES[lang], progress)
    both = sorted(set(found.english) & set(found.translated))
    kept = [md5 for md5 in both if md5 not in held_out]
    pairs, unequal = _unique_pairs(found, kept)
    hidden_english = _held_out_texts(found.english, held_out)
    hidden_translated = _held_out_texts(found.translated, held_out)
    written = [
        pair for pair in pairs if pair[0] not in hidden_english and pair[1] not in hidden_translated
    ]
    out = Path(out)
    with atomic_write(out) as handle:
        handle.writelines(f"{english}\t{translation}\n" for english, translation in written)
    return DdtpParallelSummary(
        lang=lang,
        path=out,
        lists=lists,
        descriptions=len(kept),
        excluded=len(both) - len(kept),
        withheld=len(pairs) - len(written),
        unequal=unequal,
        pairs=len(written),
    )


def format_summary(summary: DdtpParallelSummary) -> str:
    """The line ``clir resource parallel --source ddtp`` prints."""
    withheld = f", {summary.withheld} pairs shared with them withheld" if summary.excluded else ""
    return (
        f"{summary.pairs} sentence pairs en→{summary.lang} from {summary.descriptions} "
        f"descriptions ({summary.excluded} excluded{withheld}, {summary.unequal} long texts "
        f"with unequal paragraph counts) → {summary.path}"
    )
