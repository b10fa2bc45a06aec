"""``clir pipeline search`` as one PyTerrier transformer (:class:`ClirPipeline`).

In: ``qid`` and the English query (``query_0`` when present, otherwise ``query``). Out: one
row per retrieved document, ``docno``, ``score`` and ``rank`` (from 0), ranked as ``clir
pipeline search`` ranks them: the transformer writes the topics to a temporary directory
and runs :func:`clir_toolkit.pipeline.search_pipeline` on them, so that its run is the
command line's, stage for stage.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import clir_toolkit as ct
from clir_toolkit.integrations.pyterrier_frames import (
    column_ids,
    column_texts,
    pt,
    require_columns,
    results_frame,
)
from clir_toolkit.pipeline import read_pipeline, search_pipeline


class ClirPipeline(pt.Transformer):
    """The pipeline of a directory of ``clir pipeline train`` over ``index`` (with its
    encoder's vectors); documents read from ``collection`` (default: the index's)."""

    def __init__(
        self, models: str | Path, index: str | Path, collection: str | Path | None = None
    ) -> None:
        self.models, self.index = Path(models), Path(index)
        self.collection = Path(collection) if collection is not None else None
        self.pipeline = read_pipeline(self.models)  # refused here, before any query

    def __repr__(self) -> str:
        return f"ClirPipeline({self.models}, {self.index.name})"

    def transform(self, inp: Any) -> Any:
        require_columns(inp, ("qid", "query"), "ClirPipeline")
        column = "query_0" if "query_0" in inp.columns else "query"
        if "docno" in inp.columns:  # results of an earlier stage: search their queries again
            inp = inp[[*pt.model.query_columns(inp)]].drop_duplicates("qid")
        qids = column_ids(inp, "qid")
        topics = [ct.Topic(qid, text)
                  for qid, text in zip(qids, column_texts(inp, column), strict=True)]  # fmt: skip
        with tempfile.TemporaryDirectory(prefix="clir-pipeline-") as work:
            topics_file, run = Path(work) / "topics.tsv", Path(work) / "run.trec"
            ct.write_topics_tsv(topics_file, topics)
            search_pipeline(self.models, self.index, topics_file, run,
                            collection=self.collection, quiet=True)  # fmt: skip
            rows = ct.read_run(run)
        by_qid: dict[str, list[ct.RunRow]] = {qid: [] for qid in qids}
        for row in rows:
            by_qid[row.qid].append(row)
        return results_frame(inp, (sorted(by_qid[qid], key=lambda row: row.rank) for qid in qids))
