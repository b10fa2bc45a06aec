"""WordNet for nltk from Debian's packages: lexnames, the copied corpus, the real database."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from clir_toolkit.errors import ResourceError
from clir_toolkit.resources.wordnet import (
    LEXNAMES,
    LEXNAMES_MANPAGE,
    WORDNET_FILES,
    WORDNET_SOURCE,
    base_forms,
    ensure_wordnet,
    lexnames_from_manpage,
    synonyms,
    wordnet,
)


def fake_manpage(path: Path, names: list[str]) -> Path:
    """A lexnames(5WN)-like page whose tbl table lists ``names``."""
    rows = "".join(f"{number:02d}\t{name}\tsome description\n" for number, name in enumerate(names))
    text = (
        ".TH LEXNAMES 5WN\n.SH NAME\nlexnames \\- test page\n.TS\nl l l.\n"
        "\\fBFile Number\\fP\t\\fBName\\fP\t\\fBContents\\fP\n_\n" + rows + ".TE\n"
    )
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(text)
    return path


def fake_source(directory: Path) -> Path:
    """A directory with every file ensure_wordnet copies (made-up content)."""
    directory.mkdir()
    for name in WORDNET_FILES:
        (directory / name).write_text(f"test content of {name}\n", "utf-8")
    return directory


def test_lexnames_read_from_the_manual_page(tmp_path: Path) -> None:
    names = [f"noun.test{number}" for number in range(len(LEXNAMES))]
    assert lexnames_from_manpage(fake_manpage(tmp_path / "ok.5WN.gz", names)) == names


def test_lexnames_page_with_a_gap_is_not_trusted(tmp_path: Path) -> None:
    names = [f"noun.test{number}" for number in range(len(LEXNAMES) - 1)]
    assert lexnames_from_manpage(fake_manpage(tmp_path / "short.5WN.gz", names)) == []
    assert lexnames_from_manpage(tmp_path / "absent.5WN.gz") == []


def test_ensure_wordnet_copies_files_and_writes_lexnames(tmp_path: Path) -> None:
    source = fake_source(tmp_path / "wordnet")
    root = ensure_wordnet(tmp_path / "nltk_data", source=source)
    corpus = root / "corpora" / "wordnet"
    assert root == tmp_path / "nltk_data"
    for name in WORDNET_FILES:
        copy = corpus / name
        assert copy.is_file() and not copy.is_symlink()
        assert copy.read_text("utf-8") == (source / name).read_text("utf-8")
    lines = (corpus / "lexnames").read_text("utf-8").splitlines()
    assert len(lines) == 45
    assert lines[0].split("\t") == ["00", "adj.all", "3"]
    assert lines[3].split("\t") == ["03", "noun.Tops", "1"]
    assert lines[29].split("\t") == ["29", "verb.body", "2"]
    assert lines[44].split("\t") == ["44", "adj.ppl", "3"]


def test_ensure_wordnet_is_idempotent_and_repairs(tmp_path: Path) -> None:
    source = fake_source(tmp_path / "wordnet")
    root = ensure_wordnet(tmp_path / "nltk_data", source=source)
    lexnames = root / "corpora" / "wordnet" / "lexnames"
    before = lexnames.stat().st_mtime_ns
    assert ensure_wordnet(tmp_path / "nltk_data", source=source) == root
    assert lexnames.stat().st_mtime_ns == before  # nothing rewritten
    (root / "corpora" / "wordnet" / "data.noun").write_text("truncated", "utf-8")
    ensure_wordnet(tmp_path / "nltk_data", source=source)
    assert (root / "corpora" / "wordnet" / "data.noun").read_text("utf-8") == (
        "test content of data.noun\n"
    )


def test_missing_package_names_the_install_command(tmp_path: Path) -> None:
    with pytest.raises(ResourceError, match="apt-get install wordnet-base wordnet-sense-index"):
        ensure_wordnet(tmp_path / "nltk_data", source=tmp_path / "absent")
    assert not (tmp_path / "nltk_data" / "corpora" / "wordnet").exists()


def test_default_directory_is_under_clir_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLIR_DATA", str(tmp_path / "data"))
    source = fake_source(tmp_path / "wordnet")
    assert ensure_wordnet(source=source) == tmp_path / "data" / "nltk_data"


# ---------------------------------------------------------------------------------------------
# The installed WordNet 3.0
# ---------------------------------------------------------------------------------------------

installed = pytest.mark.skipif(
    not (WORDNET_SOURCE / "index.sense").is_file() or not (WORDNET_SOURCE / "data.noun").is_file(),
    reason="WordNet is not installed (apt-get install wordnet-base wordnet-sense-index)",
)


@pytest.fixture(scope="module")
def nltk_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("nltk", reason="nltk is not installed (pip install nltk)")
    return ensure_wordnet(tmp_path_factory.mktemp("wordnet") / "nltk_data")


@installed
def test_manual_page_agrees_with_the_built_in_list() -> None:
    if not LEXNAMES_MANPAGE.is_file():
        pytest.skip(f"{LEXNAMES_MANPAGE} is absent (manual pages excluded by dpkg?)")
    assert lexnames_from_manpage() == LEXNAMES


@installed
def test_nltk_reads_the_installed_wordnet(nltk_data: Path) -> None:
    reader = wordnet(nltk_data)
    assert reader.get_version() == "3.0"
    assert sum(1 for _ in reader.all_synsets()) == 117_659
    assert reader.synset("dog.n.01").lexname() == "noun.animal"
    assert reader.lemmas("dog")[0].count() > 0  # cntlist.rev is read
    assert reader.lemma_from_key("dog%1:05:00::").synset().name() == "dog.n.01"  # index.sense
    assert wordnet(nltk_data) is reader


@installed
def test_synonyms(nltk_data: Path) -> None:
    found = synonyms("car", data_dir=nltk_data)
    assert "automobile" in found
    assert "car" not in found
    assert "railway car" in found  # underscores turned into spaces
    assert synonyms("car", max_senses=1, data_dir=nltk_data) == [
        "auto",
        "automobile",
        "machine",
        "motorcar",
    ]
    assert "file" in synonyms("files", data_dir=nltk_data)  # looked up by its base form
    assert synonyms("display", pos="v", data_dir=nltk_data) == ["expose", "exhibit"]
    assert synonyms("qwertyuiop", data_dir=nltk_data) == []


@installed
def test_base_forms(nltk_data: Path) -> None:
    assert base_forms("files", nltk_data) == ["file"]
    assert base_forms("mice", nltk_data) == ["mouse"]
    assert base_forms("copied", nltk_data) == ["copy"]
    assert base_forms("working", nltk_data) == ["work"]
    assert base_forms("file", nltk_data) == []
    assert base_forms("glasses", nltk_data) == ["glass"]  # a noun lemma itself; a verb's -es


def inflections(lemma: str) -> list[str]:
    """The forms morphy's rules undo, made from ``lemma``: plurals, tenses, comparatives."""
    stem = lemma[:-1]
    suffixed = [lemma + end for end in ("s", "es", "ed", "d", "ing", "er", "est")]
    return [*suffixed, stem + "ies", stem + "ves", stem + "ing", lemma.replace("man", "men")]


@installed
def test_base_forms_agree_with_nltk_morphy_on_the_whole_exception_lists_and_many_inflections(
    nltk_data: Path,
) -> None:
    """The toolkit's morphy (which does not load nltk's reader) gives nltk's answer for every
    word of WordNet's exception lists and for the inflections of every 10th lemma."""
    from clir_toolkit.resources.morphy import PARTS_OF_SPEECH, morphology

    reader = wordnet(nltk_data)
    own = morphology(nltk_data.resolve() / "corpora" / "wordnet")
    words: set[str] = set()
    for pos in PARTS_OF_SPEECH:
        words.update(own.exceptions[pos])
        for lemma in sorted(own.lemmas[pos])[::10]:
            words.update(inflections(lemma))
    assert len(words) > 100_000
    differences = [
        (word, pos, own.base_form(word, pos), reader.morphy(word, pos))
        for word in sorted(words)
        for pos in PARTS_OF_SPEECH
        if own.base_form(word, pos) != reader.morphy(word, pos)
    ]
    assert differences == []


@installed
def test_an_unwritable_data_directory_still_reads_wordnet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$CLIR_DATA that cannot be written (here a file): dictionary translation, which reads
    WordNet for base forms, used to fail; the process now makes its own temporary copy."""
    from clir_toolkit.resources.wordnet import ensure_wordnet

    blocked = tmp_path / "not-a-directory"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv("CLIR_DATA", str(blocked))
    root = ensure_wordnet()
    assert not root.is_relative_to(blocked)
    assert (root / "corpora" / "wordnet" / "lexnames").is_file()
    assert blocked.read_text(encoding="utf-8") == ""
