"""What the store says when a reading command finds nothing to read, per language: the
refusals ``attnref report`` (a student's command) meets first, said in its language.

One table per language, the same keys and fields in each (a test holds them equal); the rest
of the store's errors, met by training and the teacher's commands, are English.
"""

from __future__ import annotations

from typing import Final

WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "no_store": "no MLflow store {uri}: {path} does not exist (train first, run from the "
        "folder that holds it, or pass --tracking-uri)",
        "no_experiment": "no experiment {experiment!r} in {uri}",
        "no_arms": "no finished ablation and no finished single training run in experiment "
        "{experiment!r} (arms of a heads sweep do not answer Q03); run `attnref ablation` first",
    },
    "pt": {
        "no_store": "nenhum store do MLflow {uri}: {path} não existe (treine primeiro, rode da "
        "pasta que o contém, ou passe --tracking-uri)",
        "no_experiment": "nenhum experimento {experiment!r} em {uri}",
        "no_arms": "nenhuma ablação terminada e nenhum treino avulso terminado no experimento "
        "{experiment!r} (os braços de uma varredura de cabeças não respondem à Q03); rode "
        "`attnref ablation` primeiro",
    },
}


def said(key: str, lang: str, **fields: object) -> str:
    """``WORDS[lang][key]`` with its fields filled in."""
    return WORDS[lang][key].format(**fields)


__all__ = ["WORDS", "said"]
