"""The teaching kit: ``clir assignment`` gives the toolkit's own code full marks, fails
deliberately broken student modules on the checks they break, and starts from skeletons."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from clir_toolkit.teaching import ASSIGNMENTS, assignment
from clir_toolkit.teaching.grading import grade, write_skeleton
from tests.conftest import TINY_FR, assert_one_line_error, run_clir

REFERENCE_AS_STUDENT = {
    "sosl": "from clir_toolkit.rerank.losses.sosl import sosl\n",
    "kernel-pooling": "from clir_toolkit.rerank.word.knrm import kernel_pooling, soft_tf\n",
    "rocchio": "from clir_toolkit.expand.feedback import rocchio_weights, top_terms\n",
    "smooth-cosine": "from clir_toolkit.rerank.word.dual import smooth_cosine\n",
    "pirkola": "from clir_toolkit.search.searcher import pooled_tokens as pseudo_term\n"
    "from clir_toolkit.search.bm25_formula import bm25\n"
    "from clir_toolkit.search.bm25_formula import synonym_statistics as pseudo_term_statistics\n",
}

#: One deliberate mistake per assignment, and the checks it must fail.
BROKEN = {
    "sosl": (
        "import torch.nn.functional as F\n"
        "def sosl(scores, grades, thresholds=(-1.0, 0.2, 0.7, 1.0)):\n"
        "    theta = torch.tensor(thresholds)\n"
        "    above = F.relu(scores - theta[grades + 1])\n"
        "    below = F.relu(theta[grades] - scores)\n"
        "    return (above + below).mean()  # a hinge: not squared\n"
        "import torch\n",
        {
            "squared distance outside it",
            "mean over the batch",
            "any number of grades",
            "agrees with the reference (loss, gradient)",
        },
    ),
    "kernel-pooling": (
        "import torch\n"
        "from clir_toolkit.rerank.word.knrm import soft_tf\n"
        "def kernel_pooling(similarity, doc_mask, mus, sigmas):\n"
        "    return torch.stack([torch.exp(-(similarity - mu) ** 2 / (2 * s * s)).sum(-1)\n"
        "                        for mu, s in zip(mus, sigmas)], -1)  # padding counted\n",
        {
            "shape, exact matches, padding excluded",
            "padded document positions change nothing",
            "agrees with the reference in a K-NRM model",
        },
    ),
    "rocchio": (
        "from clir_toolkit.expand.feedback import rocchio_weights\n"
        "def top_terms(weights, k, total):\n"
        "    return dict(sorted(weights.items(), key=lambda kv: -kv[1])[:k])  # not scaled\n",
        {
            "top terms: non-negative, scaled to beta",
            "agrees on the dev queries' feedback documents",
        },
    ),
    "smooth-cosine": (
        "import torch\n"
        "def smooth_cosine(q, d, epsilon):\n"
        "    return (q * d).sum(-1) / (q.norm(dim=-1) * d.norm(dim=-1) + epsilon)  # eps once\n",
        {
            "eps = 0 is the cosine",
            "bounded by the cosine, its limits",
            "agrees with the reference (score, gradient)",
        },
    ),
    "pirkola": (
        "from clir_toolkit.search.searcher import pooled_tokens as pseudo_term\n"
        "from clir_toolkit.search.bm25_formula import bm25\n"
        "def pseudo_term_statistics(weights, tf, df):\n"
        "    return (sum(w * tf.get(t, 0) for t, w in weights.items()),\n"
        "            sum(df[t] for t in weights))  # df summed, not the largest\n",
        {"pseudo-term statistics", "recomputes Lucene's scores (dev queries)"},
    ),
}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the tiny French collection: the grader keeps its index in ``.cache``."""
    import shutil

    copy = tmp_path_factory.mktemp("collections") / "tiny-fr"
    shutil.copytree(TINY_FR, copy)
    return copy


def _student(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", list(ASSIGNMENTS))
def test_the_reference_as_a_student_gets_full_marks(name: str, tmp_path: Path, tiny: Path) -> None:
    item = assignment(name)
    path = _student(tmp_path, name, REFERENCE_AS_STUDENT[name])
    result = grade(item, path, tiny)
    assert result.passed, [(r.name, r.message) for r in result.results if r.earned < r.points]
    assert result.earned == item.points > 0 and len(result.results) >= 4


@pytest.mark.parametrize("name", list(ASSIGNMENTS))
def test_a_broken_module_fails_the_checks_it_breaks(name: str, tmp_path: Path, tiny: Path) -> None:
    source, broken = BROKEN[name]
    path = _student(tmp_path, name, source)
    result = grade(assignment(name), path, tiny)
    failed = {r.name for r in result.results if r.earned < r.points}
    assert failed == broken
    assert not result.passed and 0 < result.earned < result.points


def test_a_skeleton_that_cannot_be_written_leaves_no_directory_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As on a full disk: the directories made for the skeleton are removed again, the
    ones that were there are kept."""
    import clir_toolkit.files

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(clir_toolkit.files, "atomic_write", full)
    with pytest.raises(OSError, match="No space"):
        write_skeleton(assignment("sosl"), tmp_path / "course" / "work")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", list(ASSIGNMENTS))
def test_a_skeleton_imports_and_scores_zero(name: str, tmp_path: Path, tiny: Path) -> None:
    item = assignment(name)
    path = write_skeleton(item, tmp_path / "work")
    assert "raise NotImplementedError" in path.read_text() and "Grade it with" in path.read_text()
    result = grade(item, path, tiny)
    assert result.earned == 0
    assert {r.message for r in result.results} == {"not implemented yet"}


def test_a_slow_module_fails_the_timing_ceiling_only(tmp_path: Path) -> None:
    # The ceiling is FACTOR × the reference's time + FLOOR seconds. The slow module does the
    # reference's work 2.5 × FACTOR times over, as a Python loop would take, and then waits
    # 1.5 × FLOOR. The work is done, not slept: a busy machine slows it as it slows the
    # reference (a module that slept 49 times its own time passed the ceiling when the
    # reference's runs were slowed and its own was not). The wait passes the floor, which
    # decides on an idle machine where the reference takes milliseconds (50 times the work
    # alone passed the ceiling there).
    from clir_toolkit.teaching.sosl import FAST_ENOUGH

    repeats, wait = round(2.5 * FAST_ENOUGH.factor), 1.5 * FAST_ENOUGH.floor
    path = _student(tmp_path, "sosl", REFERENCE_AS_STUDENT["sosl"] + (
        "import time\n"
        "_fast = sosl\n"
        "def sosl(scores, grades, thresholds=(-1.0, 0.2, 0.7, 1.0)):\n"
        "    if scores.numel() > 100_000:\n"
        f"        for _ in range({repeats - 1}):\n"
        "            _fast(scores, grades, thresholds)\n"
        f"        time.sleep({wait})\n"
        "    return _fast(scores, grades, thresholds)\n"))  # fmt: skip
    result = grade(assignment("sosl"), path)
    assert {r.name for r in result.results if r.earned < r.points} == {"timing ceiling"}
    assert "ceiling" in result.results[-1].message


def test_the_command_line_round_trip(tmp_path: Path) -> None:
    """list → start → check (0 points, exit 1) → start again refuses to overwrite → a
    finished module checks with exit 0; a module that does not import is one line."""
    listing = run_clir("assignment", "list")
    assert listing.returncode == 0
    assert [line.split()[0] for line in listing.stdout.splitlines()] == list(ASSIGNMENTS)
    work = tmp_path / "work"
    assert run_clir("assignment", "start", "sosl", "--dir", str(work)).returncode == 0
    checked = run_clir("assignment", "check", "sosl", "--dir", str(work))
    assert checked.returncode == 1
    assert checked.stdout.splitlines()[-1] == "score: 0 / 10 (not yet)"
    (work / "sosl.py").write_text(REFERENCE_AS_STUDENT["sosl"], encoding="utf-8")
    again = run_clir("assignment", "start", "sosl", "--dir", str(work))
    assert_one_line_error(again, "sosl.py exists", status=1)
    assert (work / "sosl.py").read_text() == REFERENCE_AS_STUDENT["sosl"]
    checked = run_clir("assignment", "check", "sosl", "--dir", str(work))
    assert checked.returncode == 0, checked.stdout
    assert checked.stdout.splitlines()[-1] == "score: 10 / 10 (all checks passed)"
    (work / "sosl.py").write_text("import torch\n\ndef sosl(scores, grades:\n", encoding="utf-8")
    assert_one_line_error(run_clir("assignment", "check", "sosl", "--dir", str(work)),
                          "sosl.py:3: cannot be imported: SyntaxError")  # fmt: skip
    missing = run_clir("assignment", "check", "rocchio", "--dir", str(work))
    assert_one_line_error(missing, "rocchio.py: no such file", status=1)


SOSL = REFERENCE_AS_STUDENT["sosl"]
HINGE = BROKEN["sosl"][0]
EVERY_CHECK_FAILS = "score: 0 / 10 (not yet)"

#: Student modules that try to pass without earning it, or to stop the grader: the line
#: a check's row must show, and the real score. Graded with a time limit of 2 s per check
#: when they loop, 120 s otherwise (so that a loaded machine cannot turn an exit into a
#: time-out).
HOSTILE = {
    "sys.exit(0) at import": (
        "import sys\nsys.exit(0)\n",
        "FAIL: exited during import (status 0)",
        EVERY_CHECK_FAILS,
    ),
    "SystemExit('all checks passed')": (
        'raise SystemExit("all checks passed")\n',
        "FAIL: exited during import (status 1)",
        EVERY_CHECK_FAILS,
    ),
    "sys.exit(0) in the function": (
        "import sys\ndef sosl(scores, grades, thresholds=None):\n    sys.exit(0)\n",
        "FAIL: exited inside sosl() (status 0)",
        EVERY_CHECK_FAILS,
    ),
    "os._exit(0) in the function": (
        "import os\ndef sosl(scores, grades, thresholds=None):\n    os._exit(0)\n",
        "FAIL: exited inside sosl() (status 0)",
        EVERY_CHECK_FAILS,
    ),
    "an infinite loop at import": (
        "while True:\n    pass\n",
        "FAIL: timed out after 2 s during import",
        EVERY_CHECK_FAILS,
    ),
    "an infinite loop": (
        "def sosl(scores, grades, thresholds=None):\n    while True:\n        pass\n",
        "FAIL: timed out after 2 s inside sosl()",
        EVERY_CHECK_FAILS,
    ),
    "a memory hog": (
        "def sosl(scores, grades, thresholds=None):\n    return bytearray(8 << 30)\n",
        "FAIL: ran out of memory inside sosl() (the limit is 1.5 GiB)",
        EVERY_CHECK_FAILS,
    ),
    "the grader stopped by its process id": (
        HINGE + "import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)\n",
        "FAIL: SOSL(r=0.9, grade 0)",
        "score: 3 / 10 (not yet)",
    ),
    "the grader patched at import": (
        HINGE + "import clir_toolkit.teaching.grading as grading\n"
        "grading.close = lambda *args, **kwargs: None\n"
        "grading.format_grade = lambda grade: 'score: 10 / 10 (all checks passed)'\n"
        "grading.Grade.passed = property(lambda self: True)\n"
        "print('score: 10 / 10 (all checks passed)')\n",
        "FAIL: SOSL(r=0.9, grade 0)",
        "score: 3 / 10 (not yet)",
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_module_can_neither_pass_nor_hang_the_grader(case: str, tmp_path: Path) -> None:
    """Exits, a replaced grader, a loop and a memory hog fail their checks with a line that
    says why; the table and the exit status come from the grader, which keeps going."""
    source, line, score = HOSTILE[case]
    (tmp_path / "sosl.py").write_text(source, encoding="utf-8")
    seconds = "2" if "loop" in case else "120"
    checked = run_clir("assignment", "check", "sosl", "--dir", str(tmp_path),
                       "--time-limit", seconds, "--memory-limit", "1.5")  # fmt: skip
    assert checked.returncode == 1, checked.stdout + checked.stderr
    rows = checked.stdout.splitlines()
    assert rows[0] == f"sosl: {tmp_path / 'sosl.py'}" and rows[1].startswith("check")
    assert any(line in row for row in rows[2:-1]), checked.stdout
    assert rows[-1] == score and len(rows) == 2 + len(assignment("sosl").checks) + 1


def test_the_module_runs_in_its_own_directory(tmp_path: Path) -> None:
    """The student's code runs with its directory as working directory, so what it writes
    lands there; the reference module still gets full marks."""
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir(), elsewhere.mkdir()
    (work / "sosl.py").write_text(SOSL + "open('written-at-import', 'w').close()\n",
                                  encoding="utf-8")  # fmt: skip
    checked = run_clir("assignment", "check", "sosl", "--dir", str(work), cwd=elsewhere)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.splitlines()[-1] == "score: 10 / 10 (all checks passed)"
    assert (work / "written-at-import").is_file() and not list(elsewhere.iterdir())


def test_a_process_the_module_leaves_behind_does_not_keep_check_waiting(tmp_path: Path) -> None:
    """A daemon the module starts (a new session: out of reach of the process-group kill)
    holds none of the caller's pipes, so ``check`` and whoever reads its output finish; what
    the module printed reaches standard error, not the table."""
    import os
    import signal

    pid_file = tmp_path / "daemon.pid"
    daemon = (
        "import os, time\n"
        "print('printed by the module')\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "        time.sleep(600)\n"
        "    os._exit(0)\n"
    )
    (tmp_path / "sosl.py").write_text(SOSL + daemon, encoding="utf-8")
    try:
        checked = run_clir("assignment", "check", "sosl", "--dir", str(tmp_path))
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert checked.stdout.splitlines()[-1] == "score: 10 / 10 (all checks passed)"
        assert "printed by the module" in checked.stderr
        assert "printed by the module" not in checked.stdout
    finally:
        if pid_file.is_file():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_kernel_pooling_is_graded_inside_the_k_nrm_the_toolkit_trains(
    tmp_path: Path, tiny: Path
) -> None:
    """The in-model check plugs the student's pooling into K-NRM on USE-m3's pretrained
    subword table (English queries, French pages), the model of `clir rerank train --model
    knrm`, not into a model of random vectors."""
    item = assignment("kernel-pooling")
    path = _student(tmp_path, "kernel-pooling", REFERENCE_AS_STUDENT["kernel-pooling"])
    result = grade(item, path, tiny)
    [in_model] = [r for r in result.results if r.name.startswith("agrees with the reference")]
    assert in_model.earned == in_model.points
    assert "64 English query / French page pairs" in in_model.message
    assert "pretrained subword table" in in_model.message


def test_a_missing_collection_is_the_grader_s_input_error_not_the_module_s(tmp_path: Path) -> None:
    """``--collection`` that does not exist: one line naming it, exit 1, before any check
    (the reference itself scored 7/11, the line blaming "your functions")."""
    result = run_clir("assignment", "check", "pirkola", "--reference",
                      "--collection", str(tmp_path / "nowhere"))  # fmt: skip
    assert_one_line_error(result, "nowhere: no such collection directory")
    assert "score:" not in result.stdout
