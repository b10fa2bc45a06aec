"""What every assignment shares: its description, the skeleton a student starts from, and the
grader that runs its checks on the student's module.

An :class:`Assignment` names the functions a student writes (the same names and signatures
as the toolkit's own implementation, which is the reference solution), the skeleton module
``clir assignment start`` writes, and its :class:`Check` list. A check is a function of the
student's module that raises :class:`AssertionError` (with a message a student can act on)
when the module does not behave; it earns its points otherwise. Three kinds recur:

* *properties* the method must have whatever the implementation (a loss that is zero inside
  its segment, pooling that ignores padding, weights that sum to what they should);
* *agreement* with the reference on random batches and, for the retrieval assignments, on
  the dev queries of a real collection (``--collection``; by default the French man pages,
  built on first use, :mod:`clir_toolkit.teaching.fixtures`), within a tolerance the check
  states;
* a *timing ceiling*: the student's code on a realistic workload, against the reference's
  time on the same machine (so that the ceiling holds on a laptop and in a course's CI).

``clir assignment check`` prints one row per check and the score, and exits 1 unless every
check passed, so that a course's CI can run it. The student's module never runs in the
grader's process: it runs in a child (:mod:`clir_toolkit.teaching.sandbox`) that returns
its functions' outputs, and the checks, the comparisons with the reference and the table
stay here, out of its reach, with a wall-clock limit per check and a memory limit.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from clir_toolkit.errors import ClirError, FormatError, OutputError
from clir_toolkit.teaching.sandbox import (
    STARTUP_SECONDS,
    ImportFailed,
    Limits,
    Remote,
    StudentGone,
    StudentOutOfMemory,
    StudentProcess,
    StudentRaised,
)


@dataclass(frozen=True)
class Timing:
    """A timing ceiling: ``run(functions, data)`` on the data ``prepare()`` builds, run on
    the student's functions in their process and on the reference in a process like it,
    timed from the grader's; the student's best of three runs may take at most ``factor``
    × the reference's best plus ``floor`` seconds."""

    prepare: Callable[[], Any]
    run: Callable[[Any, Any], object]
    factor: float
    floor: float
    what: str


@dataclass(frozen=True)
class Check:
    """One graded behaviour: ``run(student, collection)`` raises AssertionError when it is
    missing, and may return a note on what it checked (shown beside ``ok``). ``student``
    holds the student's functions, each a call into the student's process; ``collection``
    is the French man-page collection whose dev split agreement checks also use (None:
    they use the toolkit's tiny fixture only, and say so). A timing ceiling has ``timing``
    instead of ``run``."""

    name: str
    points: int
    run: Callable[[Any, Path | None], str | None] | None = None
    timing: Timing | None = None


@dataclass(frozen=True)
class Assignment:
    """A piece of the toolkit a student re-implements behind its plug-in point."""

    name: str
    title: str
    teaches: str
    """What the student learns, for ``clir assignment list`` and the instructor notes."""
    minutes: int
    """Expected time for a student who has read the cited section, in minutes."""
    functions: tuple[str, ...]
    """The functions the student's module must define."""
    skeleton: str
    """The module ``clir assignment start`` writes: signatures, docstrings (formula and
    citation) and ``raise NotImplementedError`` bodies."""
    reference: Callable[[], ModuleType]
    """The toolkit's own implementation, a module (or namespace) with the same functions."""
    checks: tuple[Check, ...] = field(default_factory=tuple)

    @property
    def points(self) -> int:
        return sum(check.points for check in self.checks)


@dataclass(frozen=True)
class CheckResult:
    name: str
    points: int
    earned: int
    seconds: float
    message: str


@dataclass(frozen=True)
class Grade:
    """The outcome of grading one module: a row per check."""

    assignment: str
    source: str
    results: tuple[CheckResult, ...]

    @property
    def earned(self) -> int:
        return sum(r.earned for r in self.results)

    @property
    def points(self) -> int:
        return sum(r.points for r in self.results)

    @property
    def passed(self) -> bool:
        return self.earned == self.points


def student_path(directory: Path, assignment: Assignment) -> Path:
    """Where a student's module for ``assignment`` lives: ``DIR/NAME.py``."""
    return directory / f"{assignment.name.replace('-', '_')}.py"


def write_skeleton(assignment: Assignment, directory: Path) -> Path:
    """Write the assignment's skeleton into ``directory``; an existing file (the student's
    work) is never replaced, and directories made for a skeleton that could not be written
    (a full disk) are removed again."""
    from clir_toolkit.files import atomic_write

    path = student_path(directory, assignment)
    if path.exists():
        raise OutputError(
            f"{path} exists: it may hold your work, so it is left as it is "
            "(move it away to start again)"
        )
    made = [parent for parent in (directory, *directory.parents) if not parent.exists()]
    directory.mkdir(parents=True, exist_ok=True)
    try:
        with atomic_write(path) as handle:
            handle.write(assignment.skeleton)
    except BaseException:
        for parent in made:  # the deepest first
            with contextlib.suppress(OSError):
                parent.rmdir()
        raise
    return path


def check_source(path: Path) -> None:
    """Refuse, in one line, a student's file that is missing or is not Python. The file is
    compiled here, never run: the grader's process does not import the student's module."""
    if not path.is_file():
        raise ClirError(f"{path}: no such file (write it with: clir assignment start NAME)")
    try:
        compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise FormatError(path, exc.lineno, f"cannot be imported: {_message(exc)}") from None
    except (ValueError, OSError) as exc:
        raise FormatError(path, None, f"cannot be imported: {_message(exc)}") from None


def grade(assignment: Assignment, path: Path | None, collection: Path | None = None,
          limits: Limits | None = None) -> Grade:  # fmt: skip
    """Grade the student's module at ``path`` (None: the toolkit's own implementation).

    The module runs in a child process in its own directory (:mod:`.sandbox`); the checks
    run here, on its functions' outputs, so that nothing the module does can change a
    verdict. A check whose child exits, is killed or runs past ``limits.seconds`` fails
    with a line that says so, and the next check starts a fresh child; none stops the
    others. Raises :class:`FormatError` when the module raises while it is imported."""
    limits = limits or Limits()
    if path is not None:
        check_source(path)
    if collection is not None:  # the grader's input, checked before any check blames a module
        from clir_toolkit.collection import open_collection

        open_collection(collection)
    source = str(path) if path is not None else "the toolkit's own implementation"
    student = StudentProcess(assignment.name, path.resolve() if path is not None else None,
                             path.resolve().parent if path is not None else Path.cwd(),
                             limits)  # fmt: skip
    results = []
    broken_import = ""
    try:
        for index, check in enumerate(assignment.checks):
            if not broken_import and not student.alive:
                try:
                    student.start()
                except StudentGone as exc:  # while importing: the same for every check
                    broken_import = str(exc)
            started = time.perf_counter()
            if broken_import:
                earned, message = 0, broken_import
            else:
                earned, message = _run(assignment, index, check, student, collection)
            student.relay()
            results.append(CheckResult(check.name, check.points, earned,
                                       time.perf_counter() - started, message))  # fmt: skip
    except ImportFailed as exc:
        assert path is not None
        raise FormatError(path, exc.line, f"cannot be imported: {exc.message}") from None
    finally:
        student.close()
    return Grade(assignment.name, source, tuple(results))


def _run(assignment: Assignment, index: int, check: Check, student: StudentProcess,
         collection: Path | None) -> tuple[int, str]:  # fmt: skip
    """One check on the started ``student``: (points earned, the table's message)."""
    missing = [name for name in assignment.functions if name not in student.functions]
    if missing:
        return 0, f"defines no {', '.join(missing)}"
    student.allow(student.limits.seconds)
    try:
        if check.timing is not None:
            _within_time(assignment, index, check.timing, student)
            note = None
        else:
            assert check.run is not None
            note = check.run(Remote(student, student.functions), collection)
    except NotImplementedError:
        return 0, "not implemented yet"
    except AssertionError as exc:
        return 0, str(exc) or "failed"
    except (StudentGone, StudentRaised, StudentOutOfMemory) as exc:
        return 0, str(exc)
    except Exception as exc:  # noqa: BLE001 (what the module returned broke a check)
        return 0, f"{_message(exc)} (in the grader, from what your functions returned)"
    return check.points, note or ""


def _within_time(assignment: Assignment, index: int, timing: Timing,
                 student: StudentProcess) -> None:  # fmt: skip
    """The timing ceiling: the reference runs the workload in a process of its own, started
    as the student's is, and the two are timed from here the same way, in turns (so that
    a machine busy for a moment slows both)."""
    reference = StudentProcess(assignment.name, None, student.directory, student.limits)
    try:
        reference.start()
        reference.allow(STARTUP_SECONDS)
        reference.prepare(index)
        student.prepare(index)
        reference_times, student_times = [], []
        for _ in range(3):
            reference_times.append(_seconds(lambda: reference.workload(index)))
            student_times.append(_seconds(lambda: student.workload(index)))
    finally:
        reference.close()
    reference_seconds, seconds = min(reference_times), min(student_times)
    ceiling = timing.factor * reference_seconds + timing.floor
    assert seconds <= ceiling, (
        f"{timing.what} took {seconds:.3f} s; the ceiling is {ceiling:.3f} s "
        f"({timing.factor:g} × the reference's {reference_seconds:.3f} s + {timing.floor:g} s):"
        " vectorise"
    )


def _seconds(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _message(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def format_grade(grade: Grade) -> str:
    """The per-check table and the score, as ``clir assignment check`` prints them."""
    width = max([len(r.name) for r in grade.results] + [5])
    lines = [f"{grade.assignment}: {grade.source}",
             f"{'check':<{width}}  {'points':>6}  {'time':>7}  result"]  # fmt: skip
    for r in grade.results:
        if r.earned == r.points:
            result = f"PASS ({r.message})" if r.message else "PASS"
        else:
            result = f"FAIL: {r.message}"
        lines.append(
            f"{r.name:<{width}}  {r.earned:>2} / {r.points:<2}  {r.seconds:>6.2f}s  {result}"
        )
    lines.append(f"score: {grade.earned} / {grade.points}"
                 f" ({'all checks passed' if grade.passed else 'not yet'})")  # fmt: skip
    return "\n".join(lines)


# -- helpers the checks share -----------------------------------------------------------------


def close(actual: Any, expected: Any, what: str, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Assert two tensors (or numbers) agree within ``rtol``/``atol``, naming the worst entry."""
    import torch

    actual_t = torch.as_tensor(actual).detach().to(torch.float64)
    expected_t = torch.as_tensor(expected).detach().to(torch.float64)
    assert actual_t.shape == expected_t.shape, (
        f"{what}: shape {tuple(actual_t.shape)}, expected {tuple(expected_t.shape)}"
    )
    if not bool(torch.isfinite(actual_t).all()) and bool(torch.isfinite(expected_t).all()):
        worst = int((~torch.isfinite(actual_t)).flatten().nonzero()[0])
        raise AssertionError(
            f"{what}: {float(actual_t.flatten()[worst])} where the reference gives "
            f"{float(expected_t.flatten()[worst]):.6g}"
        )
    error = (actual_t - expected_t).abs() - rtol * expected_t.abs()
    if error.numel() and float(error.max()) > atol:
        worst = int(error.argmax())
        raise AssertionError(
            f"{what}: {float(actual_t.flatten()[worst]):.6g} where the reference gives "
            f"{float(expected_t.flatten()[worst]):.6g} (tolerance {rtol:g} relative + {atol:g})"
        )


class Lookup:
    """A function of one key backed by a dictionary (``default`` for a missing key): what a
    check passes where the student's function expects a callable, since the call crosses
    to the student's process and a lambda cannot."""

    def __init__(self, table: dict[Any, Any], default: Any = None) -> None:
        self.table, self.default = table, default

    def __call__(self, key: Any) -> Any:
        return self.table.get(key, self.default)


Run = Callable[[Any, Path | None], str | None]


def checks(*items: tuple[str, int, Run | Timing]) -> tuple[Check, ...]:
    """``Check`` objects from ``(name, points, run or timing)`` triples."""
    return tuple(Check(name, points, timing=run) if isinstance(run, Timing)
                 else Check(name, points, run=run) for name, points, run in items)  # fmt: skip
