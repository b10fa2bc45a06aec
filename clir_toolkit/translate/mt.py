"""Machine translation of whole queries, behind one interface with three back-ends.

``apertium:eng-spa``
    Apertium, a rule-based MT system installed from Debian (``apt-get install apertium
    apertium-eng-spa``; English pairs exist for Spanish, Catalan, Galician, …, not for
    French or German). All queries of a batch go through one process, one per line.
``hf:MODEL_DIR``
    a Hugging Face sequence-to-sequence model (MarianMT, NLLB, M2M100) loaded with
    transformers from a local directory, translated in batches, on a GPU when present.
    NLLB/M2M100 need the target language code (``target_lang``, e.g. ``fra_Latn``).
``file:T.tsv``
    translations made elsewhere: a topics file with the same qids.

The translated text becomes a plain structured query (one term per word); the document
language's analyzer processes it at search time, like any query in that language.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from clir_toolkit.errors import ClirError, ResourceError, UsageError
from clir_toolkit.params import Param, declare
from clir_toolkit.query import StructuredQuery

MT_PARAMS = declare(
    Param("mt", str, doc="apertium:eng-spa, hf:MODEL_DIR or file:T.tsv", flag="--mt",
          metavar="SPEC"),
    Param("mt_target_lang", str, doc="hf NLLB/M2M100 models: target language token, "
          "e.g. fra_Latn", flag="--mt-target-lang", metavar="CODE"),
)  # fmt: skip
"""The options of machine translation (``clir search --translate mt``, a recipe's
``[search]``)."""


class MachineTranslator:
    """Base of the MT back-ends: translate texts, wrap the results as plain queries."""

    name = "mt"

    def translate_texts(self, texts: Sequence[str]) -> list[str]:
        raise NotImplementedError

    def translate(self, queries: Sequence[StructuredQuery]) -> list[StructuredQuery]:
        texts = [q.original or " ".join(t.source for t in q.terms) for q in queries]
        translated = self.translate_texts(texts)
        return [
            StructuredQuery.plain(q.qid, text) for q, text in zip(queries, translated, strict=True)
        ]


class ApertiumTranslator(MachineTranslator):
    """Apertium rule-based MT; one ``apertium`` process per batch of queries."""

    def __init__(self, pair: str = "eng-spa", batch_size: int = 2000) -> None:
        if shutil.which("apertium") is None:
            raise ResourceError(
                "apertium is not installed (apt-get install apertium apertium-" + pair + ")"
            )
        self.pair = pair
        self.batch_size = batch_size
        self.name = f"mt:apertium:{pair}"

    def translate_texts(self, texts: Sequence[str]) -> list[str]:
        cleaned = [" ".join(t.split()) for t in texts]
        todo = [t for t in cleaned if t]  # an empty query stays empty
        done: list[str] = []
        for start in range(0, len(todo), self.batch_size):
            done.extend(self._run(todo[start : start + self.batch_size]))
        translated = iter(done)
        return [next(translated) if t else "" for t in cleaned]

    def _run(self, batch: list[str]) -> list[str]:
        # Queries are separated by blank lines: Apertium joins consecutive lines into one
        # sentence (and moves words across them), but keeps paragraphs apart.
        # -u: no '*' marks on unknown words.
        process = subprocess.run(
            ["apertium", "-u", self.pair],
            input="\n\n".join(batch) + "\n",
            capture_output=True,
            text=True,
        )
        if process.returncode != 0:
            detail = process.stderr.strip().splitlines()[-1:] or ["no message"]
            raise ResourceError(
                f"apertium {self.pair} failed: {detail[0]} (apt-get install apertium-{self.pair})"
            )
        paragraphs = [p.strip() for p in re.split(r"\n\s*\n", process.stdout.strip())]
        if len(paragraphs) != len(batch):
            raise ClirError(
                f"apertium returned {len(paragraphs)} translations for {len(batch)} queries"
            )
        return [" ".join(p.split()) for p in paragraphs]


class HuggingFaceTranslator(MachineTranslator):
    """A local MarianMT / NLLB / M2M100 model through transformers, batched."""

    def __init__(
        self,
        model_dir: str | Path,
        target_lang: str | None = None,
        batch_size: int = 32,
        device: str = "auto",
        max_length: int = 128,
        num_beams: int = 4,
    ) -> None:
        model_dir = Path(model_dir)
        if not (model_dir / "config.json").is_file():
            raise ResourceError(
                f"{model_dir}: not a Hugging Face model directory (no "
                "config.json); download the model on a machine with a network "
                "and copy the directory here"
            )
        import torch
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
            model = AutoModelForSeq2SeqLM.from_pretrained(model_dir)
        except (OSError, ValueError, KeyError, TypeError) as exc:  # an incomplete directory
            detail = " ".join(str(exc).split())[:300]
            raise ResourceError(f"{model_dir}: transformers cannot load it ({detail})") from None
        self.model = model.to(device).eval()
        self.device = device
        self.target_lang = target_lang
        self.batch_size = batch_size
        self.max_length = max_length
        self.num_beams = num_beams
        self.name = f"mt:hf:{model_dir.name}"

    def translate_texts(self, texts: Sequence[str]) -> list[str]:
        import torch

        options: dict[str, object] = {"max_length": self.max_length, "num_beams": self.num_beams}
        if self.target_lang:
            token_id = self.tokenizer.convert_tokens_to_ids(self.target_lang)
            if token_id is None or token_id == self.tokenizer.unk_token_id:
                raise UsageError(f"the model has no language token '{self.target_lang}'")
            options["forced_bos_token_id"] = token_id
        results: list[str] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            encoded = self.tokenizer(
                batch,
                return_tensors="pt",
                padding=True,
                truncation=True,
                max_length=self.max_length,
            ).to(self.device)
            with torch.inference_mode():
                generated = self.model.generate(**encoded, **options)
            results.extend(
                t.strip() for t in self.tokenizer.batch_decode(generated, skip_special_tokens=True)
            )
        return results


class FileTranslator(MachineTranslator):
    """Translations made elsewhere, read from a topics file with the same qids."""

    def __init__(self, path: str | Path) -> None:
        from clir_toolkit.formats import read_topics

        self.path = Path(path)
        self.table = {t.qid: t.query for t in read_topics(self.path)}
        self.name = f"mt:file:{self.path.name}"

    def translate(self, queries: Sequence[StructuredQuery]) -> list[StructuredQuery]:
        missing = [q.qid for q in queries if q.qid not in self.table]
        if missing:
            raise ClirError(
                f"{self.path}: no translation for queries {', '.join(missing[:5])}"
                f"{' ...' if len(missing) > 5 else ''} (add a line per qid)"
            )
        return [StructuredQuery.plain(q.qid, self.table[q.qid]) for q in queries]


def make_machine_translator(
    spec: str, target_lang: str | None = None, device: str = "auto"
) -> MachineTranslator:
    """The back-end named by ``apertium:PAIR``, ``hf:MODEL_DIR`` or ``file:T.tsv``."""
    kind, _, value = spec.partition(":")
    if kind == "apertium":
        return ApertiumTranslator(value or "eng-spa")
    if kind == "hf" and value:
        return HuggingFaceTranslator(value, target_lang=target_lang, device=device)
    if kind == "file" and value:
        return FileTranslator(value)
    param = MT_PARAMS["mt"]
    raise UsageError(f"unknown {param.flag} '{spec}' (use {param.doc})")
