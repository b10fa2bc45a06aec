"""The pages of one man root, one per unique page: symbolic links and ``.so`` stubs resolved.

A man root is a directory laid out as ``/usr/share/man`` is (``man1/ls.1.gz`` …), for one
language: ``/usr/share/man`` for English, ``/usr/share/man/fr`` for French. A page is often
installed under several names, its aliases (``getppid.2`` is a symbolic link to
``getpid.2``, or a ``.so`` stub naming it); :func:`scan_pages` reads every file and keeps
one document per real page, with the names it is installed under, so that the documents
of a collection are unique and a SEE ALSO reference to an alias finds its page
(:meth:`PageSet.lookup`). The docid of a page is the name and section of its real file
(:func:`page_key`: ``ls.1``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from clir_toolkit.collection.manpages.macros import read_man_page
from clir_toolkit.collection.manpages.page import ManPage, Reference

__all__ = ["PageSet", "page_key", "scan_pages"]


_PAGE_FILE = re.compile(r"^(?P<name>.+)\.(?P<section>[0-9n][^./]*)(?:\.gz)?$")


@dataclass
class PageSet:
    """The unique pages of one man root (``/usr/share/man/fr`` or ``/usr/share/man``).

    ``pages`` maps a docid (``getpid.2``) to the page and its file; ``aliases`` maps every
    name under which a page is installed (``getppid.2``, a symbolic link or a ``.so``
    stub) to its docid.
    """

    root: Path
    pages: dict[str, tuple[Path, ManPage]] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    files: int = 0
    links: int = 0
    stubs: int = 0
    unresolved: int = 0
    _cache: dict[Path, ManPage | None] = field(default_factory=dict, init=False, repr=False)

    def _read(self, path: Path) -> ManPage | None:
        if path not in self._cache:
            try:
                self._cache[path] = read_man_page(path)
            except (OSError, EOFError, ValueError):  # unreadable or corrupt .gz
                self._cache[path] = None
        return self._cache[path]

    def resolve(self, path: Path) -> tuple[Path, ManPage] | None:
        """Follow symbolic links and ``.so`` stubs from ``path`` to a page of this root."""
        root = self.root.resolve()
        for _ in range(8):  # a chain longer than that is a loop
            real = path.resolve()
            if not real.is_file() or real.parent.parent != root:
                return None
            if not real.parent.name.startswith("man") or not _PAGE_FILE.match(real.name):
                return None
            page = self._read(real)
            if page is None:
                return None
            if page.so_target is None:
                return real, page
            path = _so_path(self.root, real, page.so_target)
        return None

    def lookup(self, reference: Reference) -> str | None:
        """The docid of the page a ``name(section)`` reference points to, if installed."""
        return self.aliases.get(f"{reference.name}.{reference.section}")


def _so_path(root: Path, stub: Path, target: str) -> Path:
    """The file a ``.so`` request names: relative to the man root, else to the stub's folder."""
    for base in (root, stub.parent):
        for candidate in (base / target, base / f"{target}.gz"):
            if candidate.exists():
                return candidate
    return root / target


def page_key(path: Path) -> str:
    """``ls.1`` for ``.../man1/ls.1.gz``: the name and section a file is installed as."""
    name = path.name
    return name[: -len(".gz")] if name.endswith(".gz") else name


def scan_pages(root: Path, *, progress: bool = False) -> PageSet:
    """Read every page under ``root/man*/``, resolving links and ``.so`` stubs.

    Each file is resolved to the real page it shows; the docid of a page is the name and
    section of that real file (``getppid.2.gz -> getpid.2.gz`` gives ``getpid.2``).
    """
    from clir_toolkit.progress import progress_bar

    page_set = PageSet(root)
    candidates = sorted(
        path for path in root.glob("man*/*") if _PAGE_FILE.match(path.name) and path.parent.is_dir()
    )
    for path in progress_bar(candidates, desc=f"reading {root}", unit="page", show=progress):
        page_set.files += 1
        if path.is_symlink():
            page_set.links += 1
        resolved = page_set.resolve(path)
        if resolved is None:
            page_set.unresolved += 1
            continue
        real, page = resolved
        if real != path.resolve():  # a .so stub was followed
            page_set.stubs += 1
        docid = page_key(real)
        known = page_set.pages.get(docid)
        if known is None:
            page_set.pages[docid] = (real, page)
        elif known[0] != real:  # two real files with one name and section: keep the first
            page_set.unresolved += 1
            continue
        page_set.aliases.setdefault(page_key(path), docid)
    page_set._cache.clear()
    return page_set
