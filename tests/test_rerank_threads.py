"""torch's CPU threads: the toolkit sets the fastest measured count unless the user chose one.

Each case runs in a fresh Python process: torch reads its environment once, at start, and
the thread count of the test process is shared by every test.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from clir_toolkit.compute.threads import fastest_threads, usable_cores


def fresh_process(code: str, env: dict[str, str] | None = None) -> str:
    """What ``code`` printed last, run in a new interpreter (no thread variables inherited)."""
    clean = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    result = subprocess.run(
        [sys.executable, "-c", f"import torch\n{code}"],
        capture_output=True,
        text=True,
        env={**clean, **(env or {})},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()[-1]


def threads_in_fresh_process(code: str, env: dict[str, str] | None = None) -> int:
    """The thread count torch has after ``code`` ran in a new interpreter."""
    return int(fresh_process(f"{code}\nprint(torch.get_num_threads())", env))


@pytest.mark.parametrize(("cores", "threads"), [(1, 1), (2, 1), (4, 3), (16, 15)])
def test_every_core_but_one(cores: int, threads: int) -> None:
    assert fastest_threads(cores) == threads


def test_without_a_choice_the_fastest_count_is_set() -> None:
    code = "from clir_toolkit.compute.threads import use_fastest_threads\nuse_fastest_threads()"
    assert threads_in_fresh_process(code) == fastest_threads()


@pytest.mark.skipif(usable_cores() < 2, reason="torch caps OMP_NUM_THREADS at the cores")
def test_omp_num_threads_is_respected() -> None:
    code = "from clir_toolkit.compute.threads import use_fastest_threads\nuse_fastest_threads()"
    # 2, not the toolkit's choice (1 on two cores, 3 on four).
    assert threads_in_fresh_process(code, {"OMP_NUM_THREADS": "2"}) == 2


def test_a_count_set_by_the_program_is_respected() -> None:
    code = (
        "torch.set_num_threads(3)\n"
        "from clir_toolkit.compute.threads import use_fastest_threads\nuse_fastest_threads()"
    )
    assert threads_in_fresh_process(code) == 3


def test_an_explicit_count_wins() -> None:
    code = (
        "from clir_toolkit.compute.threads import use_fastest_threads\n"
        "use_fastest_threads(2)\nuse_fastest_threads()"
    )
    assert threads_in_fresh_process(code, {"OMP_NUM_THREADS": "1"}) == 2


def test_bench_measures_the_cpu_with_the_count_training_uses() -> None:
    code = (
        "from clir_toolkit.rerank.word.bench import BenchSettings, bench_rerank\n"
        "s = BenchSettings(query_len=3, doc_len=12, dim=8, query_vocab=50, doc_vocab=80,\n"
        "                  batch_size=16, train_batch_size=8, warmup=1, seconds=0.01)\n"
        "print(bench_rerank(s, models=['dual'], devices=['cpu'])[0].device_name)"
    )
    threads = fastest_threads()
    assert fresh_process(code).endswith(f", {threads} thread{'s' if threads > 1 else ''}")
