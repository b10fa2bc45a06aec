"""The man-page CLIR collections: queries, graded qrels, splits, files, refusals.

Most tests build a collection from a fake man root assembled in ``tmp_path`` from the
hand-written pages of ``tests/fixtures/troff`` (see its README for what each page tests).
One test builds the real Italian collection from the installed Debian packages.
"""

from __future__ import annotations

import gzip
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from clir_toolkit.collection import open_collection
from clir_toolkit.collection.manpages import build_manpages_collection, format_summary
from clir_toolkit.collection.manpages.documents import find_boilerplate_headings
from clir_toolkit.collection.manpages.packages import man_pages_excluded
from clir_toolkit.collection.manpages.page import ManPage, Section
from clir_toolkit.collection.manpages.topics import copied_share
from clir_toolkit.collection.query_rules import split_of
from clir_toolkit.errors import OutputError, ResourceError, UsageError
from clir_toolkit.files import sha256_file
from clir_toolkit.formats import Qrel, iter_corpus, read_qrels
from tests.conftest import assert_one_line_error, debian_packages_missing, run_clir

FIXTURES = Path(__file__).parent / "fixtures" / "troff"
SPLITS = ("train", "dev", "test")
FILES = [
    "corpus.jsonl",
    "manifest.json",
    *(f"topics.{s}.tsv" for s in SPLITS),
    *(f"topics-human.{s}.tsv" for s in SPLITS),
    *(f"qrels.{s}.txt" for s in SPLITS),
]


def make_man_root(root: Path) -> Path:
    """English pages in ``root/man*/``, French ones in ``root/fr/man*/``, gzipped as Debian does."""
    for side, target in (("en", root), ("fr", root / "fr")):
        for source in sorted((FIXTURES / side).glob("man*/*")):
            destination = target / source.parent.name / f"{source.name}.gz"
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(gzip.compress(source.read_bytes(), mtime=0))
    (root / "fr" / "man1" / "frobstat.1.gz").symlink_to("frobctl.1.gz")
    return root


@pytest.fixture
def man_root(tmp_path: Path) -> Path:
    return make_man_root(tmp_path / "man")


def build(man_root: Path, out: Path, variant: str = "standard") -> Path:
    build_manpages_collection("fr", out, variant=variant, man_root=man_root, progress=False)
    return out


def read_all_topics(directory: Path, kind: str = "topics") -> dict[str, str]:
    topics: dict[str, str] = {}
    for split in SPLITS:
        for line in (directory / f"{kind}.{split}.tsv").read_text(encoding="utf-8").splitlines():
            qid, query = line.split("\t")
            topics[qid] = query
    return topics


def read_all_qrels(directory: Path) -> set[Qrel]:
    found: set[Qrel] = set()
    for split in SPLITS:
        path = directory / f"qrels.{split}.txt"
        if path.stat().st_size:
            found.update(read_qrels(path))
    return found


# ---------------------------------------------------------------------------------------------
# The collection built from the fixture pages
# ---------------------------------------------------------------------------------------------


def test_one_document_per_unique_translated_page(man_root: Path, tmp_path: Path) -> None:
    out = build(man_root, tmp_path / "manpages-en-fr")
    docs = {doc.id: doc.contents for doc in iter_corpus(out / "corpus.jsonl")}
    # frobstat.1 (a symbolic link) and frobalias.1 (a .so stub) are aliases, not documents.
    assert sorted(docs) == [
        "copycat.1",
        "frobctl.1",
        "frobnicate.1",
        "lonely.1",
        "solo.1",
        "twin1.1",
        "twin2.1",
        "widgetd.8",
    ]
    frobnicate = docs["frobnicate.1"]
    assert frobnicate.startswith("NOM\nfrobnicate - ajuster la fréquence du gadget\nSYNOPSIS")
    assert "modifie la fréquence à laquelle le gadget tourne" in frobnicate
    # The translator credit repeats in every page: it is dropped.
    assert not any("TRADUCTION" in text or "traducteurs" in text for text in docs.values())


def test_queries_and_the_three_filters(man_root: Path, tmp_path: Path) -> None:
    out = build(man_root, tmp_path / "c")
    # copycat.1: mostly copied from English; twin1/twin2: the same query text;
    # solo.1: a one-word query ("soloist"); lonely.1: no English page.
    assert read_all_topics(out) == {
        "frobnicate.1": "adjust the widget frequency",
        "frobctl.1": "control the frobnication daemon",
        "widgetd.8": "widget daemon for frobnication",
    }
    assert read_all_topics(out, "topics-human") == {
        "frobnicate.1": "ajuster la fréquence du gadget",
        "frobctl.1": "contrôler le démon de frobnication",
        "widgetd.8": "démon des gadgets pour la frobnication",
    }
    dropped = json.loads((out / "manifest.json").read_text())["counts"]["queries_dropped"]
    assert dropped == {
        "copied": 1,
        "duplicate": 2,
        "empty_document": 0,
        "no_description": 0,
        "no_english_page": 1,
        "no_translated_name": 0,
        "short": 1,
    }


def test_graded_qrels(man_root: Path, tmp_path: Path) -> None:
    out = build(man_root, tmp_path / "c")
    assert read_all_qrels(out) == {
        # grade 2: the translated page itself
        Qrel("frobnicate.1", "frobnicate.1", 2),
        Qrel("frobctl.1", "frobctl.1", 2),
        Qrel("widgetd.8", "widgetd.8", 2),
        # grade 1: under SEE ALSO in both pages (nothere(1) is not in the corpus)
        Qrel("frobnicate.1", "frobctl.1", 1),
        Qrel("frobnicate.1", "widgetd.8", 1),
        # English frobctl.1 lists frobnicate(1) and widgetd(8); French only frobnicate(1)
        Qrel("frobctl.1", "frobnicate.1", 1),
        # French widgetd.8 lists frobalias(1), a .so alias of frobnicate.1
        Qrel("widgetd.8", "frobnicate.1", 1),
    }


def test_splits_follow_the_qid_hash(man_root: Path, tmp_path: Path) -> None:
    out = build(man_root, tmp_path / "c")
    for split in SPLITS:
        qids = [
            line.split("\t")[0]
            for line in (out / f"topics.{split}.tsv").read_text().split("\n")
            if line
        ]
        human = [
            line.split("\t")[0]
            for line in (out / f"topics-human.{split}.tsv").read_text().split("\n")
            if line
        ]
        qrels = {
            line.split()[0] for line in (out / f"qrels.{split}.txt").read_text().split("\n") if line
        }
        assert qids == human  # the same queries, in the same order
        assert set(qids) == qrels
        assert all(split_of(qid) == split for qid in qids)


def test_split_is_stable_and_60_20_20() -> None:
    # Fixed values: a change of the hash would silently move queries between splits.
    assert [split_of(q) for q in ("ls.1", "getpid.2", "printf.3", "frobnicate.1")] == [
        "train",
        "dev",
        "test",
        "train",
    ]
    counts = Counter(split_of(f"page{i}.1") for i in range(20000))
    assert abs(counts["train"] / 20000 - 0.6) < 0.02
    assert abs(counts["dev"] / 20000 - 0.2) < 0.02
    assert abs(counts["test"] / 20000 - 0.2) < 0.02


def test_hard_variant_drops_the_name_section(man_root: Path, tmp_path: Path) -> None:
    standard = build(man_root, tmp_path / "standard")
    hard = build(man_root, tmp_path / "hard", variant="hard")
    hard_docs = {doc.id: doc.contents for doc in iter_corpus(hard / "corpus.jsonl")}
    assert hard_docs["frobnicate.1"].startswith("SYNOPSIS\nfrobnicate")
    assert not any("NOM" in text for text in hard_docs.values())
    # Same queries and judgements: only the documents change.
    assert read_all_topics(hard) == read_all_topics(standard)
    assert read_all_qrels(hard) == read_all_qrels(standard)
    manifest = json.loads((hard / "manifest.json").read_text())
    assert (manifest["name"], manifest["variant"]) == ("manpages-en-fr-hard", "hard")


def test_manifest(man_root: Path, tmp_path: Path) -> None:
    out = build(man_root, tmp_path / "c")
    assert sorted(path.name for path in out.iterdir()) == sorted(FILES)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert (manifest["name"], manifest["query_lang"], manifest["doc_lang"]) == (
        "manpages-en-fr",
        "en",
        "fr",
    )
    assert manifest["counts"]["documents"] == 8
    assert manifest["counts"]["queries"]["all"] == 3
    assert manifest["counts"]["symbolic_links"] == 1 and manifest["counts"]["so_stubs"] == 1
    assert manifest["source"]["required_packages"] == [
        "manpages",
        "manpages-dev",
        "manpages-fr",
        "manpages-fr-dev",
    ]
    assert "TRADUCTION" in manifest["build_parameters"]["dropped_headings"]
    assert set(manifest["files"]) == set(FILES) - {"manifest.json"}
    for name, digest in manifest["files"].items():
        assert sha256_file(out / name) == digest
    collection = open_collection(out)
    assert (collection.query_lang, collection.doc_lang) == ("en", "fr")


def test_rebuild_is_byte_identical_and_replaces_the_directory(
    man_root: Path, tmp_path: Path
) -> None:
    first = build(man_root, tmp_path / "first")
    second = build(man_root, tmp_path / "second")
    # What builders and the toolkit's caches write, from an older build: replaced.
    (second / "topics.extra.tsv").write_text("from an older build")
    (second / ".cache" / "rerank").mkdir(parents=True)
    build(man_root, second)
    assert sorted(p.name for p in second.iterdir()) == sorted(FILES)
    for name in FILES:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


@pytest.mark.parametrize("users", ["notes.txt", "runs/bm25.trec"])
def test_rebuilding_refuses_a_collection_holding_a_users_file(
    man_root: Path, tmp_path: Path, users: str
) -> None:
    """A rebuild replaces the directory whole: a file the user put in the collection would
    be lost with it, so the rebuild is refused, naming it, and nothing is changed."""
    out = build(man_root, tmp_path / "c")
    (out / users).parent.mkdir(exist_ok=True)
    (out / users).write_text("precious")
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    with pytest.raises(OutputError, match=f"holds the .* {users.split('/')[0]}, which is not "
                       "part of a collection directory; nothing was changed"):  # fmt: skip
        build(man_root, out)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before
    assert (out / users).read_text() == "precious"


def test_refuses_to_replace_a_directory_that_is_not_a_collection(
    man_root: Path, tmp_path: Path
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("precious")
    with pytest.raises(OutputError, match="not a collection directory"):
        build(man_root, mine)
    assert [p.name for p in mine.iterdir()] == ["thesis.tex"]


def test_format_summary(man_root: Path, tmp_path: Path) -> None:
    summary = build_manpages_collection("fr", tmp_path / "c", man_root=man_root, progress=False)
    assert summary.queries == {"train": 3, "dev": 0, "test": 0}
    assert summary.grade1 == {"train": 4, "dev": 0, "test": 0}
    text = format_summary(summary)
    assert text.startswith("manpages-en-fr: 8 documents (fr), mean length")
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines()[1:6]}
    assert rows["train"] == ["3", "3", "4"]
    assert rows["all"] == ["3", "3", "4"]
    assert "1 more than 20% copied from English" in text
    assert "2 sharing their text with another query" in text


# ---------------------------------------------------------------------------------------------
# The pieces
# ---------------------------------------------------------------------------------------------


def test_copied_share_counts_only_lines_with_enough_letters() -> None:
    english = ["print the frequency of the widget", "-a, --all", "0"]
    translated = [
        "print the frequency of the widget",  # copied
        "afficher la fréquence du gadget",  # translated
        "-a, --all",  # too short to say anything: not counted
        "0",
    ]
    assert copied_share(translated, english) == 0.5
    assert copied_share(["-a"], english) == 0.0


def make_page(sections: dict[str, str]) -> ManPage:
    return ManPage(
        sections=tuple(Section(h, tuple(text.split("\n"))) for h, text in sections.items())
    )


def test_boilerplate_headings_are_found_by_repetition() -> None:
    pages = [
        make_page(
            {
                "NOM": f"cmd{i} - commande {i}",
                "DESCRIPTION": f"la commande numéro {i} fait une chose différente",
                "REMERCIEMENTS": f"Merci à l'équipe des traducteurs\npour la page {i}\n"
                "Envoyez les erreurs à la liste de diffusion",
            }
        )
        for i in range(12)
    ]
    assert find_boilerplate_headings(pages) == {"REMERCIEMENTS"}
    # Fewer pages than the minimum: nothing can count as repeated.
    assert find_boilerplate_headings(pages[:5]) == set()


# ---------------------------------------------------------------------------------------------
# Refusals
# ---------------------------------------------------------------------------------------------


def test_refuses_a_man_root_without_the_translation(tmp_path: Path) -> None:
    root = make_man_root(tmp_path / "man")
    shutil.rmtree(root / "fr")
    with pytest.raises(ResourceError) as error:
        build_manpages_collection("fr", tmp_path / "out", man_root=root, progress=False)
    message = str(error.value)
    assert "\n" not in message
    assert str(root / "fr") in message
    assert (
        "apt-get install -y --no-install-recommends manpages manpages-dev manpages-fr "
        "manpages-fr-dev" in message
    )
    assert not (tmp_path / "out").exists()


def test_refuses_when_dpkg_excludes_man_pages(tmp_path: Path) -> None:
    config = tmp_path / "dpkg"
    (config / "dpkg.cfg.d").mkdir(parents=True)
    excludes = config / "dpkg.cfg.d" / "excludes"
    excludes.write_text(
        "# slim image\npath-exclude /usr/share/man/*\npath-exclude /usr/share/doc/*\n"
    )
    assert man_pages_excluded(config) == (excludes, 2, "path-exclude /usr/share/man/*")
    with pytest.raises(ResourceError) as error:
        build_manpages_collection(
            "it", tmp_path / "out", man_root=Path("/usr/share/man"), progress=False,
            dpkg_config=config,
        )  # fmt: skip
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"{excludes}:2: dpkg is told not to install manual pages")
    assert "delete that line" in message
    assert (
        "apt-get install --reinstall -y --no-install-recommends manpages manpages-dev "
        "manpages-it manpages-it-dev" in message
    )
    # A later path-include that puts the pages back lifts the exclusion.
    excludes.write_text("path-exclude=/usr/share/man/*\npath-include=/usr/share/man/*\n")
    assert man_pages_excluded(config) is None


def test_unknown_language_and_variant(man_root: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="choose one of fr, de, es, it, ru, ja, zh"):
        build_manpages_collection("xx", tmp_path / "out", man_root=man_root)
    with pytest.raises(UsageError, match="choose one of standard, hard"):
        build_manpages_collection("fr", tmp_path / "out", variant="easy", man_root=man_root)


# ---------------------------------------------------------------------------------------------
# The real thing: Debian's Italian pages
# ---------------------------------------------------------------------------------------------


def _debian_italian_pages() -> str | None:
    """Why the Italian collection cannot be built here, or None when it can."""
    return debian_packages_missing(["manpages", "manpages-dev", "manpages-it", "manpages-it-dev"])


@pytest.mark.skipif(_debian_italian_pages() is not None, reason=str(_debian_italian_pages()))
def test_italian_collection_from_the_installed_packages(tmp_path: Path) -> None:
    first = tmp_path / "first"
    summary = build_manpages_collection("it", first, progress=False)
    # Measured on a bookworm machine: 108 queries and 173 unique pages; allow 10 %.
    assert 97 <= sum(summary.queries.values()) <= 119
    assert 160 <= summary.documents <= 190
    assert all(count > 0 for count in summary.queries.values())
    assert sum(summary.grade1.values()) > 0
    manifest = json.loads((first / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["name"] == "manpages-en-it" and manifest["doc_lang"] == "it"
    assert "manpages-it" in manifest["source"]["packages"]
    assert "TRADUZIONE" in manifest["build_parameters"]["dropped_headings"]
    docs = {doc.id: doc.contents for doc in iter_corpus(first / "corpus.jsonl")}
    # No troff markup left, except in the few pages that document troff itself (man.7 ...).
    marked_up = [docid for docid, text in docs.items() if "\\fB" in text or "\\fI" in text]
    assert len(marked_up) <= 0.02 * len(docs), marked_up
    for line in (first / "topics.train.tsv").read_text(encoding="utf-8").splitlines():
        qid, query = line.split("\t")
        assert qid in docs and len(query.split()) >= 2
    second = tmp_path / "second"
    build_manpages_collection("it", second, progress=False)
    for name in FILES:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_command_line_refuses_an_unknown_language(tmp_path: Path) -> None:
    result = run_clir(
        "collection", "build", "manpages", "--lang", "xx", "--out", str(tmp_path / "out")
    )
    assert_one_line_error(result, "no manpages collection for language 'xx'", status=2)
    assert not (tmp_path / "out").exists()
