"""The collection directory: the unit of exchange between the toolkit's stages.

A collection directory holds ``corpus.jsonl`` (the documents, which also serve as the
document store of the reranker), ``topics.{split}.tsv``, ``topics-human.{split}.tsv``,
``qrels.{split}.txt`` and ``manifest.json`` (languages, sources, counts, sha256 of every
file). Builders of real collections live beside this file (``manpages.py``, ``irds.py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clir_toolkit.errors import ClirError, FormatError
from clir_toolkit.files import sha256_file

CORPUS_NAMES = ("corpus.jsonl", "corpus.jsonl.gz", "corpus.trec", "corpus.sgml")
MANIFEST = "manifest.json"


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
        """sha256 of the manifest when there is one, else of the corpus file."""
        manifest = self.root / MANIFEST
        return sha256_file(manifest if manifest.is_file() else self.corpus)

    def split_file(self, kind: str, split: str) -> Path:
        """``topics``/``topics-human``/``qrels`` file of a split (``train``, ``dev``, ``test``)."""
        suffix = "txt" if kind == "qrels" else "tsv"
        return self.root / f"{kind}.{split}.{suffix}"


def read_manifest(path: Path) -> dict[str, Any]:
    """The parsed ``manifest.json`` (an object), with a one-line error if it is broken."""
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise FormatError(path, exc.lineno, f"invalid JSON: {exc.msg}") from exc
    except UnicodeDecodeError as exc:
        raise FormatError(path, None, "not valid UTF-8") from exc
    if not isinstance(manifest, dict):
        raise FormatError(path, 1, "the manifest must be a JSON object")
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
