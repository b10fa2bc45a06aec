"""The DDTP collections (Debian's translated package descriptions): queries, grades, splits,
files, refusals.

Every test builds from hand-made apt lists written into ``tmp_path`` as apt leaves them
(deb822 records, lz4-compressed, apt's file names): no network.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import lz4.frame
import pytest

from clir_toolkit.collection import open_collection
from clir_toolkit.collection.ddtp import build_ddtp_collection, format_summary
from clir_toolkit.collection.ddtp.queries import remove_names
from clir_toolkit.collection.query_rules import split_of
from clir_toolkit.errors import FormatError, ResourceError, UsageError
from clir_toolkit.files import sha256_file
from clir_toolkit.formats import iter_corpus, read_qrels, read_topics
from tests.conftest import assert_one_line_error, run_clir
from tests.ddtp_lists import DATE, PREFIX, RELEASE, md5, write_lists

SPLITS = ("train", "dev", "test")
FILES = [
    "corpus.jsonl",
    "manifest.json",
    *(f"topics.{s}.tsv" for s in SPLITS),
    *(f"topics-human.{s}.tsv" for s in SPLITS),
    *(f"qrels.{s}.txt" for s in SPLITS),
]


@pytest.fixture
def lists(tmp_path: Path) -> Path:
    return write_lists(tmp_path / "lists")


def build(lists: Path, out: Path, **options: str) -> None:
    build_ddtp_collection(options.pop("lang", "fr"), out, lists=lists, progress=False, **options)


def all_topics(out: Path, kind: str = "topics") -> dict[str, str]:
    topics = {}
    for split in SPLITS:
        path = out / f"{kind}.{split}.tsv"
        if path.stat().st_size:  # a split of a tiny collection can be empty
            topics.update({t.qid: t.query for t in read_topics(path)})
    return topics


def all_qrels(out: Path) -> dict[str, dict[str, int]]:
    judged: dict[str, dict[str, int]] = {}
    for split in SPLITS:
        path = out / f"qrels.{split}.txt"
        for qrel in read_qrels(path) if path.stat().st_size else []:
            judged.setdefault(qrel.qid, {})[qrel.docid] = qrel.relevance
    return judged


def split_of_qid(out: Path) -> dict[str, str]:
    return {
        topic.qid: split for split in SPLITS for topic in read_topics(out / f"topics.{split}.tsv")
    }


# ---------------------------------------------------------------------------------------------
# Documents, queries, judgements
# ---------------------------------------------------------------------------------------------


def test_one_document_per_description_with_both_languages(lists: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    build(lists, out)
    docs = {doc.id: doc.contents for doc in iter_corpus(out / "corpus.jsonl")}
    keys = ["widget-tools", "libwidget1", "libwidget-dev", "gadget", "alpha", "beta", "gamma"]
    assert set(docs) == {md5(key) for key in [*keys, "delta", "zeta"]}
    assert md5("widget-doc") not in docs  # no French text
    assert md5("epsilon") not in docs  # no English text
    # the synopsis, then the long text; " ." is a blank line, so is " \xa0" (which does not
    # end the record, as a blank line would)
    assert docs[md5("widget-tools")] == (
        "outils en ligne de commande pour widgets\n"
        "Outils pour créer et inspecter des widgets.\n\n – deuxième paragraphe,\n"
        "\nsuite après une ligne insécable."
    )
    assert docs[md5("zeta")] == "petite calculatrice zeta"


def test_queries_without_the_package_name_and_the_filters(lists: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    build(lists, out)
    topics, human = all_topics(out), all_topics(out, "topics-human")
    assert topics == {
        md5("widget-tools"): "Command-line tools for widgets",
        md5("libwidget1"): "shared library for widgets",
        md5("libwidget-dev"): "development files for the widget library",
        md5("gadget"): "manager for gadgets",  # "Gadget" goes, "gadgets" stays
        md5("alpha"): "Graphical and console frontends",  # both names, any case
        md5("zeta"): "tiny calculator",
    }
    # beta and gamma share "fast widget toolkit library" once their names are gone: both
    # dropped; "Delta utility" is one word without its name.
    assert human[md5("gadget")] == "gestionnaire de gadgets"
    assert human[md5("alpha")] == "interfaces graphique et console"
    assert human[md5("widget-tools")] == "outils en ligne de commande pour widgets"
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["counts"]["queries_dropped"] == {
        "duplicate": 2, "short": 1, "empty_document": 0, "empty_human_topic": 0
    }  # fmt: skip
    assert manifest["counts"]["translations_without_english"] == 1


def test_grades_two_for_the_translation_one_for_its_source_siblings(
    lists: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    build(lists, out)
    judged = all_qrels(out)
    # widget-tools, libwidget1, libwidget-dev: one source ("widget (1.2-3)" and "widget");
    # widget-doc has no French text, so no document to judge
    assert judged[md5("widget-tools")] == {
        md5("widget-tools"): 2, md5("libwidget1"): 1, md5("libwidget-dev"): 1
    }  # fmt: skip
    assert judged[md5("libwidget1")] == {
        md5("libwidget1"): 2, md5("widget-tools"): 1, md5("libwidget-dev"): 1
    }  # fmt: skip
    # a package without Source: is its own source; two packages of one description: one doc
    assert judged[md5("gadget")] == {md5("gadget"): 2}
    assert judged[md5("alpha")] == {md5("alpha"): 2}
    # nothing across source packages
    for qid, grades in judged.items():
        assert [docid for docid, grade in grades.items() if grade == 2] == [qid]


def test_hard_variant_leaves_the_translated_synopsis_out(lists: Path, tmp_path: Path) -> None:
    out = tmp_path / "hard"
    build(lists, out, variant="hard")
    docs = {doc.id: doc.contents for doc in iter_corpus(out / "corpus.jsonl")}
    assert docs[md5("widget-tools")].startswith("Outils pour créer et inspecter des widgets.")
    assert all("outils en ligne de commande" not in text for text in docs.values())
    # zeta has only a synopsis: no document, no query
    assert md5("zeta") not in docs and md5("zeta") not in all_topics(out)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["name"] == "ddtp-en-fr-hard"
    assert manifest["counts"]["queries_dropped"]["empty_document"] == 1
    assert manifest["build_parameters"]["synopsis_in_documents"] is False


def _names_in_splits(prefix: str, splits: tuple[str, ...]) -> list[str]:
    """Source names whose hash lands in each of ``splits`` in turn."""
    names: list[str] = []
    for split in splits:
        names.append(next(f"{prefix}{i}" for i in range(1000) if split_of(f"{prefix}{i}") == split))
    return names


def test_splits_by_source_package_never_separate_siblings(tmp_path: Path) -> None:
    packages: list[tuple[str, str | None, str]] = []
    english: dict[str, str] = {}
    french: dict[str, str] = {}
    for i in range(30):
        for j in range(3):
            key = f"pkg{i}-{j}"
            packages.append((key, f"src{i}", key))
            english[key] = f"English synopsis number {i} {j}\n Long text."
            french[key] = f"synopsis français {i} {j}\n Texte long."
    # One description shared by binaries of two source packages that hash to different
    # splits: the two sources, and every sibling of either, go to one split.
    one, two = _names_in_splits("shared", ("train", "test"))
    packages += [
        ("shared-a", one, "shared"), ("shared-b", two, "shared"),
        ("one-extra", one, "one-extra"), ("two-extra", two, "two-extra"),
    ]  # fmt: skip
    for n, key in enumerate(("shared", "one-extra", "two-extra")):
        english[key] = f"the description number {n}\n Text."
        french[key] = f"la description numéro {n}\n Texte."
    out = tmp_path / "out"
    build(write_lists(tmp_path / "lists", packages, english, french), out)
    where = split_of_qid(out)
    assert set(where.values()) == set(SPLITS)
    for i in range(30):
        assert len({where[md5(f"pkg{i}-{j}")] for j in range(3)}) == 1
    assert len({where[md5(key)] for key in ("shared", "one-extra", "two-extra")}) == 1
    for qid, grades in all_qrels(out).items():  # no judged document answers a query elsewhere
        assert {where[docid] for docid in grades} == {where[qid]}
    assert all_qrels(out)[md5("shared")] == {
        md5("shared"): 2, md5("one-extra"): 1, md5("two-extra"): 1
    }  # fmt: skip
    assert all_qrels(out)[md5("one-extra")] == {md5("one-extra"): 2, md5("shared"): 1}


def test_remove_names_whole_words_any_case() -> None:
    assert remove_names("Gadget manager for gadgets", ["gadget"]) == "manager for gadgets"
    assert (
        remove_names("gadget-tools and gadget.conf", ["gadget"]) == "gadget-tools and gadget.conf"
    )
    assert remove_names("ends with the foo.", ["foo"]) == "ends with the."
    assert remove_names("GNU C preprocessor (cpp)", ["cpp"]) == "GNU C preprocessor"
    assert remove_names("Archive Interchange (cpio, pax, tar)", ["pax"]) == (
        "Archive Interchange (cpio, tar)"
    )
    assert remove_names("libfoo++ bindings for foo", ["libfoo"]) == "libfoo++ bindings for foo"
    assert remove_names("foo - a tool", []) == "foo - a tool"


# ---------------------------------------------------------------------------------------------
# Files and manifest
# ---------------------------------------------------------------------------------------------


def test_rebuild_is_byte_identical(lists: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    build(lists, first)
    build(lists, second)
    for name in FILES:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    build(lists, first)  # replaces its own earlier output
    assert (first / "corpus.jsonl").read_bytes() == (second / "corpus.jsonl").read_bytes()


def test_manifest_records_the_lists_read(lists: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    build(lists, out)
    collection = open_collection(out)
    manifest = collection.manifest
    assert (collection.query_lang, collection.doc_lang) == ("en", "fr")
    assert manifest["name"] == "ddtp-en-fr"
    assert manifest["source"]["ddtp_language"] == "fr"
    (release,) = manifest["source"]["releases"]
    assert release["Date"] == DATE and release["Suite"] == "testing"
    assert release["file"] == RELEASE
    read = {entry["file"]: entry for entry in manifest["source"]["lists"]}
    assert set(read) == {
        RELEASE,
        f"{PREFIX}_binary-amd64_Packages.lz4",
        f"{PREFIX}_i18n_Translation-en.lz4",
        f"{PREFIX}_i18n_Translation-fr.lz4",
    }
    for name, entry in read.items():
        assert entry["sha256"] == sha256_file(lists / name)
    # without apt's record of the URIs, the URI is decoded from apt's file name
    assert read[f"{PREFIX}_i18n_Translation-fr.lz4"]["uri"] == (
        "example.org/debian/dists/testing/main/i18n/Translation-fr"
    )
    assert "licence" in json.dumps(manifest["licences"])
    for name in FILES[2:] + ["corpus.jsonl"]:
        assert manifest["files"][name] == sha256_file(out / name)
    counts = manifest["counts"]
    assert counts["documents"] == 9
    assert counts["queries"]["all"] == 6 == counts["judgements_grade_2"]["all"]
    assert counts["judgements_grade_1"]["all"] == 6  # the three widget descriptions


def test_manifest_takes_the_uris_apt_reported(lists: Path, tmp_path: Path) -> None:
    uri = "http://example.org/debian/dists/testing/main/i18n/Translation-fr"
    (lists / "clir-sources.tsv").write_text(f"{uri}\t{PREFIX}_i18n_Translation-fr.lz4\n")
    out = tmp_path / "out"
    build(lists, out)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    read = {entry["file"]: entry["uri"] for entry in manifest["source"]["lists"]}
    assert read[f"{PREFIX}_i18n_Translation-fr.lz4"] == uri
    # the Release file, which apt does not list, gets the scheme of its archive
    assert read[RELEASE] == "http://example.org/debian/dists/testing/InRelease"
    assert read[f"{PREFIX}_i18n_Translation-en.lz4"] == (
        "http://example.org/debian/dists/testing/main/i18n/Translation-en"
    )


def test_chinese_reads_zh_cn_lists(tmp_path: Path) -> None:
    chinese = {"gadget": "小工具管理器\n 管理你的小工具。"}
    lists = write_lists(tmp_path / "lists", translated=chinese, code="zh_CN")
    out = tmp_path / "out"
    build(lists, out, lang="zh")
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["doc_lang"] == "zh" and manifest["source"]["ddtp_language"] == "zh_CN"
    uris = {entry["uri"] for entry in manifest["source"]["lists"]}
    assert "example.org/debian/dists/testing/main/i18n/Translation-zh_CN" in uris
    assert all_topics(out, "topics-human") == {md5("gadget"): "小工具管理器"}


def test_format_summary(lists: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = build_ddtp_collection("fr", out, lists=lists, progress=False)
    text = format_summary(summary)
    assert text.startswith("ddtp-en-fr: 9 documents (fr)")
    assert "all" in text and DATE in text and str(lists) in text
    assert "2 sharing their English synopsis" in text


# ---------------------------------------------------------------------------------------------
# Refusals: one line, naming the file and the fix
# ---------------------------------------------------------------------------------------------


def _one_line(error: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(error.value)
    assert "\n" not in message
    return message


def test_refuses_a_lists_directory_without_the_language(lists: Path, tmp_path: Path) -> None:
    with pytest.raises(ResourceError) as error:
        build(lists, tmp_path / "out", lang="de")
    message = _one_line(error)
    assert "no de descriptions" in message and str(lists) in message
    assert f"-o Dir::State::Lists={lists} update" in message
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("missing", "expected"),
    [
        (f"{PREFIX}_i18n_Translation-en.lz4", "no English descriptions"),
        (f"{PREFIX}_binary-amd64_Packages.lz4", "no Packages list"),
        (RELEASE, "no Release file"),
    ],
)
def test_refuses_missing_lists(lists: Path, tmp_path: Path, missing: str, expected: str) -> None:
    (lists / missing).unlink()
    with pytest.raises(ResourceError) as error:
        build(lists, tmp_path / "out")
    assert expected in _one_line(error)
    assert not (tmp_path / "out").exists()


def test_refuses_a_corrupt_lz4_file(lists: Path, tmp_path: Path) -> None:
    damaged = lists / f"{PREFIX}_i18n_Translation-fr.lz4"
    damaged.write_bytes(damaged.read_bytes()[:40])  # truncated download
    with pytest.raises(FormatError) as error:
        build(lists, tmp_path / "out")
    message = _one_line(error)
    assert message.startswith(f"{damaged}: not a valid lz4 file")
    assert "fetch the lists again" in message
    (lists / f"{PREFIX}_binary-amd64_Packages.lz4").write_bytes(b"not lz4 at all")
    with pytest.raises(FormatError, match="Packages.lz4: not a valid lz4 file"):
        build(lists, tmp_path / "out")


def test_refuses_a_damaged_record(lists: Path, tmp_path: Path) -> None:
    damaged = lists / f"{PREFIX}_i18n_Translation-fr.lz4"
    text = lz4.frame.decompress(damaged.read_bytes()).decode()
    damaged.write_bytes(lz4.frame.compress(("Package gadget\n" + text).encode()))
    with pytest.raises(FormatError) as error:
        build(lists, tmp_path / "out")
    assert _one_line(error).startswith(f"{damaged}:1: expected 'Field: value'")


def test_unknown_language_and_variant(lists: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="choose one of fr, de, it, ja, ru, es, zh"):
        build(lists, tmp_path / "out", lang="xx")
    with pytest.raises(UsageError, match="choose one of standard, hard"):
        build(lists, tmp_path / "out", variant="easy")


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------


def test_command_line_builds_from_saved_lists(lists: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_clir(
        "collection", "build", "ddtp", "--lang", "fr", "--out", str(out), "--lists", str(lists),
        "--quiet",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "ddtp-en-fr: 9 documents" in result.stdout
    assert (out / "manifest.json").is_file()


def test_command_line_refuses_lists_without_the_language(lists: Path, tmp_path: Path) -> None:
    result = run_clir(
        "collection", "build", "ddtp", "--lang", "it", "--out", str(tmp_path / "out"),
        "--lists", str(lists),
    )  # fmt: skip
    assert_one_line_error(result, "no it descriptions", "apt-get -o Acquire::Languages=")


def test_command_line_without_apt_get(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    result = run_clir(
        "collection", "build", "ddtp", "--lang", "fr", "--out", str(tmp_path / "out"),
        env={"PATH": str(empty), "CLIR_DATA": str(tmp_path / "data")},
    )  # fmt: skip
    assert_one_line_error(result, "apt-get not found", "--lists DIR")
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(shutil.which("apt-get") is None, reason="needs apt-get (Debian or Ubuntu)")
def test_command_line_without_network(tmp_path: Path) -> None:
    # apt's proxy is a closed local port: every source fails at once, as without a network
    config = tmp_path / "apt.conf"
    config.write_text(
        'Acquire::http::Proxy "http://127.0.0.1:9";\n'
        'Acquire::https::Proxy "http://127.0.0.1:9";\nAcquire::Retries "0";\n'
    )
    result = run_clir(
        "collection", "build", "ddtp", "--lang", "fr", "--out", str(tmp_path / "out"),
        "--quiet", env={"APT_CONFIG": str(config), "CLIR_DATA": str(tmp_path / "data")},
    )  # fmt: skip
    assert_one_line_error(
        result, "apt-get update could not fetch the Debian lists", "Failed to fetch",
        "check the network, or pass --lists DIR",
    )  # fmt: skip
    assert not (tmp_path / "out").exists()
