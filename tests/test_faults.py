"""Fault injection: signals, crashes, full and read-only disks, damaged indexes.

Each test runs the real ``clir`` command line in a subprocess and checks what a user relies
on: an interrupted or failed command prints one line, exits 130/143 (signals) or 1, leaves its
destination exactly as it was, and leaves no temporary files — neither beside the destination
nor in the system's temporary directory (each subprocess gets its own ``TMPDIR`` to list).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from clir_toolkit.index import SIDECAR
from tests.conftest import TINY_FR, assert_one_line_error, run_clir, write_big_collection

pytestmark = pytest.mark.java



# --- helpers ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big_collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated French collection large enough that indexing and writing a run take a
    moment (the windows the signals aim at): 20,000 documents, 400 topics."""
    return write_big_collection(tmp_path_factory.mktemp("big") / "big-fr")


@pytest.fixture(scope="module")
def big_index(big_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    index = tmp_path_factory.mktemp("bigidx") / "idx"
    result = run_clir("index", "--collection", str(big_collection), "--index", str(index),
                      "--quiet")
    assert result.returncode == 0, result.stderr
    return index


def snapshot(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` (or ``path`` itself) with its bytes."""
    if path.is_file():
        return {path.name: path.read_bytes()}
    if not path.exists():
        return {}
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file()}


def debris(directory: Path) -> list[str]:
    """Temporary or lock files the toolkit may leave beside its outputs."""
    return sorted(p.name for p in directory.iterdir()
                  if p.name.endswith((".tmp", ".old", ".lock")))


def _default_sigint() -> None:
    # A shell that starts `make test` in the background (`make test &`) ignores SIGINT in
    # it and its children, and Python then installs no KeyboardInterrupt handler: the
    # command would rightly ignore the signal. The tests are about a user's Ctrl-C.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_clir(*args: str, tmpdir: Path, cwd: Path | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    return subprocess.Popen([sys.executable, "-m", "clir_toolkit.cli", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=_default_sigint, cwd=cwd)


def wait_for(condition: Callable[[], bool], process: subprocess.Popen[str],
             seconds: float = 120) -> bool:
    """Poll ``condition`` until it holds (True) or the process ends first (False)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        if process.poll() is not None:
            return False
        time.sleep(0.005)
    raise AssertionError("the condition never held")


def assert_interrupted_cleanly(process: subprocess.Popen[str], signum: int, destination: Path,
                               before: dict[str, bytes], tmpdir: Path,
                               may_precede_handlers: bool = False) -> str:
    """The command either finished (exit 0, or killed by the signal once its output was in
    place) or stopped with `clir: interrupted` and 128+signal; in both cases no debris is
    left; if stopped, the destination is as before, unless the signal landed in the instant
    between the command putting its output in place and its end ("interrupted late": the
    output is the new one, which the caller checks is complete).

    ``may_precede_handlers``: the signal may have come while Python was still starting,
    before the command line set up its handlers; the default action then ends the process
    silently, before any work ("not started"), which is correct too.
    Returns which of the four happened."""
    _, stderr = process.communicate(timeout=300)
    assert "Traceback" not in stderr, stderr
    assert debris(destination.parent) == [], stderr
    # torch keeps its compiler cache there (torchinductor_USER), after a successful run too.
    left = [p.name for p in tmpdir.iterdir() if not p.name.startswith("torchinductor_")]
    assert left == [], "files left in the temporary directory"
    if process.returncode == 0:
        return "finished"
    if process.returncode == -signum and snapshot(destination) != before:
        # The signal came after the command had done its work (its output is in place),
        # while Python was exiting: the default action ended the process.
        return "finished"
    if may_precede_handlers and process.returncode == -signum and stderr == "":
        assert snapshot(destination) == before
        return "not started"
    assert process.returncode == 128 + signum, stderr
    assert stderr.strip().splitlines()[-1] == "clir: interrupted", stderr
    if snapshot(destination) != before:
        return "interrupted late"
    return "interrupted"


# --- signals ------------------------------------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("phase", ["reading", "lucene"])
def test_signal_during_indexing_keeps_the_old_index(
    big_collection: Path, tmp_path: Path, signum: int, phase: str
) -> None:
    index = tmp_path / "idx"
    shutil.copytree(TINY_FR, tmp_path / "tiny")
    assert run_clir("index", "--collection", str(tmp_path / "tiny"), "--index", str(index),
                    "--quiet").returncode == 0
    before = snapshot(index)
    tmpdir = tmp_path / "sys-tmp"
    tmpdir.mkdir()
    process = start_clir("index", "--collection", str(big_collection), "--index", str(index),
                         tmpdir=tmpdir)

    def scratch_has(name: str) -> bool:
        return any((d / name).exists() for d in tmp_path.glob(".idx.*.tmp"))

    # The normalised corpus copy appears first; Lucene's write.lock once it indexes.
    marker = "docs.jsonl" if phase == "reading" else "write.lock"
    wait_for(lambda: scratch_has(marker), process)
    process.send_signal(signum)
    outcome = assert_interrupted_cleanly(process, signum, index, before, tmpdir)
    assert outcome == "interrupted"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_while_writing_a_run_keeps_the_old_run(
    big_index: Path, big_collection: Path, tmp_path: Path, signum: int
) -> None:
    run = tmp_path / "out.trec"
    run.write_text("q1 Q0 d1 1 1.5 earlier\n", encoding="utf-8")
    before = snapshot(run)
    tmpdir = tmp_path / "sys-tmp"
    tmpdir.mkdir()
    process = start_clir("search", "--index", str(big_index), "--topics",
                         str(big_collection / "topics.dev.tsv"), "--output", str(run),
                         "--hits", "1000", tmpdir=tmpdir)
    wait_for(lambda: any(tmp_path.glob(".out.trec.*.tmp")), process)
    process.send_signal(signum)
    assert assert_interrupted_cleanly(process, signum, run, before, tmpdir) == "interrupted"


@pytest.mark.parametrize("delay", [0.5, 1.5, 3.0])
def test_signal_at_any_moment_of_a_search_leaves_old_or_new_run(
    big_index: Path, big_collection: Path, tmp_path: Path, delay: float
) -> None:
    run = tmp_path / "out.trec"
    run.write_text("q1 Q0 d1 1 1.5 earlier\n", encoding="utf-8")
    before = snapshot(run)
    tmpdir = tmp_path / "sys-tmp"
    tmpdir.mkdir()
    process = start_clir("search", "--index", str(big_index), "--topics",
                         str(big_collection / "topics.dev.tsv"), "--output", str(run),
                         "--hits", "100", "--translate", "none", tmpdir=tmpdir)
    time.sleep(delay)
    process.send_signal(signal.SIGTERM)
    outcome = assert_interrupted_cleanly(process, signal.SIGTERM, run, before, tmpdir,
                                         may_precede_handlers=True)
    if outcome in ("finished", "interrupted late"):  # (late: SIGTERM after the rename)
        assert len(run.read_text(encoding="utf-8").splitlines()) == 400 * 100


def test_signal_while_training_leaves_no_partial_model(tmp_path: Path) -> None:
    tmpdir = tmp_path / "sys-tmp"
    tmpdir.mkdir()
    first_stage = tmp_path / "bm25.trec"
    index = tmp_path / "idx"
    assert run_clir("index", "--collection", str(TINY_FR), "--index", str(index),
                    "--quiet").returncode == 0
    assert run_clir("search", "--index", str(index), "--topics",
                    str(TINY_FR / "topics.dev.tsv"), "--output", str(first_stage),
                    "--quiet").returncode == 0
    model = tmp_path / "m.pt"
    train = ("rerank", "train", "--model", "knrm", "--collection", str(TINY_FR), "--topics",
             str(TINY_FR / "topics.dev.tsv"), "--qrels", str(TINY_FR / "qrels.dev.txt"),
             "--run", str(first_stage), "--epochs", "2000", "--dim", "8", "--output", str(model))
    process = start_clir(*train, tmpdir=tmpdir)
    # Checkpoints are written after each epoch: interrupt once the first one exists.
    wait_for(lambda: model.with_name("m.pt.ckpt").exists(), process)
    process.send_signal(signal.SIGINT)
    assert assert_interrupted_cleanly(process, signal.SIGINT, model, {}, tmpdir) == "interrupted"
    assert not model.exists()
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".m.pt")]
    assert leftovers == []


def write_tuned_recipe(root: Path) -> Path:
    """A search recipe with a [tune] table, over a generated collection in ``root``'s
    workspace (``data/``): large enough that each tuning run takes a moment."""
    collection = write_big_collection(root / "data" / "manpages-en-fr", 5_000, 200)
    shutil.copy(collection / "topics.dev.tsv", collection / "topics.test.tsv")
    qrels = "".join(f"q{i} 0 d{i} 1\n" for i in range(200))
    for split in ("dev", "test"):
        (collection / f"qrels.{split}.txt").write_text(qrels, encoding="utf-8")
    recipe = root / "recipes" / "bm25.toml"
    recipe.parent.mkdir()
    recipe.write_text('name = "bm25"\nlanguages = ["fr"]\n[tune]\nk1 = [0.9, 1.2]\n'
                      "b = [0.4, 0.75]\n", encoding="utf-8")  # fmt: skip
    return recipe


def test_an_interrupted_forced_recipe_run_keeps_the_complete_runs(tmp_path: Path) -> None:
    """`clir run --force` interrupted while it tunes: the runs made before, and their
    sidecars, stay as they were (complete, and fresh for the next `clir run`)."""
    recipe = write_tuned_recipe(tmp_path)
    first = run_clir("run", str(recipe), "--quiet", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    runs = tmp_path / "runs"
    dev = runs / "manpages-en-fr" / "dev" / "bm25.trec"
    before = snapshot(runs)
    assert len(before) == 4  # the dev and test runs and their sidecars
    tmpdir = tmp_path / "sys-tmp"
    tmpdir.mkdir()
    process = start_clir("run", str(recipe), "--force", "--quiet", tmpdir=tmpdir, cwd=tmp_path)
    # Interrupt once tuning has begun: its first run is written (beside the dev run, or,
    # before the fix, over it).
    assert wait_for(lambda: any(dev.parent.glob(".bm25.trec.*.tmp")) or snapshot(runs) != before,
                    process)  # fmt: skip
    process.send_signal(signal.SIGINT)
    assert assert_interrupted_cleanly(process, signal.SIGINT, runs, before, tmpdir) == "interrupted"
    again = run_clir("run", str(recipe), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "reusing the runs of bm25" in again.stderr  # still complete and fresh
    assert snapshot(runs) == before


# --- crashes (kill -9) and concurrent writers ----------------------------------------------------

CRASH_BETWEEN_RENAMES = textwrap.dedent("""
    import os, sys
    from clir_toolkit.index import build_index
    real_replace = os.replace
    target = os.path.abspath(sys.argv[2])
    def replace(src, dst):
        real_replace(src, dst)
        if os.path.abspath(src) == target:   # the first rename: IDX -> .IDX.old
            os._exit(9)                       # die before the second one
    os.replace = replace
    build_index(sys.argv[1], sys.argv[2], verbose=False)
""")


def test_crash_between_the_two_renames_of_the_swap_loses_nothing(
    tmp_path: Path, fr_index: Path
) -> None:
    index = tmp_path / "idx"
    shutil.copytree(fr_index, index)
    before = snapshot(index)
    crashed = subprocess.run([sys.executable, "-c", CRASH_BETWEEN_RENAMES, str(TINY_FR),
                              str(index)], capture_output=True, text=True, timeout=300)
    assert crashed.returncode == 9, crashed.stderr
    assert not index.exists() and (tmp_path / ".idx.old").is_dir()  # the window is real
    # A reader puts the old index back and searches it.
    run = tmp_path / "run.trec"
    result = run_clir("search", "--index", str(index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(run), "--quiet")
    assert result.returncode == 0, result.stderr
    assert snapshot(index) == before
    assert debris(tmp_path) == []  # the reader also removed the killed build's scratch


def test_a_bad_document_read_while_lucene_indexes_is_one_line_and_leaves_nothing(
    big_collection: Path, tmp_path: Path
) -> None:
    """The corpus is validated as Lucene indexes it (index/streaming.py): a bad line near the
    end, found with most documents indexed, is still one line naming the file and the line,
    and neither an index nor a temporary is left."""
    collection = tmp_path / "bad"
    shutil.copytree(big_collection, collection)
    corpus = collection / "corpus.jsonl"
    lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(19_990, '{"id": "broken", "contents": 7}\n')
    corpus.write_text("".join(lines), encoding="utf-8")
    index = tmp_path / "idx"
    result = run_clir("index", "--collection", str(collection), "--index", str(index))
    assert_one_line_error(result, f"{corpus}:19991:", "'contents' must be a string")
    assert not index.exists()
    assert debris(tmp_path) == []


def test_killed_index_build_leaves_what_the_next_build_cleans(
    big_collection: Path, tmp_path: Path
) -> None:
    index = tmp_path / "idx"
    process = start_clir("index", "--collection", str(big_collection), "--index", str(index),
                         tmpdir=tmp_path)
    wait_for(lambda: any(d.is_dir() for d in tmp_path.glob(".idx.*.tmp")), process)
    process.kill()
    process.wait()
    assert any(tmp_path.glob(".idx.*.tmp"))  # kill -9 cannot clean up after itself
    result = run_clir("index", "--collection", str(TINY_FR), "--index", str(index), "--quiet")
    assert result.returncode == 0, result.stderr
    assert debris(tmp_path) == []
    assert json.loads((index / SIDECAR).read_text())["documents"] == 12


def test_a_second_concurrent_index_build_is_refused_in_one_line(
    big_collection: Path, tmp_path: Path
) -> None:
    index = tmp_path / "idx"
    first = start_clir("index", "--collection", str(big_collection), "--index", str(index),
                       "--quiet", tmpdir=tmp_path)
    wait_for(lambda: (tmp_path / ".idx.lock").exists(), first)
    second = run_clir("index", "--collection", str(TINY_FR), "--index", str(index), "--quiet")
    assert_one_line_error(second, str(index), "another clir process", f"pid {first.pid}")
    _, stderr = first.communicate(timeout=300)
    assert first.returncode == 0, stderr
    assert json.loads((index / SIDECAR).read_text())["documents"] == 20_000
    assert debris(tmp_path) == []


# --- what `clir index --index PATH` may replace -------------------------------------------------


def test_index_refuses_to_replace_what_is_not_an_index(tmp_path: Path) -> None:
    collection = tmp_path / "coll"
    shutil.copytree(TINY_FR, collection)
    user_dir = tmp_path / "thesis"
    user_dir.mkdir()
    (user_dir / "chapter1.tex").write_text("precious", encoding="utf-8")
    user_file = tmp_path / "notes.txt"
    user_file.write_text("precious", encoding="utf-8")
    for target in (collection, user_dir, user_file):
        before = snapshot(target)
        result = run_clir("index", "--collection", str(collection), "--index", str(target))
        assert_one_line_error(result, str(target), "nothing was changed")
        assert snapshot(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["coll", "notes.txt", "thesis"]


def test_index_into_the_current_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("precious", encoding="utf-8")
    result = run_clir("index", "--collection", str(TINY_FR), "--index", ".", cwd=tmp_path)
    assert_one_line_error(result, "current directory", "nothing was changed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]


def test_index_replaces_an_earlier_index_and_an_empty_directory(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for target in (empty, empty):  # the second time, it replaces the index it built
        result = run_clir("index", "--collection", str(TINY_FR), "--index", str(target),
                          "--quiet")
        assert result.returncode == 0, result.stderr
    assert debris(tmp_path) == []


def test_index_is_quiet_about_java_and_prints_one_summary(tmp_path: Path) -> None:
    result = run_clir("index", "--collection", str(TINY_FR), "--index", str(tmp_path / "idx"))
    assert result.returncode == 0, result.stderr
    assert "INFO" not in result.stderr + result.stdout
    assert "AbstractIndexer" not in result.stderr + result.stdout
    (summary,) = result.stdout.strip().splitlines()
    assert summary.startswith("indexed 12 documents (fr, ") and str(tmp_path / "idx") in summary
    debug = run_clir("index", "--collection", str(TINY_FR), "--index", str(tmp_path / "idx"),
                     "--debug")
    # Java's own log lines, on request (on stderr: the toolkit's log4j2.xml).
    assert "AbstractIndexer" in debug.stdout + debug.stderr


# --- damaged indexes ------------------------------------------------------------------------------


def _damage_truncate(index: Path, suffix: str) -> None:
    for path in index.glob(f"*{suffix}"):
        path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])


def _damage_delete(index: Path, suffix: str) -> None:
    for path in index.glob(f"*{suffix}"):
        path.unlink()


@pytest.mark.parametrize(
    ("damage", "suffix"),
    [(_damage_truncate, ".tim"), (_damage_truncate, "segments_*"), (_damage_delete, ".si"),
     (_damage_delete, "segments_*")],
    ids=["truncated-tim", "truncated-segments", "deleted-si", "deleted-segments"],
)
def test_damaged_lucene_index_is_one_line(
    fr_index: Path, tmp_path: Path, damage: Callable[[Path, str], None], suffix: str
) -> None:
    index = tmp_path / "idx"
    shutil.copytree(fr_index, index)
    damage(index, suffix)
    result = run_clir("search", "--index", str(index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(tmp_path / "r.trec"))
    assert_one_line_error(result, str(index), "rebuild it with: clir index")
    assert not (tmp_path / "r.trec").exists()


def index_with_sidecar_changed(fr_index: Path, tmp_path: Path, change: dict[str, object]) -> Path:
    """A copy of ``fr_index`` whose sidecar has the fields of ``change`` written over it."""
    index = tmp_path / "idx"
    shutil.copytree(fr_index, index)
    values = json.loads((index / SIDECAR).read_text())
    values.update(change)
    (index / SIDECAR).write_text(json.dumps(values))
    return index


@pytest.mark.parametrize("change", [
    {"documents": "twelve"}, {"store_raw": "no"}, {"language": 5}, {"seconds": None},
    {"analyzer_kind": "magic"}, {"documents": 1.5}, {"unknown_field": 1},
])
def test_index_sidecar_with_wrong_types_is_one_line(
    fr_index: Path, tmp_path: Path, change: dict[str, object]
) -> None:
    index = index_with_sidecar_changed(fr_index, tmp_path, change)
    result = run_clir("search", "--index", str(index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(tmp_path / "r.trec"))
    assert_one_line_error(result, "rebuild the index")


# --- outputs the operating system refuses -------------------------------------------------------


def test_output_that_is_a_directory_or_under_a_file_is_one_line(
    fr_index: Path, tmp_path: Path
) -> None:
    (tmp_path / "a-dir").mkdir()
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    for output, fragment in ((tmp_path / "a-dir", "is a directory"),
                             (tmp_path / "a-file" / "run.trec", "not a directory")):
        result = run_clir("search", "--index", str(fr_index), "--topics",
                          str(TINY_FR / "topics.dev.tsv"), "--output", str(output))
        assert_one_line_error(result, str(output), fragment)
    assert (tmp_path / "a-file").read_text(encoding="utf-8") == "x"


@contextlib.contextmanager
def mounted_tmpfs(where: Path, options: str) -> Iterator[Path]:
    """A small tmpfs mounted at ``where`` (needs root and mount rights: skipped otherwise)."""
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip() or 'not root'})")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(directory: Path) -> None:
    """Fill a file system until it has no space left."""
    with open(directory / "filler", "wb", buffering=0) as handle, contextlib.suppress(OSError):
        while True:
            handle.write(b"\0" * 4096)
            handle.flush()


def test_full_disk_is_one_line_and_leaves_nothing(fr_index: Path, tmp_path: Path) -> None:
    with mounted_tmpfs(tmp_path / "full", "size=256k") as full:
        fill(full)
        result = run_clir("index", "--collection", str(TINY_FR), "--index", str(full / "idx"))
        assert_one_line_error(result, str(full / "idx"), "no space left")
        result = run_clir("search", "--index", str(fr_index), "--topics",
                          str(TINY_FR / "topics.dev.tsv"), "--output", str(full / "r.trec"))
        assert_one_line_error(result, str(full / "r.trec"), "No space left")
        assert sorted(p.name for p in full.iterdir()) == ["filler"]


def test_a_disk_that_fills_while_lucene_writes_is_one_line_without_java_logs(
    tmp_path: Path,
) -> None:
    """Room for the normalised corpus but not for Lucene's segments: the failure comes from
    Anserini's indexing thread, which logged an ERROR line of its own before the toolkit's
    (issue 37, item 17). Anserini's logs during indexing are for --debug."""
    with mounted_tmpfs(tmp_path / "full", "size=40k") as full:
        result = run_clir("index", "--collection", str(TINY_FR), "--index", str(full / "idx"))
        assert_one_line_error(result, str(full / "idx"), "no space left")
        assert "ERROR" not in result.stderr
        assert list(full.iterdir()) == []


def test_read_only_directory_is_one_line(fr_index: Path, tmp_path: Path) -> None:
    with mounted_tmpfs(tmp_path / "ro", "ro,size=64k") as read_only:
        result = run_clir("search", "--index", str(fr_index), "--topics",
                          str(TINY_FR / "topics.dev.tsv"), "--output",
                          str(read_only / "r.trec"))
        assert_one_line_error(result, str(read_only / "r.trec"), "read-only")
        result = run_clir("index", "--collection", str(TINY_FR), "--index",
                          str(read_only / "idx"))
        assert_one_line_error(result, str(read_only / "idx"), "read-only")


# --- options --------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_non_finite_bm25_parameters_are_refused(fr_index: Path, tmp_path: Path,
                                                value: str) -> None:
    result = run_clir("search", "--index", str(fr_index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(tmp_path / "r.trec"),
                      "--k1", value)
    assert_one_line_error(result, "--k1", status=2)


def test_a_signal_raised_inside_a_finaliser_still_interrupts_the_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A SIGTERM that lands while Python runs a finaliser (CI caught one in the import
    machinery's weakref callback) raised where Python only prints "Exception ignored";
    the command then ran to the end as if never interrupted."""
    from clir_toolkit.cli import signals_as_exceptions
    from clir_toolkit.errors import Interrupted

    class SignalledDuringFinalisation:
        def __del__(self) -> None:
            raise Interrupted(signal.SIGTERM)

    with pytest.raises(Interrupted) as stopped, signals_as_exceptions():
        finalised = SignalledDuringFinalisation()
        del finalised
        for _ in range(500):  # the signal is sent again; it raises within milliseconds
            time.sleep(0.01)
    assert stopped.value.signum == signal.SIGTERM
    assert "Exception ignored" not in capsys.readouterr().err


def test_a_signal_swallowed_by_a_finaliser_is_not_sent_again_once_the_command_ended(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The copy of a swallowed signal is sent a moment later; if the command has ended (or
    been interrupted) meanwhile, that copy would reach Python's exit, where the default
    action kills the process: `clir: interrupted`, then exit -2 instead of 130."""
    from clir_toolkit.cli import signals_as_exceptions

    class SignalledDuringFinalisation:
        def __del__(self) -> None:
            raise KeyboardInterrupt

    arrived: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: arrived.append(signum))
    try:
        with signals_as_exceptions():
            finalised = SignalledDuringFinalisation()
            del finalised  # the command ends at once, before the copy is due
        time.sleep(0.5)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert arrived == []
    assert "Exception ignored" not in capsys.readouterr().err


# Fault injection for the test below: a real SIGINT that arrives while Python runs code made
# from a string, as collections.namedtuple and dataclasses do while a module imports.
SIGINT_INSIDE_GENERATED_CODE = textwrap.dedent("""
    import clir_toolkit.cli

    def check_outputs(args):
        exec("import os, signal, time\\nos.kill(os.getpid(), signal.SIGINT)\\ntime.sleep(30)", {})

    clir_toolkit.cli.check_outputs = check_outputs
""")


@pytest.mark.parametrize("entry", ["clir_toolkit.cli", "clir_toolkit"])
def test_ctrl_c_inside_code_made_from_a_string_exits_130(tmp_path: Path, entry: str) -> None:
    """CPython marks a KeyboardInterrupt that ends a string exec() or eval() as unhandled even
    once caught, and under `python -m` it then kills itself with SIGINT on exit: `clir:
    interrupted`, then exit -2 instead of 130 (the rare failure of
    test_signal_during_indexing_keeps_the_old_index[reading-2], whose Ctrl-C landed in a
    namedtuple's creation while tqdm imported)."""
    (tmp_path / "sitecustomize.py").write_text(SIGINT_INSIDE_GENERATED_CODE, encoding="utf-8")
    process = subprocess.run(
        [sys.executable, "-m", entry, "eval", "--qrels", str(TINY_FR / "qrels.dev.txt"),
         str(TINY_FR.parent / "runs" / "tiny-fr.bm25-human.dev.trec")],
        capture_output=True, text=True, timeout=120, preexec_fn=_default_sigint,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])},
    )  # fmt: skip
    assert process.stderr == "clir: interrupted\n"
    assert process.returncode == 130


WRITE_IN_A_LOOP = textwrap.dedent("""
    import sys
    from clir_toolkit.cli import signals_as_exceptions
    from clir_toolkit.files import atomic_write, scratch
    def write_until_interrupted():
        with signals_as_exceptions():
            try:
                print("ready", flush=True)
                while True:
                    with atomic_write(sys.argv[1]) as handle:
                        handle.write("x")
                    with scratch(sys.argv[1] + ".d"):
                        pass
            except KeyboardInterrupt:
                return 130  # as clir's main() does: the exception is freed before exit
    sys.exit(write_until_interrupted())
""")


def test_a_signal_at_the_entry_of_the_removal_still_removes_the_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python runs a signal handler when a function starts: an interrupt that lands at the
    entry of the removal of a temporary (before its own protection) still removes it, and
    the interrupt goes on (the fresh-clone CI of 5133c28 found one left behind)."""
    from clir_toolkit.errors import Interrupted
    from clir_toolkit.files import atomic as atomic_module

    remove = atomic_module._remove_even_if_interrupted
    calls = []

    def interrupted_at_entry(path: Path) -> None:
        calls.append(path)
        if len(calls) == 1:
            raise Interrupted(signal.SIGTERM)
        remove(path)

    monkeypatch.setattr(atomic_module, "_remove_even_if_interrupted", interrupted_at_entry)
    with pytest.raises(Interrupted), atomic_module.scratch(tmp_path / "out.d") as tmp:
        (tmp / "file").write_text("x", encoding="utf-8")
    assert len(calls) == 2
    assert debris(tmp_path) == []


def test_signals_at_random_instants_of_atomic_writes_leave_no_temporary(tmp_path: Path) -> None:
    """Temporary files and directories are created, filled, renamed and removed thousands
    of times a second; a SIGTERM at a random instant must never leave one behind (before,
    about one signal in four did: the window inside mkstemp, and rmtree cut short)."""
    rng = random.Random(7)
    for attempt in range(40):
        where = tmp_path / str(attempt)
        where.mkdir()
        process = subprocess.Popen(
            [sys.executable, "-c", WRITE_IN_A_LOOP, str(where / "out")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        time.sleep(rng.uniform(0.01, 0.1))
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 130, stderr
        assert debris(where) == [], f"attempt {attempt}"


def test_a_signal_that_makes_rmtree_close_a_descriptor_twice_still_removes_the_scratch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """shutil.rmtree interrupted between its os.close(fd) and noting the close closes fd
    again in a finally: EBADF, with the interrupt as its context. The random-signal test
    above caught it about once in 40 runs; here it happens on the first removal."""
    import errno

    from clir_toolkit.errors import Interrupted
    from clir_toolkit.files import atomic, scratch

    real_remove = atomic.remove_path
    calls = []

    def remove_interrupted_once(path: Path) -> None:
        calls.append(path)
        if len(calls) == 1:
            try:
                raise Interrupted(15)
            except Interrupted:
                raise OSError(errno.EBADF, "Bad file descriptor")  # noqa: B904 (as rmtree)
        real_remove(path)

    monkeypatch.setattr(atomic, "remove_path", remove_interrupted_once)
    with pytest.raises(Interrupted), scratch(tmp_path / "out.d") as directory:
        (directory / "f").write_text("x")
    assert len(calls) == 2 and list(tmp_path.iterdir()) == []


# --- inputs the toolkit checks before Lucene sees them (issue 21: items 10, 11, 12) ----------


def test_a_document_id_too_long_for_lucene_is_one_line_with_its_line(tmp_path: Path) -> None:
    collection = tmp_path / "coll"
    shutil.copytree(TINY_FR, collection)
    with (collection / "corpus.jsonl").open("a", encoding="utf-8") as corpus:
        corpus.write(json.dumps({"id": "x" * 40_000, "contents": "un document"}) + "\n")
    index = tmp_path / "idx"
    result = run_clir("index", "--collection", str(collection), "--index", str(index))
    assert_one_line_error(result, f"{collection / 'corpus.jsonl'}:13: document id 'xxx",
                          "(40,000 characters) is longer than 1,000 characters")
    assert len(result.stderr) < 400 and result.stdout == ""
    assert not index.exists() and debris(tmp_path) == []


@pytest.mark.parametrize(("change", "message"), [
    ({"language": "klingon"}, "'klingon' is not a language this toolkit analyses"),
    ({"language": "zh"}, "'zh' is analysed by 'jieba', not 'lucene'"),
    ({"format": 99}, "built by a newer clir_toolkit (format 99; this one reads formats up to 2)"),
    ({"shards": 0}, "'shards' must be at least 1, found 0"),
    ({"dense": {"encoder": "use-m9", "fingerprint": "0" * 16, "dim": 512, "documents": 12,
                "max_chars": 2000, "file": "dense-0123456789abcdef.npz"}},
     "'dense.encoder' \"use-m9\" is no encoder installed here"),
])
def test_an_index_sidecar_the_toolkit_did_not_write_is_one_line(
    fr_index: Path, tmp_path: Path, change: dict[str, object], message: str
) -> None:
    index = index_with_sidecar_changed(fr_index, tmp_path, change)
    output = tmp_path / "r.trec"
    result = run_clir("search", "--index", str(index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(output))
    assert_one_line_error(result, f"{index / SIDECAR}: ", message)
    assert "Java" not in result.stderr and not output.exists()


@pytest.mark.parametrize("foreign", ["notes.txt", "_0.cfs.d/notes.txt", "shard-00/notes.txt"])
def test_reindexing_refuses_an_index_holding_a_users_file(tmp_path: Path, foreign: str) -> None:
    index = tmp_path / "idx"
    shards = ["--shards", "2"] if foreign.startswith("shard-") else []
    built = run_clir("index", "--collection", str(TINY_FR), "--index", str(index), *shards)
    assert built.returncode == 0, built.stderr
    (index / foreign).parent.mkdir(exist_ok=True)
    (index / foreign).write_text("my notes", encoding="utf-8")
    before = snapshot(index)
    result = run_clir("index", "--collection", str(TINY_FR), "--index", str(index), *shards)
    first = foreign if foreign.startswith("shard-") else foreign.split("/")[0]
    assert_one_line_error(result, f"{index}: holds the ", f" {first}, which is not part of an "
                          "index built by 'clir index'; nothing was changed")
    assert snapshot(index) == before and debris(tmp_path) == []


@pytest.mark.parametrize(("name", "status"), [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_signal_while_the_command_line_imports_is_an_interruption(
    tmp_path: Path, name: str, status: int
) -> None:
    """The signal arrives at a state, not a time: while ``clir`` imports its command line
    (an import hook sends it when ``clir_toolkit.cli.options`` is looked for). SIGTERM and
    SIGHUP had their default action there, ending the command without a word."""
    code = textwrap.dedent(f"""
        import os, signal, sys

        class SignalOnImport:
            def find_spec(self, fullname, path, target=None):
                if fullname == "clir_toolkit.cli.options":
                    os.kill(os.getpid(), signal.{name})
                return None

        sys.meta_path.insert(0, SignalOnImport())
        sys.argv = ["clir", "--version"]
        from clir_toolkit.launcher import main
        sys.exit(main())
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, cwd=tmp_path)  # fmt: skip
    assert result.returncode == status, result.stderr
    assert result.stderr == "clir: interrupted\n" and result.stdout == ""
