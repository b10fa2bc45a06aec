"""English WordNet 3.0 through nltk, set up from Debian's packages without ``nltk.download``.

WordNet (Miller 1995; thesis ref. [25]) groups English words into sets of synonyms
(synsets). The thesis expands each query term with its WordNet synonyms before translating
it (§5.2, "Pre-translation query expansion"): ``(a1 OR a2 ...) AND (b1 OR b2 ...)``.

nltk reads WordNet from ``<nltk_data>/corpora/wordnet/``, which ``nltk.download`` fills from
the network. Debian's ``wordnet-base`` and ``wordnet-sense-index`` packages install the same
WordNet 3.0 database in ``/usr/share/wordnet``, but nltk cannot read it there: it also wants
a ``lexnames`` file (the numbers and names of the 45 lexicographer files) that Debian ships
only as the table of the ``lexnames(5WN)`` manual page. :func:`ensure_wordnet` copies the
database into a data directory owned by the toolkit and writes ``lexnames`` from that page;
:func:`wordnet` returns nltk's reader on it.
"""

from __future__ import annotations

import gzip
import re
import shutil
import warnings
from functools import cache
from pathlib import Path
from typing import Any

from clir_toolkit.errors import ResourceError
from clir_toolkit.files import atomic_directory, atomic_write
from clir_toolkit.files import data_dir as toolkit_data_dir

__all__ = [
    "LEXNAMES",
    "WORDNET_FILES",
    "WORDNET_SOURCE",
    "base_forms",
    "ensure_wordnet",
    "lexnames_from_manpage",
    "synonyms",
    "wordnet",
]

#: Where Debian's ``wordnet-base`` installs WordNet 3.0.
WORDNET_SOURCE = Path("/usr/share/wordnet")
#: Its ``lexnames(5WN)`` manual page, whose table lists the lexicographer files.
LEXNAMES_MANPAGE = Path("/usr/share/man/man5/lexnames.5WN.gz")

#: The database files nltk's reader opens (``index.sense`` comes from wordnet-sense-index).
WORDNET_FILES = (
    "data.adj",
    "data.adv",
    "data.noun",
    "data.verb",
    "index.adj",
    "index.adv",
    "index.noun",
    "index.verb",
    "index.sense",
    "adj.exc",
    "adv.exc",
    "noun.exc",
    "verb.exc",
    "cntlist.rev",
)
_OPTIONAL_FILES = ("cntlist", "frames.vrb", "sentidx.vrb", "sents.vrb")
_INSTALL = "apt-get install wordnet-base wordnet-sense-index"

#: The 45 lexicographer file names of WordNet 3.0, numbered from 0. Used only where the
#: manual page is missing (slim Debian images drop /usr/share/man).
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute "
    "noun.body noun.cognition noun.communication noun.event noun.feeling noun.food noun.group "
    "noun.location noun.motive noun.object noun.person noun.phenomenon noun.plant "
    "noun.possession noun.process noun.quantity noun.relation noun.shape noun.state "
    "noun.substance noun.time verb.body verb.change verb.cognition verb.communication "
    "verb.competition verb.consumption verb.contact verb.creation verb.emotion verb.motion "
    "verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()

#: Syntactic category numbers of the ``lexnames`` file's third column.
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
_TABLE_ROW = re.compile(r"^(\d\d)\t\s*((?:adj|adv|noun|verb)\.\w+)\s*\t")


def lexnames_from_manpage(manpage: Path = LEXNAMES_MANPAGE) -> list[str]:
    """The lexicographer file names, in file-number order, read from ``lexnames(5WN)``.

    The page's table has rows ``00<TAB>adj.all<TAB>all adjective clusters``. Returns [] when
    the page is missing or its table is not the expected 45 consecutive rows.
    """
    try:
        with gzip.open(manpage, "rt", encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return []
    rows = [_TABLE_ROW.match(line) for line in text.splitlines()]
    names = [(int(row.group(1)), row.group(2)) for row in rows if row]
    if [number for number, _ in names] != list(range(len(LEXNAMES))):
        return []
    return [name for _, name in names]


def _lexnames_text(names: list[str]) -> str:
    """The ``lexnames`` file: ``NN<TAB>name<TAB>category`` per line, as WordNet's own."""
    return "".join(
        f"{number:02d}\t{name}\t{_CATEGORY[name.split('.')[0]]}\n"
        for number, name in enumerate(names)
    )


def _default_nltk_data() -> Path:
    return toolkit_data_dir() / "nltk_data"


def _is_complete(corpus: Path, source: Path) -> bool:
    """Whether ``corpus`` holds a full copy of ``source`` (same file sizes) and lexnames."""
    if not (corpus / "lexnames").is_file():
        return False
    for name in WORDNET_FILES:
        copy = corpus / name
        if not copy.is_file() or copy.stat().st_size != (source / name).stat().st_size:
            return False
    return True


def ensure_wordnet(data_dir: Path | None = None, source: Path = WORDNET_SOURCE) -> Path:
    """Set up WordNet for nltk under ``data_dir``, once; returns that nltk data directory.

    ``data_dir`` defaults to ``$CLIR_DATA/nltk_data``. The database files are copied (real
    files, not links: nltk opens them by path and seeks in them) into
    ``corpora/wordnet/`` together with a generated ``lexnames``; the directory appears
    complete or not at all. Calling it again does nothing while the copy is complete.
    Put the returned directory on ``NLTK_DATA`` to make ``from nltk.corpus import wordnet``
    work in other programs.
    """
    root = Path(data_dir) if data_dir is not None else _default_nltk_data()
    corpus = root / "corpora" / "wordnet"
    missing = [name for name in WORDNET_FILES if not (source / name).is_file()]
    if missing:
        if _is_complete(corpus, corpus):  # already set up on a machine without the package
            return root
        raise ResourceError(
            f"WordNet is not installed ({source / missing[0]} is missing): {_INSTALL}"
        )
    if _is_complete(corpus, source):
        return root
    try:
        _copy_wordnet(source, corpus)
    except OSError:
        if data_dir is not None:
            raise
        # $CLIR_DATA cannot be written (a read-only home, say): reading WordNet needs no
        # kept copy, so this process makes one of its own in a temporary directory.
        root = _process_nltk_data()
        corpus = root / "corpora" / "wordnet"
        if not _is_complete(corpus, source):
            _copy_wordnet(source, corpus)
    return root


def _copy_wordnet(source: Path, corpus: Path) -> None:
    """Copy WordNet's database and a generated ``lexnames`` into ``corpus``, whole or not at
    all."""
    names = lexnames_from_manpage() or list(LEXNAMES)
    with atomic_directory(corpus, marker="lexnames", what="a WordNet corpus for nltk") as building:
        for name in (*WORDNET_FILES, *_OPTIONAL_FILES):
            if (source / name).is_file():
                shutil.copyfile(source / name, building / name)
        with atomic_write(building / "lexnames") as handle:
            handle.write(_lexnames_text(names))


@cache
def _process_nltk_data() -> Path:
    """An nltk data directory of this process alone, removed when it exits."""
    import atexit
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="clir-nltk-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


@cache
def _reader(corpus: str) -> Any:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    with warnings.catch_warnings():
        # Without the Open Multilingual Wordnet nltk warns that multilingual functions are
        # unavailable; this reader is for English only.
        warnings.simplefilter("ignore")
        return WordNetCorpusReader(corpus, None)


def wordnet(data_dir: Path | None = None) -> Any:
    """nltk's WordNet reader (``nltk.corpus.reader.wordnet.WordNetCorpusReader``), set up first.

    The nltk data directory is added to ``nltk.data.path``. The same reader object is
    returned on every call for the same directory.
    """
    try:
        import nltk.data
    except ImportError:
        raise ResourceError("nltk is not installed: pip install nltk") from None
    root = ensure_wordnet(data_dir).resolve()
    # nltk (>= 3.9) opens corpus files only under a directory of its data path; registering
    # ours also makes ``from nltk.corpus import wordnet`` find the copy in this process.
    if str(root) not in nltk.data.path:
        nltk.data.path.append(str(root))
    return _reader(str(root / "corpora" / "wordnet"))


def synonyms(
    word: str, pos: str | None = None, max_senses: int = 3, data_dir: Path | None = None
) -> list[str]:
    """Synonyms of ``word`` from its ``max_senses`` most frequent WordNet senses.

    ``pos`` restricts the senses to one part of speech (``n``, ``v``, ``a``, ``r``). WordNet
    lists a word's senses most frequent first (by the SemCor counts in ``cntlist``), so a
    small ``max_senses`` keeps the common meanings and drops rare ones that would drift off
    topic (the thesis, §5.2, reports off-topic expansions as the main risk). Lemma names
    come in synset order with ``_`` turned into spaces, without ``word`` itself and without
    duplicates. An inflected word is looked up by its base form (``cars`` → ``car``).
    """
    reader = wordnet(data_dir)
    own = word.strip().lower().replace("_", " ")
    found: list[str] = []
    for synset in reader.synsets(own.replace(" ", "_"), pos=pos)[:max_senses]:
        for lemma in synset.lemma_names():
            name = lemma.replace("_", " ")
            if name.lower() != own and name not in found:
                found.append(name)
    return found


def base_forms(word: str, data_dir: Path | None = None) -> list[str]:
    """The dictionary forms of an inflected English word: ``files`` → ``file``.

    WordNet's morphy (``morphy(7WN)``): the exception lists (``mice`` → ``mouse``), then
    suffix rules (``-es``, ``-ies``, ``-ing``, ``-ed``, ...) whose result must be a WordNet
    lemma; one form per part of speech, without repeats and without ``word`` itself. Useful
    as the fallback of dictionary lookup that Oard's stemming experiment tried (thesis §2.2.2):
    exact match first, the base form only for words the dictionary lacks. Answers as nltk's
    ``morphy`` does, without loading nltk's reader (:mod:`clir_toolkit.resources.morphy`).
    """
    from clir_toolkit.resources.morphy import PARTS_OF_SPEECH, morphology

    rules = morphology(ensure_wordnet(data_dir).resolve() / "corpora" / "wordnet")
    own = word.strip().lower()
    found: list[str] = []
    for pos in PARTS_OF_SPEECH:
        form = rules.base_form(own, pos)
        if form and form != own and form not in found:
            found.append(form)
    return found
