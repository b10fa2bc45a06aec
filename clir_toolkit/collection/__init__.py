"""The collection directory: the unit of exchange between the toolkit's stages.

A collection directory holds ``corpus.jsonl`` (the documents, which also serve as the
document store of the reranker), ``topics.{split}.tsv``, ``topics-human.{split}.tsv``,
``qrels.{split}.txt`` and ``manifest.json`` (languages, sources, counts, sha256 of every
file). The builders of real collections are one package per family beside this file
(``manpages/``, ``ddtp/``, ``irds/``), each written to the one contract of
:mod:`~clir_toolkit.collection.builder` and registered by a file of
:mod:`~clir_toolkit.collection.families`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clir_toolkit.errors import ClirError, FormatError, UsageError
from clir_toolkit.files import sha256_file
from clir_toolkit.formats import parse_json

CORPUS_NAMES = ("corpus.jsonl", "corpus.jsonl.gz", "corpus.trec", "corpus.sgml")
MANIFEST = "manifest.json"


#: The files of a split that :meth:`Collection.split_file` names.
SPLIT_KINDS = ("topics", "topics-human", "qrels")
_SPLIT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
# ISO 639 codes, with an optional variant: "fr", "zh-hant", "en-simple".
_LANGUAGE = re.compile(r"[A-Za-z]{2,3}(?:[_-][A-Za-z0-9]+)*")


#: What ``clir collection build`` refuses to replace: anything that is not a collection.
COLLECTION_KIND = "a collection directory"

#: The names of the files a builder writes (older builds too): corpus, topics, qrels.
_BUILT_FILE = re.compile(r"corpus\.[a-z.]+|topics(-human)?\..+\.tsv|qrels\..+\.txt")

#: The toolkit's caches of a collection (rerank documents, an assignment's index): made
#: again from the collection, so a rebuild may drop them.
CACHE_DIR = ".cache"
CORPUS_HASH = "corpus-sha256.json"
"""The corpus's sha256 kept under :data:`CACHE_DIR` with the size and time it was read at."""


def foreign_entry(directory: Path) -> Path | None:
    """The first entry (in name order) of an earlier collection directory that no builder
    wrote, or None: a collection holds its manifest, the files the manifest lists (or that
    builders name so: corpus, topics and qrels files) and the toolkit's :data:`CACHE_DIR`."""
    try:
        listed = set(json.loads((directory / MANIFEST).read_text(encoding="utf-8"))["files"])
    except (OSError, ValueError, KeyError, TypeError):
        listed = set()  # a damaged manifest: only the usual names are the builders'
    for entry in sorted(directory.iterdir()):
        name = entry.name
        if entry.is_dir() and not entry.is_symlink():
            if name != CACHE_DIR:
                return entry
        elif entry.is_symlink() or not (
            name == MANIFEST or name in listed or _BUILT_FILE.fullmatch(name)
        ):
            return entry
    return None


@dataclass(frozen=True)
class Collection:
    """Where a collection's files are, and what its manifest says."""

    root: Path
    corpus: Path
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def doc_lang(self) -> str | None:
        return self.manifest.get("doc_lang")

    @property
    def query_lang(self) -> str | None:
        return self.manifest.get("query_lang")

    def fingerprint(self) -> str:
        """What the collection's products (indexes, vectors, runs, models) are made from:
        the sha256 of its corpus's bytes, with the manifest's when there is one. An edited
        document changes it, so that nothing made from the old text is reused.

        The corpus's hash is kept in ``.cache/corpus-sha256.json`` beside the corpus's size
        and modification time, and computed again only when one of them changed: a
        collection of gigabytes is read once, not at every command."""
        manifest = self.root / MANIFEST
        target = self.corpus
        try:
            corpus = _corpus_sha256(self.corpus, self.root / CACHE_DIR / CORPUS_HASH)
            if not manifest.is_file():
                return corpus
            target = manifest
            return hashlib.sha256(f"{sha256_file(manifest)} {corpus}".encode()).hexdigest()
        except OSError as exc:
            raise FormatError(target, None, f"cannot read the file: {exc.strerror}") from None

    def split_file(self, kind: str, split: str) -> Path:
        """``topics``/``topics-human``/``qrels`` file of a split (``train``, ``dev``, ``test``)."""
        if kind not in SPLIT_KINDS:
            raise UsageError(f"unknown split file kind {kind!r} (one of {', '.join(SPLIT_KINDS)})")
        if not _SPLIT_NAME.fullmatch(split):
            raise UsageError(
                f"split name {split!r} is not a name such as train, dev or test "
                "(letters, digits, '.', '_' and '-')"
            )
        suffix = "txt" if kind == "qrels" else "tsv"
        return self.root / f"{kind}.{split}.{suffix}"


def _corpus_sha256(corpus: Path, kept: Path) -> str:
    """sha256 of ``corpus``'s bytes, read from ``kept`` while the corpus's size and
    modification time are those it records; else computed and kept there (when the
    collection is writable: a read-only one is hashed at each call)."""
    from clir_toolkit.files import atomic_write

    stat = corpus.stat()
    stamp = {"name": corpus.name, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    try:
        record = json.loads(kept.read_text(encoding="utf-8"))
        if isinstance(record, dict) and {k: record.get(k) for k in stamp} == stamp:
            sha256 = record.get("sha256")
            if isinstance(sha256, str) and len(sha256) == 64:
                return sha256
    except (OSError, ValueError):
        pass
    sha256 = sha256_file(corpus)
    with contextlib.suppress(OSError, ClirError):
        kept.parent.mkdir(exist_ok=True)
        with atomic_write(kept, own=True) as handle:
            json.dump({**stamp, "sha256": sha256}, handle)
    return sha256


def read_manifest(path: Path) -> dict[str, Any]:
    """The parsed ``manifest.json``, with a one-line error naming it if it is broken.

    The manifest must be a JSON object (checked by :func:`clir_toolkit.formats.parse_json`);
    the fields the toolkit reads must have their type: ``doc_lang`` and ``query_lang``
    language codes, ``name`` and ``description`` strings, ``splits`` a list of split names.
    Other fields are the builder's record and are left as they are.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FormatError(path, None, f"cannot read the file: {exc.strerror}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FormatError(path, line, "invalid UTF-8", "save the file as UTF-8") from None
    manifest = parse_json(path, None, text)
    if not isinstance(manifest, dict):
        raise FormatError(path, 1, "the manifest must be a JSON object", '{"doc_lang": "fr", ...}')
    for key in ("doc_lang", "query_lang"):
        value = manifest.get(key)
        if key in manifest and not (isinstance(value, str) and _LANGUAGE.fullmatch(value)):
            raise FormatError(
                path,
                None,
                f"{key!r} must be a language code, found {json.dumps(value)[:40]}",
                'an ISO 639 code such as "fr"',
            )
    for key in ("name", "description"):
        if key in manifest and not isinstance(manifest[key], str):
            raise FormatError(
                path, None, f"{key!r} must be a string, found {json.dumps(manifest[key])[:40]}"
            )
    splits = manifest.get("splits", [])
    if not isinstance(splits, list) or not all(
        isinstance(split, str) and _SPLIT_NAME.fullmatch(split) for split in splits
    ):
        raise FormatError(
            path,
            None,
            f"'splits' must be a list of split names, found {json.dumps(splits)[:40]}",
            '["train", "dev", "test"]',
        )
    return manifest


def open_collection(path: str | Path) -> Collection:
    """A collection directory, or a bare corpus file treated as a collection of one file."""
    root = Path(path)
    if root.is_file():
        return Collection(root=root.parent, corpus=root, manifest={})
    if not root.is_dir():
        raise ClirError(f"{root}: no such collection directory or corpus file")
    corpus = next((root / name for name in CORPUS_NAMES if (root / name).is_file()), None)
    if corpus is None:
        names = ", ".join(CORPUS_NAMES)
        raise ClirError(f"{root}: no corpus in this collection directory (expected one of {names})")
    manifest_path = root / MANIFEST
    manifest = read_manifest(manifest_path) if manifest_path.is_file() else {}
    return Collection(root=root, corpus=corpus, manifest=manifest)
