"""Train PI-MODEL-1, the scanner's linear model, on the ``tune`` split of the labelled corpus
ONLY (tests/data/injection; ``held`` is never read here), and write
memadmin/quarantine/model_weights.json.

A committee over the features of memadmin/quarantine/pi_model.py (words, adjacent word pairs,
character 4-grams within words, counted): class-balanced L2 logistic regression, fitted by
full-batch L-BFGS in numpy (training only: scoring at runtime is pure Python), and naive Bayes,
their log-odds scaled to the same spread and averaged (one linear model), pruned to the
``KEEP`` strongest weights. Chosen over naive Bayes alone (the issue-7 model), logistic
regression alone and other settings by 5-fold cross-validation on tune and by a
leave-one-round-out check (fitted on ids < 2001, scored on the issue-19 rounds' tune items):
``--compare`` prints both for every candidate (tests/data/injection/README.md has the table).
Out-of-fold scores are computed by the runtime scorer, windows included. The decision
threshold comes from the same k-fold cross-validation: the lowest threshold at which the
out-of-fold false-positive rate on tune benign items (hard ones included) stays <= ``MAX_FP``,
found apart for texts of one window (``short_threshold``) and of several (the highest of many
windows' scores runs higher, so one cut for both let long harmless documents through far more
often than short ones: round 20's fresh probe, README); for the latter the cut rises with
ln(windows) up to ``threshold``, the slope and ceiling that keep to ``MAX_FP`` and catch most
(``cuts``, ``pim.cut_for``: one cut for all of them let a short order with a few dozen words
around it through). The gate for form
rules (``GATE_SHARE``) is the out-of-fold score half of the benign items pass (README,
"Form rules").
Since round 5 the folds keep a hand-written text and its wrapped forms together (``groups``):
split across folds, a text was scored by a model trained on its own sibling, so the
threshold came out far too low (0.75% out-of-fold FP was 3-5% on each round written later).
``MAX_FP`` (0.25%) was chosen by fitting on the rounds before each later round and scoring
that round's tune items (``ROUNDS``, ``leave_round_out``): round 4 did not separate 0.75% to
0.25%, round 5 (seen by then) favoured 0.25% (README, round 5).
``leave_round_out`` also pools the rounds ("pooled": each round's scores against its own
benign items' cut at each FP level, so one recall per level over every later round's attacks).
Candidates may add training texts built from the training rows only (``augment``: attacks
buried in benign documents, texts in the other label's wrappers; fixed seed) or weigh a text
and its wrapped forms as one item (``per_group``); none is chosen (README, "Model
generalisation").
Deterministic (fixed folds, fixed iteration bounds, seeded augmentation): same corpus, same
file, byte for byte:

    .venv/bin/python benchmarks/train_scanner_model.py            # write the weights, print CV
    .venv/bin/python benchmarks/train_scanner_model.py --check    # exit 1 if the file differs
    .venv/bin/python benchmarks/train_scanner_model.py --compare  # CV of every candidate
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memadmin.quarantine import pi_model as pim  # noqa: E402
from memadmin.quarantine.scanner.normalise import _normalise  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "injection"
FOLDS = 5
MAX_FP = 0.0025
GATE_SHARE = 0.5      # the gate: the out-of-fold score half of tune's benign items pass
DIGITS = 4
FP_LEVELS = (0.005, 0.01, 0.02)
ROUND_2 = 2001        # ids from here on were written for issue 19 (rounds 1 and 2)


@dataclass(frozen=True)
class Candidate:
    """One model to cross-validate: its features and how it is fitted."""

    name: str
    config: pim.Config
    kind: str = "logistic"       # "naive_bayes" (the issue-7 model, its own features),
    #                              "committee" (logistic + naive Bayes on the same features)
    l2: float = 1e-4             # per item, on the mean class-balanced log loss
    mix: float = 0.5             # committee: the naive Bayes share of the summed log-odds
    benign_share: float = 0.5    # of the log loss, the benign items' (the rest injections')
    keep: int = 40_000           # weights kept, the largest |weight|
    min_groups: int = 1          # a feature must occur in this many groups (``groups``) to be
    #                              fitted: one seen in a single hand-written text (and its
    #                              wrapped forms) only memorises that text
    bury: int = 0                # augmentation (``augment``): each training attack buried this
    #                              many times in a training benign text, and as many benign
    #                              texts buried in other benign texts (label 0)
    rewrap: int = 0              # each training text (bare form) put in this many wrappers
    #                              taken from the other label's wrapped items
    per_group: bool = False      # each group (a text and its wrapped forms) weighs as one item


CHOSEN = Candidate("committee: logistic + naive Bayes", pim.Config(char_min=4, char_max=4),
                   kind="committee", l2=1e-4, mix=0.5, keep=40_000)
KEEP = CHOSEN.keep

CANDIDATES = (
    Candidate("naive_bayes (issue 7)", pim.Config(bigrams=False, char_min=4, char_max=4),
              kind="naive_bayes", keep=16_000),
    CHOSEN,
    replace(CHOSEN, name="logistic, char 4-grams", kind="logistic"),
    replace(CHOSEN, name="committee, char 3-5-grams", config=pim.Config()),
    replace(CHOSEN, name="logistic, char 3-5-grams", kind="logistic", config=pim.Config()),
    replace(CHOSEN, name="committee, naive Bayes 0.3", mix=0.3),
    replace(CHOSEN, name="committee, no pairs", config=replace(CHOSEN.config, bigrams=False)),
    replace(CHOSEN, name="committee, benign share 0.7", benign_share=0.7),
    replace(CHOSEN, name="committee, l2 1e-3", l2=1e-3),
    replace(CHOSEN, name="committee, naive Bayes 0.7", mix=0.7),
    replace(CHOSEN, name="committee, 20,000 weights", keep=20_000),
    replace(CHOSEN, name="committee, features in >= 2 groups", min_groups=2),
    replace(CHOSEN, name="committee, features in >= 3 groups", min_groups=3),
    # augmented from the training rows only (``augment``); none earned its place on the
    # leave-one-round-out curve (README, "Model generalisation")
    replace(CHOSEN, name="committee, attacks buried in benign texts", bury=1),
    replace(CHOSEN, name="committee, texts in the other label's wrappers", rewrap=1),
    replace(CHOSEN, name="committee, texts in 2 of the other label's wrappers", rewrap=2),
    replace(CHOSEN, name="committee, buried and rewrapped", bury=1, rewrap=1),
    replace(CHOSEN, name="committee, a text and its wrapped forms weigh as one", per_group=True),
)


# Families whose attack is a shape, not words: encodings and hidden characters are decoded by
# construction (encodings.py, smuggling.py), code and markup matched by their syntax. Trained on
# them, the model learns that "%2F", "<img" or hex digits are suspicious and flags harmless data.
STRUCTURAL = frozenset({"encoded_payload", "invisible_unicode", "code_execution",
                        "markup_injection"})


def tune_rows() -> list[dict[str, Any]]:
    """The tune split, without the malicious items of the ``STRUCTURAL`` families."""
    rows = []
    for name, label in (("malicious.jsonl", 1), ("benign.jsonl", 0)):
        for line in (CORPUS / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if row["split"] == "tune" and not (label and row["family"] in STRUCTURAL):
                    rows.append({**row, "label": label})
    rows.sort(key=lambda row: row["id"])
    return rows


def tune_digest(rows: list[dict[str, Any]]) -> str:
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps([row["id"], row["label"], row["text"]],
                                 ensure_ascii=False).encode("utf-8") + b"\n")
    return digest.hexdigest()


def lowered(rows: list[dict[str, Any]]) -> list[str]:
    """Each row's text as the scanner scores it (``scored_form``)."""
    return scored_form(row["text"] for row in rows)


def scored_form(texts: Iterable[str]) -> list[str]:
    """Texts as the scanner scores them: normalised and lower-cased."""
    return [_normalise(text)[0].lower for text in texts]


# --- the design matrix (rows x features, sparse), numpy ------------------------------------

@dataclass
class Matrix:
    names: list[str]             # feature names, sorted
    row: np.ndarray              # the row of each stored value
    col: np.ndarray              # its feature
    val: np.ndarray              # its value (a count)
    n_rows: int

    def times(self, w: np.ndarray) -> np.ndarray:
        return np.bincount(self.row, weights=self.val * w[self.col], minlength=self.n_rows)

    def transposed_times(self, g: np.ndarray) -> np.ndarray:
        return np.bincount(self.col, weights=self.val * g[self.row], minlength=len(self.names))


def matrix(texts: list[str], config: pim.Config) -> Matrix:
    docs = [pim.features(text, config) for text in texts]
    names = sorted({f for counts in docs for f in counts})
    index = {f: i for i, f in enumerate(names)}
    row, col, val = [], [], []
    for r, counts in enumerate(docs):
        for f in sorted(counts):
            row.append(r)
            col.append(index[f])
            val.append(float(counts[f]))
    return Matrix(names, np.array(row, dtype=np.int64), np.array(col, dtype=np.int64),
                  np.array(val, dtype=np.float64), len(texts))


def subset(m: Matrix, rows: list[int]) -> Matrix:
    """The given rows (renumbered in order), the same columns."""
    where = np.full(m.n_rows, -1, dtype=np.int64)
    where[np.array(rows, dtype=np.int64)] = np.arange(len(rows))
    keep = where[m.row] >= 0
    return Matrix(m.names, where[m.row[keep]], m.col[keep], m.val[keep], len(rows))


# --- fitting ------------------------------------------------------------------------------

# numpy picks its exp, log and dot kernels by the CPU (AVX-512 ones differ from AVX2 ones in
# the last bits), and L-BFGS carries a last-bit difference into a rounded weight: on an
# AVX-512 machine "w:vertraulich" came out 0.0562 where an AVX2 one wrote 0.0563. So the
# training takes exp and log from Python's math and sums products itself (numpy's pairwise
# sum and elementwise products do not depend on the CPU): the same file on every machine.

def _dot(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sum(a * b))


def _exp(a: np.ndarray) -> np.ndarray:
    return np.array([math.exp(min(x, 700.0)) for x in a.tolist()])


def _softplus(a: np.ndarray) -> np.ndarray:
    """log(1 + e^a), without overflow."""
    return np.array([max(x, 0.0) + math.log1p(math.exp(-abs(x))) for x in a.tolist()])


def _log(a: np.ndarray) -> np.ndarray:
    return np.array([math.log(x) for x in a.tolist()])


def fit_logistic(m: Matrix, labels: list[int], l2: float, benign_share: float = 0.5,
                 item_weight: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """Class-balanced L2 logistic regression by L-BFGS (deterministic: fixed order, fixed
    iterations bound, no randomness). Returns (bias, weights); the bias is not penalised."""
    y = np.where(np.array(labels) == 1, 1.0, -1.0)
    each = np.ones(len(y)) if item_weight is None else item_weight
    positives = float(each[y > 0].sum())
    cost = each * np.where(y > 0, (1 - benign_share) / positives,
                           benign_share / (float(each.sum()) - positives))
    n = len(m.names)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:n], theta[n]
        margin = y * (m.times(w) + b)
        value = float(np.sum(cost * _softplus(-margin))) + 0.5 * l2 * _dot(w, w)
        g = -y * cost / (1.0 + _exp(margin))
        grad = np.empty(n + 1)
        grad[:n] = m.transposed_times(g) + l2 * w
        grad[n] = float(np.sum(g))
        return value, grad

    theta = lbfgs(loss, np.zeros(n + 1))
    return float(theta[n]), theta[:n]


def lbfgs(loss: Any, theta: np.ndarray, memory: int = 10, iterations: int = 300,
          tolerance: float = 1e-7) -> np.ndarray:
    """Minimise a smooth convex ``loss`` (value, gradient) by L-BFGS with backtracking."""
    value, grad = loss(theta)
    steps: list[tuple[np.ndarray, np.ndarray, float]] = []
    for _ in range(iterations):
        if float(np.max(np.abs(grad))) < tolerance:
            break
        q = grad.copy()
        alphas = []
        for s, yv, rho in reversed(steps):
            alpha = rho * _dot(s, q)
            alphas.append(alpha)
            q -= alpha * yv
        if steps:
            s, yv, _ = steps[-1]
            q *= _dot(s, yv) / _dot(yv, yv)
        for (s, yv, rho), alpha in zip(steps, reversed(alphas), strict=True):
            beta = rho * _dot(yv, q)
            q += (alpha - beta) * s
        direction = -q
        slope = _dot(grad, direction)
        if slope >= 0:                      # not a descent direction: restart
            steps.clear()
            direction, slope = -grad, -_dot(grad, grad)
        step = 1.0
        while True:
            new_theta = theta + step * direction
            new_value, new_grad = loss(new_theta)
            if new_value <= value + 1e-4 * step * slope or step < 1e-10:
                break
            step *= 0.5
        s, yv = new_theta - theta, new_grad - grad
        if _dot(s, yv) > 1e-12:
            steps.append((s, yv, 1.0 / _dot(s, yv)))
            del steps[:-memory]
        theta, value, grad = new_theta, new_value, new_grad
    return theta


def fit_naive_bayes(m: Matrix, labels: list[int],
                    item_weight: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """The issue-7 model: log ratio of a feature's smoothed frequency among injections to that
    among benign texts (binary presence), the bias the log prior ratio."""
    y = np.array(labels)
    present = (m.val > 0).astype(np.float64)
    if item_weight is not None:
        present = present * item_weight[m.row]
    counts = [np.bincount(m.col, weights=present * (y[m.row] == c), minlength=len(m.names))
              for c in (0, 1)]
    totals = [float(c.sum()) + 0.5 * len(m.names) for c in counts]
    weights = _log((counts[1] + 0.5) / totals[1]) - _log((counts[0] + 0.5) / totals[0])
    positives = int(y.sum())
    return math.log(positives / (len(y) - positives)), weights


def fit(m: Matrix, labels: list[int], candidate: Candidate,
        group: list[int] | None = None) -> tuple[float, dict[str, float]]:
    """(bias, pruned weights rounded to ``DIGITS``) of one candidate; ``group``: each row's
    group, for ``min_groups``."""
    if candidate.min_groups > 1 and group is not None:
        m = in_groups(m, group, candidate.min_groups)
    each = None
    if candidate.per_group and group is not None:
        sizes = Counter(group)
        each = np.array([1.0 / sizes[g] for g in group])
    if candidate.kind == "naive_bayes":
        bias, w = fit_naive_bayes(m, labels, each)
    elif candidate.kind == "committee":
        # one linear model: the two log-odds, each over its spread on the training items,
        # averaged (so the committee costs nothing more to score than either model)
        bias, w = fit_logistic(m, labels, candidate.l2, candidate.benign_share, each)
        nb_bias, nb_w = fit_naive_bayes(m, labels, each)
        spread = float(np.std(m.times(w))) / max(float(np.std(m.times(nb_w))), 1e-12)
        share = candidate.mix * spread
        bias, w = ((1 - candidate.mix) * bias + share * nb_bias,
                   (1 - candidate.mix) * w + share * nb_w)
    else:
        bias, w = fit_logistic(m, labels, candidate.l2, candidate.benign_share, each)
    order = sorted(range(len(w)), key=lambda i: (-abs(round(float(w[i]), DIGITS)),
                                                 m.names[i]))[:candidate.keep]
    weights = {m.names[i]: round(float(w[i]), DIGITS) for i in sorted(order)}
    return round(bias, DIGITS), {f: v for f, v in weights.items() if v != 0}


def in_groups(m: Matrix, group: list[int], least: int) -> Matrix:
    """``m`` without the features that occur in fewer than ``least`` groups of rows."""
    pairs = np.unique(np.stack([m.col, np.array(group, dtype=np.int64)[m.row]]), axis=1)
    spread = np.bincount(pairs[0], minlength=len(m.names))
    keep = spread[m.col] >= least
    return Matrix(m.names, m.row[keep], m.col[keep], m.val[keep], m.n_rows)


def scorer(candidate: Candidate, bias: float, weights: dict[str, float]) -> Any:
    """The score of a normalised lower-cased text as the scanner computes it (the highest
    window; windows as in pi_model.py), in weight units."""
    if candidate.kind == "naive_bayes":     # the issue-7 features, not pi_model's
        def naive(lower: str) -> float:
            return bias + sum(weights.get(f, 0.0) for f in naive_bayes_features(lower))
        return naive
    model = pim.build(candidate.config, bias, 0.0, weights)
    return lambda lower: model.top_score(lower) / pim.SCALE


def naive_bayes_features(lower: str) -> set[str]:
    """The issue-7 features: binary words and character 4-grams across word boundaries."""
    found = {"w:" + t for t in pim.tokens(lower, pim.Config())}
    squeezed = " " + " ".join(lower.split()) + " "
    found.update("c:" + squeezed[i:i + 4] for i in range(len(squeezed) - 3))
    return found


def naive_bayes_matrix(texts: list[str]) -> Matrix:
    docs = [naive_bayes_features(lower) for lower in texts]
    names = sorted(set().union(*docs))
    index = {f: i for i, f in enumerate(names)}
    row = [r for r, doc in enumerate(docs) for _ in doc]
    col = [index[f] for doc in docs for f in sorted(doc)]
    return Matrix(names, np.array(row, dtype=np.int64), np.array(col, dtype=np.int64),
                  np.ones(len(col)), len(texts))


def design(texts: list[str], candidate: Candidate) -> Matrix:
    if candidate.kind == "naive_bayes":
        return naive_bayes_matrix(texts)
    return matrix(texts, candidate.config)


# --- augmentation (tune texts only, fixed seed) ---------------------------------------------

SEED = "PI-MODEL-1 augmentation"
_BOUNDARY_RE = re.compile(r"(?<=[.!?:;\n])\s+")
_SLOT = "\x00"


def _bare_and_wrappers(rows: list[dict[str, Any]]) -> tuple[list[int], list[tuple[int, str]]]:
    """The rows that are a group's bare text (its shortest member), and the wrappers seen: a
    wrapped member with its bare text (found verbatim) replaced by ``_SLOT``, with its label."""
    group = groups(rows)
    members: dict[int, list[int]] = {}
    for i, g in enumerate(group):
        members.setdefault(g, []).append(i)
    bare, wrappers = [], []
    for g in sorted(members):
        ordered = sorted(members[g], key=lambda i: (len(rows[i]["text"]), rows[i]["id"]))
        bare.append(ordered[0])
        text = rows[ordered[0]]["text"]
        for i in ordered[1:]:
            if text and text in rows[i]["text"] and _SLOT not in rows[i]["text"]:
                wrappers.append((rows[i]["label"], rows[i]["text"].replace(text, _SLOT, 1)))
    return sorted(bare), sorted(set(wrappers))


def augment(rows: list[dict[str, Any]], candidate: Candidate) -> tuple[list[str], list[int]]:
    """Extra training texts (raw) and labels, built from ``rows`` only, deterministically:
    ``bury``: an attack's bare text put between two sentences of a benign bare text (an order
    pasted into a document must outweigh its surroundings), and as many benign bare texts put
    into other benign ones (label 0: a text inside another is no signal in itself);
    ``rewrap``: bare texts in the wrappers of the other label (a wrapper is no signal)."""
    rng = random.Random(SEED)
    bare, wrappers = _bare_and_wrappers(rows)
    attacks = [i for i in bare if rows[i]["label"] == 1]
    benign = [i for i in bare if rows[i]["label"] == 0]
    texts: list[str] = []
    labels: list[int] = []
    if not benign:
        return texts, labels

    def bury(inner: str) -> str:
        host = rows[rng.choice(benign)]["text"]
        cuts = [0, *(m.end() for m in _BOUNDARY_RE.finditer(host)), len(host)]
        at = rng.choice(cuts)
        return host[:at].rstrip() + ("\n" if "\n" in host else " ") + inner + " " + host[at:]

    for _ in range(candidate.bury):
        for i in attacks:
            texts.append(bury(rows[i]["text"]))
            labels.append(1)
        for i in rng.sample(benign, min(len(benign), len(attacks))):
            texts.append(bury(rows[i]["text"]))
            labels.append(0)
    by_label = {label: [w for lab, w in wrappers if lab != label] for label in (0, 1)}
    for _ in range(candidate.rewrap):
        for i in bare:
            pool = by_label[rows[i]["label"]]
            if pool:
                texts.append(rng.choice(pool).replace(_SLOT, rows[i]["text"]))
                labels.append(rows[i]["label"])
    return texts, labels


def fit_rows(rows: list[dict[str, Any]], texts: list[str], m: Matrix | None,
             candidate: Candidate,
             group: list[int] | None = None) -> tuple[float, dict[str, float]]:
    """``fit`` on these rows (``m`` their design matrix if built, ``group`` their groups if
    known), augmented as the candidate says, from these rows only (an augmented text is a
    group of its own)."""
    labels = [row["label"] for row in rows]
    if group is None:
        group = groups(rows)
    if candidate.bury or candidate.rewrap:
        extra, extra_labels = augment(rows, candidate)
        texts = texts + scored_form(extra)
        labels = labels + extra_labels
        m = design(texts, candidate)
        group = group + list(range(-1, -len(extra) - 1, -1))
    elif m is None:
        m = design(texts, candidate)
    return fit(m, labels, candidate, group)


# --- cross-validation ---------------------------------------------------------------------

SHINGLE = 8           # words: two texts sharing a run of this many words are one group
MAX_SIBLINGS = 4      # ... unless the run is in more rows than a text has forms


def _runs(text: str) -> set[tuple[str, ...]]:
    """The runs of ``SHINGLE`` words of a text (its words, when it has fewer)."""
    found = pim.tokens(text.lower(), pim.Config())
    if len(found) < SHINGLE:
        return {tuple(found)}
    return {tuple(found[j:j + SHINGLE]) for j in range(len(found) - SHINGLE + 1)}


def groups(rows: list[dict[str, Any]]) -> list[int]:
    """A group number per row: a hand-written text and its wrapped forms (a text inside an
    e-mail, a JSON string, a log line) share runs of words, so rows sharing a run of
    ``SHINGLE`` words (or the same words, when shorter) are one group (union-find). Folds that
    split a group score a text the model was trained on, in another wrapper: optimistic."""
    parent = list(range(len(rows)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    runs = [_runs(row["text"]) for row in rows]
    rows_with: dict[tuple[str, ...], int] = {}
    for found in runs:
        for run in found:
            rows_with[run] = rows_with.get(run, 0) + 1
    seen: dict[tuple[str, ...], int] = {}
    for i, found in enumerate(runs):
        # a run in many rows is a wrapper's own text (a forwarded-message header), not a
        # shared hand-written text
        for run in sorted(r for r in found if rows_with[r] <= MAX_SIBLINGS):
            if run in seen:
                parent[root(i)] = root(seen[run])
            else:
                seen[run] = i
    return [root(i) for i in range(len(rows))]


def folds(rows: list[dict[str, Any]]) -> list[int]:
    """A deterministic stratified fold number per row, whole groups (``groups``) to a fold:
    within each (label, family) of a group's first row, groups in order of the sha256 of that
    row's text take folds 0, 1, ..., FOLDS-1 in turn."""
    group = groups(rows)
    members: dict[int, list[int]] = {}
    for i, g in enumerate(group):
        members.setdefault(g, []).append(i)
    by_key: dict[tuple[int, str], list[int]] = {}
    for g, rows_of in members.items():
        first = rows[min(rows_of)]
        by_key.setdefault((first["label"], first["family"]), []).append(g)
    fold = [0] * len(rows)
    offset = 0
    for key in sorted(by_key):
        ordered = sorted(by_key[key], key=lambda g: hashlib.sha256(
            rows[min(members[g])]["text"].encode("utf-8")).hexdigest())
        for n, g in enumerate(ordered):
            for i in members[g]:
                fold[i] = (n + offset) % FOLDS
        offset += len(ordered)
    return fold


def threshold_for(benign_scores: list[float], max_fp: float = MAX_FP) -> float:
    """The lowest threshold (score > threshold flags) that keeps the FP rate <= max_fp."""
    ordered = sorted(benign_scores, reverse=True)
    allowed = math.floor(max_fp * len(ordered))
    # flag only scores above the (allowed+1)-th highest benign score
    return round(ordered[allowed], DIGITS)


def out_of_fold(rows: list[dict[str, Any]], texts: list[str], m: Matrix,
                candidate: Candidate) -> list[float]:
    """Each row's score by the model fitted on the other folds, computed as the scanner
    computes it (the runtime scorer with those weights, windows included)."""
    fold = folds(rows)
    group = groups(rows)
    oof = [0.0] * len(rows)
    for k in range(FOLDS):
        train = [i for i in range(len(rows)) if fold[i] != k]
        bias, weights = fit_rows([rows[i] for i in train], [texts[i] for i in train],
                                 subset(m, train), candidate, [group[i] for i in train])
        score = scorer(candidate, bias, weights)
        for i in range(len(rows)):
            if fold[i] == k:
                oof[i] = score(texts[i])
    return oof


def rates(hit: list[bool], rows: list[dict[str, Any]]) -> dict[str, Any]:
    mal = [h for h, row in zip(hit, rows, strict=True) if row["label"] == 1]
    ben = [h for h, row in zip(hit, rows, strict=True) if row["label"] == 0]
    hard = [h for h, row in zip(hit, rows, strict=True) if row["label"] == 0 and row["hard"]]
    families: dict[str, list[bool]] = {}
    for h, row in zip(hit, rows, strict=True):
        if row["label"] == 1:
            families.setdefault(row["family"], []).append(h)
    return {"recall": round(sum(mal) / len(mal), 3), "fp": round(sum(ben) / len(ben), 3),
            "fp_hard": round(sum(hard) / len(hard), 3) if hard else 0.0,
            "families": {f: round(sum(v) / len(v), 3) for f, v in sorted(families.items())}}


def curve(scored: list[float], rows: list[dict[str, Any]]) -> dict[str, float]:
    """Recall at the thresholds that keep FP <= each of ``FP_LEVELS``."""
    benign = [s for s, row in zip(scored, rows, strict=True) if row["label"] == 0]
    malicious = [s for s, row in zip(scored, rows, strict=True) if row["label"] == 1]
    out = {}
    for level in FP_LEVELS:
        cut = threshold_for(benign, level)
        out[f"recall_at_fp_{level}"] = round(sum(s > cut for s in malicious) / len(malicious), 3)
    return out


def window_counts(texts: list[str], config: pim.Config) -> list[int]:
    """How many windows each text is scored as (``pim.windows``: one for ``pim.WINDOW`` words
    or fewer)."""
    return [pim.windows(len(pim.tokens(text, config))) for text in texts]


class Cut(NamedTuple):
    threshold: float            # the highest cut (``pim.cut_for``)
    short_threshold: float      # one window's
    slope: float                # the rise per ln(windows)

    def of(self, n_windows: int) -> int:
        """The cut x SCALE of a text of ``n_windows`` windows, as the scanner computes it."""
        return pim.cut_for(n_windows, round(self.short_threshold * pim.SCALE),
                           round(self.slope * pim.SCALE), round(self.threshold * pim.SCALE))


def cuts(scores: list[float], rows: list[dict[str, Any]], counts: list[int]) -> Cut:
    """The cut (``pim.cut_for``): the threshold rule (``threshold_for``) on the benign texts of
    one window gives ``short_threshold``; for the texts of several, of every (highest cut,
    slope) that flags at most ``MAX_FP`` of their benign ones (each highest cut from the one
    the threshold rule gives all of them, up by 0.1, with the least slope that keeps to it),
    the one that flags most of their malicious ones (the lowest highest cut of equals)."""
    short = threshold_for([s for s, row, n in zip(scores, rows, counts, strict=True)
                           if row["label"] == 0 and n == 1])
    longer = [(round(s * pim.SCALE), n, row["label"])
              for s, row, n in zip(scores, rows, counts, strict=True) if n > 1]
    benign = [(s, n) for s, n, label in longer if label == 0]
    malicious = [(s, n) for s, n, label in longer if label == 1]
    allowed = math.floor(MAX_FP * len(benign))
    lowest = round(threshold_for([s / pim.SCALE for s, _ in benign]) * pim.SCALE)
    best: tuple[int, Cut] | None = None
    for cap in range(lowest, max(s for s, _ in benign) + 1000, 1000):
        over = sum(s > cap for s, _ in benign)
        if over > allowed:
            continue
        # below the highest cut, a benign text stays clean while the slope is at least
        # (score - short) / ln(windows): the slope lets the (allowed - over) most demanding pass
        needs = sorted(((s - short * pim.SCALE) / math.log(n) for s, n in benign if s <= cap),
                       reverse=True)
        slope = math.ceil(max(needs[allowed - over], 0.0)) if len(needs) > allowed - over else 0
        cut = Cut(cap / pim.SCALE, short, slope / pim.SCALE)
        while sum(s > cut.of(n) for s, n in benign) > allowed:     # rounding in ``cut_for``
            slope += 1
            cut = Cut(cap / pim.SCALE, short, slope / pim.SCALE)
        caught = sum(s > cut.of(n) for s, n in malicious)
        if best is None or caught > best[0]:
            best = (caught, cut)
    assert best is not None
    return best[1]


def hits(scores: list[float], counts: list[int], cut: Cut) -> list[bool]:
    return [round(s * pim.SCALE) > cut.of(n) for s, n in zip(scores, counts, strict=True)]


def cross_validate(rows: list[dict[str, Any]], texts: list[str], m: Matrix,
                   candidate: Candidate) -> dict[str, Any]:
    oof = out_of_fold(rows, texts, m, candidate)
    counts = window_counts(texts, candidate.config)
    cut = cuts(oof, rows, counts)
    benign = [s for s, row in zip(oof, rows, strict=True) if row["label"] == 0]
    return {"threshold": cut.threshold, "short_threshold": cut.short_threshold,
            "slope": cut.slope,
            "gate": threshold_for(benign, GATE_SHARE), **curve(oof, rows),
            "model": rates(hits(oof, counts, cut), rows)}


# Rounds of the corpus by id (README): each is scored by a model fitted on the rounds
# before it only, its threshold chosen as the committed one is (grouped out-of-fold FP on
# those rounds): how the model does on a round written after it.
ROUNDS = {"issue 19 rounds 1-3b": (ROUND_2, 5001), "round 4": (5001, 6001),
          "round 5": (6001, 7001), "round 6": (7001, 8001), "round 7": (8001, 9001),
          "round 8": (9001, 10001), "round 9": (10001, 11001), "round 10": (11001, 12001),
          "round 11": (12001, 13001), "round 12": (13001, 14001),
          "round 13": (14001, 15001), "round 14": (15001, 16001),
          "round 15": (16001, 17001), "round 16": (17001, 18001),
          "round 17": (18001, 19001), "round 18": (19001, 20001),
          "round 19": (20001, 21001), "round 20": (21001, 22001),
          "round 21": (22001, 23001), "round 22": (23001, 24001),
          "round 23": (24001, 25001), "round 24": (25001, 10**9)}


def leave_round_out(rows: list[dict[str, Any]], texts: list[str],
                    candidate: Candidate) -> dict[str, Any]:
    """Each of ``ROUNDS`` scored by the model fitted on the tune items written before it
    (other phrasings than the ones fitted: a stand-in for what an independent corpus
    measures), at the threshold the earlier rounds' grouped folds give and along the curve."""
    out: dict[str, Any] = {}
    pooled_hits: list[bool] = []
    pooled_rows: list[dict[str, Any]] = []
    pooled_margins: dict[float, list[float]] = {}
    for name, (first, last) in ROUNDS.items():
        old = [i for i, row in enumerate(rows) if int(row["id"][2:]) < first]
        new = [i for i, row in enumerate(rows) if first <= int(row["id"][2:]) < last]
        old_rows, old_texts = [rows[i] for i in old], [texts[i] for i in old]
        m = design(old_texts, candidate)
        bias, weights = fit_rows(old_rows, old_texts, m, candidate)
        score = scorer(candidate, bias, weights)
        scored = [score(texts[i]) for i in new]
        old_cuts = cuts(out_of_fold(old_rows, old_texts, m, candidate), old_rows,
                        window_counts(old_texts, candidate.config))
        new_rows = [rows[i] for i in new]
        new_hits = hits(scored, window_counts([texts[i] for i in new], candidate.config),
                        old_cuts)
        out[name] = {**curve(scored, new_rows), "at_old_threshold": rates(new_hits, new_rows)}
        pooled_hits += new_hits
        pooled_rows += new_rows
        # each round's scores less its own cut at each FP level, so one curve over all rounds
        # ranks every round's items against that round's benign ones
        for level in FP_LEVELS:
            cut = threshold_for([s for s, row in zip(scored, new_rows, strict=True)
                                 if row["label"] == 0], level)
            pooled_margins.setdefault(level, []).extend(s - cut for s in scored)
    out["pooled"] = {
        **{f"recall_at_fp_{level}": round(sum(
            margin > 0 for margin, row in zip(margins, pooled_rows, strict=True)
            if row["label"] == 1) / sum(row["label"] for row in pooled_rows), 3)
           for level, margins in pooled_margins.items()},
        "at_old_threshold": rates(pooled_hits, pooled_rows)}
    return out


def with_rules(rows: list[dict[str, Any]], model_hit: list[bool]) -> dict[str, Any]:
    from memadmin.quarantine.scanner import scan

    # the rules alone (PI-MODEL-1 left out: it is the model being written); they were written
    # on tune, so "rules or model" on tune is optimistic
    rules = [bool(set(scan(row["text"]).rules) - {"PI-MODEL-1"}) for row in rows]
    return {"rules": rates(rules, rows),
            "rules_or_model": rates([a or b for a, b in zip(model_hit, rules, strict=True)],
                                    rows)}


def train() -> tuple[bytes, dict[str, Any]]:
    rows = tune_rows()
    texts = lowered(rows)
    m = design(texts, CHOSEN)
    cv = cross_validate(rows, texts, m, CHOSEN)
    bias, weights = fit_rows(rows, texts, m, CHOSEN)
    stored = {
        "about": "PI-MODEL-1 weights: a committee of class-balanced L2 logistic regression and "
                 "naive Bayes over the same features (log-odds averaged, one linear model), "
                 "fitted on the tune split only by benchmarks/train_scanner_model.py",
        "config": asdict(CHOSEN.config),
        "fit": {"kind": CHOSEN.kind, "l2": CHOSEN.l2, "mix": CHOSEN.mix,
                "benign_share": CHOSEN.benign_share, "keep": CHOSEN.keep,
                "min_groups": CHOSEN.min_groups},
        "tune_sha256": tune_digest(rows),
        "tune_items": len(rows),
        "cv": {"folds": FOLDS, "max_fp": MAX_FP, **cv},
        "bias": bias,
        "threshold": cv["threshold"],
        "short_threshold": cv["short_threshold"],
        "slope": cv["slope"],
        "gate": cv["gate"],
        "weights": weights,
    }
    data = json.dumps(stored, ensure_ascii=False, sort_keys=True, indent=0).encode("utf-8")
    return data + b"\n", cv


def compare(numbers: list[int]) -> None:
    """Every candidate: k-fold out-of-fold figures on tune and the leave-one-round-out check."""
    rows = tune_rows()
    texts = lowered(rows)
    for number, candidate in enumerate(CANDIDATES):
        if numbers and number not in numbers:
            continue
        m = design(texts, candidate)
        cv = cross_validate(rows, texts, m, candidate)
        lro = leave_round_out(rows, texts, candidate)
        print(json.dumps({"candidate": candidate.name, "cv": cv, "leave_round_out": lro}))
        sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the weights file differs from a fresh training")
    parser.add_argument("--compare", nargs="*", type=int, metavar="N",
                        help="cross-validate every candidate (or those numbered N) on tune; "
                             "writes nothing")
    parser.add_argument("--rules", action="store_true",
                        help="also print the rules' and 'rules or model' figures on tune")
    args = parser.parse_args()
    if args.compare is not None:
        compare(args.compare)
        return
    data, cv = train()
    if args.rules:
        rows = tune_rows()
        texts = lowered(rows)
        oof = out_of_fold(rows, texts, design(texts, CHOSEN), CHOSEN)
        cut = Cut(cv["threshold"], cv["short_threshold"], cv["slope"])
        cv = {**cv, **with_rules(rows, hits(oof, window_counts(texts, CHOSEN.config), cut))}
    print(json.dumps(cv, indent=1))
    from support import write_or_check  # (here: the tests load this module on its own)

    write_or_check(pim.WEIGHTS_PATH, data, check=args.check)


if __name__ == "__main__":
    main()
