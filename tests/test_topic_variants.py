"""The thesis' variants of the training queries (§6.3): lower-casing rules (Table 6.5) and
which training queries are left out (Tables 6.9 and 6.10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clir_toolkit.experiments.topic_variants import TopicVariant, lower_case, selected
from clir_toolkit.formats import Topic


@pytest.mark.parametrize(
    ("query", "how", "expected"),
    [
        ("Hint the processor", "lower", "hint the processor"),
        ("Hint the processor", "first-lower", "hint the processor"),
        # a name of capitalised words keeps its case (the thesis' conditional rule)
        ("Hong Kong Jockey Club information", "first-lower", "Hong Kong Jockey Club information"),
        ("Hong Kong Jockey Club information", "lower", "hong kong jockey club information"),
        ("Shenzhen", "first-lower", "Shenzhen"),  # one word: left as it is
        ("Read the X server log", "first-lower", "read the X server log"),
    ],
)
def test_lower_casing_follows_the_thesis_rules(query: str, how: str, expected: str) -> None:
    assert lower_case(query, how) == expected


def test_ambiguous_queries_are_left_out_and_the_control_leaves_out_as_many(
    tmp_path: Path,
) -> None:
    topics = [Topic(f"q{i}", f"query {i}") for i in range(10)]
    qrels = tmp_path / "qrels.txt"
    # q0..q2 have 4 relevant documents (ambiguous above 3), the others 1
    qrels.write_text(
        "".join(f"q{i} 0 d{j} 1\n" for i in range(10) for j in range(4 if i < 3 else 1)),
        encoding="utf-8",
    )
    clean = selected(topics, qrels, TopicVariant(max_relevant=3))
    assert [t.qid for t in clean] == [f"q{i}" for i in range(3, 10)]
    control = selected(topics, qrels, TopicVariant(max_relevant=3, drop_at_random=True))
    assert len(control) == 7 and control == [t for t in topics if t in control]
    assert control == selected(topics, qrels, TopicVariant(max_relevant=3, drop_at_random=True))
    other_seed = TopicVariant(max_relevant=3, drop_at_random=True, seed=7)
    assert len(selected(topics, qrels, other_seed)) == 7
    first = selected(topics, qrels, TopicVariant(max_relevant=3, first=2))
    assert [t.qid for t in first] == ["q3", "q4"]
