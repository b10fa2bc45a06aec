"""Parallel and monolingual text from gettext catalogs (hand-made .mo files and installed ones)."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from clir_toolkit.errors import ResourceError
from clir_toolkit.resources.monolingual import collect_monolingual
from clir_toolkit.resources.parallel import (
    LOCALE_ROOT,
    clean_message,
    collect_parallel,
    locale_name,
    read_catalog,
)

FIXTURES = Path(__file__).parent / "fixtures" / "resources"

HEADER = "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2; plural=(n > 1);\n"


def write_mo(path: Path, messages: dict[str, str]) -> Path:
    """Compile ``messages`` into a GNU .mo file, as msgfmt does (little-endian, sorted ids).

    A plural message is ``"singular\\0plural"`` → ``"form0\\0form1"``; a message with a
    context is ``"context\\x04msgid"``.
    """
    messages = {"": HEADER, **messages}
    ids = sorted(messages)
    count = len(ids)
    originals_at, translations_at = 28, 28 + 8 * count
    data_at = translations_at + 8 * count
    data = b""
    tables = {"originals": b"", "translations": b""}
    for table, texts in (("originals", ids), ("translations", [messages[i] for i in ids])):
        for text in texts:
            raw = text.encode("utf-8")
            tables[table] += struct.pack("<2I", len(raw), data_at + len(data))
            data += raw + b"\0"
    header = struct.pack("<7I", 0x950412DE, 0, count, originals_at, translations_at, 0, 0)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(header + tables["originals"] + tables["translations"] + data)
    return path


def catalog(root: Path, lang: str, domain: str, messages: dict[str, str]) -> Path:
    return write_mo(root / lang / "LC_MESSAGES" / f"{domain}.mo", messages)


@pytest.fixture
def locale_root(tmp_path: Path) -> Path:
    root = tmp_path / "locale"
    catalog(
        root,
        "fr",
        "tool",
        {
            "Open _File": "Ouvrir un _fichier",
            "%s: cannot open '%s'": "%s : impossible d'ouvrir « %s »",
            "Copy %(count)d files to {destination}": "Copier %(count)d fichiers vers {destination}",
            "<b>Save</b> the document": "<b>Enregistrer</b> le document",
            "Save &As…": "Enregistrer &sous…",
            "%d file copied\0%d files copied": "%d fichier copié\0%d fichiers copiés",
            "menu\x04Quit": "Quitter",
            "button\x04Quit": "Quitter",
            "Linux": "Linux",  # untranslated
            "%s: %s": "%s : %s",  # nothing left but punctuation
            "progress: 100%%": "progression : 100 %%",
            "multi\nline\tmessage": "message\nsur plusieurs\tlignes",
        },
    )
    catalog(
        root,
        "fr",
        "other",
        {"Open _File": "Ouvrir un _fichier", "Print": "Imprimer"},  # a repeated pair
    )
    (root / "fr" / "LC_MESSAGES" / "broken.mo").write_bytes(b"this is not a catalog")
    catalog(root, "zh_CN", "tool", {"Open _File": "打开文件(_F)", "Print": "打印(&P)"})
    catalog(root, "de", "tool", {"Print": "Drucken", "Help": "Help"})
    return root


def test_clean_message() -> None:
    assert clean_message("Open _File") == "Open File"
    assert clean_message("Save &As…") == "Save As…"
    assert clean_message("Tom &amp; Jerry") == "Tom & Jerry"
    assert clean_message("打开文件(_F)") == "打开文件"
    assert clean_message("<span weight='bold'>Bold</span> text") == "Bold text"
    assert clean_message("<corrupt index>") == "<corrupt index>"  # not markup
    assert clean_message("%1$s of %2$lu bytes") == "of bytes"
    assert (
        clean_message("%-10.3lf %% done, %(name)s, {0}, {name}, %1, ${HOME}") == "% done, , , , ,"
    )
    assert clean_message("%<PRIu64> blocks") == "blocks"
    assert clean_message("Applying patch %%s") == "Applying patch"
    assert clean_message("LC_ALL and __init__") == "LC_ALL and __init__"
    assert clean_message(" two\n\tlines ") == "two lines"


def test_read_catalog_handles_contexts_and_plurals(locale_root: Path) -> None:
    pairs = read_catalog(locale_root / "fr" / "LC_MESSAGES" / "tool.mo")
    assert ("%d file copied", "%d fichier copié") in pairs
    assert ("Quit", "Quitter") in pairs
    assert not any(english == "" for english, _ in pairs)  # the header is skipped
    assert not any("\x04" in english or "\0" in english for english, _ in pairs)


def test_collect_parallel(locale_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "en-fr.tsv"
    summary = collect_parallel("fr", out, locale_root=locale_root)
    assert out.read_text("utf-8") == (
        "Copy files to\tCopier fichiers vers\n"
        "Open File\tOuvrir un fichier\n"
        "Print\tImprimer\n"
        "Quit\tQuitter\n"
        "Save As…\tEnregistrer sous…\n"
        "Save the document\tEnregistrer le document\n"
        "cannot open ' '\timpossible d'ouvrir « »\n"
        "file copied\tfichier copié\n"
        "multi line message\tmessage sur plusieurs lignes\n"
        "progress: 100%\tprogression : 100 %\n"
    )
    assert summary.lang == "fr"
    assert summary.path == out
    assert summary.catalogs == 2
    assert summary.unreadable == ("broken.mo",)
    assert summary.messages == 14
    assert summary.pairs == 10


def test_collect_parallel_is_deterministic(locale_root: Path, tmp_path: Path) -> None:
    collect_parallel("fr", tmp_path / "a.tsv", locale_root=locale_root)
    collect_parallel("fr", tmp_path / "b.tsv", locale_root=locale_root)
    assert (tmp_path / "a.tsv").read_bytes() == (tmp_path / "b.tsv").read_bytes()


def test_chinese_means_simplified_chinese(locale_root: Path, tmp_path: Path) -> None:
    assert locale_name("zh") == "zh_CN"
    assert locale_name("pt-BR") == "pt_BR"
    summary = collect_parallel("zh", tmp_path / "zh.tsv", locale_root=locale_root)
    assert summary.lang == "zh_CN"
    assert (tmp_path / "zh.tsv").read_text("utf-8") == "Open File\t打开文件\nPrint\t打印\n"


def test_missing_language_is_a_resource_error_and_writes_nothing(
    locale_root: Path, tmp_path: Path
) -> None:
    out = tmp_path / "sw.tsv"
    with pytest.raises(ResourceError, match=r"no gettext catalogs for 'sw' in .*apt-get install"):
        collect_parallel("sw", out, locale_root=locale_root)
    assert not out.exists()


def test_failed_collection_keeps_the_previous_file(locale_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "fr.tsv"
    out.write_text("previous\tprécédent\n", "utf-8")
    with pytest.raises(ResourceError):
        collect_parallel("sw", out, locale_root=locale_root)
    assert out.read_text("utf-8") == "previous\tprécédent\n"


# ---------------------------------------------------------------------------------------------
# Monolingual text
# ---------------------------------------------------------------------------------------------


def test_monolingual_target_language(locale_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "fr.txt"
    count = collect_monolingual("fr", out, locale_root=locale_root)
    lines = out.read_text("utf-8").splitlines()
    assert count == len(lines) == len(set(lines))
    assert "Ouvrir un fichier" in lines
    assert "Quitter" in lines
    assert "Linux" not in lines  # untranslated: English text
    assert not any("%" in line and "100" not in line for line in lines)


def test_monolingual_english_reads_every_catalog(locale_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "en.txt"
    count = collect_monolingual("en", out, locale_root=locale_root)
    lines = out.read_text("utf-8").splitlines()
    assert count == len(lines)
    assert "Open File" in lines
    assert "Help" in lines  # from the de catalog, where it is untranslated
    assert "Linux" in lines
    assert lines.count("Print") == 1


def test_monolingual_adds_corpus_lines(locale_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "fr.txt"
    count = collect_monolingual("fr", out, [FIXTURES / "corpus.jsonl"], locale_root=locale_root)
    lines = out.read_text("utf-8").splitlines()
    assert count == len(lines)
    assert lines[-3:] == [
        "ls - lister le contenu d'un répertoire",
        "Afficher les fichiers.",
        "cp - copier des fichiers",
    ]


def test_monolingual_corpus_only_for_a_language_without_catalogs(
    locale_root: Path, tmp_path: Path
) -> None:
    out = tmp_path / "sw.txt"
    assert collect_monolingual("sw", out, [FIXTURES / "corpus.jsonl"], locale_root) == 3
    with pytest.raises(ResourceError, match="no gettext catalogs for 'sw'"):
        collect_monolingual("sw", tmp_path / "none.txt", locale_root=locale_root)
    assert not (tmp_path / "none.txt").exists()


# ---------------------------------------------------------------------------------------------
# The installed catalogs
# ---------------------------------------------------------------------------------------------


@pytest.mark.skipif(
    not any((LOCALE_ROOT / "fr" / "LC_MESSAGES").glob("*.mo")),
    reason="no French gettext catalogs in /usr/share/locale/fr (translations not installed)",
)
def test_installed_french_catalogs(tmp_path: Path) -> None:
    out = tmp_path / "en-fr.tsv"
    summary = collect_parallel("fr", out)
    lines = out.read_text("utf-8").splitlines()
    assert summary.pairs == len(lines) > 10_000
    assert lines == sorted(set(lines))
    leftovers = 0
    for line in lines:
        english, translation = line.split("\t")
        assert english != translation
        leftovers += bool(re.search(r"%[sd]\b", line))
    # Only help texts that document format directives (date's "%d day of month") keep some.
    assert leftovers < len(lines) / 1000
