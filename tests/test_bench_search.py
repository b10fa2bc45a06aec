"""``clir bench commands``: the speed table's commands from a cold shell, and its check that
``clir search`` and Anserini's ``SearchCollection`` rank alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from clir_toolkit import jvm
from clir_toolkit.bench_compare import equal_up_to_ties
from clir_toolkit.compute.threads import usable_cores
from tests.conftest import TINY_FR, run_clir


@pytest.mark.java
def test_bench_commands_times_each_line_and_checks_the_run_against_anserini(
    fr_index: Path,
) -> None:
    done = run_clir(
        "bench", "commands", "--index", str(fr_index),
        "--topics", str(TINY_FR / "topics-human.dev.tsv"),
        "--runs", "1", "--warmup", "0", "--translate", "none",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    names = [
        "clir --help",
        "clir search, one query",
        "clir search --hits 100 --threads 1, 6 topics",
        "Anserini SearchCollection -hits 100 -threads 1",
    ]
    for name in names:
        [line] = [line for line in lines if line.startswith(name + " ")]
        wall, cpu, peak = (float(value) for value in line[len(name) :].split())
        assert wall > 0 and cpu > 0 and peak > 0
    assert any(line.strip().startswith("ratio baseline / clir") for line in lines)
    if usable_cores() > 1:  # then the command's default threads, against Anserini's as many
        default = f"clir search --hits 100 (default threads: {usable_cores()}), 6 topics "
        assert any(line.startswith(default) for line in lines)
        anserini = f"Anserini SearchCollection -hits 100 -threads {usable_cores()} "
        assert any(line.startswith(anserini) for line in lines)
    assert "  runs: 6 of 6 queries the same up to ties" in lines
    # The table says what `clir resource java` had made for the commands it timed.
    archive = "yes" if jvm.class_archive_path().is_file() else "no"
    hit_reader = "yes" if jvm.hit_reader_jar() is not None else "no"
    assert f"Java: class archive {archive}, HitReader {hit_reader}" in lines


def test_bench_commands_refuses_no_runs() -> None:
    done = run_clir("bench", "commands", "--index", "x", "--topics", "y", "--runs", "0")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["clir: error: --runs must be at least 1 (got 0)"]


def test_rankings_equal_up_to_ties() -> None:
    ours = [("d", 3.0), ("c", 2.0), ("b", 2.0), ("a", 1.0)]
    # tied documents in another order, scores as Anserini prints them (4 decimals)
    assert equal_up_to_ties(ours, [("d", 3.0), ("b", 2.0), ("c", 2.0), ("a", 1.0)], hits=10)
    assert equal_up_to_ties(ours, [("d", 3.00004), ("c", 2.0), ("b", 2.0), ("a", 1.0)], hits=10)
    # two documents of different scores swapped, a score off, a document missing
    assert not equal_up_to_ties(ours, [("c", 3.0), ("d", 2.0), ("b", 2.0), ("a", 1.0)], hits=10)
    assert not equal_up_to_ties(ours, [("d", 3.0), ("c", 2.0), ("b", 2.0), ("a", 1.1)], hits=10)
    assert not equal_up_to_ties(ours, ours[:3], hits=10)


def test_a_tie_of_many_documents_as_anserini_breaks_it() -> None:
    # A collection that repeats its documents: 300 copies score alike. Anserini orders them
    # by docid and takes 1e-6 off each after the first (ScoreTiesAdjusterReranker).
    ours = [("z", 7.0), *((f"d~{k}", 6.0181002617) for k in range(300)), ("y", 5.0)]
    ordered = sorted(f"d~{k}" for k in range(300))
    theirs = [("z", 7.0), *((d, round(6.0181002617, 4) - 1e-6 * k) for k, d in
                            enumerate(ordered)), ("y", 5.0)]  # fmt: skip
    assert equal_up_to_ties(ours, theirs, hits=1000)
    assert not equal_up_to_ties(ours, [*theirs[:-1], ("x", 5.0)], hits=1000)


def test_documents_tied_at_the_cut_off_may_differ() -> None:
    # both keep 3 documents; of the tied b, c, e each system keeps two of its choosing
    ours = [("d", 3.0), ("e", 2.0), ("c", 2.0)]
    assert equal_up_to_ties(ours, [("d", 3.0), ("b", 2.0), ("c", 2.0)], hits=3)
    assert not equal_up_to_ties(ours, [("d", 3.0), ("b", 2.0), ("c", 2.0)], hits=4)
