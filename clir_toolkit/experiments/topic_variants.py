"""Variants of the queries a word-level reranker is trained and tested on: the thesis'
experiments on its training data (Q. Liu, *A Neural Approach to Cross-Lingual Information
Retrieval*, §6.3).

Three ``[rerank]`` keys of a rerank recipe change the topics files the model reads, never
the first stage (every row still reranks the same initial ranking):

* ``query_case`` (§6.3.1, Table 6.5): ``"lower"`` lower-cases every English query word
  ("all to lowercase"); ``"first-lower"`` lower-cases the first word of a query only when
  its second word is in lower case, so that a name of several capitalised words keeps its
  case ("conditional first word to lowercase"; a one-word query is left as it is). Training
  and testing queries are processed the same way, as in the thesis: the train, dev and test
  topics all change.
* ``train_max_relevant`` (§6.3.2, Tables 6.6–6.9): leave out the training queries with more
  than this many relevant documents. The thesis calls a query *ambiguous* when its
  document list (the documents clicked for it) is long, and removes those above 100, 200 or
  1,000; here a query's document list is its judged-relevant documents.
  ``train_drop_at_random = true`` is the thesis' control group: as many training queries as
  that threshold would remove, removed at random instead (seeded by the recipe's ``seed``).
* ``train_queries`` (§6.3.3, Table 6.10): the first N training queries only (the fine-tuned
  encoder takes this key itself; for a word-level model the runner cuts the topics file).

Each variant is written once under ``models/<collection>/`` beside the model it trains
(or under ``runs/`` for the queries a reranker is tested with) and reused while fresh
(:mod:`clir_toolkit.freshness`: same source file, same options, same code).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.freshness import digest, mark_fresh

if TYPE_CHECKING:
    from clir_toolkit.experiments.context import RunContext
    from clir_toolkit.formats import Topic

QUERY_CASES = ("lower", "first-lower")
"""The values of ``query_case``: every word lower-cased, or the first word when the second is."""

VARIANT_CODE = ("clir_toolkit.experiments.topic_variants",)
"""The code a variant file depends on (:func:`clir_toolkit.freshness.code_fingerprint`)."""


@dataclass(frozen=True)
class TopicVariant:
    """What a recipe changes in its topics; the default changes nothing."""

    query_case: str | None = None
    max_relevant: int | None = None
    drop_at_random: bool = False
    first: int | None = None
    seed: int = 42

    def changes(self, split: str) -> bool:
        """Whether ``split``'s topics change (the selections touch the train split only)."""
        selects = self.max_relevant is not None or self.first is not None
        return self.query_case is not None or (split == "train" and selects)


def variant_of(table: Mapping[str, Any], word_level: bool) -> TopicVariant:
    """The variant a recipe's ``[rerank]`` table asks for; ``train_queries`` is the runner's
    only for a word-level model (a fine-tuned encoder selects its queries itself)."""
    return TopicVariant(
        query_case=table.get("query_case"),
        max_relevant=table.get("train_max_relevant"),
        drop_at_random=bool(table.get("train_drop_at_random", False)),
        first=table.get("train_queries") if word_level else None,
        seed=int(table.get("seed", 42)),
    )


def lower_case(query: str, how: str) -> str:
    """``query`` with ``how`` of :data:`QUERY_CASES` applied (thesis §6.3.1).

    >>> lower_case("Hint the processor", "first-lower")
    'hint the processor'
    >>> lower_case("Hong Kong Jockey Club", "first-lower")
    'Hong Kong Jockey Club'
    >>> lower_case("Hint the X server", "lower")
    'hint the x server'
    """
    if how == "lower":
        return query.lower()
    if how != "first-lower":
        raise ValueError(f"unknown query case {how!r} (known: {', '.join(QUERY_CASES)})")
    words = query.split(" ")
    if len(words) > 1 and words[1] == words[1].lower():
        words[0] = words[0].lower()
    return " ".join(words)


def relevant_counts(qrels: Path) -> dict[str, int]:
    """Query id → the number of its documents judged relevant (grade above 0)."""
    from clir_toolkit.formats import read_qrels

    counts: dict[str, int] = {}
    for judgement in read_qrels(qrels):
        if judgement.relevance > 0:
            counts[judgement.qid] = counts.get(judgement.qid, 0) + 1
    return counts


def selected(topics: Sequence[Topic], qrels: Path, variant: TopicVariant) -> list[Topic]:
    """The training topics ``variant`` keeps, in their order.

    With ``max_relevant``, the queries with more relevant documents are left out, or (with
    ``drop_at_random``) as many queries chosen at random; then ``first`` keeps the first N.
    """
    kept = list(topics)
    if variant.max_relevant is not None:
        counts = relevant_counts(qrels)
        ambiguous = {t.qid for t in kept if counts.get(t.qid, 0) > variant.max_relevant}
        if variant.drop_at_random:
            order = sorted(t.qid for t in kept)
            ambiguous = set(random.Random(variant.seed).sample(order, len(ambiguous)))
        kept = [t for t in kept if t.qid not in ambiguous]
    if variant.first is not None:
        kept = kept[: variant.first]
    return kept


def variant_topics(
    source: Path, split: str, variant: TopicVariant, output: Path, context: RunContext,
    qrels: Path | None = None,
) -> Path:  # fmt: skip
    """``source`` itself when ``variant`` leaves ``split`` alone, else the variant written to
    ``output`` (made again only when ``source``, ``qrels``, the variant or the code change).
    """
    import dataclasses

    from clir_toolkit.files import sha256_file
    from clir_toolkit.formats import Topic, read_topics, write_topics_tsv

    if not variant.changes(split):
        return source
    files = {"topics": sha256_file(source)}
    if split == "train" and qrels is not None:
        files["qrels"] = sha256_file(qrels)
    key = digest({"variant": dataclasses.asdict(variant), "split": split, "files": files})
    if context.reusable(output, key, VARIANT_CODE):
        return output
    topics = read_topics(source)
    if split == "train":
        assert qrels is not None, "the train split's variant needs its qrels"
        topics = selected(topics, qrels, variant)
    if variant.query_case is not None:
        topics = [Topic(t.qid, lower_case(t.query, variant.query_case)) for t in topics]
    context.log(f"{len(topics)} {split} queries ({describe(variant, split)}) → {output}")
    output.parent.mkdir(parents=True, exist_ok=True)
    write_topics_tsv(output, topics)
    mark_fresh(output, key, code=VARIANT_CODE)
    return output


def describe(variant: TopicVariant, split: str) -> str:
    """A few words on what ``variant`` does to ``split``, for the log."""
    parts = []
    if variant.query_case is not None:
        parts.append(f"case: {variant.query_case}")
    if split == "train" and variant.max_relevant is not None:
        how = "as many at random as" if variant.drop_at_random else "those with"
        parts.append(f"left out: {how} more than {variant.max_relevant} relevant documents")
    if split == "train" and variant.first is not None:
        parts.append(f"the first {variant.first}")
    return "; ".join(parts)
