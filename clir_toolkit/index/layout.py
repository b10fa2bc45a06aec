"""The directory of an index: where its shards are (:func:`shard_dirs`), what may be in it
(:func:`foreign_entry`, :func:`check_only_ours`: a rebuild replaces it whole, so a user's
file put there is refused rather than lost), and Lucene's view of it as one index
(:func:`open_reader`, :func:`count_documents`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from clir_toolkit import files, jvm
from clir_toolkit.index.sidecar import SIDECAR, IndexInfo, read_index_info
from clir_toolkit.vectors import TEMPORARY_FILE, VECTORS_FILE


def shard_dirs(root: Path, shards: int) -> list[Path]:
    """The directories of an index's shards: ``root`` itself when there is one, else
    ``root/shard-00``, ``root/shard-01``, …"""
    if shards == 1:
        return [root]
    width = max(2, len(str(shards - 1)))
    return [root / f"shard-{i:0{width}d}" for i in range(shards)]


def open_reader(index: str | Path, info: IndexInfo | None = None) -> Any:
    """One Lucene ``IndexReader`` over the whole index, sharded or not.

    The shards of a sharded index are opened under one ``MultiReader``: Lucene's
    ``IndexSearcher`` then takes every term statistic (document frequency) and collection
    statistic (document count, total term frequency, hence BM25's average length) over all
    of them, exactly as over the segments of one index, so a document scores the same as in
    the unsharded index, and ties are cut by docid as there (:class:`~clir_toolkit.search.
    Searcher`'s sort). What Elasticsearch calls ``dfs_query_then_fetch`` is built in.
    """
    info = info or read_index_info(index)
    if info.shards == 1:
        return jvm.open_index_reader(index)
    readers = [jvm.open_index_reader(path) for path in shard_dirs(Path(index), info.shards)]
    shards = [jvm.cast("org.apache.lucene.index.IndexReader", reader) for reader in readers]
    multi = jvm.java_class("org.apache.lucene.index.MultiReader")
    return multi(shards, True)  # closing the MultiReader closes the shards


def count_documents(index_dir: Path, shards: int = 1) -> int:
    """Number of documents Lucene sees in an index (over all its shards)."""
    total = 0
    for path in shard_dirs(index_dir, shards):
        reader = jvm.open_index_reader(path)
        try:
            total += int(reader.numDocs())
        finally:
            reader.close()
    return total


#: What ``clir index`` refuses to replace: anything that is not an index it built.
INDEX_KIND = "an index built by 'clir index'"

#: The names of the files Lucene writes in an index (its ``IndexFileNames``): segment files
#: ``_0.cfs``, ``_0_Lucene99_0.doc``, ..., the commit points ``segments_N`` (and
#: ``pending_segments_N`` while one is written) and ``write.lock``.
_LUCENE_FILE = re.compile(r"_[a-z0-9]+(_.*)?\..+|(pending_)?segments_[a-z0-9]+|write\.lock")
_SHARD_DIR = re.compile(r"shard-[0-9]{2,}")


def foreign_entry(index: Path) -> Path | None:
    """The first entry (in name order) of an index directory that ``clir index`` did not
    write, or None: an index holds only its sidecar, Lucene's files, and for a sharded index
    ``shard-NN/`` directories of Lucene's files (never a symbolic link)."""

    def ours(entry: Path) -> bool:
        return (
            entry.is_file() and not entry.is_symlink() and bool(_LUCENE_FILE.fullmatch(entry.name))
        )

    for entry in sorted(index.iterdir()):
        if entry.name == SIDECAR and entry.is_file() and not entry.is_symlink():
            continue
        if (VECTORS_FILE.fullmatch(entry.name) or TEMPORARY_FILE.fullmatch(entry.name)) and (
            entry.is_file() and not entry.is_symlink()
        ):
            continue
        if _SHARD_DIR.fullmatch(entry.name) and entry.is_dir() and not entry.is_symlink():
            inside = next((item for item in sorted(entry.iterdir()) if not ours(item)), None)
            if inside is not None:
                return inside
            continue
        if not ours(entry):
            return entry
    return None


def check_only_ours(index_path: str | Path) -> None:
    """Refuse, in one line and touching nothing, to replace an index directory that holds
    anything besides what ``clir index`` wrote (:func:`foreign_entry`): the replacement
    removes the old directory whole, and a user's file put there would be lost with it."""
    files.check_only_ours(index_path, SIDECAR, INDEX_KIND, foreign_entry)
