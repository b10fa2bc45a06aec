"""Query translation: dictionary, machine translation and embedding translators."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from clir_toolkit.errors import ClirError, UsageError
from clir_toolkit.formats import Topic, read_run, write_topics_tsv
from clir_toolkit.query import Alternative, QueryTerm, StructuredQuery
from clir_toolkit.translate.dictionary import (
    DictionaryTranslator,
    estimate_translation_probabilities,
)
from clir_toolkit.translate.embedding import EmbeddingSpace, EmbeddingTranslator
from clir_toolkit.translate.mt import ApertiumTranslator, FileTranslator
from tests.conftest import FIXTURES, TINY_FR, TINY_ZH, run_clir

EN_FR = FIXTURES / "translate" / "en-fr.tsv"
EN_FR_VEC = FIXTURES / "translate" / "en-fr.vec"


def dictionary():  # type: ignore[no-untyped-def]
    from clir_toolkit.resources.dictionary import load_dictionary

    return load_dictionary(str(EN_FR))


def alternatives(query: StructuredQuery) -> dict[str, list[tuple[str, float]]]:
    return {t.source: [(a.text, round(a.weight, 3)) for a in t.alternatives] for t in query.terms}


def test_dictionary_all_keeps_every_candidate_and_untranslatable_terms() -> None:
    query = StructuredQuery.plain("q", "list the ls directory")
    translated = DictionaryTranslator(dictionary(), "all").translate_one(query)
    assert alternatives(translated) == {
        "list": [("lister", 1.0), ("liste", 1.0)],
        "ls": [("ls", 1.0)],  # not in the dictionary: kept as it is
        "directory": [("répertoire", 1.0)],
    }  # "the" is a stop word: not translated
    assert translated.original == "list the ls directory"


def test_dictionary_first_keeps_one_candidate() -> None:
    query = StructuredQuery.plain("q", "remove file")
    translated = DictionaryTranslator(dictionary(), "first").translate_one(query)
    assert alternatives(translated) == {"remove": [("supprimer", 1.0)], "file": [("fichier", 1.0)]}


def test_longest_multi_word_match_first() -> None:
    query = StructuredQuery.plain("q", "check the file system")
    translated = DictionaryTranslator(dictionary(), "all").translate_one(query)
    assert alternatives(translated)["file system"] == [("système de fichiers", 1.0)]
    assert "file" not in alternatives(translated)


def test_weighted_mode_uses_translation_probabilities() -> None:
    probabilities = {"file": {"fichier": 0.9, "lime": 0.1}}
    translator = DictionaryTranslator(dictionary(), "weighted", probabilities)
    weights = dict(
        alternatives(translator.translate_one(StructuredQuery.plain("q", "file")))["file"]
    )
    assert weights["fichier"] > 5 * weights["lime"]
    assert sum(weights.values()) == pytest.approx(1.0, abs=1e-3)


def test_ibm_model_1_prefers_the_candidate_seen_in_parallel_text() -> None:
    pairs = [
        ("open the file", "ouvrir le fichier"),
        ("save file", "enregistrer fichier"),
        ("file a complaint", "déposer une plainte"),
        ("copy file", "copier fichier"),
    ]
    table = estimate_translation_probabilities(dictionary(), pairs)
    assert table["file"]["fichier"] > 0.9
    assert table["file"]["lime"] < 0.1


def test_expanded_alternatives_are_translated_with_their_weight() -> None:
    query = StructuredQuery(
        "q", (QueryTerm("remove", (Alternative("remove"), Alternative("erase", 0.5))),)
    )
    translated = DictionaryTranslator(dictionary(), "all").translate_one(query)
    # "effacer" is a translation of both words: weights add up.
    assert dict(alternatives(translated)["remove"]) == {"supprimer": 1.0, "effacer": 1.5}


def test_keep_source_adds_the_english_word_beside_its_translations() -> None:
    query = StructuredQuery.plain("q", "list the ls directory")
    translated = DictionaryTranslator(dictionary(), "all", keep_source=0.5).translate_one(query)
    assert alternatives(translated) == {
        "list": [("lister", 1.0), ("liste", 1.0), ("list", 0.5)],
        "ls": [("ls", 1.0)],  # unknown: already its own only alternative, not added twice
        "directory": [("répertoire", 1.0), ("directory", 0.5)],
    }


def test_keep_source_is_weighted_against_the_best_translation() -> None:
    probabilities = {"file": {"fichier": 0.9, "lime": 0.1}}
    translator = DictionaryTranslator(dictionary(), "weighted", probabilities, keep_source=0.5)
    weights = dict(
        alternatives(translator.translate_one(StructuredQuery.plain("q", "file")))["file"]
    )
    assert weights["file"] == pytest.approx(0.5 * weights["fichier"], abs=1e-3)


@pytest.mark.parametrize("weight", [-0.5, float("nan"), float("inf")])
def test_keep_source_must_be_a_weight(weight: float) -> None:
    with pytest.raises(UsageError, match="--keep-source"):
        DictionaryTranslator(dictionary(), "all", keep_source=weight)


def test_unknown_dict_mode_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="dict-mode"):
        DictionaryTranslator(dictionary(), "best")


def test_embedding_translation_uses_the_query_context() -> None:
    space = EmbeddingSpace.load(EN_FR_VEC, "en", "fr")
    translator = EmbeddingTranslator(space, top=1, w_major=1.0, w_context=0.2)
    alone = alternatives(translator.translate_one(StructuredQuery.plain("q", "machine")))
    virtual = alternatives(translator.translate_one(StructuredQuery.plain("q", "virtual machine")))
    gun = alternatives(translator.translate_one(StructuredQuery.plain("q", "machine gun")))
    assert alone["machine"] == [("mitrailleuse", 1.0)]  # nearest word, no context
    assert virtual["machine"] == [("ordinateur", 1.0)]  # "virtual" pulls towards computers
    assert gun["machine"] == [("mitrailleuse", 1.0)]
    top3 = EmbeddingTranslator(space, top=3).translate_one(StructuredQuery.plain("q", "machine"))
    assert len(top3.terms[0].alternatives) == 3


def test_equation_5_2_needs_w_major_above_w_context() -> None:
    space = EmbeddingSpace.load(EN_FR_VEC, "en", "fr")
    with pytest.raises(UsageError, match="w_major > w_context"):
        EmbeddingTranslator(space, w_major=0.2, w_context=0.5)


def test_file_translations_are_read_by_qid(tmp_path: Path) -> None:
    path = tmp_path / "t.tsv"
    write_topics_tsv(path, [Topic("q1", "lister le contenu du répertoire")])
    translator = FileTranslator(path)
    (query,) = translator.translate([StructuredQuery.plain("q1", "list directory contents")])
    assert [t.source for t in query.terms] == ["lister", "le", "contenu", "du", "répertoire"]
    with pytest.raises(ClirError, match="no translation for queries q2"):
        translator.translate([StructuredQuery.plain("q2", "copy")])


@pytest.mark.skipif(
    shutil.which("apertium") is None,
    reason="apertium not installed (apt-get install apertium apertium-eng-spa)",
)
def test_apertium_translates_a_batch_in_one_process() -> None:
    texts = ["send a signal to a process", "", "list directory contents"]
    translated = ApertiumTranslator("eng-spa").translate_texts(texts)
    assert len(translated) == 3 and translated[1] == ""
    assert "señal" in translated[0].lower() and "proceso" in translated[0].lower()
    assert "directorio" in translated[2].lower()


def test_tiny_marian_model_loads_and_generates(tmp_path: Path) -> None:
    """A randomly initialised Marian model saved and reloaded: the real loading code runs."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import MarianConfig, MarianMTModel, PreTrainedTokenizerFast

    from clir_toolkit.translate.mt import HuggingFaceTranslator

    vocab = {
        "<pad>": 0,
        "</s>": 1,
        "<unk>": 2,
        "list": 3,
        "directory": 4,
        "contents": 5,
        "liste": 6,
        "répertoire": 7,
    }
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    config = MarianConfig(
        vocab_size=len(vocab),
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=32,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
    )
    torch.manual_seed(0)
    MarianMTModel(config).save_pretrained(tmp_path)
    fast.save_pretrained(tmp_path)
    translator = HuggingFaceTranslator(tmp_path, device="cpu", max_length=8, num_beams=2)
    queries = [
        StructuredQuery.plain("q1", "list directory contents"),
        StructuredQuery.plain("q2", "list"),
    ]
    translated = translator.translate(queries)
    assert [q.qid for q in translated] == ["q1", "q2"]
    assert all(isinstance(t.source, str) for q in translated for t in q.terms)


def test_hf_directory_without_a_model_is_one_clear_error(tmp_path: Path) -> None:
    from clir_toolkit.translate.mt import HuggingFaceTranslator

    with pytest.raises(ClirError, match="not a Hugging Face model directory"):
        HuggingFaceTranslator(tmp_path)
    (tmp_path / "config.json").write_text('{"model_type": "marian"}', encoding="utf-8")
    with pytest.raises(ClirError, match="transformers cannot load it"):  # config.json alone
        HuggingFaceTranslator(tmp_path)


@pytest.mark.java
def test_cli_dictionary_translation_with_pirkola_structure(tmp_path: Path, fr_index: Path) -> None:
    topics = tmp_path / "topics.tsv"
    write_topics_tsv(topics, [Topic("q3", "remove directories"), Topic("q5", "send signal")])
    output = tmp_path / "run.trec"
    result = run_clir(
        "search",
        "--index",
        str(fr_index),
        "--topics",
        str(topics),
        "--output",
        str(output),
        "--translate",
        "dict",
        "--dict",
        str(EN_FR),
        "--structure",
        "syn",
        "--quiet",
    )
    assert result.returncode == 0, result.stderr
    best = {r.qid: r.docid for r in read_run(output) if r.rank == 1}
    assert best == {"q3": "rm.1", "q5": "kill.1"}


def test_cli_translate_writes_the_structure(tmp_path: Path) -> None:
    import json

    output = tmp_path / "t.jsonl"
    result = run_clir(
        "translate",
        "--topics",
        str(TINY_FR / "topics.dev.tsv"),
        "--output",
        str(output),
        "--target-lang",
        "fr",
        "--translate",
        "dict",
        "--dict",
        str(EN_FR),
        "--quiet",
    )
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    q3 = next(r for r in records if r["qid"] == "q3")
    remove = next(t for t in q3["terms"] if t["source"] == "remove")
    # By default the English word is kept beside its translations, at half their weight.
    assert [(a["text"], a["weight"]) for a in remove["alternatives"]] == [
        ("supprimer", 1.0),
        ("effacer", 1.0),
        ("remove", 0.5),
    ]


def test_cli_keep_source_0_keeps_translations_only(tmp_path: Path) -> None:
    import json

    output = tmp_path / "t.jsonl"
    result = run_clir(
        "translate",
        "--topics",
        str(TINY_FR / "topics.dev.tsv"),
        "--output",
        str(output),
        "--target-lang",
        "fr",
        "--translate",
        "dict",
        "--dict",
        str(EN_FR),
        "--keep-source",
        "0",
        "--quiet",
    )
    assert result.returncode == 0, result.stderr
    q3 = json.loads(output.read_text(encoding="utf-8").splitlines()[2])
    remove = next(t for t in q3["terms"] if t["source"] == "remove")
    assert [a["text"] for a in remove["alternatives"]] == ["supprimer", "effacer"]


def _search(index: Path, topics: Path, output: Path, *options: str) -> str:
    result = run_clir(
        "search", "--index", str(index), "--topics", str(topics), "--output", str(output),
        "--quiet", *options,
    )
    assert result.returncode == 0, result.stderr
    return output.read_text(encoding="utf-8")


@pytest.mark.java
def test_bare_dictionary_search_is_the_best_measured_setting(
    tmp_path: Path, fr_index: Path
) -> None:
    """``--translate dict`` alone searches Pirkola's structure with the English word kept."""
    topics = TINY_FR / "topics.dev.tsv"
    bare = _search(fr_index, topics, tmp_path / "bare.trec", "--translate", "dict", "--dict",
                   str(EN_FR))
    best = _search(fr_index, topics, tmp_path / "best.trec", "--translate", "dict", "--dict",
                   str(EN_FR), "--structure", "syn", "--keep-source", "0.5")
    bag = _search(fr_index, topics, tmp_path / "bag.trec", "--translate", "dict", "--dict",
                  str(EN_FR), "--structure", "or", "--keep-source", "0")
    assert bare == best
    assert bare != bag


@pytest.mark.java
def test_bare_untranslated_search_keeps_a_chinese_query_a_bag_of_words(
    tmp_path: Path, zh_index: Path
) -> None:
    """Pirkola's structure would pool a whole unsegmented query into one pseudo-term."""
    topics = TINY_ZH / "topics-human.dev.tsv"
    bare = _search(zh_index, topics, tmp_path / "bare.trec")
    bag = _search(zh_index, topics, tmp_path / "bag.trec", "--structure", "or")
    pooled = _search(zh_index, topics, tmp_path / "pooled.trec", "--structure", "syn")
    assert bare == bag
    assert bare != pooled
