"""``hf:DIR``: a local Hugging Face transformers model directory as a sentence encoder.

The vector of a text is the mean of the model's last hidden states over the text's tokens
(padding excluded), L2-normalised; at most 512 tokens. Prefixes (e5 models want
``query: `` and ``passage: ``) come from an optional ``clir-encoder.json`` in DIR. It is a
prefix form of :func:`clir_toolkit.encoders.load_encoder`, not a registered name: any
directory is one.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from clir_toolkit.encoders import SentenceEncoder, import_package, package_fingerprint
from clir_toolkit.errors import FormatError, ResourceError

#: The optional settings file of an ``hf:DIR`` model.
HF_SETTINGS = "clir-encoder.json"


def read_hf_settings(path: Path) -> dict[str, str]:
    """The prefixes of ``clir-encoder.json`` (none when the file is absent)."""
    from clir_toolkit.formats import parse_json

    known = ("query_prefix", "document_prefix")
    if not path.is_file():
        return dict.fromkeys(known, "")
    fix = 'write {"query_prefix": "query: ", "document_prefix": "passage: "}'
    try:
        data = parse_json(path, None, path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise FormatError(path, None, "invalid UTF-8", fix) from None
    if not isinstance(data, dict):
        raise FormatError(path, None, "expected a JSON object", fix)
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise FormatError(path, None, f"unknown key {unknown[0]!r}", fix)
    for key, value in data.items():
        if not isinstance(value, str):
            raise FormatError(path, None, f"{key!r} must be a string", fix)
    return {key: data.get(key, "") for key in known}


def directory_fingerprint(directory: Path) -> str:
    """sha256 of the names and contents of the files directly in ``directory``."""
    from clir_toolkit.files import sha256_file

    digest = hashlib.sha256()
    for path in sorted(p for p in directory.iterdir() if p.is_file()):
        digest.update(f"{path.name}\0{sha256_file(path)}\n".encode())
    return digest.hexdigest()


def hf_fingerprint(directory: str | Path) -> str:
    """What the vectors of ``hf:DIR`` depend on: transformers' version and DIR's files."""
    return f"{package_fingerprint('transformers')} {directory_fingerprint(Path(directory))}"


class HuggingFaceEncoder(SentenceEncoder):
    """A local transformers model: mean of the last hidden states, L2-normalised."""

    def __init__(
        self, directory: str | Path, threads: int | None = None, device: str = "auto"
    ) -> None:
        from clir_toolkit.compute.device import resolve_device
        from clir_toolkit.compute.threads import use_fastest_threads

        directory = Path(directory)
        if not (directory / "config.json").is_file():
            raise ResourceError(
                f"{directory}: not a Hugging Face model directory (no config.json); "
                "save one with save_pretrained() or copy the downloaded directory here"
            )
        settings = read_hf_settings(directory / HF_SETTINGS)
        self.query_prefix = settings["query_prefix"]
        self.document_prefix = settings["document_prefix"]
        use_fastest_threads(threads)
        transformers = import_package("transformers", "transformers")
        target = resolve_device(device)
        try:
            self._tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
            model = transformers.AutoModel.from_pretrained(directory)
        except (OSError, ValueError, KeyError) as exc:
            detail = " ".join(str(exc).split())[:300]
            raise ResourceError(f"{directory}: transformers cannot load it ({detail})") from None
        self._model = model.to(target).eval()
        self.device = str(target)
        self.dim = int(model.config.hidden_size)
        limit = getattr(self._tokenizer, "model_max_length", 512) or 512
        self.max_length = min(int(limit), 512)
        self.name = f"hf:{directory}"
        self.fingerprint = hf_fingerprint(directory)

    def embed(self, texts: list[str], query: bool) -> Any:
        import torch

        prefix = self.query_prefix if query else self.document_prefix
        batch = self._tokenizer(
            [prefix + text for text in texts],
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        ).to(self.device)
        with torch.inference_mode():
            hidden = self._model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        mean = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
        return mean.float().cpu().numpy()
