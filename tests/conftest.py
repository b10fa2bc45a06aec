"""Shared fixtures: real Lucene indexes of the hand-made collections, built once per session.

Also the hypothesis profiles of the fuzz tests (``tests/test_fuzz*.py``), chosen by the
environment variable ``HYPOTHESIS_PROFILE``:

``ci`` (the default, used by ``make test``)
    few examples, the same ones on every run: a quick, reproducible check.
``fuzz`` (``make fuzz``)
    many random examples, for a search of several minutes. So that the run ends by itself
    within ``make fuzz``'s 10 minutes, the hypothesis tests that would start once
    ``CLIR_FUZZ_BUDGET_S`` seconds (default 480) are spent are skipped, with a reason.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from clir_toolkit.experiments.context import Workspace

settings.register_profile(
    "ci",
    max_examples=100,
    deadline=None,  # the machine is shared: a slow example is not a failure
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "fuzz",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
# The Ctrl-C tests model a user at a terminal, where SIGINT raises KeyboardInterrupt. A
# shell without job control starts a background command (`make test &`, `nohup ... &`) with
# SIGINT ignored, and an ignored signal stays ignored in every child: `os.kill(pid, SIGINT)`
# then does nothing, and those tests failed in such a run (a fresh-clone CI started with
# `&`). A handler, unlike SIG_IGN, is reset to the default by exec, so the test processes
# start as a terminal's would.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)
FUZZ_BUDGET_S = float(os.environ.get("CLIR_FUZZ_BUDGET_S", "480"))
_STARTED = time.monotonic()


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Under the fuzz profile, skip the hypothesis tests that would start after the budget."""
    if PROFILE != "fuzz" or not getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
        return
    spent = time.monotonic() - _STARTED
    if spent > FUZZ_BUDGET_S:
        pytest.skip(f"fuzz time budget spent ({spent:.0f} s > CLIR_FUZZ_BUDGET_S)")


FIXTURES = Path(__file__).parent / "fixtures"
TINY_FR = FIXTURES / "tiny-fr"
TINY_ZH = FIXTURES / "tiny-zh"


@pytest.fixture(scope="session")
def fr_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from clir_toolkit.index import build_index

    index = tmp_path_factory.mktemp("indexes") / "tiny-fr"
    build_index(TINY_FR, index, verbose=False)
    return index


@pytest.fixture(scope="module")
def tiny_fr_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of tiny-fr, for tests that write under the collection (its vector cache)."""
    root = tmp_path_factory.mktemp("tiny-fr-copy") / "tiny-fr"
    shutil.copytree(TINY_FR, root)
    return root


@pytest.fixture(scope="session")
def zh_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from clir_toolkit.index import build_index

    index = tmp_path_factory.mktemp("indexes") / "tiny-zh"
    build_index(TINY_ZH, index, verbose=False)
    return index


@pytest.fixture(scope="session")
def first_stage(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A word-overlap run of all twelve pages of tiny-fr for each topic (French topics vs
    pages): the rerankers' candidates, relevant pages high but not always first."""
    from clir_toolkit.formats import RunRow, iter_corpus, read_topics, write_run
    from clir_toolkit.rerank.data.tokens import rerank_tokens

    docs = {
        doc.id: set(rerank_tokens("fr", doc.contents))
        for doc in iter_corpus(TINY_FR / "corpus.jsonl")
    }
    rows = []
    for topic in read_topics(TINY_FR / "topics-human.dev.tsv"):
        words = set(rerank_tokens("fr", topic.query))
        for docid, doc_words in docs.items():
            rows.append(RunRow(topic.qid, docid, 0, float(len(words & doc_words)), "overlap"))
    path = tmp_path_factory.mktemp("runs") / "overlap.trec"
    write_run(path, rows)
    return path


def run_clir(*args: str, env: dict[str, str] | None = None,
             cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real ``clir`` command line in a subprocess."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "clir_toolkit.cli", *args], capture_output=True,
                          text=True, env=full_env, cwd=cwd, timeout=300)


def ray_worker_pids(name: str) -> list[int]:
    """Processes whose title is Ray's ``ray::NAME``: a worker running the task ``NAME``, or
    an actor running its method (``Class.method``), now."""
    listing = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    return [int(line.split(None, 1)[0]) for line in listing.splitlines()
            if line.split(None, 1)[-1].startswith(f"ray::{name}")]  # fmt: skip


def run_clir_killing_a_worker(
    *args: str, name: str, within: float = 120
) -> tuple[subprocess.CompletedProcess[str], int | None]:
    """Run ``clir ARGS`` (a command with ``--ray``) and kill -9, once, the first Ray worker
    seen running ``name`` (:func:`ray_worker_pids`). Returns the finished command and the
    process killed (None if no worker was caught within ``within`` seconds)."""
    command = [sys.executable, "-m", "clir_toolkit.cli", *args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)  # fmt: skip
    killed = None
    deadline = time.monotonic() + within
    while killed is None and process.poll() is None and time.monotonic() < deadline:
        for pid in ray_worker_pids(name):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                killed = pid
                break
        time.sleep(0.02)
    stdout, stderr = process.communicate(timeout=300)
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr), killed


def assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str,
                          status: int = 1) -> None:
    """A bad input gets one line on stderr, the given exit status and no traceback."""
    assert result.returncode == status, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("clir: error: ")
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


BIG_WORDS = (
    "fichier répertoire copier supprimer afficher lister processus mémoire disque réseau "
    "utilisateur groupe droits lien symbolique archive compresser chercher motif ligne texte "
    "terminal commande option sortie entrée erreur signal tâche heure date système noyau "
    "module paquet installer configurer serveur client adresse port protocole chemin nom"
).split()


def workspace_with_three_splits(root: Path) -> Workspace:
    """A recipe workspace under ``root`` whose fr collection is tiny-fr with train, dev and
    test splits (the dev split's topics and judgements stand in for the others)."""
    import shutil

    from clir_toolkit.experiments.context import Workspace

    workspace = Workspace(root / "data", root / "indexes", root / "runs", root / "models")
    collection = workspace.collection("manpages", "fr", "standard")
    shutil.copytree(TINY_FR, collection)
    for split in ("train", "test"):
        for kind, suffix in (("topics", "tsv"), ("topics-human", "tsv"), ("qrels", "txt")):
            shutil.copy(
                collection / f"{kind}.dev.{suffix}", collection / f"{kind}.{split}.{suffix}"
            )
    return workspace


def write_big_collection(root: Path, documents: int = 20_000, topics: int = 400) -> Path:
    """A generated French collection large enough that indexing and searching take a moment
    (random words of :data:`BIG_WORDS`, seeded): 60 words a document, 4 a topic."""
    import json
    import random

    root.mkdir(parents=True)
    rng = random.Random(7)
    with open(root / "corpus.jsonl", "w", encoding="utf-8") as out:
        for i in range(documents):
            text = " ".join(rng.choice(BIG_WORDS) for _ in range(60))
            out.write(json.dumps({"id": f"d{i}", "contents": text}, ensure_ascii=False) + "\n")
    with open(root / "topics.dev.tsv", "w", encoding="utf-8") as out:
        for i in range(topics):
            out.write(f"q{i}\t{' '.join(rng.choice(BIG_WORDS) for _ in range(4))}\n")
    (root / "manifest.json").write_text(
        json.dumps({"name": "big-fr", "query_lang": "fr", "doc_lang": "fr"}), encoding="utf-8"
    )
    return root


def debian_packages_missing(packages: Sequence[str]) -> str | None:
    """Why man pages of ``packages`` cannot be read on this machine (not Debian, a package
    not installed, dpkg excluding /usr/share/man), or None when they can."""
    import shutil

    from clir_toolkit.collection.manpages.packages import man_pages_excluded

    if shutil.which("dpkg-query") is None:
        return "not a Debian system (no dpkg-query)"
    result = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Package} ${db:Status-Status}\n", *packages],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    installed = {
        line.split()[0] for line in result.stdout.splitlines() if line.endswith(" installed")
    }
    missing = [package for package in packages if package not in installed]
    if missing:
        return f"Debian packages not installed: {' '.join(missing)} (make setup installs them)"
    if man_pages_excluded() is not None:
        return "dpkg excludes /usr/share/man on this system"
    return None
