"""Reading a build plan's datasets through ir_datasets, offline, with one-line errors.

**No download.** ir_datasets downloads missing files when they are first read, but the
toolkit has no network at run time. While a collection is built, ir_datasets' network
downloaders are switched off, so a file missing from its cache (``$IR_DATASETS_HOME``,
default ``~/.ir_datasets``) is one error line naming the file, not a download attempt, and
never a hang. Fetch the dataset on a machine with a network (``download=True``, the
``--download`` option) and copy the cache directory here. ir_datasets reads
``IR_DATASETS_HOME`` when it is imported: set it before the program starts.

ir_datasets is imported only when a build starts (:func:`import_ir_datasets`), so that
importing the toolkit does not import it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from clir_toolkit.collection.irds.datasets import IrdsPlan
from clir_toolkit.errors import ClirError, ResourceError

__all__ = ["IrdsReader", "downloads_refused", "import_ir_datasets", "quiet_ir_datasets"]


def import_ir_datasets() -> ModuleType:
    """The ir_datasets module, imported now; a ResourceError when it cannot be."""
    try:
        import ir_datasets
    except ImportError:
        raise ResourceError(
            "ir_datasets is not installed (install it with: pip install 'ir_datasets>=0.5')"
        ) from None
    except OSError as exc:  # it creates its cache directory when imported
        raise ResourceError(f"ir_datasets cannot create its cache directory: {exc}") from None
    return ir_datasets


class _DownloadRefused(Exception):
    """Raised in place of a download by ir_datasets while downloads are switched off."""

    def __init__(self, url: str) -> None:
        super().__init__(f"download of {url} refused")
        self.url = url


@contextlib.contextmanager
def downloads_refused(irds: ModuleType) -> Iterator[None]:
    """Make ir_datasets' network downloaders raise :class:`_DownloadRefused`.

    ir_datasets fetches a file that is not in its cache through one of these classes (in
    ``ir_datasets.util.download``); a file already in the cache is read without them and
    without any hash check. Replacing their ``stream`` method for the duration of a build
    guarantees that nothing touches the network; copies from a local file (a download that
    the user placed in ``$IR_DATASETS_HOME/downloads``) still work.
    """
    module = irds.util.download

    def refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise _DownloadRefused(str(getattr(self, "url", None) or getattr(self, "uri", "?")))

    patched: list[tuple[type, str, Any]] = []
    for class_name in ("RequestsDownload", "GoogleDriveDownload", "GoogleCloudBucketStream"):
        cls = getattr(module, class_name, None)
        for method in ("stream", "__iter__"):
            if cls is not None and method in vars(cls):
                patched.append((cls, method, vars(cls)[method]))
                setattr(cls, method, refuse)
    try:
        yield
    finally:
        for cls, method, original in patched:
            setattr(cls, method, original)


class _BelowError(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR


@contextlib.contextmanager
def quiet_ir_datasets() -> Iterator[None]:
    """Hide ir_datasets' info and warning lines (download notices) for the duration.

    A refused download would otherwise print ir_datasets' "Download failed" warning before
    our one-line error; the build shows its own progress bar.
    """
    logger = logging.getLogger("ir_datasets")
    quiet = _BelowError()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """The exception, its causes and contexts, and exceptions carried in its arguments.

    ir_datasets reports a failure of several download sources as
    ``RuntimeError('All download sources failed', [(source, exception), ...])``.
    """
    stack: list[Any] = [exc]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        if isinstance(item, list | tuple):
            stack.extend(item)
            continue
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        stack.extend(item.args)
        stack.extend(e for e in (item.__cause__, item.__context__) if e is not None)


class IrdsReader:
    """Reads one plan's datasets through ir_datasets, turning its failures into ClirErrors."""

    def __init__(self, irds: ModuleType, plan: IrdsPlan) -> None:
        self.irds = irds
        self.plan = plan
        self.home = Path(irds.util.home_path())

    def load(self, dataset_id: str) -> Any:
        try:
            return self.irds.load(dataset_id)
        except KeyError:
            raise ResourceError(
                f"ir_datasets {self.irds.__version__} has no dataset {dataset_id!r} "
                "(upgrade it: pip install -U ir_datasets)"
            ) from None

    def records(self, dataset_id: str, what: str) -> Iterator[Any]:
        """Yield ``what`` ("docs", "queries" or "qrels") of a dataset, reporting failures."""
        dataset = self.load(dataset_id)
        if not getattr(dataset, f"has_{what}")():
            raise ResourceError(f"ir_datasets' {dataset_id} has no {what}")
        iterator: Iterator[Any] | None = None
        while True:
            try:
                if iterator is None:
                    iterator = iter(getattr(dataset, f"{what}_iter")())
                record = next(iterator)
            except StopIteration:
                return
            except Exception as exc:
                raise self._error(dataset_id, what, exc) from exc
            yield record

    def _error(self, dataset_id: str, what: str, exc: Exception) -> ClirError:
        things = _WHAT[what]
        cache = " and ".join(str(self.home / name) for name in self.plan.cache_dirs)
        elsewhere = (
            "or point $IR_DATASETS_HOME (ir_datasets' cache, default ~/.ir_datasets) at a copy "
            "that has it"
        )
        for cause in _causes(exc):
            if isinstance(cause, _DownloadRefused):
                return ResourceError(
                    f"{dataset_id}: the {things} are not in ir_datasets' cache ({cache}) and "
                    f"the toolkit does not download at run time (ir_datasets would fetch "
                    f"{cause.url}): run 'clir collection build irds --dataset {self.plan.dataset} "
                    f"--download' (or ir_datasets itself) on a machine with a network and copy "
                    f"{cache} here, {elsewhere}"
                )
        for cause in _causes(exc):
            if isinstance(cause, FileNotFoundError):
                missing = cause.filename or (cause.args[0] if cause.args else "?")
                return ResourceError(
                    f"{dataset_id}: the {things} are not in ir_datasets' cache: {missing} is "
                    f"missing ({self.plan.how_to_get}); put it there, {elsewhere}"
                )
        problem = f"{type(exc).__name__}: {exc}".replace("\n", " ")
        for cause in _causes(exc):
            if type(cause).__module__.startswith(("requests.", "urllib3.")):
                return ResourceError(
                    f"{dataset_id}: ir_datasets could not download the {things} ({problem}): "
                    f"check the network, or fetch them on another machine and copy {cache} here"
                )
        return ClirError(
            f"{dataset_id}: ir_datasets failed to read the {things} in {cache} ({problem}); "
            "the cached files may be incomplete or corrupt: fetch them again"
        )


_WHAT = {"docs": "documents", "queries": "topics", "qrels": "judgements"}
