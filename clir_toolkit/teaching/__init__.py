"""The teaching kit: assignments on the toolkit's own methods (``clir assignment``).

Each assignment is a real piece of the toolkit that a student re-implements behind the
interface the toolkit itself uses, graded against the toolkit's own implementation (see
:mod:`clir_toolkit.teaching.grading` and docs/teaching.md). :data:`ASSIGNMENTS` is the one
table of their names; each module defines ``ASSIGNMENT``, imported when it is named.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from clir_toolkit.errors import UsageError

if TYPE_CHECKING:
    from clir_toolkit.teaching.grading import Assignment

ASSIGNMENTS: dict[str, str] = {
    "pirkola": "clir_toolkit.teaching.pirkola",
    "rocchio": "clir_toolkit.teaching.rocchio",
    "kernel-pooling": "clir_toolkit.teaching.kernel_pooling",
    "sosl": "clir_toolkit.teaching.sosl",
    "smooth-cosine": "clir_toolkit.teaching.smooth_cosine",
}
"""Assignment name → the module that defines it, in the order a course would set them."""


def assignment(name: str) -> Assignment:
    """The assignment called ``name``."""
    if name not in ASSIGNMENTS:
        raise UsageError(f"no assignment {name!r} (choose from: {', '.join(ASSIGNMENTS)})")
    return importlib.import_module(ASSIGNMENTS[name]).ASSIGNMENT
