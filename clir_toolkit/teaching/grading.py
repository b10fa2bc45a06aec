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
check passed, so that a course's CI can run it.
"""

from __future__ import annotations

import importlib.util
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from clir_toolkit.errors import FormatError, OutputError, UsageError


@dataclass(frozen=True)
class Check:
    """One graded behaviour: ``run(student, collection)`` raises AssertionError when it is
    missing, and may return a note on what it checked (shown beside ``ok``). ``collection``
    is the French man-page collection whose dev split agreement checks also use (None:
    they use the toolkit's tiny fixture only, and say so)."""

    name: str
    points: int
    run: Callable[[ModuleType, Path | None], str | None]


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
    work) is never replaced."""
    from clir_toolkit.files import atomic_write

    path = student_path(directory, assignment)
    if path.exists():
        raise OutputError(
            f"{path} exists: it may hold your work, so it is left as it is "
            "(move it away to start again)"
        )
    directory.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as handle:
        handle.write(assignment.skeleton)
    return path


def load_student(path: Path) -> ModuleType:
    """Import the student's module from its file, under a name of its own."""
    if not path.is_file():
        raise UsageError(f"{path}: no such file (write it with: clir assignment start NAME)")
    name = f"clir_student_{path.stem}_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 (the student's code: report it in one line)
        del sys.modules[name]
        line = exc.lineno if isinstance(exc, SyntaxError) else _line_in(exc, path)
        raise FormatError(path, line, f"cannot be imported: {_message(exc)}") from None
    return module


def grade(
    assignment: Assignment, module: ModuleType, source: str, collection: Path | None = None
) -> Grade:
    """Run every check of ``assignment`` on ``module``; none stops the others."""
    missing = [name for name in assignment.functions if not callable(getattr(module, name, None))]
    results = []
    for check in assignment.checks:
        started = time.perf_counter()
        if missing:
            earned, message = 0, f"defines no {', '.join(missing)}"
        else:
            earned, message = _run(check, module, source, collection)
        results.append(CheckResult(check.name, check.points, earned,
                                   time.perf_counter() - started, message))  # fmt: skip
    return Grade(assignment.name, source, tuple(results))


def _run(check: Check, module: ModuleType, source: str, collection: Path | None) -> tuple[int, str]:
    try:
        note = check.run(module, collection)
    except NotImplementedError:
        return 0, "not implemented yet"
    except AssertionError as exc:
        return 0, str(exc) or "failed"
    except Exception as exc:  # noqa: BLE001 (the student's code raised: say where)
        return 0, _where(exc, Path(source))
    return check.points, note or ""


def _line_in(exc: BaseException, path: Path) -> int | None:
    """The innermost line of ``path`` in the exception's traceback."""
    frames = traceback.extract_tb(exc.__traceback__)
    return next((frame.lineno for frame in reversed(frames)
                 if Path(frame.filename).resolve() == path.resolve()), None)  # fmt: skip


def _message(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _where(exc: BaseException, path: Path) -> str:
    """``Type: message (FILE line N)``, N the innermost line of ``path`` in the traceback."""
    line = _line_in(exc, path)
    return _message(exc) + (f" ({path.name} line {line})" if line else "")


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


def within_time(student: Callable[[], object], reference: Callable[[], object], *,
                factor: float, floor: float, what: str) -> None:  # fmt: skip
    """The timing ceiling: the student's best of three runs at most ``factor`` × the
    reference's best plus ``floor`` seconds, on this machine."""

    def best(action: Callable[[], object]) -> float:
        times = []
        for _ in range(3):
            started = time.perf_counter()
            action()
            times.append(time.perf_counter() - started)
        return min(times)

    reference_seconds = best(reference)
    ceiling = factor * reference_seconds + floor
    seconds = best(student)
    assert seconds <= ceiling, (
        f"{what} took {seconds:.3f} s; the ceiling is {ceiling:.3f} s "
        f"({factor:g} × the reference's {reference_seconds:.3f} s + {floor:g} s): vectorise"
    )


Run = Callable[[ModuleType, Path | None], str | None]


def checks(*items: tuple[str, int, Run]) -> tuple[Check, ...]:
    """``Check`` objects from ``(name, points, run)`` triples."""
    return tuple(Check(name, points, run) for name, points, run in items)
