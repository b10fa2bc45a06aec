"""Parallel text from Debian's translated package descriptions (``clir resource parallel
--source ddtp``): aligned pairs, skipped long texts, exclusion of dev/test descriptions.

Every test reads hand-made apt lists (``tests/ddtp_lists.py``): no network.
"""

from __future__ import annotations

from collections.abc import Set
from pathlib import Path

import pytest

from clir_toolkit.collection.ddtp import build_ddtp_collection
from clir_toolkit.errors import ClirError, ResourceError
from clir_toolkit.formats import read_qrels
from clir_toolkit.resources.ddtp_parallel import collect_ddtp_parallel
from tests.conftest import assert_one_line_error, run_clir
from tests.ddtp_lists import md5, write_lists

# (package, Source field or None, description key)
PACKAGES = [
    ("aligned", None, "aligned"),
    ("unequal", None, "unequal"),
    ("untranslated", None, "untranslated"),
    ("copy", None, "copy"),  # the synopsis and a paragraph of "aligned" again
    ("secret", None, "secret"),  # a dev query in the excluded collection
    ("secret-doc", None, "secret-doc"),  # a judged test document there
    ("trained", None, "trained"),  # in the excluded collection's train split only
    ("boilerplate", None, "boilerplate"),  # shares a paragraph with "secret"
    ("reworded", None, "reworded"),  # shares a translated paragraph with "secret-doc"
    ("english-only", None, "english-only"),  # no French translation
]

ENGLISH = {
    "aligned": (
        "Aligned synopsis\n First paragraph,\n on two   lines.\n .\n Second\tparagraph.\n"
        " .\n  * a verbatim item"
    ),
    "unequal": "Unequal synopsis\n One paragraph.\n .\n Another paragraph.",
    "untranslated": "Same words\n An English paragraph.",
    "copy": "Aligned synopsis\n Second paragraph.",
    "secret": "Secret synopsis\n Secret paragraph.\n .\n This package is a transitional package.",
    "secret-doc": "Secret document\n Secret document text.",
    "trained": "Trained synopsis\n Trained paragraph.",
    "boilerplate": "Boilerplate synopsis\n This package is a transitional package.",
    "reworded": "Reworded synopsis\n The secret document's text.",
    "english-only": "English only\n Nobody translated this.",
}

FRENCH = {
    "aligned": (
        "synopsis alignée\n Premier paragraphe,\n sur deux lignes.\n .\n Second paragraphe.\n"
        " .\n  * un élément verbatim"
    ),
    "unequal": "synopsis inégale\n Un seul paragraphe, qui dit tout.",
    "untranslated": "Same words\n Un paragraphe français.",
    "copy": "synopsis alignée\n Second paragraphe.",
    "secret": "synopsis secrète\n Paragraphe secret.\n .\n Ce paquet est un paquet de transition.",
    "secret-doc": "document secret\n Texte du document secret.",
    "trained": "synopsis entraînée\n Paragraphe entraîné.",
    "boilerplate": "synopsis passe-partout\n Ce paquet est un paquet de transition.",
    "reworded": "synopsis reformulée\n Texte du document secret.",
}

#: What each description gives, in its order, before deduplication and exclusion.
PAIRS = {
    "aligned": [
        "Aligned synopsis\tsynopsis alignée",
        "First paragraph, on two lines.\tPremier paragraphe, sur deux lignes.",
        "Second paragraph.\tSecond paragraphe.",
        "* a verbatim item\t* un élément verbatim",
    ],
    "unequal": ["Unequal synopsis\tsynopsis inégale"],  # 2 paragraphs against 1
    "untranslated": ["An English paragraph.\tUn paragraphe français."],  # synopsis untranslated
    "copy": ["Aligned synopsis\tsynopsis alignée", "Second paragraph.\tSecond paragraphe."],
    "secret": [
        "Secret synopsis\tsynopsis secrète",
        "Secret paragraph.\tParagraphe secret.",
        "This package is a transitional package.\tCe paquet est un paquet de transition.",
    ],
    "secret-doc": [
        "Secret document\tdocument secret",
        "Secret document text.\tTexte du document secret.",
    ],
    "trained": [
        "Trained synopsis\tsynopsis entraînée",
        "Trained paragraph.\tParagraphe entraîné.",
    ],
    "boilerplate": [
        "Boilerplate synopsis\tsynopsis passe-partout",
        "This package is a transitional package.\tCe paquet est un paquet de transition.",
    ],
    "reworded": [
        "Reworded synopsis\tsynopsis reformulée",
        "The secret document's text.\tTexte du document secret.",
    ],
}


def expected_lines(excluded: Set[str] = frozenset()) -> list[str]:
    """The file's lines: by md5 then position, each pair once, none with an English text
    or a translation that an excluded description holds."""
    withheld = {side for key in excluded for line in PAIRS[key] for side in line.split("\t")}
    lines: list[str] = []
    for key in sorted(PAIRS, key=md5):
        if key not in excluded:
            lines += [
                line
                for line in PAIRS[key]
                if line not in lines and not withheld & set(line.split("\t"))
            ]
    return lines


@pytest.fixture
def lists(tmp_path: Path) -> Path:
    return write_lists(tmp_path / "lists", PACKAGES, ENGLISH, FRENCH)


def write_collection(directory: Path, splits: dict[str, list[tuple[str, str]]]) -> Path:
    """A collection directory with ``qrels.<split>.txt`` files of ``(qid, docid)`` judgements."""
    directory.mkdir(parents=True)
    for split, judged in splits.items():
        lines = "".join(f"{md5(qid)} 0 {md5(docid)} 1\n" for qid, docid in judged)
        (directory / f"qrels.{split}.txt").write_text(lines, encoding="utf-8")
    return directory


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


# ---------------------------------------------------------------------------------------------
# The pairs
# ---------------------------------------------------------------------------------------------


def test_synopses_and_aligned_paragraphs_one_pair_a_line(lists: Path, tmp_path: Path) -> None:
    out = tmp_path / "ddtp-fr.tsv"
    summary = collect_ddtp_parallel("fr", out, lists=lists, progress=False)
    lines = read_lines(out)
    assert lines == expected_lines()
    # whitespace (a tab, runs of blanks, line breaks) collapsed: two columns on every line
    assert all(line.count("\t") == 1 for line in lines)
    # the synopsis and the paragraph that "copy" repeats are written once
    assert lines.count("Aligned synopsis\tsynopsis alignée") == 1
    assert summary.pairs == len(lines)
    # every description with a French and an English text; "english-only" has no French
    assert summary.descriptions == 9
    assert summary.excluded == 0


def test_unequal_paragraph_counts_skip_the_long_text(lists: Path, tmp_path: Path) -> None:
    out = tmp_path / "ddtp-fr.tsv"
    summary = collect_ddtp_parallel("fr", out, lists=lists, progress=False)
    text = out.read_text(encoding="utf-8")
    assert "Unequal synopsis\tsynopsis inégale\n" in text
    assert "One paragraph" not in text and "Un seul paragraphe" not in text
    assert summary.unequal == 1


def test_untranslated_and_empty_sides_are_skipped(tmp_path: Path) -> None:
    english = {"aligned": "Same synopsis\n Same paragraph.\n .\n Translated paragraph."}
    french = {"aligned": "Same synopsis\n Same paragraph.\n .\n Paragraphe traduit."}
    packages = [("aligned", None, "aligned")]
    lists = write_lists(tmp_path / "lists", packages, english, french)
    out = tmp_path / "ddtp-fr.tsv"
    collect_ddtp_parallel("fr", out, lists=lists, progress=False)
    assert read_lines(out) == ["Translated paragraph.\tParagraphe traduit."]


def test_two_builds_are_byte_identical(lists: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "first.tsv", tmp_path / "second.tsv"
    collect_ddtp_parallel("fr", first, lists=lists, progress=False)
    collect_ddtp_parallel("fr", second, lists=lists, progress=False)
    assert first.read_bytes() == second.read_bytes()


# ---------------------------------------------------------------------------------------------
# Excluding a collection's dev and test descriptions
# ---------------------------------------------------------------------------------------------


def test_dev_and_test_descriptions_are_left_out(lists: Path, tmp_path: Path) -> None:
    collection = write_collection(
        tmp_path / "ddtp-en-fr",
        {
            "train": [("trained", "trained")],
            "dev": [("secret", "secret")],  # a query id
            "test": [("english-only", "secret-doc")],  # a document id
        },
    )
    out = tmp_path / "ddtp-fr.tsv"
    summary = collect_ddtp_parallel("fr", out, lists=lists, exclude=[collection], progress=False)
    lines = read_lines(out)
    assert lines == expected_lines({"secret", "secret-doc"})
    text = out.read_text(encoding="utf-8")
    assert "Secret" not in text and "secret" not in text
    # the boilerplate paragraph is also in "secret": not written from "boilerplate" either
    assert "transitional" not in text
    # nor the translation of a "secret-doc" paragraph, which "reworded" gives another English
    assert "Texte du document secret" not in text and "The secret document's" not in text
    assert "Reworded synopsis\tsynopsis reformulée" in lines
    assert "Trained synopsis\tsynopsis entraînée" in lines
    assert summary.excluded == 2
    assert summary.descriptions == 7
    assert summary.withheld == 2


def test_unaligned_paragraphs_of_an_excluded_description_are_withheld(tmp_path: Path) -> None:
    packages = [("held", None, "held"), ("kept", None, "kept")]
    english = {
        "held": "Held synopsis\n Held paragraph.\n .\n Common paragraph.",
        "kept": "Kept synopsis\n Common paragraph.",
    }
    french = {
        "held": "synopsis retenue\n Paragraphe retenu, paragraphe commun.",  # one paragraph
        "kept": "synopsis gardée\n Paragraphe commun.",
    }
    lists = write_lists(tmp_path / "lists", packages, english, french)
    collection = write_collection(tmp_path / "collection", {"dev": [("held", "held")], "test": []})
    out = tmp_path / "out.tsv"
    collect_ddtp_parallel("fr", out, lists=lists, exclude=[collection], progress=False)
    assert read_lines(out) == ["Kept synopsis\tsynopsis gardée"]


def test_a_built_collection_gives_nothing_of_its_dev_and_test_splits(
    lists: Path, tmp_path: Path
) -> None:
    collection = tmp_path / "ddtp-en-fr"
    build_ddtp_collection("fr", collection, lists=lists, progress=False)
    held_out = {
        md5id
        for split in ("dev", "test")
        if (collection / f"qrels.{split}.txt").stat().st_size
        for qrel in read_qrels(collection / f"qrels.{split}.txt")
        for md5id in (qrel.qid, qrel.docid)
    }
    assert held_out, "the fixture should put some description into dev or test"
    out = tmp_path / "ddtp-fr.tsv"
    collect_ddtp_parallel("fr", out, lists=lists, exclude=[collection], progress=False)
    lines = read_lines(out)
    keys = {md5(key): key for key in PAIRS}
    for md5id in held_out:
        assert not set(PAIRS[keys[md5id]]) & set(lines), keys[md5id]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"dev": []}, "qrels.test.txt"),  # no test qrels
        ({"test": []}, "qrels.dev.txt"),  # no dev qrels
    ],
)
def test_refuses_a_collection_without_dev_and_test_qrels(
    lists: Path, tmp_path: Path, files: dict[str, list[tuple[str, str]]], expected: str
) -> None:
    collection = write_collection(tmp_path / "collection", files)
    out = tmp_path / "ddtp-fr.tsv"
    with pytest.raises(ClirError) as error:
        collect_ddtp_parallel("fr", out, lists=lists, exclude=[collection], progress=False)
    message = str(error.value)
    assert "\n" not in message
    assert str(collection) in message and expected in message
    assert not out.exists()


def test_refuses_damaged_qrels_naming_the_line(lists: Path, tmp_path: Path) -> None:
    collection = write_collection(tmp_path / "collection", {"dev": [], "test": []})
    (collection / "qrels.test.txt").write_text(f"{md5('secret')} 0 {md5('secret')}\n")
    with pytest.raises(ClirError, match=r"qrels\.test\.txt:1: expected 4 columns"):
        collect_ddtp_parallel(
            "fr", tmp_path / "out.tsv", lists=lists, exclude=[collection], progress=False
        )


def test_refuses_missing_lists_with_the_fetch_command(tmp_path: Path) -> None:
    with pytest.raises(ResourceError) as error:
        collect_ddtp_parallel("fr", tmp_path / "out.tsv", lists=tmp_path / "nowhere")
    message = str(error.value)
    assert "no such lists directory" in message
    assert f"-o Dir::State::Lists={tmp_path / 'nowhere'} update" in message


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------


def test_command_line_writes_the_pairs_and_says_how_many(lists: Path, tmp_path: Path) -> None:
    out = tmp_path / "ddtp-fr.tsv"
    collection = write_collection(
        tmp_path / "ddtp-en-fr", {"dev": [("secret", "secret")], "test": []}
    )
    result = run_clir(
        "resource", "parallel", "--source", "ddtp", "--lang", "fr", "--out", str(out),
        "--lists", str(lists), "--exclude", str(collection), "--quiet",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert read_lines(out) == expected_lines({"secret"})
    pairs = len(expected_lines({"secret"}))
    assert result.stdout.startswith(
        f"{pairs} sentence pairs en→fr from 8 descriptions (1 excluded"
    ), result.stdout
    assert "1 long texts with unequal paragraph counts" in result.stdout
    assert result.stdout.rstrip().endswith(f"→ {out}")


def test_command_line_refuses_a_bad_exclude_directory(lists: Path, tmp_path: Path) -> None:
    out = tmp_path / "ddtp-fr.tsv"
    result = run_clir(
        "resource", "parallel", "--source", "ddtp", "--lang", "fr", "--out", str(out),
        "--lists", str(lists), "--exclude", str(tmp_path / "no-collection"),
    )  # fmt: skip
    assert_one_line_error(result, str(tmp_path / "no-collection"), "qrels.dev.txt")
    assert not out.exists()


def test_command_line_default_lists_directory(tmp_path: Path) -> None:
    result = run_clir(
        "resource", "parallel", "--source", "ddtp", "--lang", "fr",
        "--out", str(tmp_path / "out.tsv"), env={"CLIR_DATA": str(tmp_path / "data")},
    )  # fmt: skip
    # read where `clir collection build ddtp` keeps the lists; none there: how to fetch them
    assert_one_line_error(
        result, str(tmp_path / "data" / "ddtp" / "lists"), "apt-get -o Acquire::Languages="
    )


def test_command_line_gettext_is_still_the_default(tmp_path: Path) -> None:
    # without --source: the gettext catalogs, which this language has none of
    result = run_clir(
        "resource", "parallel", "--lang", "xx", "--out", str(tmp_path / "out.tsv"),
    )  # fmt: skip
    assert_one_line_error(result, "no gettext catalogs for 'xx'")


def test_command_line_ddtp_options_need_the_ddtp_source(lists: Path, tmp_path: Path) -> None:
    result = run_clir(
        "resource", "parallel", "--lang", "fr", "--out", str(tmp_path / "out.tsv"),
        "--lists", str(lists),
    )  # fmt: skip
    assert_one_line_error(result, "--lists", "--source ddtp", status=2)
    assert not (tmp_path / "out.tsv").exists()
