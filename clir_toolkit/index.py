"""Building a Lucene index from a collection (Anserini's ``IndexCollection``).

The index stores, for every document, its id, term positions and a document vector (the
term-frequency vector Rocchio and RM3 feedback read back), but **not** its raw text by
default: Anserini's searcher loads every hit's stored fields, and with raw text stored a
batch of 1,053 queries ran the Java heap out of memory here (see RESOURCES.md). The
collection's ``corpus.jsonl`` remains the document store; ``store_raw=True`` keeps raw
text in the index for users of pyserini's ``doc()``.

Steps:

1. Stream the corpus once, validating it (:func:`clir_toolkit.formats.iter_corpus`), and
   write a normalised ``{"id", "contents"}`` copy into a scratch directory. Languages
   that Lucene cannot analyse (Chinese with jieba, Swahili, Tagalog, ...) are tokenised
   here, in Python (:mod:`clir_toolkit.analysis`).
2. Run ``IndexCollection`` on that directory, multi-threaded, into a temporary directory.
3. Write the sidecar ``clir-index.json`` (language, analyzer, collection fingerprint,
   document count) and move the index into place: an interrupted build leaves no index.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from clir_toolkit import __version__, jvm
from clir_toolkit.analysis import AnalyzerSpec, analyzer_for, pretokenize
from clir_toolkit.collection import Collection, open_collection
from clir_toolkit.errors import ClirError, FormatError, ResourceError
from clir_toolkit.files import atomic_directory, atomic_write
from clir_toolkit.formats import iter_corpus

SIDECAR = "clir-index.json"
SIDECAR_FORMAT = 1


@dataclass(frozen=True)
class IndexInfo:
    """What ``clir-index.json`` records about an index."""

    language: str
    analyzer_kind: str
    analyzer_name: str
    documents: int
    collection: str
    collection_sha256: str
    store_raw: bool
    created_by: str
    seconds: float
    format: int = SIDECAR_FORMAT

    @property
    def analyzer(self) -> AnalyzerSpec:
        kind = self.analyzer_kind
        if kind not in ("lucene", "jieba", "simple"):
            raise ClirError(f"unknown analyzer kind '{kind}' in the index sidecar")
        return AnalyzerSpec(self.language, kind, self.analyzer_name)  # type: ignore[arg-type]


def read_index_info(index: str | Path) -> IndexInfo:
    """The sidecar of an index built by ``clir index``, with a clear error otherwise."""
    index = Path(index)
    sidecar = index / SIDECAR
    if not sidecar.is_file():
        if not index.is_dir():
            raise ClirError(f"{index}: no such index (build one with: clir index ...)")
        raise ClirError(
            f"{index}: no {SIDECAR} sidecar; this index was not built by 'clir index' "
            "(rebuild it with: clir index --collection DIR --index IDX)"
        )
    try:
        values = json.loads(sidecar.read_text(encoding="utf-8"))
        return IndexInfo(**values)
    except (json.JSONDecodeError, TypeError) as exc:
        raise FormatError(sidecar, None, f"unreadable index sidecar ({exc})") from exc


def write_normalised_corpus(collection: Collection, spec: AnalyzerSpec, out_dir: Path) -> int:
    """Validate the corpus and write the ``{"id", "contents"}`` JSONL that Lucene indexes."""
    from tqdm import tqdm

    count = 0
    with open(out_dir / "docs.jsonl", "w", encoding="utf-8") as out:
        for doc in tqdm(
            iter_corpus(collection.corpus),
            desc="reading corpus",
            unit=" docs",
            disable=None,
            leave=False,
        ):
            contents = pretokenize(spec, doc.contents) if spec.pretokenized else doc.contents
            out.write(json.dumps({"id": doc.id, "contents": contents}, ensure_ascii=False))
            out.write("\n")
            count += 1
    if count == 0:
        raise FormatError(collection.corpus, None, "the corpus holds no documents")
    return count


def indexing_arguments(
    spec: AnalyzerSpec, input_dir: Path, index_dir: Path, threads: int, store_raw: bool
) -> list[str]:
    """Command-line arguments of Anserini's ``IndexCollection`` for this language."""
    args = [
        "-collection",
        "JsonCollection",
        "-generator",
        "DefaultLuceneDocumentGenerator",
        "-input",
        str(input_dir),
        "-index",
        str(index_dir),
        "-threads",
        str(threads),
        "-storePositions",
        "-storeDocvectors",
    ]
    if store_raw:
        args.append("-storeRaw")
    if spec.pretokenized:
        args.append("-pretokenized")
    elif spec.language != "en":  # English: Anserini's default analyzer
        args += ["-language", spec.language]
    return args


def count_documents(index_dir: Path) -> int:
    """Number of documents Lucene sees in an index."""
    directory = jvm.java_class("org.apache.lucene.store.FSDirectory").open(
        jvm.java_class("java.io.File")(str(index_dir)).toPath()
    )
    reader = jvm.java_class("org.apache.lucene.index.DirectoryReader").open(directory)
    try:
        return int(reader.numDocs())
    finally:
        reader.close()


def build_index(
    collection_path: str | Path,
    index_path: str | Path,
    *,
    language: str | None = None,
    threads: int | None = None,
    store_raw: bool = False,
    verbose: bool = True,
) -> IndexInfo:
    """Index a collection directory (or a bare corpus file) into ``index_path``.

    The document language comes from the collection's manifest (``doc_lang``) unless
    ``language`` is given; a bare corpus file needs ``language``.
    """
    collection = open_collection(collection_path)
    lang = language or collection.doc_lang
    if not lang:
        raise ClirError(
            f"{collection.corpus}: the document language is unknown "
            "(pass --language, e.g. --language fr, or add doc_lang to manifest.json)"
        )
    spec = analyzer_for(lang)
    threads = threads or os.cpu_count() or 1
    started = time.perf_counter()
    with (
        tempfile.TemporaryDirectory(prefix="clir-corpus-") as scratch,
        atomic_directory(index_path) as index_dir,
    ):
        documents = write_normalised_corpus(collection, spec, Path(scratch))
        jvm.set_log_level("INFO" if verbose else "WARN")
        try:
            index_collection = jvm.java_class("io.anserini.index.IndexCollection")
            index_collection.main(
                indexing_arguments(spec, Path(scratch), index_dir, threads, store_raw)
            )
        except Exception as exc:
            raise ResourceError(f"Lucene indexing failed: {str(exc).splitlines()[0]}") from exc
        finally:
            jvm.set_log_level("WARN")
        indexed = count_documents(index_dir)
        if indexed != documents:
            raise ResourceError(
                f"Lucene indexed {indexed} of {documents} documents from {collection.corpus}; "
                "see the messages above"
            )
        info = IndexInfo(
            language=spec.language,
            analyzer_kind=spec.kind,
            analyzer_name=spec.name,
            documents=documents,
            collection=str(Path(collection_path).resolve()),
            collection_sha256=collection.fingerprint(),
            store_raw=store_raw,
            created_by=f"clir_toolkit {__version__} (Anserini 1.7.1 via pyserini 1.6.0)",
            seconds=round(time.perf_counter() - started, 2),
        )
        with atomic_write(index_dir / SIDECAR) as handle:
            json.dump(asdict(info), handle, indent=2, ensure_ascii=False)
            handle.write("\n")
    return info
