"""Approximate dense search at 200,000 vectors: HNSW's recall and speed against exact search,
written to ``scale/HNSW.md``.

``clir bench scale`` grows a collection by repeating its documents, which suits BM25 (every
posting list grows) but not a vector index: the copies of a document have one vector, and a
graph over thousands of identical points measures the ties, not the search. Here the
collection grows with *other real documents* instead: ddtp-en-fr-hard (19,521 French package
descriptions, with its English topics and judgements) plus the paragraphs of the package
descriptions that Debian's lists hold in the other languages (English, German,
Italian, Japanese, Russian, Spanish, Chinese: 186,000 distinct paragraphs of five words or
more in bookworm's lists; not French, whose paragraphs are parts of the judged documents),
taken in the order of their sha256 until the collection has ``--docs`` documents. They are
distractors: unjudged, as in a TREC pool.

Then, all with the toolkit's own commands::

    clir index --collection POOL --index POOL-INDEX --dense use-m3 --hnsw M
    clir bench dense --index POOL-INDEX --topics TOPICS --documents 0 --hits 100 \\
        --ef-search EF            # for each EF of --ef-search

``clir bench dense`` times exact search (every vector) and the HNSW graph on the same query
vectors (query encoding excluded), one thread and all cores, and gives HNSW's recall@100
against exact search. Run from the repository root, with the DDTP lists fetched (``clir
collection build ddtp`` fetches them) and the base collection built::

    python scale/hnsw.py WORKDIR [--docs 200000] [--hnsw 32] [--hnsw-threads 2] \\
        [--ef-search 128 256 512]

The pool, its index (about 1 GB with the vectors and the graph) and the encodings (use-m3,
about 20 minutes for 200,000 short documents on 2 cores) are kept in WORKDIR and reused.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

from clir_toolkit.collection.ddtp.lists import LANGUAGES, default_lists_dir, find_lists
from clir_toolkit.collection.ddtp.queries import split_description
from clir_toolkit.collection.ddtp.records import Descriptions
from clir_toolkit.files import atomic_write
from clir_toolkit.formats import iter_corpus

OUTPUT = Path(__file__).with_name("HNSW.md")
SPLIT = "dev"
TOPICS = 1000
"""Topics searched: the first of the base collection's dev split (as ``clir bench scale``)."""


def paragraphs(description: str) -> list[str]:
    """The paragraphs of a package description's long text (its synopsis left out, as in
    the hard variant's documents), each on one line."""
    _, long_text = split_description(description)
    return [" ".join(block.split()) for block in long_text.split("\n\n") if block.strip()]


def distractors(lists: Path) -> dict[str, str]:
    """Every paragraph of every description in ``lists`` in every language but French (the
    base collection's), by its sha256."""
    found = Descriptions()
    by_language: dict[str, dict[str, str]] = {"en": {}}  # language → md5 → description
    seen_english: set[Path] = set()
    for code in LANGUAGES.values():
        if code == "fr":
            continue
        by_language[code] = {}
        for group in find_lists(lists, code):
            found.read_translation(group.translation, code, by_language[code])
            if group.english not in seen_english:
                seen_english.add(group.english)
                found.read_translation(group.english, "en", by_language["en"])
    texts: dict[str, str] = {}
    for description in (text for one in by_language.values() for text in one.values()):
        for paragraph in paragraphs(description):
            if len(paragraph.split()) >= 5:  # "This package contains:" is no document
                texts.setdefault(hashlib.sha256(paragraph.encode()).hexdigest(), paragraph)
    return texts


def build_pool(base: Path, pool: Path, documents: int) -> None:
    """``base`` with distractor paragraphs added until it holds ``documents`` documents."""
    if (pool / "manifest.json").is_file():
        return
    base_texts = [" ".join(doc.contents.split()) for doc in iter_corpus(base / "corpus.jsonl")]
    own = set(base_texts)
    texts = distractors(default_lists_dir())
    wanted = documents - len(base_texts)
    chosen = [key for key in sorted(texts) if texts[key] not in own][:wanted]
    if len(chosen) < wanted:
        sys.exit(f"the DDTP lists hold {len(chosen)} distinct paragraphs; ask for fewer --docs")
    pool.mkdir(parents=True, exist_ok=True)
    for path in base.iterdir():
        if path.name not in ("corpus.jsonl", "manifest.json") and path.is_file():
            shutil.copyfile(path, pool / path.name)
    with atomic_write(pool / "corpus.jsonl") as handle:
        shutil.copyfileobj((base / "corpus.jsonl").open(encoding="utf-8"), handle)
        for key in chosen:
            handle.write(json.dumps({"id": f"pool-{key[:20]}", "contents": texts[key]},
                                    ensure_ascii=False) + "\n")  # fmt: skip
    manifest = json.loads((base / "manifest.json").read_text(encoding="utf-8"))
    manifest["name"] = pool.name
    manifest["counts"]["documents"] = len(base_texts) + len(chosen)
    manifest["description"] += (
        f"; with {len(chosen)} distractor paragraphs of Debian's package descriptions in every "
        "language (unjudged), for measuring approximate dense search at size (scale/hnsw.py)"
    )
    with atomic_write(pool / "manifest.json") as handle:
        json.dump(manifest, handle, indent=1, ensure_ascii=False)


def clir(*args: str) -> str:
    """Run ``clir`` and return its standard output (its progress goes to the terminal)."""
    command = [sys.executable, "-m", "clir_toolkit", *args]
    print("$ clir " + " ".join(args), file=sys.stderr)
    return subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--base", type=Path, default=Path("data/ddtp-en-fr-hard"))
    parser.add_argument("--docs", type=int, default=200_000)
    parser.add_argument("--hnsw", type=int, default=32)
    parser.add_argument("--hnsw-threads", type=int, default=2)
    parser.add_argument("--ef-search", type=int, nargs="+", default=[128, 256, 512])
    args = parser.parse_args()
    started = time.perf_counter()
    pool = args.workdir / f"ddtp-fr-pool-{args.docs}"
    build_pool(args.base, pool, args.docs)
    index = args.workdir / f"index-{args.docs}"
    index_started = time.perf_counter()
    clir("index", "--collection", str(pool), "--index", str(index), "--dense", "use-m3",
         "--hnsw", str(args.hnsw), "--hnsw-threads", str(args.hnsw_threads))  # fmt: skip
    index_seconds = time.perf_counter() - index_started
    topics = args.workdir / f"topics.{SPLIT}.first{TOPICS}.tsv"
    lines = (pool / f"topics.{SPLIT}.tsv").read_text(encoding="utf-8").splitlines(True)
    topics.write_text("".join(lines[:TOPICS]), encoding="utf-8")
    tables = [
        clir("bench", "dense", "--index", str(index), "--topics", str(topics), "--documents",
             "0", "--hits", "100", "--ef-search", str(ef), "--repeat", "2")  # fmt: skip
        for ef in args.ef_search
    ]
    today = datetime.date.today().isoformat()
    minutes = (time.perf_counter() - started) / 60
    others = sorted((set(LANGUAGES.values()) | {"en"}) - {"fr"})  # those distractors() reads
    header = [
        "# Approximate dense search at size: HNSW against exact search",
        "",
        f"Generated by `python scale/hnsw.py WORKDIR --docs {args.docs} --hnsw {args.hnsw}` on "
        f"{today} ({minutes:.0f} min, {platform.machine()}, {platform.processor() or 'cpu'}): "
        f"ddtp-en-fr-hard with distractor paragraphs of Debian's package descriptions in "
        f"{len(others)} other languages ({', '.join(others)}), {args.docs:,} documents; use-m3's "
        f"vectors and an HNSW graph of M "
        f"{args.hnsw} (`clir index --dense use-m3 --hnsw {args.hnsw} --hnsw-threads "
        f"{args.hnsw_threads}`: {index_seconds / 60:.0f} min with the encoding, or none when "
        f"the index was there), the first {TOPICS} {SPLIT} topics, "
        "top 100. One table of `clir bench dense` for each `--ef-search`.",
        "",
    ]
    body = []
    for ef, table in zip(args.ef_search, tables, strict=True):
        body += [f"## --ef-search {ef}", "", table.strip(), ""]
    OUTPUT.write_text("\n".join(header + body), encoding="utf-8")
    print(f"wrote {OUTPUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
