r"""Exercises like seed 000's, for teachers: ``attnref exercise``.

A problem is drawn from a seed (Python's ``random.Random(seed)``: the same seed and options
give the same exercise on any machine): ``n`` tokens, ``X \in \{0, 1\}^{n \times d_{model}}``
and per-head ``W_Q^{(i)}, W_K^{(i)}, W_V^{(i)} \in \{0, 1\}^{d_{model} \times d_k}`` with
``d_k = d_{model} / h``, so that ``Q^{(i)} = X W_Q^{(i)}``, ``K^{(i)}`` and ``V^{(i)}`` are
integers, as in the homework; no row or column of ``X`` and no column of a weight (hence of
``Q``, ``K``, ``V``) is all zeros. ``W_O``
is ``I + E`` with ``E`` a 0/1 strictly upper-triangular matrix with at least one 1: an
integer matrix that is not the identity and not symmetric, so that forgetting ``W_O`` or
transposing it changes the output (and `attention_ref.worked.check` can tell).

An exercise is four documents: the statement (`statement`), the solution key (`key`: every
step as ``attnref explain`` prints it, with the backward pass when asked; in Portuguese, the
statement's questions answered in its words, `attention_ref.worked.key_pt`), its JSON in
the ``--input`` format (`Exercise.problem`), which ``explain --input`` takes, and the answer to
fill in (`Exercise.answer`: the ``"exercise"`` object with its language and decimals, every
step ``null``), which ``check`` takes once filled. The statement and key carry the language,
so the writers print decimal commas in Portuguese; the check reports in the answer's.

``variant`` asks today's attention instead of the homework's (`attention_ref.worked.
variant_exercise`): ``gqa``, ``h`` query heads sharing ``kv_heads`` K/V heads; ``window``, a
causal sliding window of ``window`` keys; ``rope``, rotary positions on Q and K. The default,
``mha``, is the homework's masked multi-head attention, and its options, documents and JSON
are what they were before the variants (no ``"variant"`` key).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Final

from attention_ref.render import Explanation, JSONValue, Mat, Matrix, Section
from attention_ref.worked.answer_words import MASKED_SPELLINGS
from attention_ref.worked.inputs import parse_input

LANGS: Final = ("en", "pt")
MAX_TOKENS: Final = 8
MAX_D_MODEL: Final = 8
MAX_DECIMALS: Final = 6
#: What ``--variant`` asks: the homework's attention, or one of today's.
EXERCISE_VARIANTS: Final = ("mha", "gqa", "window", "rope")

#: Token names drawn for an exercise, per language.
WORDS: Final[dict[str, tuple[str, ...]]] = {
    "en": ("Life", "is", "awesome", "Cats", "sleep", "Birds", "sing", "Time", "flies", "We",
           "learn", "Stars", "shine", "Rain", "falls", "Ideas", "grow", "slowly", "today",
           "here"),
    "pt": ("A", "vida", "é", "bela", "Gatos", "dormem", "Aves", "cantam", "O", "tempo", "voa",
           "Nós", "aprendemos", "Estrelas", "brilham", "Chove", "hoje", "aqui", "devagar",
           "sempre"),
}  # fmt: skip


class OptionError(ValueError):
    """A bad option of an exercise: its message in English (``str``, the CLI's, naming the
    flags) and in every language of `LANGS` (`words`), for an answer's ``"exercise"``."""

    def __init__(self, texts: dict[str, str], **kw: object) -> None:
        self.texts = {lang: text.format(**kw) for lang, text in texts.items()}
        super().__init__(self.texts["en"])

    def words(self, lang: str) -> str:
        return self.texts.get(lang, self.texts["en"])


@dataclass(frozen=True, kw_only=True)
class ExerciseOptions:
    """What defines an exercise: the seed and the sizes (``attnref exercise`` options).

    ``variant`` (``mha``, ``gqa``, ``window``, ``rope``) picks the attention; ``kv_heads`` is
    ``gqa``'s ``g`` (default ``h/2`` for an even ``h``, else 1: ``h = 2`` gives multi-query
    attention, ``h = 4`` two K/V heads) and ``window`` the sliding window's ``w`` (default 2,
    or 1 with two tokens); both are filled in when left out, so equal exercises are equal.
    """

    seed: int = 0
    tokens: int = 3
    d_model: int = 4
    heads: int = 2
    causal: bool = True
    lang: str = "en"
    backward: bool = False
    decimals: int = 3
    variant: str = "mha"
    kv_heads: int | None = None
    window: int | None = None

    def __post_init__(self) -> None:
        between = {"en": "{flag} must be between {lo} and {hi}, got {got}",
                   "pt": "{flag} deve estar entre {lo} e {hi}, veio {got}"}  # fmt: skip
        if not 0 <= self.seed < 2**63:
            raise OptionError(between, flag="--seed", lo=0, hi="2**63 - 1", got=self.seed)
        if not 1 <= self.tokens <= MAX_TOKENS:
            raise OptionError(between, flag="--tokens", lo=1, hi=MAX_TOKENS, got=self.tokens)
        if not 1 <= self.d_model <= MAX_D_MODEL:
            raise OptionError(between, flag="--d-model", lo=1, hi=MAX_D_MODEL, got=self.d_model)
        if self.heads < 1 or self.d_model % self.heads:
            raise OptionError(
                {"en": "--heads must divide --d-model (d_k = d_model / h): d_model = {d}, h = {h}",
                 "pt": "--heads deve dividir --d-model (d_k = d_model / h): d_model = {d}, "
                 "h = {h}"}, d=self.d_model, h=self.heads,
            )  # fmt: skip
        if self.lang not in LANGS:
            raise OptionError({"en": "--lang must be one of {langs}, got {got}",
                               "pt": "--lang deve ser um de {langs}, veio {got}"},
                              langs=", ".join(LANGS), got=repr(self.lang))  # fmt: skip
        if not 1 <= self.decimals <= MAX_DECIMALS:
            raise OptionError(between, flag="--decimals", lo=1, hi=MAX_DECIMALS, got=self.decimals)
        self._check_variant()

    def _check_variant(self) -> None:
        """The variant's own options, checked; ``kv_heads`` and ``window`` filled in."""
        v = self.variant
        if v not in EXERCISE_VARIANTS:
            raise OptionError({"en": "--variant must be one of {names}, got {got}",
                               "pt": "--variant deve ser um de {names}, veio {got}"},
                              names=", ".join(EXERCISE_VARIANTS), got=repr(v)[:60])  # fmt: skip
        for name, value, owner in (("--kv-heads", self.kv_heads, "gqa"),
                                   ("--window", self.window, "window")):  # fmt: skip
            if value is not None and v != owner:
                raise OptionError({"en": "{name} is an option of --variant {owner}, not of "
                                   "--variant {v}", "pt": "{name} é uma opção de --variant "
                                   "{owner}, não de --variant {v}"}, name=name, owner=owner,
                                  v=v)  # fmt: skip
        if v != "mha" and self.backward:
            raise OptionError({"en": "--backward is for --variant mha: the --variant {v} exercise "
                               "asks the forward pass", "pt": "--backward é de --variant mha: o "
                               "exercício --variant {v} pede a passagem direta"}, v=v)  # fmt: skip
        h = self.heads
        if v == "gqa":
            if h < 2:
                raise OptionError({"en": "--variant gqa needs h >= 2 query heads (--heads) to "
                                   "share K/V heads, got h = 1", "pt": "--variant gqa precisa "
                                   "de h >= 2 cabeças de consulta (--heads) para compartilhar "
                                   "cabeças K/V, veio h = 1"})  # fmt: skip
            g = self.kv_heads if self.kv_heads is not None else (h // 2 if h % 2 == 0 else 1)
            if not 1 <= g < h or h % g:
                raise OptionError(
                    {"en": "--kv-heads must divide --heads and be fewer (g = h is --variant "
                     "mha): h = {h}, g = {g}", "pt": "--kv-heads deve dividir --heads e ser "
                     "menor (g = h é --variant mha): h = {h}, g = {g}"}, h=h, g=g,
                )  # fmt: skip
            object.__setattr__(self, "kv_heads", g)
        if v == "window":
            if not self.causal:
                raise OptionError({"en": "--variant window is a causal sliding window: leave "
                                   "out --no-causal", "pt": "--variant window é uma janela "
                                   "deslizante causal: tire --no-causal"})  # fmt: skip
            if self.tokens < 2:
                raise OptionError({"en": "--variant window needs at least 2 tokens (--tokens) "
                                   "for a window narrower than the causal mask", "pt": "--variant "
                                   "window precisa de ao menos 2 tokens (--tokens) para uma "
                                   "janela mais estreita que a máscara causal"})  # fmt: skip
            w = self.window if self.window is not None else min(2, self.tokens - 1)
            if not 1 <= w < self.tokens:
                raise OptionError(
                    {"en": "--window must be between 1 and n - 1 = {n1} keys (w >= n is the "
                     "causal mask: --variant mha), got {w}", "pt": "--window deve estar entre 1 "
                     "e n - 1 = {n1} chaves (w >= n é a máscara causal: --variant mha), veio "
                     "{w}"}, n1=self.tokens - 1, w=w,
                )  # fmt: skip
            object.__setattr__(self, "window", w)
        if v == "rope" and self.d_k % 2:
            raise OptionError(
                {"en": "--variant rope turns pairs of coordinates: d_k = d_model / h must be "
                 "even, got d_k = {d} / {h} = {d_k}", "pt": "--variant rope gira pares de "
                 "coordenadas: d_k = d_model / h deve ser par, veio d_k = {d} / {h} = {d_k}"},
                d=self.d_model, h=h, d_k=self.d_k,
            )  # fmt: skip

    @property
    def d_k(self) -> int:
        """Width of a head: ``d_model / h``."""
        return self.d_model // self.heads

    def to_json(self) -> dict[str, JSONValue]:
        """The options as the ``"exercise"`` object of an answer file: the problem, its
        language (the check reports in it) and the decimals asked (the check grades by them)."""
        out: dict[str, JSONValue] = {
            "seed": self.seed, "tokens": self.tokens, "d_model": self.d_model,
            "heads": self.heads, "causal": self.causal, "lang": self.lang,
            "decimals": self.decimals}  # fmt: skip
        if self.variant != "mha":  # the homework's exercise names no variant
            out["variant"] = self.variant
            if self.variant == "gqa":
                out["kv_heads"] = self.kv_heads
            if self.variant == "window":
                out["window"] = self.window
        return out

    @property
    def flags(self) -> str:
        """The variant's options on the command line (``""`` for ``mha``)."""
        if self.variant == "mha":
            return ""
        extra = {"gqa": f" --kv-heads {self.kv_heads}", "window": f" --window {self.window}"}
        return f" --variant {self.variant}" + extra.get(self.variant, "")


def options_from_json(obj: object, lang: str | None = None) -> ExerciseOptions:
    """An answer file's ``"exercise": {"seed": …, "tokens": …, …}``; `InputError` if bad, in
    ``lang`` (``None``: the object's own ``"lang"`` when it is one of `LANGS`, else English)."""
    from attention_ref.worked.answer_words import error, shown

    say = lang or (obj.get("lang") if isinstance(obj, dict) and obj.get("lang") in LANGS
                   else "en")  # fmt: skip
    assert isinstance(say, str)
    if not isinstance(obj, dict):
        raise error(say, "ex_object")
    allowed = {"seed", "tokens", "d_model", "heads", "causal", "lang", "backward", "decimals",
               "variant", "kv_heads", "window"}  # fmt: skip
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise error(say, "ex_unknown", shown=shown(unknown[0]), names=", ".join(sorted(allowed)))
    if "seed" not in obj:
        raise error(say, "ex_seed")
    for key in ("seed", "tokens", "d_model", "heads", "decimals"):
        v = obj.get(key, 0)
        if isinstance(v, bool) or not isinstance(v, int):
            raise error(say, "ex_integer", key=key, shown=shown(v))
    for key in ("causal", "backward"):
        if not isinstance(obj.get(key, True), bool):
            raise error(say, "ex_bool", key=key)
    if not isinstance(obj.get("lang", "en"), str):
        raise error(say, "ex_one_of", key="lang", names=", ".join(LANGS))
    if not isinstance(obj.get("variant", "mha"), str):
        raise error(say, "ex_one_of", key="variant", names=", ".join(EXERCISE_VARIANTS))
    for key in ("kv_heads", "window"):
        v = obj.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise error(say, "ex_integer", key=key, shown=shown(v))
    try:
        return ExerciseOptions(**obj)
    except OptionError as e:
        raise error(say, "ex_option", text=e.words(say)) from None
    except ValueError as e:
        raise error(say, "ex_option", text=str(e)) from None


def _binary(rng: random.Random, rows: int, cols: int, *, nonzero_rows: bool) -> Matrix:
    """A 0/1 matrix with no all-zero column (and, if asked, no all-zero row).

    With ``X`` and ``W`` both so drawn, no column of ``Q = X W`` is all zeros either: each
    column of ``W`` picks at least one column of ``X``, which has a 1 somewhere.
    """
    while True:
        m = [[float(rng.random() < 0.5) for _ in range(cols)] for _ in range(rows)]
        lines = [list(c) for c in zip(*m, strict=True)] + (m if nonzero_rows else [])
        if all(any(v for v in line) for line in lines):
            return m


def _output_weight(rng: random.Random, d: int) -> Matrix:
    """``I + E``, ``E`` 0/1 strictly upper triangular with at least one 1 (needs ``d >= 2``)."""
    while True:
        W = [[float(i == j or (j > i and rng.random() < 0.3)) for j in range(d)] for i in range(d)]
        if any(W[i][j] for i in range(d) for j in range(d) if j > i):
            return W


def draw_problem(opt: ExerciseOptions) -> dict[str, JSONValue]:
    """The exercise's numbers in the ``--input`` format (per-head form).

    ``W_O`` is given when ``d_model >= 2`` (with one column there is no non-identity ``I + E``;
    then ``W_O`` is left out and the output is the concat). A variant's problem is in its own
    format (`attention_ref.worked.variant_exercise.draw_variant_problem`).
    """
    if opt.variant != "mha":
        from attention_ref.worked.variant_exercise import draw_variant_problem

        return draw_variant_problem(opt)
    rng = random.Random(opt.seed)
    n, d, h, d_k = opt.tokens, opt.d_model, opt.heads, opt.d_k
    words = list(WORDS[opt.lang])
    tokens = rng.sample(words, n)
    X = _binary(rng, n, d, nonzero_rows=True)
    heads = [
        {role: _binary(rng, d, d_k, nonzero_rows=False) for role in ("W_Q", "W_K", "W_V")}
        for _ in range(h)
    ]
    problem: dict[str, JSONValue] = {"tokens": tokens, "X": X, "heads": heads}
    if d >= 2:
        problem["W_O"] = _output_weight(rng, d)
    problem["causal"] = opt.causal
    return problem


#: The words of the statement, per language.
TEXT: Final[dict[str, dict[str, str]]] = {
    "en": {
        "title": "Exercise {seed}: masked multi-head attention by hand",
        "title_plain": "Exercise {seed}: multi-head attention by hand",
        "source": "attnref exercise --seed {seed} --tokens {n} --d-model {d} --heads {h} {causal}",
        "data": "Data",
        "data_text": "Tokens ({tokens}); each token is a row of X (d_model = {d}). h = {h} "
        "{heads}, d_k = d_v = d_model / h = {d_k}. Row convention: Q = X W_Q. {mask} {wo}",
        "mask": "Causal mask: token t sees itself and the tokens before it.",
        "nomask": "No mask: every token sees every token.",
        "wo": "The output projection W_O is given below.",
        "nowo": "There is no output projection: the output is the concat.",
        "q1": "Question 1: projections",
        "q1_text": "For each head i compute Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾, K⁽ⁱ⁾ = X W_K⁽ⁱ⁾ and V⁽ⁱ⁾ = X W_V⁽ⁱ⁾ "
        "(integers).",
        "q2": "Question 2: scaled scores",
        "q2_text": "Compute Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ and S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k.",
        "q3": "Question 3: mask and softmax",
        "q3_text": "Compute S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M, with M = 0 on and below the diagonal and −∞ above, "
        "and A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾), row by row.",
        "q3_nomask": "Compute A⁽ⁱ⁾ = softmax(S⁽ⁱ⁾), row by row.",
        "q4": "Question 4: head outputs and output",
        "q4_text": "Compute H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾, the concat [H⁽¹⁾ | … | H⁽ʰ⁾] and the output "
        "Concat · W_O.",
        "q4_nowo": "Compute H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾ and the output, the concat [H⁽¹⁾ | … | H⁽ʰ⁾].",
        "q5": "Question 5: gradients",
        "q5_text": "Let L = Σ output, the sum of every entry of the output. Compute ∂L/∂W_O, "
        "∂L/∂A⁽¹⁾, ∂L/∂S̃⁽¹⁾, ∂L/∂W_Q⁽¹⁾ and ∂L/∂X.",
        "q5_nowo": "Let L = Σ output, the sum of every entry of the output. Compute ∂L/∂A⁽¹⁾, "
        "∂L/∂S̃⁽¹⁾, ∂L/∂W_Q⁽¹⁾ and ∂L/∂X.",
        "how": "How to answer",
        "how_text": "Give decimals to {decimals} places; trailing zeros may be dropped "
        "(0.67 for 0.670, 2 for 2.000), but a matrix rounded to fewer places is not right. "
        "Write the steps you computed into answer.json (attnref exercise --out writes "
        "it, every step null until you fill it in) in the names of attnref explain --format "
        'json: "heads": [{{"Q", "K", "V", "scores", "S", "S_masked", "A", "H"}}, …], "concat", '
        '"output"{grads}; it names this exercise, "exercise": {options}. Then run attnref '
        "check answer.json.",
        "grads": ', "grads": {"W_O", "X", "heads": [{"A", "S_masked", "W_Q"}]}',
        "masked": 'Write a masked entry (−∞) as the string "{first}" (check also reads {also}); '
        "null leaves a whole step out, and a large number such as -1e9 is not −∞.",
        "and": "and",
        "key_title": "Solution key of exercise {seed}",
    },
    "pt": {
        "title": "Exercício {seed}: atenção multi-cabeça mascarada à mão",
        "title_plain": "Exercício {seed}: atenção multi-cabeça à mão",
        "source": "attnref exercise --seed {seed} --tokens {n} --d-model {d} --heads {h} {causal} "
        "--lang pt",
        "data": "Dados",
        "data_text": "Tokens ({tokens}); cada token é uma linha de X (d_model = {d}). h = {h} "
        "{heads}, d_k = d_v = d_model / h = {d_k}. Convenção de linhas: Q = X W_Q. {mask} {wo}",
        "mask": "Máscara causal: o token t vê a si mesmo e os tokens anteriores.",
        "nomask": "Sem máscara: todo token vê todos os tokens.",
        "wo": "A projeção de saída W_O está abaixo.",
        "nowo": "Não há projeção de saída: a saída é a concatenação.",
        "q1": "Questão 1: projeções",
        "q1_text": "Para cada cabeça i, calcule Q⁽ⁱ⁾ = X W_Q⁽ⁱ⁾, K⁽ⁱ⁾ = X W_K⁽ⁱ⁾ e "
        "V⁽ⁱ⁾ = X W_V⁽ⁱ⁾ (inteiros).",
        "q2": "Questão 2: scores divididos por √d_k",
        "q2_text": "Calcule Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ e S⁽ⁱ⁾ = Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ / √d_k.",
        "q3": "Questão 3: máscara e softmax",
        "q3_text": "Calcule S̃⁽ⁱ⁾ = S⁽ⁱ⁾ + M, com M = 0 na diagonal e abaixo dela e −∞ acima, "
        "e A⁽ⁱ⁾ = softmax(S̃⁽ⁱ⁾), linha a linha.",
        "q3_nomask": "Calcule A⁽ⁱ⁾ = softmax(S⁽ⁱ⁾), linha a linha.",
        "q4": "Questão 4: saídas das cabeças e saída final",
        "q4_text": "Calcule H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾, a concatenação [H⁽¹⁾ | … | H⁽ʰ⁾] e a saída "
        "Concat · W_O.",
        "q4_nowo": "Calcule H⁽ⁱ⁾ = A⁽ⁱ⁾ V⁽ⁱ⁾ e a saída, a concatenação [H⁽¹⁾ | … | H⁽ʰ⁾].",
        "q5": "Questão 5: gradientes",
        "q5_text": "Seja L = Σ saída, a soma de todas as entradas da saída. Calcule ∂L/∂W_O, "
        "∂L/∂A⁽¹⁾, ∂L/∂S̃⁽¹⁾, ∂L/∂W_Q⁽¹⁾ e ∂L/∂X.",
        "q5_nowo": "Seja L = Σ saída, a soma de todas as entradas da saída. Calcule ∂L/∂A⁽¹⁾, "
        "∂L/∂S̃⁽¹⁾, ∂L/∂W_Q⁽¹⁾ e ∂L/∂X.",
        "how": "Como responder",
        "how_text": "Dê {decimals} casas decimais; zeros à direita podem ser omitidos (0,67 "
        "para 0,670; 2 para 2,000), mas uma matriz arredondada com menos casas não está certa. "
        "Escreva os passos calculados em answer.json (attnref exercise --out o escreve, "
        "cada passo null até você preenchê-lo) com os nomes de attnref explain --format json: "
        '"heads": [{{"Q", "K", "V", "scores", "S", "S_masked", "A", "H"}}, …], "concat", '
        '"output"{grads}; ele nomeia este exercício, "exercise": {options}. Depois rode '
        "attnref check answer.json.",
        "grads": ', "grads": {"W_O", "X", "heads": [{"A", "S_masked", "W_Q"}]}',
        "masked": 'Escreva uma entrada mascarada (−∞) como o texto "{first}" (o check também lê '
        "{also}); null deixa um passo inteiro de fora, e um número grande como -1e9 não é −∞.",
        "comma": "No arquivo de resposta, os números levam ponto decimal e vão sem aspas "
        '(`0.670`, não `"0,670"`): em JSON a vírgula separa as entradas.',
        "and": "e",
        "key_title": "Gabarito do exercício {seed}",
    },
}


def answer_notes(opt: ExerciseOptions) -> str:
    """What the statement's "How to answer" adds on writing answer.json: how to write a masked
    entry (`MASKED_SPELLINGS`; when the problem has a mask) and, in Portuguese, that JSON's
    numbers take a decimal point; ``""`` when there is nothing to add (each note after a
    blank)."""
    w = TEXT[opt.lang]
    first, *rest = MASKED_SPELLINGS
    quoted = [f'"{s}"' for s in rest]
    also = f"{', '.join(quoted[:-1])} {w['and']} {quoted[-1]}" if len(quoted) > 1 else quoted[0]
    notes = [w["masked"].format(first=first, also=also)] if opt.causal else []
    if "comma" in w:
        notes.append(w["comma"])
    return "".join(" " + n for n in notes)


@dataclass(frozen=True, kw_only=True)
class Exercise:
    """One exercise: its options, its numbers (``--input`` JSON), statement and key."""

    options: ExerciseOptions
    problem: dict[str, JSONValue]
    statement: Explanation
    key: Explanation
    answer: dict[str, object]


def _statement(opt: ExerciseOptions, problem: dict[str, JSONValue]) -> Explanation:
    """The statement as a document: the data as matrices, then one section per question."""
    w = TEXT[opt.lang]
    tokens = [str(x) for x in problem["tokens"]]  # type: ignore[union-attr]
    has_wo = "W_O" in problem

    def mat(symbol: str, value: object, **kw: object) -> Mat:
        return Mat(symbol=symbol, value=value, **kw)  # type: ignore[arg-type]

    items = [mat("X", problem["X"], rows=tokens)]
    for i, head in enumerate(problem["heads"]):  # type: ignore[union-attr, arg-type]
        for role in ("W_Q", "W_K", "W_V"):
            items.append(mat(f"{role}^{{({i + 1})}}", head[role]))  # type: ignore[index]
    if has_wo:
        items.append(mat("W_O", problem["W_O"]))
    fmt = {"seed": opt.seed, "n": opt.tokens, "d": opt.d_model, "h": opt.heads, "d_k": opt.d_k,
           "tokens": ", ".join(tokens),
           "causal": "--causal" if opt.causal else "--no-causal"}  # fmt: skip
    heads = {"en": ("head", "heads"), "pt": ("cabeça", "cabeças")}[opt.lang][opt.heads != 1]
    data_text = w["data_text"].format(
        **fmt,
        heads=heads,
        mask=w["mask"] if opt.causal else w["nomask"],
        wo=w["wo"] if has_wo else w["nowo"],
    )
    sections = [
        Section(title=w["data"], text=data_text, items=items),
        Section(title=w["q1"], text=w["q1_text"]),
        Section(title=w["q2"], text=w["q2_text"]),
        Section(title=w["q3"], text=w["q3_text"] if opt.causal else w["q3_nomask"]),
        Section(title=w["q4"], text=w["q4_text"] if has_wo else w["q4_nowo"]),
    ]
    if opt.backward:
        sections.append(Section(title=w["q5"], text=w["q5_text"] if has_wo else w["q5_nowo"]))
    how = w["how_text"].format(
        options=json.dumps(opt.to_json(), ensure_ascii=False),
        decimals=opt.decimals,
        grads=w["grads"] if opt.backward else "",
    )
    sections.append(Section(title=w["how"], text=how + answer_notes(opt)))
    title = w["title"] if opt.causal else w["title_plain"]
    return Explanation(
        title=title.format(seed=opt.seed),
        source=w["source"].format(**fmt),
        sections=sections,
        data={"exercise": opt.to_json(), "input": problem},
        lang=opt.lang,
    )


def make_exercise(opt: ExerciseOptions) -> Exercise:
    """Draw the problem of ``opt`` and write its statement and key (imports torch).

    The key's JSON (``data``) is the same in every language; its sections are ``explain``'s
    steps in English, the statement's questions answered in Portuguese (`key_sections_pt`).
    A variant's exercise is `attention_ref.worked.variant_exercise.make_variant_exercise`.
    """
    if opt.variant != "mha":
        from attention_ref.worked.variant_exercise import make_variant_exercise

        return make_variant_exercise(opt)
    from attention_ref.worked.answer import template
    from attention_ref.worked.gradients import explain_input_backward
    from attention_ref.worked.key_pt import key_sections_pt
    from attention_ref.worked.your_input import explain_input, input_trace

    problem = draw_problem(opt)
    inp = parse_input(problem)
    forward = explain_input_backward(inp) if opt.backward else explain_input(inp)
    sections = (
        key_sections_pt(input_trace(inp), TEXT["pt"], backward=opt.backward)
        if opt.lang == "pt"
        else forward.sections
    )
    key = Explanation(
        title=TEXT[opt.lang]["key_title"].format(seed=opt.seed),
        source=TEXT[opt.lang]["source"].format(
            seed=opt.seed, n=opt.tokens, d=opt.d_model, h=opt.heads,
            causal="--causal" if opt.causal else "--no-causal",
        ) + (" --backward" if opt.backward else ""),
        sections=sections,
        data=forward.data,
        precision=forward.precision,
        lang=opt.lang,
    )  # fmt: skip
    answer = template({"exercise": opt.to_json()}, opt.heads, backward=opt.backward,
                      has_w_o="W_O" in problem)  # fmt: skip
    return Exercise(options=opt, problem=problem, statement=_statement(opt, problem), key=key,
                    answer=answer)  # fmt: skip
