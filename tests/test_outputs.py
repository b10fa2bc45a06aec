"""Outputs: never one of the inputs, special files kept as they are, ``-`` as standard output.

Each test runs the real ``clir`` command line in a subprocess and checks what a user relies
on: an output that would destroy an input (the same file, through a link, or a file of an
index or a collection) is refused in one line before any work, with the input unchanged; a
device, a FIFO or a symbolic link given as the output stays what it is; ``-`` is standard
output, never a file named ``-``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from clir_toolkit.formats import read_run
from tests.conftest import TINY_FR, assert_one_line_error, run_clir

pytestmark = pytest.mark.java

TOPICS = TINY_FR / "topics.dev.tsv"
QRELS = TINY_FR / "qrels.dev.txt"


def copy(source: Path, target: Path) -> Path:
    shutil.copyfile(source, target)
    return target


# --- an output that is an input -------------------------------------------------------------

Made = tuple[list[str], Path]
"""A case: the command's arguments, and the file that it must leave as it was."""


def _search_over_topics(index: Path, run: Path, tmp: Path) -> Made:
    topics = copy(TOPICS, tmp / "t.tsv")
    return ["search", "--index", str(index), "--topics", str(topics),
            "--output", str(topics)], topics  # fmt: skip


def _search_over_a_link_to_the_topics(index: Path, run: Path, tmp: Path) -> Made:
    topics = copy(TOPICS, tmp / "t.tsv")
    (tmp / "link.tsv").symlink_to(topics)
    return ["search", "--index", str(index), "--topics", str(topics),
            "--output", str(tmp / "link.tsv")], topics  # fmt: skip


def _search_over_a_hard_link_to_the_topics(index: Path, run: Path, tmp: Path) -> Made:
    topics = copy(TOPICS, tmp / "t.tsv")
    os.link(topics, tmp / "same.tsv")
    return ["search", "--index", str(index), "--topics", str(topics),
            "--output", str(tmp / "same.tsv")], topics  # fmt: skip


def _translate_over_topics(index: Path, run: Path, tmp: Path) -> Made:
    topics = copy(TOPICS, tmp / "t.tsv")
    return ["translate", "--topics", str(topics), "--target-lang", "fr", "--translate", "none",
            "--output", str(topics)], topics  # fmt: skip


def _score_over_the_run(index: Path, run: Path, tmp: Path) -> Made:
    return ["rerank", "score", "--pretrained", "e5-small", "--collection", str(tmp / "coll"),
            "--topics", str(TOPICS), "--run", str(run), "--output", str(run)], run  # fmt: skip


def _score_into_the_collection(index: Path, run: Path, tmp: Path) -> Made:
    corpus = tmp / "coll" / "corpus.jsonl"
    return ["rerank", "score", "--pretrained", "e5-small", "--collection", str(tmp / "coll"),
            "--topics", str(TOPICS), "--run", str(run),
            "--output", str(corpus)], corpus  # fmt: skip


def _train_over_the_run(index: Path, run: Path, tmp: Path) -> Made:
    return ["rerank", "train", "--model", "knrm", "--collection", str(tmp / "coll"),
            "--topics", str(TOPICS), "--qrels", str(QRELS), "--run", str(run),
            "--output", str(run)], run  # fmt: skip


def _plot_over_a_run(index: Path, run: Path, tmp: Path) -> Made:
    plotted = copy(run, tmp / "b.svg")
    return ["compare", str(run), str(plotted), "--qrels", str(QRELS),
            "--plot", str(plotted)], plotted  # fmt: skip


def _search_into_the_index(index: Path, run: Path, tmp: Path) -> Made:
    sidecar = index / "clir-index.json"
    return ["search", "--index", str(index), "--topics", str(TOPICS),
            "--output", str(sidecar)], sidecar  # fmt: skip


def _search_to_a_new_file_inside_the_index(index: Path, run: Path, tmp: Path) -> Made:
    inside = index / "run.trec"
    return ["search", "--index", str(index), "--topics", str(TOPICS),
            "--output", str(inside)], index / "clir-index.json"  # fmt: skip


def _index_over_its_collection(index: Path, run: Path, tmp: Path) -> Made:
    return ["index", "--collection", str(tmp / "coll"), "--index", str(tmp / "coll")], (
        tmp / "coll" / "manifest.json"
    )


def _index_over_the_index_holding_its_collection(index: Path, run: Path, tmp: Path) -> Made:
    inside = shutil.copytree(TINY_FR, index / "coll")
    return ["index", "--collection", str(inside), "--index", str(index)], inside / "corpus.jsonl"


TRANSLATE = Path(__file__).parent / "fixtures" / "translate"


def _search_over_its_dictionary(index: Path, run: Path, tmp: Path) -> Made:
    dictionary = copy(TRANSLATE / "en-fr.tsv", tmp / "d.tsv")
    return ["search", "--index", str(index), "--topics", str(TOPICS), "--translate", "dict",
            "--dict", str(dictionary), "--output", str(dictionary)], dictionary  # fmt: skip


def _translate_over_its_embeddings(index: Path, run: Path, tmp: Path) -> Made:
    vectors = copy(TRANSLATE / "en-fr.vec", tmp / "e.vec")
    return ["translate", "--index", str(index), "--topics", str(TOPICS), "--translate",
            "embed", "--embed", str(vectors), "--output", str(vectors)], vectors  # fmt: skip


def _search_over_its_translations_file(index: Path, run: Path, tmp: Path) -> Made:
    translations = tmp / "mt.tsv"
    translations.write_text("q1\tune commande\n", encoding="utf-8")
    return ["search", "--index", str(index), "--topics", str(TOPICS), "--translate", "mt",
            "--mt", f"file:{translations}", "--output", str(translations)], (
        translations
    )  # fmt: skip


Case = Callable[[Path, Path, Path], Made]


@pytest.mark.parametrize(
    "case",
    [
        _search_over_topics,
        _search_over_a_link_to_the_topics,
        _search_over_a_hard_link_to_the_topics,
        _translate_over_topics,
        _score_over_the_run,
        _score_into_the_collection,
        _train_over_the_run,
        _plot_over_a_run,
        _search_into_the_index,
        _search_to_a_new_file_inside_the_index,
        _index_over_its_collection,
        _index_over_the_index_holding_its_collection,
        _search_over_its_dictionary,
        _translate_over_its_embeddings,
        _search_over_its_translations_file,
    ],
    ids=lambda case: case.__name__.lstrip("_"),
)
def test_an_output_that_would_destroy_an_input_is_refused_and_the_input_kept(
    case: Case, fr_index: Path, first_stage: Path, tmp_path: Path
) -> None:
    index = shutil.copytree(fr_index, tmp_path / "idx")
    shutil.copytree(TINY_FR, tmp_path / "coll")
    run = copy(first_stage, tmp_path / "run.trec")
    args, kept = case(index, run, tmp_path)
    before = kept.read_bytes()
    result = run_clir(*args)
    assert_one_line_error(result, "nothing was changed")
    assert kept.read_bytes() == before
    assert not kept.is_symlink() and stat.S_ISREG(kept.stat().st_mode)


def test_every_option_naming_an_output_is_checked() -> None:
    """A command's outputs are declared with ``add_output`` (which the check reads); an
    option that writes but is declared with plain ``add_argument`` would go unchecked."""
    import argparse

    from clir_toolkit.cli import build_parser
    from clir_toolkit.cli.outputs import DECLARED

    def leaves(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
        found = [parser]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    found += leaves(child)
        return found

    writing = {"--output", "--out", "--plot", "--results"}
    for parser in leaves(build_parser()):
        declared = {output.flag for output in parser.get_default(DECLARED) or ()}
        flags = {flag for action in parser._actions for flag in action.option_strings}
        assert flags & writing <= declared, parser.prog


# --- '-' ------------------------------------------------------------------------------------


def test_dash_is_standard_output_for_a_run(fr_index: Path, tmp_path: Path) -> None:
    result = run_clir("search", "--index", str(fr_index), "--topics", str(TOPICS),
                      "--output", "-", "--quiet", cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert list(tmp_path.iterdir()) == []  # no file named '-'
    (tmp_path / "from-stdout.trec").write_text(result.stdout, encoding="utf-8")
    run_file = tmp_path / "run.trec"
    written = run_clir("search", "--index", str(fr_index), "--topics", str(TOPICS),
                       "--output", str(run_file), "--quiet")  # fmt: skip
    assert written.returncode == 0, written.stderr
    assert result.stdout == run_file.read_text(encoding="utf-8")
    assert read_run(tmp_path / "from-stdout.trec") == read_run(run_file)


def test_dash_is_refused_where_it_cannot_be_standard_output_or_input(
    fr_index: Path, tmp_path: Path
) -> None:
    result = run_clir("index", "--collection", str(TINY_FR), "--index", "-", cwd=tmp_path)
    assert_one_line_error(result, "--index -", "standard output", status=2)
    result = run_clir("search", "--index", str(fr_index), "--topics", "-",
                      "--output", str(tmp_path / "r.trec"), cwd=tmp_path)  # fmt: skip
    assert_one_line_error(result, "standard input", status=2)
    assert list(tmp_path.iterdir()) == []


# --- special files ----------------------------------------------------------------------------


def _search_to(index: Path, output: Path) -> list[str]:
    return ["search", "--index", str(index), "--topics", str(TOPICS), "--output", str(output),
            "--quiet"]  # fmt: skip


def _device(path: Path, minor: int) -> Path:
    """A character device of the memory driver (major 1: 3 is null, 7 is full) at ``path``:
    a copy of /dev/null or /dev/full that a failing test cannot damage."""
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
        with open(path, "wb"):
            pass
    except OSError as exc:
        pytest.skip(f"cannot make and open a device node here ({exc.strerror})")
    return path


def test_a_device_stays_a_device(fr_index: Path, tmp_path: Path) -> None:
    null = _device(tmp_path / "null", 3)
    result = run_clir(*_search_to(fr_index, null))
    assert result.returncode == 0, result.stderr
    assert stat.S_ISCHR(null.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]  # no temporary left


def test_a_full_device_is_one_line_and_stays_a_device(fr_index: Path, tmp_path: Path) -> None:
    full = _device(tmp_path / "full", 7)
    result = run_clir(*_search_to(fr_index, full))
    assert_one_line_error(result, str(full), "No space left")
    assert stat.S_ISCHR(full.stat().st_mode)


def test_a_fifo_is_written_through_to_its_reader(fr_index: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # The reader's end is open before the command starts (so its open does not wait); the
    # run, a few kilobytes, fits in the pipe's buffer until it is read below.
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        result = run_clir(*_search_to(fr_index, fifo))
        received = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(reader, 1 << 16):
                received += chunk
    finally:
        os.close(reader)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    expected = tmp_path / "run.trec"
    assert run_clir(*_search_to(fr_index, expected)).returncode == 0
    assert received == expected.read_bytes()


def test_a_symbolic_link_is_followed_and_its_target_replaced(
    fr_index: Path, tmp_path: Path
) -> None:
    target = tmp_path / "runs" / "real.trec"
    target.parent.mkdir()
    target.write_text("old\n", encoding="utf-8")
    link = tmp_path / "link.trec"
    link.symlink_to(target)
    result = run_clir(*_search_to(fr_index, link))
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and link.resolve() == target
    assert len(read_run(target)) > 0
    assert sorted(p.name for p in target.parent.iterdir()) == ["real.trec"]


def test_a_socket_is_refused_in_one_line(fr_index: Path, tmp_path: Path) -> None:
    path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        result = run_clir(*_search_to(fr_index, path))
    assert_one_line_error(result, str(path), "socket")
    assert stat.S_ISSOCK(path.stat().st_mode)


def test_a_replaced_output_keeps_its_permissions(fr_index: Path, tmp_path: Path) -> None:
    """A run the user made private (600) stays private when a command writes it again."""
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 1.5 earlier\n", encoding="utf-8")
    run.chmod(0o600)
    result = run_clir("search", "--index", str(fr_index), "--topics", str(TOPICS),
                      "--output", str(run), "--quiet")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "earlier" not in run.read_text(encoding="utf-8")
    assert stat.S_IMODE(run.stat().st_mode) == 0o600


# --- standard output closed or full -----------------------------------------------------------

STDOUT_COMMANDS = [
    ["--version"],
    ["--help"],
    ["completion", "bash"],
    ["eval", "--qrels", str(TINY_FR / "qrels.dev.txt"),
     str(Path(__file__).parent / "fixtures" / "runs" / "tiny-fr.bm25-human.dev.trec")],
]  # fmt: skip


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize("stdout", ["closed", "full"])
@pytest.mark.parametrize("args", STDOUT_COMMANDS, ids=lambda args: args[0])
def test_output_lost_on_standard_output_is_one_line_and_exit_1(
    args: list[str], stdout: str
) -> None:
    """A command whose standard output is closed (``>&-``) or on a full device said nothing
    and exited 0 with its output lost (``--help``, ``--version``, ``clir eval``), or printed a
    traceback (``clir completion bash``)."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "clir_toolkit.cli", *args]
    if stdout == "closed":
        shell = " ".join(f"'{word}'" for word in command) + " >&-"
        result = subprocess.run(shell, shell=True, capture_output=False, text=True,
                                stderr=subprocess.PIPE, timeout=120)  # fmt: skip
    else:
        with open("/dev/full", "w") as full:
            result = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, text=True,
                                    timeout=120)  # fmt: skip
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("clir: error: "), result.stderr


def test_links_planted_in_the_toolkit_s_own_places_are_replaced_not_followed(
    tmp_path: Path,
) -> None:
    """A lock, a cache and a sidecar are the toolkit's own files: a symbolic link found at
    such a name is replaced (or removed), and the file it points to is left as it was,
    while an output the user names keeps following links (the test above)."""
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file\n", encoding="utf-8")
    collection = tmp_path / "tiny-fr"
    shutil.copytree(TINY_FR, collection, ignore=shutil.ignore_patterns(".cache"))
    index = tmp_path / "idx"
    (tmp_path / ".idx.lock").symlink_to(victim)
    built = run_clir("index", "--collection", str(collection), "--index", str(index))
    assert built.returncode == 0, built.stderr
    topics = str(collection / "topics.dev.tsv")
    first = tmp_path / "bm25.trec"
    assert run_clir("search", "--index", str(index), "--topics", topics, "--output",
                    str(first)).returncode == 0  # fmt: skip
    scored = run_clir("rerank", "score", "--pretrained", "use-m3", "--collection",
                      str(collection), "--topics", topics, "--run", str(first), "--output",
                      str(tmp_path / "r1.trec"))  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    cached = [path for path in (collection / ".cache").rglob("*") if path.is_file()]
    assert cached  # the corpus's hash and the encoded documents
    for path in cached:
        path.unlink()
        path.symlink_to(victim)
    again = run_clir("rerank", "score", "--pretrained", "use-m3", "--collection",
                     str(collection), "--topics", topics, "--run", str(first), "--output",
                     str(tmp_path / "r2.trec"))  # fmt: skip
    assert again.returncode == 0, again.stderr
    indexed = run_clir("index", "--collection", str(collection), "--index", str(index))
    assert indexed.returncode == 0, indexed.stderr  # the corpus's hash is read again
    assert (tmp_path / "r1.trec").read_bytes() == (tmp_path / "r2.trec").read_bytes()
    assert victim.read_text(encoding="utf-8") == "the user's file\n"
    assert [path.name for path in cached if path.is_symlink()] == []


def test_an_own_write_replaces_a_link_and_leaves_its_target(tmp_path: Path) -> None:
    from clir_toolkit.files import atomic_write

    victim, link = tmp_path / "victim.txt", tmp_path / "sidecar.json"
    victim.write_text("kept\n", encoding="utf-8")
    link.symlink_to(victim)
    with atomic_write(link, own=True) as handle:
        handle.write("{}\n")
    assert not link.is_symlink() and link.read_text(encoding="utf-8") == "{}\n"
    assert victim.read_text(encoding="utf-8") == "kept\n"
