"""FreeDict dictionaries from Debian's ``dict-freedict-*`` packages (``freedict:eng-fra``).

Dictionaries written for people hold much more than translations: pronunciations,
grammatical labels, usage notes, examples, cross-references. Following the automatic
filtering of Hull and Grefenstette (thesis ref. [1], §2.2.2), :func:`parse_freedict_entry`
keeps only the direct translations, turning a "general language dictionary" into the
"bilingual thesaurus" that retrieval needs, and keeps multi-word headwords ("take care",
"hard disk").

The entries come from the dictd files of the packages (:mod:`.dictd`).
``freedict:eng-fra+fra-eng`` adds the French→English dictionary read backwards: each French
headword becomes a candidate of each English translation in its entry, after the direct
candidates (:func:`load_freedict` with ``with_inverse``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from clir_toolkit.errors import ResourceError
from clir_toolkit.resources.dictionary.bilingual import BilingualDictionary
from clir_toolkit.resources.dictionary.cache import cached_dictionary
from clir_toolkit.resources.dictionary.dictd import DICTD_DIR, read_dictd
from clir_toolkit.resources.dictionary.phrases import has_letter, normalise_phrase, remove_notes

__all__ = [
    "FREEDICT_PAIRS",
    "FreedictEntry",
    "headword_variants",
    "load_freedict",
    "parse_freedict_entry",
]

#: FreeDict pairs this module knows the Debian package of (``dict-freedict-<pair>``).
FREEDICT_PAIRS = ("eng-fra", "eng-deu", "eng-spa", "eng-ita", "eng-rus", "eng-jpn", "fra-eng")


@dataclass(frozen=True, slots=True)
class FreedictEntry:
    """One parsed FreeDict entry."""

    #: The headword as printed, cleaned of notes and placeholders ("take care").
    headword: str
    #: The grammatical label of the headword line, such as ``v`` or ``n, masc`` ("" if none).
    grammar: str
    #: The translations of every sense, in order.
    translations: tuple[str, ...]


# A sense number at the start of a line ("2. stato"), alone (" 3."), or glued to the end of
# the previous translation by the eng-jpn conversion ("放棄 2.").
_SENSE = re.compile(r"^\d+\.(?:\s|$)")
_SENSE_LINE = re.compile(r"^[ \t]*\d+\.(?:[ \t]+(.*?))?[ \t]*$", re.MULTILINE)
_TRAILING_SENSE = re.compile(r"\s+\d+\.\s*$")
# Lines that are not translations: examples, usage notes, synonyms and cross-references.
_NOTE_PREFIXES = ('"', "{", "see:", "Note:", "Synonym", "Antonym", "Syn.")
_PRONUNCIATION = re.compile(r"\s(?:/|<)")
# Stand-ins for "somebody" / "something" that no query contains.
_PLACEHOLDERS = frozenset(
    "sb sb. sth sth. sb's sth's smb. smth. o.s. etw. jdn. jdm. jds. jd. qn qn. qch qch. qqch "
    "qqch. qqn qqn.".split()
)
_EDGE_JUNK = " \t.,;:!?¡¿…\"'“”„«»‘’‚-–—/|*+=~^()[]{}"


def _is_placeholder(token: str) -> bool:
    return token.lower() in _PLACEHOLDERS


def _without_placeholders(token: str) -> str:
    """``sb.`` → ``""``; ``jdm./einer`` → ``einer``; other tokens unchanged."""
    if "/" not in token:
        return "" if _is_placeholder(token) else token
    return "/".join(part for part in token.split("/") if part and not _is_placeholder(part))


def _drop_placeholders(text: str) -> str:
    """``text`` without placeholder words, its white space collapsed."""
    tokens = text.split()
    if "/" in text or not _PLACEHOLDERS.isdisjoint(text.lower().split()):
        tokens = [kept for kept in map(_without_placeholders, tokens) if kept]
    return " ".join(tokens)


def _clean_term(text: str) -> str:
    """One headword or translation without placeholders, edge punctuation or extra space."""
    return _drop_placeholders(text).strip(_EDGE_JUNK)


#: A pronunciation between slashes inside a translation line (``maximalmax., /mˈaks/``).
_INLINE_PRONUNCIATION = re.compile(r"/[^/,;]*/")


def _split_translations(line: str) -> list[str]:
    """The translations on one line: notes and pronunciations removed, split on ',' and ';'."""
    line = remove_notes(_TRAILING_SENSE.sub("", line))
    line = _INLINE_PRONUNCIATION.sub(" ", line)
    terms = (_clean_term(piece) for piece in re.split(r"[,;，；]", line))
    return [term for term in terms if has_letter(term)]


def parse_freedict_entry(text: str) -> FreedictEntry | None:
    """Parse one FreeDict entry in dictd's plain-text rendering; None for an empty one.

    The first line is the headword, its pronunciation between slashes and an optional
    grammatical label: ``take care /teikkɛər/`` or ``exit //ˈɛksət// <v>``. The second line
    holds the translations, or the first of numbered senses ``1. recoger``, ``2. decudir``.
    Every other line is something else: indented usage notes, quoted examples,
    ``Synonyms:`` and ``see: {...}`` references (eng-deu), an English definition after each
    sense (eng-jpn); a sense number with nothing after it introduces such lines only.
    Translations are split on ``,`` and ``;`` after dropping ``<labels>``, ``[labels]``,
    ``{references}`` and parenthesised notes. Entries whose headword is a sentence are
    examples, not vocabulary: None.
    """
    first_line, _, body = text.partition("\n")
    grammar_label = re.search(r"<([^<>]*)>", first_line)
    printed = _drop_placeholders(remove_notes(_PRONUNCIATION.split(first_line, maxsplit=1)[0]))
    headword = printed.strip(_EDGE_JUNK)
    if not has_letter(headword) or _is_sentence(printed):
        return None
    translations: list[str] = []
    second_line = body.partition("\n")[0].strip()
    if not _SENSE.match(second_line) and not second_line.startswith(_NOTE_PREFIXES):
        translations.extend(_split_translations(second_line))
    for sense in _SENSE_LINE.finditer(body):
        translations.extend(_split_translations(sense.group(1) or ""))
    return FreedictEntry(
        headword=headword,
        grammar=grammar_label.group(1).strip() if grammar_label else "",
        translations=tuple(translations),
    )


def _is_sentence(headword: str) -> bool:
    """Three words or more ending in ``.``, ``!`` or ``?``: an example sentence (eng-deu has
    thousands), not vocabulary that a query could contain."""
    return headword.count(" ") >= 2 and headword.endswith((".", "!", "?"))


def headword_variants(headword: str) -> list[str]:
    """The phrases a headword stands for: ``pre-empt/preempt`` → ``pre-empt``, ``preempt``.

    Only the first word with slash-separated alternatives is expanded.
    """
    words = headword.split()
    for position, word in enumerate(words):
        alternatives = [part for part in word.split("/") if part]
        if len(alternatives) > 1:
            return [
                " ".join([*words[:position], alternative, *words[position + 1 :]])
                for alternative in alternatives
            ]
    return [headword]


def _freedict_files(pair: str, directory: Path) -> tuple[Path, Path]:
    index = directory / f"freedict-{pair}.index"
    data = directory / f"freedict-{pair}.dict.dz"
    if not index.is_file() or not data.is_file():
        raise ResourceError(
            f"FreeDict {pair} is not installed ({index} is missing): "
            f"apt-get install dict-freedict-{pair}"
        )
    return index, data


def _freedict_entries(pair: str, directory: Path) -> Iterator[FreedictEntry]:
    """The parsed entries of a FreeDict dictionary, each once, without its metadata."""
    index, data = _freedict_files(pair, directory)
    seen: set[str] = set()
    for key, text in read_dictd(index, data):
        # The dictionary describes itself in entries named 00-database-info, -url, ...
        if key.startswith(("00database", "00-database")) or text in seen:
            continue
        seen.add(text)
        entry = parse_freedict_entry(text)
        if entry is not None and not entry.headword.startswith("00-database"):
            yield entry


def load_freedict(
    pair: str, directory: Path = DICTD_DIR, with_inverse: bool = False
) -> BilingualDictionary:
    """The FreeDict dictionary ``pair`` (such as ``eng-fra``) from its dictd files.

    Entries with the same headword are merged in index order. A hyphenated headword
    ("e-mail") is also stored with spaces ("e mail") for tokenisers that split on hyphens.
    ``with_inverse`` adds the reverse dictionary (``fra-eng``) read backwards, after the
    direct candidates (see :func:`_inverted_freedict`). Parsing eng-deu's 460,000 entries
    takes several seconds, so the result is cached (see
    :func:`~clir_toolkit.resources.dictionary.cache.cached_dictionary`).
    """
    direct = _load_freedict(pair, Path(directory))
    if not with_inverse:
        return direct
    source, target = pair.split("-")
    reverse = f"{target}-{source}"
    inverse = _load_inverted_freedict(reverse, Path(directory))
    return direct.merged(inverse, name=f"freedict:{pair}+{reverse}")


@lru_cache(maxsize=8)
def _load_freedict(pair: str, directory: Path) -> BilingualDictionary:
    sources = _freedict_files(pair, directory)
    return cached_dictionary(
        f"freedict:{pair}", sources, lambda: _freedict_phrases(pair, directory)
    )


@lru_cache(maxsize=4)
def _load_inverted_freedict(pair: str, directory: Path) -> BilingualDictionary:
    sources = _freedict_files(pair, directory)  # a clear error when the package is missing
    return cached_dictionary(
        f"inverted freedict:{pair}", sources, lambda: _inverted_freedict(pair, directory)
    )


def _freedict_phrases(pair: str, directory: Path) -> dict[str, list[str]]:
    entries: dict[str, list[str]] = {}
    for entry in _freedict_entries(pair, directory):
        if not entry.translations:
            continue
        for headword in headword_variants(entry.headword):
            key = normalise_phrase(headword)
            entries.setdefault(key, []).extend(entry.translations)
            if "-" in key:
                entries.setdefault(key.replace("-", " "), []).extend(entry.translations)
    return entries


def _inverted_freedict(pair: str, directory: Path) -> dict[str, list[str]]:
    """Target phrase → source headwords of a FreeDict dictionary read backwards.

    A headword is listed under each of its translations, the infinitive marker of verb
    translations removed ("to be late" → "be late"). Under one phrase, headwords of which
    it is the first translation come first, then second translations, and so on.
    """
    ranked: dict[str, list[tuple[int, int, str]]] = {}
    for order, entry in enumerate(_freedict_entries(pair, directory)):
        is_verb = entry.grammar.startswith("v")
        for position, translation in enumerate(entry.translations):
            phrase = translation
            if is_verb and phrase.lower().startswith("to ") and len(phrase) > 3:
                phrase = phrase[3:]
            ranked.setdefault(normalise_phrase(phrase), []).append(
                (position, order, entry.headword)
            )
    return {phrase: [word for _, _, word in sorted(found)] for phrase, found in ranked.items()}
