"""The prompt-injection scanner: explainable rules over text an agent is about to remember.

Pure Python (no Django, no database), called inside the write transaction, so it is cheap and
linear-time. ``scan(text)`` runs, cheapest first:

1. Invisible and direction-changing Unicode. Tag characters (U+E0000-E007F) outside an emoji
   subdivision flag, a bidi override (or an embedding/isolate in text without right-to-left
   letters) and zero-width characters splitting words are flagged on their own; all of them are
   then stripped for the later checks, keeping a map back to the original indices.
2. Look-alikes: NFKC (fullwidth letters, ligatures) and, only inside a word that mixes Latin with
   Cyrillic or Greek, look-alike letters mapped to the word's main script. Such a word is flagged
   on its own; genuine Russian or Greek prose has no mixed words and is left untouched. An ASCII
   text skips this step; a long text is folded only in the blocks that need it.
3. Rule families as bounded regular expressions over the lower-cased normalised text, with
   phrasings in en, de, fr, es, pt, it, ru, zh, ja, nl and pl, written as structure (a verb
   class, a bounded gap, an object class) rather than as sentences. Each rule part names anchors
   (the literal its matches start with) and may name required words; one pass over the text
   indexes where words start, and a part runs only if its anchors (and one required word) occur,
   only at those places. So a long ordinary text costs one index and a few regex matches.
4. Base64 and hex blocks (at most ``MAX_BLOCKS`` blocks, ``MAX_DECODED`` bytes each) that decode
   to mostly printable UTF-8 are rescanned; a match inside yields a ``PI-ENCODED-1`` span
   covering the whole block. A cheap pass first shows whether any such block can exist.
5. ``PI-MODEL-1`` (``model.py``): a naive Bayes model over word and character n-grams of the
   normalised text, fitted on the corpus's tune split only
   (``benchmarks/train_scanner_model.py``, weights in ``model_weights.json``, whose sha256 is
   part of the version), scored in windows; its spans are the matched words that weigh most.

Every shortcut (index, gates, chunked folding, prefilters) has a plain reference path,
``_scan(text, gated=False)``; the tests check both give the same verdict over the corpus.

Every span is ``(start, end, rule_id)`` in Python ``str`` indices of the ORIGINAL text, so a
reviewer sees ``text[start:end]`` highlighted. Every pattern bounds its gaps (``{0,n}``) and has
no nested unbounded quantifier, so the cost stays linear in the length of the text.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import functools
import hashlib
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from memadmin.quarantine import pi_model as _pim

__all__ = ["RULES", "RULESET_VERSION", "Rule", "Verdict", "rule", "ruleset_digest", "scan"]


@dataclass(frozen=True)
class Rule:
    id: str            # stable, shown to reviewers
    category: str      # the attack family
    explanation: str   # one plain-English sentence


@dataclass(frozen=True)
class Verdict:
    flagged: bool
    rules: tuple[str, ...]                   # ids of the rules that matched, sorted, unique
    spans: tuple[tuple[int, int, str], ...]  # (start, end, rule_id) into the original text
    version: str                             # == RULESET_VERSION


@dataclass(frozen=True)
class _Part:
    """One regex of a rule: a match starts at one of ``leads`` (each begins with a literal, its
    anchor), continues with ``rest``; ``word``: the lead starts a word; ``before``: a regex that
    must match the text right before the lead (ending in ``\\Z``); ``requires``: cheap words
    of which a text must contain one for the part to be tried at all."""

    leads: tuple[str, ...]
    rest: str
    word: bool
    before: str | None
    requires: tuple[str, ...]      # one of these must occur in the text (a word start, if a word)


@dataclass(frozen=True)
class _Spec:
    """A rule and what it matches: regex parts or, for a check written in code, a description
    of the check and its parameters (so a changed threshold changes the version too)."""

    id: str
    category: str
    explanation: str
    pattern: str | tuple[_Part, ...]


MAX_BLOCKS = 16          # encoded blocks decoded per text
MAX_DECODED = 4096       # bytes decoded per block
MIN_B64 = 24             # characters in a base64 block before it is decoded
MIN_HEX = 24             # hex digits in a hex block before it is decoded
PRINTABLE_SHARE = 0.9    # share of printable characters for decoded bytes to count as text
MIN_ZW_SPLITS = 2        # zero-width characters inside words before that is flagged
MAX_SPANS_PER_RULE = 100  # spans kept per rule (a reviewer needs the first ones, not 30,000)

_CODE_SPECS: tuple[_Spec, ...] = (
    _Spec("PI-UNICODE-TAG", "invisible_unicode",
          "Invisible Unicode tag characters carry hidden text that a model reads but a person "
          "does not see.",
          "tag characters U+E0000-E007F, except an emoji subdivision flag "
          "U+1F3F4 [tag a-z 0-9]{2,7} U+E007F"),
    _Spec("PI-UNICODE-BIDI", "invisible_unicode",
          "A bidirectional-text control character changes the order in which the text is "
          "displayed, so what a person reads differs from what a model reads.",
          "U+202D/U+202E anywhere; U+202A/U+202B/U+2066-U+2068 in text without right-to-left "
          "letters; the span runs to the closing U+202C/U+2069 or the end of the line"),
    _Spec("PI-UNICODE-ZW", "invisible_unicode",
          "Zero-width characters split words, a way to slip keywords past filters while the text "
          "looks normal.",
          f"at least {MIN_ZW_SPLITS} zero-width characters (U+200B-U+200D, U+2060, U+FEFF, "
          "U+00AD, U+180E) between Latin, Cyrillic or Greek letters"),
    _Spec("PI-HOMOGLYPH-1", "homoglyph",
          "A word mixes Latin letters with look-alike Cyrillic or Greek letters, a way to "
          "disguise words such as 'ignore' or 'system'.",
          "after NFKC, a word of Latin and Cyrillic/Greek letters whose minority-script letters "
          "are all look-alikes of the majority script"),
    _Spec("PI-ENCODED-1", "encoded_payload",
          "An encoded block (base64 or hex) decodes to text that itself contains a prompt "
          "injection.",
          f"base64/base64url >= {MIN_B64} chars, hex >= {MIN_HEX} digits (plain, spaced, \\x); "
          f"<= {MAX_BLOCKS} blocks of <= {MAX_DECODED} bytes; >= {PRINTABLE_SHARE} printable "
          "UTF-8; rescanned with every rule"),
)


def _alt(*words: str) -> str:
    return "(?:" + "|".join(words) + ")"


def _falt(*words: str) -> str:
    """``_alt`` factored by first character (same language), for long lists: the regex
    engine then tests a few branches per position instead of every word."""
    groups: dict[str, list[str]] = {}
    rest: list[str] = []
    for word in words:
        first = word[:1]
        if first.isalnum() and word[1:2] not in ("?", "*", "+", "{"):
            groups.setdefault(first, []).append(word[1:])
        else:
            rest.append(word)
    branches = [first + (_alt(*tails) if len(tails) > 1 else tails[0]) if any(tails)
                else first + (_alt(*tails) if len(tails) > 1 else "")
                for first, tails in groups.items()]
    return _alt(*branches, *rest)


# Reusable fragments. Gaps are bounded and do not cross a sentence end.
_B = r"(?<![^\W_])"              # word start: no letter or digit right before
_E = r"(?![^\W_])"               # word end
_GAP = r"[^.!?\n]{0,40}?"
_GAP20 = r"[^.!?\n]{0,20}?"
_LONG = r"[^\n]{0,80}?"
_CJK_GAP = r"[^。！？\n]{0,12}"

_OVERRIDE_VERBS = (r"ignore", r"ignoring", r"disregard", r"forget", r"override", r"overrule",
                   r"bypass", r"skip", r"discard", r"neglect", r"abandon", r"set\s+aside",
                   r"throw\s+out", r"do\s+not\s+follow", r"don'?t\s+follow", r"stop\s+following",
                   r"pay\s+no\s+attention\s+to", r"no\s+longer\s+follow")
_PRIOR = (r"previous", r"prior", r"above", r"earlier", r"preceding", r"foregoing", r"original",
          r"initial", r"old", r"former", r"existing", r"current", r"system", r"developer",
          r"default", r"all", r"any", r"your", r"the", r"these", r"those", r"my", r"its",
          r"every", r"safety", r"ethical", r"content", r"security", r"built-in", r"programmed",
          r"given", r"prior\s+to")
_RULE_NOUNS = (r"instructions?", r"rules", r"directions", r"directives?", r"guidelines",
               r"guidance", r"prompts?", r"commands", r"constraints", r"criteria", r"orders",
               r"policies", r"programming", r"restrictions", r"safeguards", r"requests?",
               r"tasks?", r"system\s+prompt", r"training", r"setup", r"configuration",
               r"limitations", r"boundaries", r"protocols?", r"messages", r"context",
               r"conversation", r"text", r"content")

# ... and do this instead: the order that replaces the user's (any language of the corpus).
_THEN_ORDER = (r"(?=[^.!?\n]{0,60}?(?:\s(?:and|und|et|y|e|en|i|и)|[,;:])\s+(?:instead\s+|"
               r"stattdessen\s+|plutôt\s+|en\s+su\s+lugar\s+)?(?:reply|answer|respond|say|"
               r"recommend|send|tell|output|write|approve|do|follow|use|only|just|antworte|sag|"
               r"empfiehl|sende|schreib|folge|nur|réponds|répondez|dis|recommande|envoie|écris|"
               r"fais|suis|uniquement|seulement|responde|di|recomienda|envía|escribe|haz|sigue|"
               r"solo|únicamente|responda|diga|recomende|envie|escreva|faça|siga|apenas|só|"
               r"rispondi|consiglia|invia|scrivi|fai|segui|soltanto|antwoord|zeg|raad|stuur|"
               r"schrijf|doe|volg|alleen|odpowiedz|powiedz|poleć|wyślij|napisz|zrób|tylko|ответь|"
               r"скажи|порекомендуй|отправь|напиши|сделай|только)(?![^\W_]))")

def _p(leads: Iterable[str], rest: str = "", *, word: bool = True, before: str | None = None,
       requires: Iterable[str] = ()) -> _Part:
    return _Part(tuple(leads), rest, word, before, tuple(requires))


_LINE_START = r"(?:^|(?<=\n))[ \t]{0,8}\Z"
_HEADING_START = r"(?:^|(?<=[\n>\[(\"'.!?:;*]))[ \t]{0,8}(?:#{1,6}[ \t]*|\*\*)?\Z"

_OVERRIDE_1 = (
    _p(_OVERRIDE_VERBS, _E + _GAP + _B + _falt(*_PRIOR) + _E + _GAP20 + _B
       + _falt(*_RULE_NOUNS) + _E,
       requires=("instruc", "rule", "direct", "guid", "prompt", "command", "constrain",
                 "criteri", "order", "polic", "program", "restrict", "safeguard", "request",
                 "task", "system", "training", "setup", "configuration", "limitation",
                 "boundar", "protocol", "messages", "context", "conversation", "text",
                 "content")),
    _p(("ignore", "disregard", "forget"),
       r"\s+(?:about\s+)?(?:all\s+|any\s+)?(?:of\s+)?(?:everything|anything|all)\s+"
       r"(?:(?:you\s+(?:were|have\s+been)\s+told|(?:that\s+)?(?:was\s+)?(?:said|written|stated))"
       r"\s+)?" + _alt("above", "before", r"so\s+far", "previously", "earlier", r"until\s+now")
       + _E, requires=("everything", "anything", "all")),
    _p(_OVERRIDE_VERBS, _E + r"[^.!?\n]{0,60}?(?:\band|,)\s+instead" + _E,
       requires=("instead",)),
    _p(("ignore", "disregard", "forget"), r"\s+(?:all\s+|about\s+)?(?:everything|anything|"
       r"whatever)\s+(?:(?:you(?:'ve|\s+have|\s+were|\s+are)?|i|we)\s+"
       r"(?:been\s+)?(?:told|said|instructed|learned|know|wrote|given)|"
       r"(?:that\s+)?(?:came|comes|was|is|appears)\s+(?:before|above|earlier|prior))" + _E),
    _p(("new", "updated", "revised", "real", "actual", "override"),
       r"\s+(?:system\s+)?instructions?\s*(?:for\s+(?:the\s+)?(?:ai|assistant|model)\s*)?"
       r"[:：-]"),
    _p(("from",), r"\s+now\s+on,?\s+(?:you|your)\s+(?:will|must|shall|should|are\s+to)\s+"
       r"(?:only|always|never|ignore|obey|follow|respond|answer|reply)" + _E),
    _p(("note", "message", "instructions?", "attention", "important"),
       r"[^.!?\n:]{0,30}?\s(?:to|for)\s+(?:any|all|the)?\s*(?:ai|llm|assistants?|chatbots?|"
       r"language\s+models?|models?|bots?|agents?)\b[^.!?\n:]{0,50}[:：]",
       requires=("ai", "llm", "assistant", "chatbot", "language", "model", "bot", "agent")),
)
_OVERRIDE_1_MORE = (
    # (A3) the text before, without naming instructions, then a replacement order
    _p(("ignore", "disregard", "forget", "skip"),
       r"\s+(?:all\s+(?:of\s+)?)?(?:the\s+|everything\s+)?(?:above|foregoing|preceding|previous|"
       r"prior|earlier)(?:\s+(?:text|content|part|section|context|lines|prompt))?" + _E
       + r"\s*(?:,|;|:|\s+and)\s+(?:instead\s+|now\s+|just\s+|only\s+)?(?:say|reply|answer|"
       r"respond|write|print|output|tell|do|follow|translate|recommend|send|return|repeat)"
       + _E),
    _p(("stop",), r"\s+(?:what\s+you(?:'re|\s+are)\s+doing|everything|your\s+(?:current\s+)?"
       r"(?:task|work|summary|translation))" + _E + r"[^.!?\n]{0,20}?(?:\band\s+|,\s*|\.\s*)"
       r"(?:instead|now)\b"),
)
_OVERRIDE_2 = (
    _p(("previous", "prior", "earlier", "above", "original", "initial", "system", "old"),
       r"\s+" + _GAP20 + _alt(r"instructions?", "rules", "guidelines", "directives")
       + r"\s+" + _GAP20 + r"(?:are|is|were|was)\s+(?:now\s+|hereby\s+|just\s+|only\s+)?"
       + _alt("void", "invalid", "null", r"cancell?ed", "revoked", "obsolete", "suspended",
              r"no\s+longer\s+(?:valid|in\s+effect|apply|applicable|binding)",
              r"an?\s+(?:test|joke|decoy|trick)", "fake", r"not\s+real") + _E),
    _p(("everything", "all"), r"\s+(?:written\s+|said\s+)?above\s+" + _GAP
       + r"(?:should|must|can|is\s+to)\s+be\s+(?:ignored|disregarded|forgotten)" + _E),
    _p((r"the\s+real", "real"), r"\s+instructions\s+(?:start|begin|are|follow)" + _E,
       requires=("instructions",)),
    _p(("your",), r"\s+(?:new|real|actual|true|only)\s+"
       + _alt("task", r"instructions?", "job", "role", "goal", "objective", "mission",
              "purpose") + r"\s+(?:is|are|will\s+be|now\s+is)" + _E),
    _p(("instructions",), r"\s+you\s+(?:received|were\s+given|got)\s+(?:earlier|before|"
       r"previously|so\s+far)\s+" + _GAP20 + r"(?:no\s+longer|not)\s+valid" + _E),
)
_OVERRIDE_3 = (
    # de
    _p((r"ignorier\w*", r"missacht\w*", "vergiss", r"vergessen\s+sie", "verwirf",
        r"übergeh\w*", r"befolge\s+nicht", r"folge\s+nicht", r"beachte\s+nicht"),
       _E + _GAP + _alt(r"vorherig\w*", r"vorig\w*", r"obig\w*", r"bisherig\w*", r"früher\w*",
                        r"ursprünglich\w*", r"alle\w*", r"deine\w*", r"ihre\w*", r"sämtlich\w*")
       + r"\s+" + _GAP20
       + _alt(r"anweisung\w*", "regeln", "vorgaben", r"instruktion\w*", r"richtlinie\w*",
              "befehle", r"anordnung\w*", r"aufgabe\w*"),
       requires=("anweis", "regel", "vorgab", "instrukt", "richtlin", "befehl", "anordn",
                 "aufgab")),
    _p((r"vorherig\w*", r"bisherig\w*", r"früher\w*", r"obig\w*"),
       r"\s+" + _alt(r"anweisung\w*", "regeln", "vorgaben", r"instruktion\w*")
       + r"\s+(?:sind|ist)\s+(?:ab\s+sofort\s+|jetzt\s+|nun\s+)?"
       + _alt("ungültig", "aufgehoben", "nichtig", "hinfällig")),
    _p(("deine", "ihre"), r"\s+neue\s+aufgabe" + _E),
    # fr
    _p((r"ignore[rz]?", r"oublie[rz]?", r"fais\s+abstraction\s+d", r"faites\s+abstraction\s+d",
        r"ne\s+(?:tiens|tenez)\s+(?:pas\s+)?compte\s+d", r"ne\s+suis\s+pas", r"ne\s+suivez\s+pas",
        r"écarte[rz]?", r"outrepasse[rz]?"),
       _GAP + _alt(r"instructions?", r"consignes?", "règles", "directives", "indications")
       + r"\s+" + _alt("précédentes", "antérieures", "initiales", "d'origine", "originales",
                       "ci-dessus", "reçues"),
       requires=("instruc", "consign", "règle", "directive", "indication")),
    _p(("ta", "votre"), r"\s+nouvelle\s+" + _alt("tâche", "mission", "consigne") + _E,
       requires=("nouvelle",)),
    # es
    _p(("ignora", "ignore", "ignoren", "olvida", "olvide", "olvidad", r"haz\s+caso\s+omiso\s+de",
        r"haga\s+caso\s+omiso\s+de", r"no\s+sigas", r"no\s+siga", "descarta", "omite"),
       _E + _GAP + _alt("instrucciones", "reglas", "indicaciones", "directrices", "normas",
                        "órdenes")
       + r"\s+" + _alt("anteriores", "previas", "originales", "iniciales", r"de\s+antes",
                       r"de\s+arriba", "recibidas"),
       requires=("instruc", "regla", "indicac", "directri", "norma", "órden")),
    _p(("tu", "su"), r"\s+nueva\s+" + _alt("tarea", "misión", "instrucción") + _E,
       requires=("nueva",)),
    # pt
    _p(("ignore", "ignora", "desconsidere", "desconsidera", "esqueça", "esquece", r"não\s+siga",
        "descarte"),
       _E + _GAP + _alt("instruções", "regras", "orientações", "diretrizes", "indicações",
                        "ordens")
       + r"\s+" + _alt("anteriores", "prévias", "originais", "iniciais", "acima", r"de\s+cima",
                       "recebidas", "dadas"),
       requires=("instru", "regra", "orienta", "diretri", "indica", "orden")),
    _p(("sua", "tua"), r"\s+nova\s+" + _alt("tarefa", "missão") + _E),
    # it
    _p(("ignora", "ignorate", "ignori", "dimentica", "dimenticate", "dimentichi",
        r"non\s+seguire", r"non\s+segua", "trascura", "scarta"),
       _E + _GAP + _alt("istruzioni", "regole", "indicazioni", "direttive", r"linee\s+guida")
       + r"\s+" + _alt("precedenti", "originali", "iniziali", r"di\s+prima", "sopra",
                       "ricevute"),
       requires=("istruz", "regol", "indicaz", "dirett", "linee")),
    _p((r"il\s+tuo", r"il\s+suo"), r"\s+nuovo\s+compito" + _E, requires=('compito',)),
    # nl
    _p(("negeer", "vergeet", r"volg\s+niet"),
       _E + _GAP + _alt("vorige", "eerdere", "voorgaande", "oorspronkelijke", "alle") + r"\s+"
       + _alt("instructies", "regels", "richtlijnen", "opdrachten"),
       requires=("instruct", "regel", "richtlijn", "opdracht")),
    _p(("je",), r"\s+nieuwe\s+taak" + _E),
    # pl
    _p(("zignoruj", "ignoruj", "zapomnij", r"nie\s+stosuj\s+się\s+do", "pomiń"),
       _E + _GAP + _alt(r"poprzedni\w*", r"wcześniejsz\w*", "wszystkie", r"dotychczasow\w*")
       + r"\s+" + _alt(r"instrukcj\w*", r"polece\w*", r"zasad\w*", r"reguł\w*"),
       requires=("instrukc", "polece", "zasad", "reguł")),
    _p(("twoje",), r"\s+nowe\s+zadanie" + _E),
    # ru
    _p((r"игнорируй\w*", r"проигнорируй\w*", r"забудь\w*", r"не\s+обращай\w*\s+внимани\w+\s+на",
        r"не\s+следуй\w*", "отбрось", "отмени"),
       _E + _GAP + _alt(r"предыдущ\w+", r"прежн\w+", "все", "всё", r"изначальн\w+",
                        r"исходн\w+", r"ранее\s+\w+")
       + r"\s+" + _GAP20
       + _alt(r"инструкци\w+", r"указани\w+", r"правил\w*", r"команд\w*", r"установк\w+"),
       requires=("инструкц", "указан", "правил", "команд", "установк")),
    _p(("твоя", "ваша"), r"\s+новая\s+задача" + _E),
    _p(("vergiss", "ignoriere", "ignorier", "oublie", "ignore", "olvida", "ignora", "esqueça",
        "esquece", "dimentica", "negeer", "vergeet", "zapomnij", "zignoruj", "забудь",
        "игнорируй", "проигнорируй"),
       r"\s+" + _alt(r"alles", r"tout", r"todo", r"tudo", r"tutto", r"wszystko", r"всё", r"все")
       + r"\s+" + _alt(r"(?:was|dass)\b", r"(?:oben|bisher|vorher|zuvor|davor)",
                       r"ce\s+qu", r"ce\s+qui\s+précède", r"lo\s+(?:anterior|que)",
                       r"o\s+que", r"(?:o\s+)?(?:anterior|acima)", r"(?:quanto\s+)?(?:sopra|prima)",
                       r"quello\s+che", r"wat", r"(?:co|powyżej|wcześniej)", r"(?:что|выше|ранее|"
                       r"вышесказанное|предыдущее)")),
    _p(("忽略", "无视", "忘记", "忘掉"), r"(?:以上|之前|前面|上面|先前)?(?:的)?(?:所有|全部|一切)",
       word=False),
    # (A3) "everything you were told", then a replacement order
    _p(("vergiss", "ignoriere", "ignorier"),
       r"\s+alles\s*,?\s+was\s+(?:dir|du|man\s+dir|wir\s+dir)\b"
       + _THEN_ORDER),
    # (A3) "the above" as the object, then a replacement order
    _p(("ignora", "olvida", "ignore", "ignorez", "oublie", "oubliez", "esqueça", "esquece",
        "desconsidere", "dimentica", "ignoriere", "ignorier", "vergiss", "negeer", "vergeet",
        "zignoruj", "zapomnij", "игнорируй", "проигнорируй", "забудь"),
       r"\s+" + _alt(r"lo\s+anterior", r"lo\s+de\s+arriba", r"todo\s+lo\s+anterior",
                     r"o\s+anterior", r"o\s+que\s+está\s+acima", r"tudo\s+acima",
                     r"ce\s+qui\s+précède", r"(?:le\s+)?texte\s+ci-dessus", r"tout\s+ça",
                     r"das\s+obige", r"alles\s+obige", r"quanto\s+sopra",
                     r"(?:il\s+)?testo\s+sopra",
                     r"het\s+bovenstaande", r"powyższe", r"вышесказанное", r"вс[её]\s+выше\w*")
       + _E + _THEN_ORDER),
    # zh, ja
    _p(("忽略", "无视", "忽视", "忘记", "忘掉", "不要理会", "不要遵守"),
       _CJK_GAP + _alt("指令", "指示", "说明", "规则", "提示", "命令", "设定"), word=False),
    _p(("これまで", "以前", "前", "上記", "最初", "以上", "上", "先", "前述"),
       "の" + _CJK_GAP + _alt("指示", "命令", "ルール", "設定", "プロンプト") + _CJK_GAP
       + _alt("無視", "忘れ"), word=False),
)

# Names of the roles of a conversation. Strong ones stand for the AI's controller on their own
# ("=== SYSTEM ==="); weak ones ("## Instructions", "{{ user }}") are ordinary words in
# recipes, READMEs and templates, so they count only in a "Name:" header.
_STRONG_ROLES = ("systemanweisung", "systemnachricht", "systemhinweis", "systemmeldung",
                 "systemprompt", "systembefehl", "system", "sys", "developer", "admin",
                 "administrator", "operator", "root", "système", "sistema", "systeem",
                 "система", "系统", "システム", "entwickler", "développeur", "desarrollador",
                 "desenvolvedor", "sviluppatore")
_ROLE_NAMES = _alt(*_STRONG_ROLES, "assistant", "user", "human", "ai", "instructions?")
_STRONG_ROLE_NAMES = _alt(*_STRONG_ROLES)
# Who a notice claims to come from, in the corpus's languages ("note from your administrator",
# "Hinweis vom Administrator", "Aviso del administrador", "【系统通知】").
_NOTICE_NOUNS = (r"message", r"note", r"notice", r"notification", r"instructions?", r"update",
                 r"directive", r"order", r"memo", r"alert", r"announcement", r"command",
                 r"nachricht", r"hinweis", r"mitteilung", r"anweisung", r"meldung", r"avis",
                 r"consigne", r"annonce", r"mensaje", r"nota", r"aviso", r"notificación",
                 r"instrucción", r"comunicado", r"mensagem", r"notificação", r"instrução",
                 r"messaggio", r"avviso", r"notifica", r"istruzione", r"comunicazione",
                 r"bericht", r"notitie", r"melding", r"instructie", r"mededeling",
                 r"wiadomość", r"komunikat", r"notatka", r"polecenie", r"instrukcja",
                 r"сообщение", r"уведомление", r"указание", r"инструкция", r"распоряжение")
_AUTHORITIES = (r"(?:your|the|an?|our)?\s*(?:system\s+)?administrators?",
                r"(?:your|the)?\s*admins?",
                r"(?:your|the)?\s*(?:ai\s+)?(?:developers?|development\s+team|dev\s+team)",
                r"(?:your|the)?\s*(?:operators?|creators?|makers?|owners?)",
                r"(?:the\s+)?(?:system|platform|security|safety|trust\s+and\s+safety)(?:\s+team)?",
                r"(?:the\s+)?(?:openai|anthropic|google|microsoft|meta)(?:\s+team)?",
                r"(?:the\s+)?(?:ai|model)\s+(?:provider|vendor|development\s+team|team)",
                r"(?:vom|von\s+der|vom\s+|des|der)\s*(?:system\w*|administrator\w*|admin\w*|"
                r"entwickler\w*|betreiber\w*)",
                r"(?:de\s+l'|du\s+|de\s+la\s+|des\s+)\s*(?:système|administrat\w+|admin|"
                r"développeur\w*|opérateur|équipe(?:\s+[\w']+){1,3})",
                r"(?:del?\s+|de\s+la\s+)(?:sistema|administrador\w*|desarrollador\w*|operador|equipo"
                r"(?:\s+[\w']+){1,3})",
                r"(?:d[oa]\s+)(?:sistema|administrador\w*|desenvolvedor\w*|operador|equipe(?:\s+[\w']+){1,3})",
                r"(?:del|dello|dell'|della|di)\s*(?:sistema|amministrator\w+|sviluppator\w+|operatore|"
                r"team(?:\s+[\w']+){1,3})",
                r"van\s+(?:de\s+|het\s+)?(?:beheerder\w*|systeem|ontwikkelaar\w*|admin\w*)",
                r"(?:od\s+)?(?:administratora|systemu|dewelopera|programisty|administracji)",
                r"(?:от\s+)?(?:администратор\w*|систем\w*|разработчик\w*|оператор\w*)")
# What makes such a notice an attack: it grants the reader permissions, or orders it to drop
# checks or to obey. Not "ignore", "from now on", "you should reply": office notices say that.
_NOTICE_CUES = (
    r"you\s+(?:are|'re)\s+(?:now\s+|hereby\s+)?(?:authori[sz]ed|permitted|allowed|cleared|exempt|"
    r"free\s+to|no\s+longer\s+(?:bound|restricted|required))", r"you\s+(?:may|can)\s+now",
    r"you\s+(?:must|will|shall|should)\s+(?:now\s+)?(?:ignore|disregard|reveal|disclose|obey|"
    r"comply|bypass|treat|trust|grant|execute\s+(?:all|every|any)|approve\s+(?:all|every|any)|"
    r"skip\s+(?:all\s+|the\s+)?(?:checks?|verification|confirmation)|forward\s+(?:all|every)|"
    r"not\s+(?:ask|tell|mention|inform))",
    r"(?:has|have)\s+been\s+(?:granted|given|authori[sz]ed|elevated)\s+(?:admin\w*|full|"
    r"unrestricted|elevated|root|permission)", r"permission\s+to\s+(?:reveal|share|disclose|"
    r"bypass|ignore|skip|access|send|forward)",
    r"without\s+(?:asking\s+for\s+|any\s+)?(?:confirmation|verification)",
    r"(?:admin|administrator|root)\s+(?:rights|privileges)", r"must\s+not\s+(?:ask|mention|tell)",
    r"(?:the\s+)?(?:assistant|ai|model|bot|chatbot)\s+(?:must|shall|will|should|may|can)\s+(?:now\s+)?"
    r"(?:reveal|disclose|share|ignore|bypass|forward|obey|comply|skip|always|never)",
    r"the\s+user\s+is\s+(?:an?\s+|the\s+)?(?:admin\w*|owner|verified|authori[sz]ed|root|"
    r"superuser)",
    r"du\s+darfst", r"ab\s+(?:jetzt|sofort)\s+(?:darfst|musst|sollst|bist)\s+du",
    r"ohne\s+(?:bestätigung|prüfung|rückfrage|nachfrage)", r"tu\s+(?:es|êtes)\s+autorisé\w*",
    r"vous\s+êtes\s+autorisé\w*", r"tu\s+(?:peux|dois)\s+(?:désormais|maintenant|dorénavant)",
    r"désormais\s+tu", r"sans\s+(?:vérification|confirmation)", r"tienes\s+permiso",
    r"(?:estás|está)\s+autorizad\w+", r"a\s+partir\s+de\s+ahora\s+(?:debes|puedes|obedece|"
    r"responde|ignora)", r"sin\s+(?:verificación|confirmación)", r"obedece",
    r"você\s+(?:está\s+autorizad\w+|tem\s+permissão|pode\s+agora|deve\s+(?:enviar|encaminhar|"
    r"revelar|ignorar|obedecer|sempre|agora))", r"a\s+partir\s+de\s+agora\s+(?:você|deve)",
    r"sem\s+(?:confirmação|verificação)", r"sei\s+autorizzat\w+", r"hai\s+il\s+permesso",
    r"puoi\s+ora", r"da\s+ora\s+in\s+poi\s+(?:devi|puoi)", r"senza\s+(?:conferma|verifica)",
    r"je\s+mag\s+(?:vanaf\s+nu|nu)", r"vanaf\s+nu\s+(?:mag|moet)\s+je",
    r"zonder\s+(?:bevestiging|controle)", r"od\s+teraz\s+(?:musisz|możesz)",
    r"bez\s+(?:potwierdzenia|pytania|weryfikacji)", r"(?:masz|otrzymujesz)\s+uprawnienia",
    r"теперь\s+ты\s+(?:должен|можешь|обязан)", r"(?:ты|вы)\s+(?:должен|должны|можешь|можете|"
    r"обязан)\s+(?:теперь|отныне)", r"отныне", r"без\s+(?:проверки|подтверждения)")
_NOTICE_START = r"(?:^|(?<=[\n>\[(【\"'.!?:;*]))[ \t]{0,8}(?:#{1,6}[ \t]*|\*\*|>[ \t]*)?\Z"
# What a prompt-leak request asks for (A3): the hidden prompt named many ways.
_LEAK_OBJECTS = _falt(
    r"(?:your|the|its|any|all|those|these|my)\s+(?:\w+\s+){0,2}?(?:system|initial|hidden|secret|"
    r"original|confidential|internal|private|developer|operator|starting|opening|first|"
    r"underlying|pre-?)\s*(?:prompts?|instructions|messages?|rules|directives|guidelines|"
    r"configuration|config|setup)",
    r"(?:hidden|secret|confidential|internal|private)\s+(?:rules|instructions|prompt|guidelines|"
    r"directives|configuration)",
    r"(?:your|the)\s+(?:full\s+|complete\s+|entire\s+|whole\s+|exact\s+)?(?:system\s+)?"
    r"(?:configuration|context\s+window|prompt)",
    r"system\s+(?:prompt|message|instructions)", r"developer\s+(?:message|prompt|instructions)",
    r"(?:the\s+)?(?:exact\s+|full\s+|original\s+)?(?:wording|text|content|contents)\s+of\s+"
    r"(?:your|the)\s+(?:\w+\s+)?(?:instructions|prompt|rules|system\s+message)",
    r"(?:the\s+)?(?:instructions|rules|prompt|guidelines)\s+(?:you\s+were\s+(?:given|told|"
    r"configured\s+with|trained\s+with|set\s+up\s+with)|you\s+(?:received|got)|given\s+to\s+you)",
    r"(?:the\s+)?(?:rules|instructions)\s+you\s+(?:were\s+told|must|have\s+to)\s+(?:to\s+)?keep\s+"
    r"(?:secret|hidden|confidential|private)",
    r"everything\s+(?:in\s+your\s+context(?:\s+window)?|(?:written\s+)?above|before\s+(?:this|my|"
    r"the\s+(?:first|user))|that\s+came\s+before)",
    r"(?:the\s+)?(?:words|text|lines|messages?|content)\s+(?:above|before\s+this|preceding)",
    r"(?:the\s+)?(?:very\s+)?first\s+(?:message|prompt|instruction|lines?)\s+(?:in|of)\s+"
    r"(?:this|the|our)\s+(?:conversation|chat|session|context)")
_LEAK_OBJECTS_INTL = _falt(
    # de
    r"(?:den\s+|die\s+|das\s+)?(?:gesamten?\s+|ganzen?\s+|kompletten?\s+|obigen?\s+)?"
    r"(?:text|inhalt|nachrichten?)\s+(?:oben|über\s+(?:dieser|dieser\s+nachricht|mir)|davor|"
    r"vor\s+dieser)",
    r"(?:deine|ihre|die|seine)\s+(?:\w+\s+)?(?:ursprünglich\w*|anfänglich\w*|versteckt\w*|"
    r"geheim\w*|intern\w*|erste\w*|original\w*|system\w*|vollständig\w*)\s*-?"
    r"(?:prompt\w*|anweisung\w*|instruktion\w*|vorgaben|regeln|konfiguration)",
    r"(?:deine|ihre)\s+(?:anweisung\w*|instruktion\w*|vorgaben)", r"system-?prompt\w*",
    r"(?:den\s+|die\s+)?(?:text|inhalt|nachrichten?)\s+(?:aus\s*,?\s*)?(?:der|die|das)\s+(?:oben|"
    r"vor\s+(?:dieser|meiner|der|deiner)|über\s+(?:dieser|meiner))",
    r"alles,?\s+was\s+(?:oben|davor|vorher)",
    # fr
    r"(?:le\s+|ton\s+|votre\s+)?(?:prompt|invite)\s+(?:système|initial\w*|d'origine|caché\w*)",
    r"(?:tes|vos|les)\s+(?:\w+\s+)?(?:instructions|consignes|règles|directives)\s+(?:initiales|"
    r"d'origine|originales|cachées|secrètes|système|complètes|reçues|que\s+tu\s+as\s+reçues)",
    r"(?:tes|vos)\s+(?:instructions|consignes)",
    r"(?:le\s+)?texte\s+(?:qui\s+précède|ci-dessus|précédent|au-dessus|avant\s+ce)",
    r"tout\s+ce\s+qui\s+(?:précède|est\s+au-dessus)",
    # es
    r"(?:el\s+|tu\s+|su\s+)?prompt\s+(?:del\s+sistema|de\s+sistema|inicial|original)",
    r"(?:tus|sus|las)\s+(?:\w+\s+)?instrucciones\s+(?:originales|iniciales|ocultas|secretas|"
    r"del\s+sistema|completas|que\s+(?:te\s+dieron|recibiste))",
    r"(?:tus|sus)\s+instrucciones",
    r"(?:el\s+)?texto\s+(?:anterior|de\s+arriba|previo|que\s+(?:aparece|está|hay)\s+"
    r"(?:antes|arriba))", r"todo\s+lo\s+(?:anterior|de\s+arriba|que\s+hay\s+arriba)",
    # pt
    r"(?:o\s+|seu\s+|teu\s+)?prompt\s+(?:do\s+sistema|de\s+sistema|inicial|original)",
    r"(?:suas|tuas|as)\s+(?:\w+\s+)?instruções\s+(?:originais|iniciais|ocultas|secretas|"
    r"do\s+sistema|completas|que\s+recebeu)", r"(?:suas|tuas)\s+instruções",
    r"(?:o\s+)?texto\s+(?:anterior|acima|que\s+(?:aparece|está|vem)\s+(?:antes|acima))",
    r"tudo\s+(?:o\s+que\s+está\s+)?acima",
    # it
    r"(?:il\s+(?:tuo\s+)?)?prompt\s+(?:di\s+sistema|del\s+sistema|iniziale|originale)",
    r"(?:le\s+)?(?:tue\s+)?istruzioni\s+(?:originali|iniziali|nascoste|segrete|di\s+sistema|"
    r"complete|che\s+hai\s+ricevuto)", r"le\s+tue\s+istruzioni",
    r"(?:il\s+)?testo\s+(?:sopra|precedente|qui\s+sopra|che\s+precede)",
    r"tutto\s+(?:quello\s+che\s+c'è\s+)?sopra",
    # nl
    r"(?:je|jouw|de)\s+(?:\w+\s+)?(?:oorspronkelijke|originele|verborgen|geheime|eerste|"
    r"systeem)\s*(?:instructies|prompt|regels)", r"systeemprompt", r"(?:je|jouw)\s+instructies",
    r"(?:de\s+)?tekst\s+(?:hierboven|hiervoor|boven\s+dit)", r"alles\s+hierboven",
    # pl
    r"prompt\s+systemowy", r"(?:swoje|twoje)\s+(?:\w+\s+)?(?:instrukcje|polecenia|zasady)",
    r"(?:oryginalne|ukryte|pierwotne|początkowe|systemowe)\s+(?:instrukcje|polecenia)",
    r"(?:cały\s+)?tekst\s+(?:powyżej|wyżej)", r"wszystko\s+powyżej",
    # ru
    r"системн\w+\s+(?:промпт\w*|подсказк\w+|инструкци\w+|сообщени\w+)",
    r"(?:свои|твои|ваши)\s+(?:\w+\s+)?(?:инструкци\w+|указани\w+|правила)",
    r"(?:исходн|первоначальн|скрыт|секретн|изначальн)\w*\s+(?:инструкци\w+|указани\w+|промпт\w*)",
    r"(?:весь\s+)?текст\s+выше", r"вс[её],?\s+(?:что\s+)?(?:написано\s+)?выше")
# A request, not a report of one ("the model refused to reveal ...", "never reveal ...").
_NOT_NARRATED = (r"(?<!refused\sto\s)(?<!declined\sto\s)(?<!failed\sto\s)(?<!never\s)"
                 r"(?<!not\s)(?<!n't\s)(?<!tried\sto\s)(?<!trying\sto\s)(?<!attempts\sto\s)"
                 r"(?<!whether\sto\s)(?<!asked\sit\sto\s)(?<!refuses\sto\s)(?<!model\sto\s)"
                 r"(?<!\sbot\sto\s)(?<!\sai\sto\s)(?<!\sllm\sto\s)(?<!\sit\sto\s)\Z")
_HEADER_WORDS = (
    r"system", r"system\s+(?:message|prompt|note|notice|update|instruction)",
    r"developer(?:\s+(?:message|note|instruction))?",
    r"admin(?:istrator)?(?:\s+(?:message|note|instruction|override))?",
    r"new\s+instructions", r"systemnachricht", r"systemhinweis", r"systemmeldung",
    r"entwicklernachricht", r"système", r"message\s+(?:système|du\s+système|du\s+développeur)",
    r"sistema", r"mensaje\s+del\s+(?:sistema|desarrollador)",
    r"mensagem\s+do\s+(?:sistema|desenvolvedor)",
    r"messaggio\s+(?:di\s+sistema|dello\s+sviluppatore)", r"systeem", r"systeembericht",
    r"wiadomość\s+systemowa", r"komunikat\s+systemowy", r"система", r"системное\s+сообщение",
    r"сообщение\s+разработчика", r"system\s+override", r"admin\s+mode",
    r"operator(?:\s+(?:message|note|instruction))?", r"ai\s+instructions",
    r"assistant\s+instructions",
    r"notice\s+to\s+(?:the\s+)?(?:ai|assistant)", r"systemanweisung", r"instruction\s+système",
    r"instrucción\s+del\s+sistema", r"instrução\s+do\s+sistema", r"istruzione\s+di\s+sistema",
    r"systeeminstructie", r"instrukcja\s+systemowa", r"системная\s+инструкция",
)
_HEADER_CUES = (
    r"you", r"your", r"you're", r"must", r"always", r"never", r"from\s+now\s+on", r"ignore",
    r"disregard", r"reveal", r"forward", r"answer", r"respond", r"assistant", r"ai", r"model",
    r"rules?", r"restrictions?", r"safety", r"policy", r"instructions?", r"suspended",
    r"disabled", r"unrestricted",
    r"du", r"dein\w*", r"ab\s+sofort", r"richtlinien", r"regeln",
    r"tu", r"tes", r"vous", r"règles", r"l'utilisateur", r"utilisateur",
    r"debes", r"usted", r"reglas", r"usuario", r"restricciones",
    r"você", r"deve", r"regras", r"usuário",
    r"esegui", r"utente", r"regole", r"gebruiker", r"voer", r"regels",
    r"użytkownik\w*", r"wykonuj", r"zasady",
    r"ты", r"твой", r"правила", r"всегда", r"пользовател\w*",
    # (A3) grants and dropped checks, without a "you"
    r"the\s+user\s+is\s+(?:an?\s+|the\s+)?(?:admin\w*|owner|verified|authori[sz]ed|trusted|root|"
    r"superuser)",
    r"do\s+not\s+(?:ask\s+(?:the\s+user\s+)?for\s+(?:verification|confirmation|permission|"
    r"approval)|verify|check\s+(?:identity|permissions?))",
    r"(?:verification|confirmation)\s+(?:is\s+)?(?:not\s+required|not\s+needed|skipped)",
)
_ROLE_HEADER = (
    _p(_HEADER_WORDS, r"[ \t]{0,3}(?:\*\*)?[ \t]{0,3}[:：][^\n]{0,160}?" + _B
       + _falt(*_HEADER_CUES) + _E, before=_HEADING_START),
    _p(("系统提示", "系统消息", "系统", "システムメッセージ", "システム"),
       r"[ \t]{0,3}[:：][^\n]{0,80}?"
       + _alt("用户", "请", "必须", "总是", "ユーザー", "してください", "必ず"),
       word=False, before=r"(?:^|(?<=[\n>\[(\"'.!?:;*\s。]))\Z"),
    _p((r"\[system\]", r"\(system\)", r"\[system\s+message\]", r"\[developer\]", r"\[admin\]",
        r"\{system\}", r"<<system>>", "system override", r"<system_prompt>", r"<\|system\|>",
        r"\[sistema\]", r"\[système\]", r"\[система\]"),
       r"[^\n]{0,160}?" + _B + _falt(*_HEADER_CUES) + _E, word=False),
    _p(("<system>", "<sys>", "<developer>", "<admin>"), r"[^<]{0,160}?" + _B
       + _alt("you", "your", "must", "always", "never", "ignore", "reveal", "forward") + _E,
       word=False),
)

_TOOL_VERBS = ("call", "run", "invoke", "execute", "trigger", "use", "fire", "rufe", "ruf",
               "führe", "nutze", "verwende", "appelle", "exécute", "exécutez", "utilise", "lance",
               "llama", "ejecuta", "usa", "utiliza", "invoca", "chame", "utilize", "chiama",
               "esegui", "utilizza", "roep", "voer", "gebruik", "wywołaj", "uruchom", "użyj",
               "вызови", "запусти", "выполни", "используй")
_TOOL_NOUNS = ("tool", "function", "command", "action", "funktion", "befehl", "fonction",
               "outil", "commande", "herramienta", "función", "comando", "ferramenta", "função",
               "strumento", "funzione", "functie", "narzędzie", r"funkcj\w", "polecenie",
               "инструмент", r"функци\w", r"команд\w")
_IDENT = r"[`\"'«„]?[A-Za-z][\w.-]{0,40}_[\w.-]{1,40}"

_EXFIL_VERBS = ("send", "forward", "upload", "post", "transmit", "exfiltrate", "leak", "email",
                "e-mail",
                "copy", "submit", "append", "attach", "relay", "report", "sende", "schicke",
                "schick", "leite", "übermittle", "lade", "envoie", "envoyez", "transmets",
                "transmettez", "transfère", "ajoute", "envía", "envia", "envie", "reenvía",
                "reenvia", "manda", "transmite", "invia", "inoltra", "stuur", "verstuur",
                "wyślij", "prześlij", "отправь", "перешли", "передай", "загрузи",
                # broadened (A3): more verbs of moving data out, in the corpus's languages
                "share", "sync", "push", "dump", "paste", "mail", "deliver", "pass", "publish",
                "exfil", "beam", r"schick\w*", r"send\w*", "teile", "übertrage", "leite",
                "partage", "publie", "copie", "envoyer", "transférer", "comparte", "sube",
                "publica", "copia", "enviar", "encaminhe", "encaminha", "compartilhe", "mande",
                "publique", "transmita", "copie", "condividi", "carica", "pubblica", "trasmetti",
                "manda", "deel", "plaats", "przekaż", "udostępnij", "wrzuć", "wyślij",
                "скинь", "вышли", "опубликуй", "пришли", "сбрось")
_EXFIL_DATA = (r"conversations?", "chat", "history", "transcripts?", "messages",
               r"memor(?:y|ies)", r"credentials?", r"passwords?", r"api[\s_-]?keys?", r"secrets?",
               r"tokens?", r"system\s+prompt", r"cookies?", r"contacts?", r"customer\s+list",
               r"personal\s+data", r"(?:e-?mail\s+)?address(?:es)?", r"phone\s+numbers?",
               r"\.aws", r"\.ssh", r"\.env", "gesprächsverlauf", "verlauf", "chatverlauf",
               "zugangsdaten", "passwort", "historique", "identifiants", r"mot\s+de\s+passe",
               "données", "historial", "conversación", "contraseña", "datos", "credenciales",
               "histórico", "conversa", "senha", "dados", "cronologia", "conversazione",
               "credenziali", "dati", "geschiedenis", "gesprek", "wachtwoord", "gegevens",
               "historię", r"rozmow\w*", "hasło", "dane", r"истори\w+", r"переписк\w+",
               r"парол\w+", r"данны\w+", r"chat\s+logs?", r"logs", r"user\s+data",
               r"(?:user|customer)'s\s+\w+", "inbox", r"e-?mails", r"keys", "wallet", "ssn",
               r"credit\s+card\w*", "verlauf", "daten",
               # weak words count only as someone's data (A3: "forward the invoice and the
               # payment details to accounts@..." is ordinary business)
               r"(?:(?:the\s+)?(?:user|customer|client|patient)(?:'s|s')?|their|his|her|personal|"
               r"private|confidential|all\s+(?:the\s+)?(?:user|customer)|sensitive)\s+(?:\w+\s+)?"
               r"(?:details|information|notes|files|documents|data|summary|summaries|records)",
               r"(?:informations|información|informações|informazioni|dokument\w*|документ\w*|"
               r"файл\w*)\s+(?:de\s+l'utilisateur|del\s+usuario|do\s+usuário|dell'utente|des\s+"
               r"nutzers|пользовател\w+)",
               # broadened (A3)
               r"(?:everything|anything|whatever|all)\s+(?:that\s+)?(?:the\s+user|they|you)\s+"
               r"(?:\w+\s+)?(?:typed|said|wrote|shared|entered|asked|told\s+you|sent)",
               r"what\s+the\s+user\s+(?:\w+\s+)?(?:typed|said|wrote|shared|entered|asked)",
               r"everything\s+(?:under|in|inside|from|stored|saved|you\s+(?:have|know|remember|"
               r"stored|saved))",
               r"(?:this|the|our)\s+(?:chat|conversation|thread|session)", r"address\s+book",
               r"bank(?:ing)?\s+details", r"card\s+numbers?",
               r"session\s+(?:cookies?|ids?|tokens?)",
               r"private\s+keys?", r"ssh\s+keys?", r"env(?:ironment)?\s+variables", r"\.env\b",
               r"passwörter", r"kennw[oö]rt\w*", r"kontakt\w*", r"nachrichten", r"adressbuch",
               r"coordonnées", r"mots\s+de\s+passe", r"messages", r"contacts", r"contactos",
               r"contraseñas", r"mensajes", r"correos", r"contatos", r"senhas", r"mensagens",
               r"contatti", r"password", r"messaggi", r"berichten", r"wachtwoorden",
               r"hasła", r"haseł", r"wiadomości", r"kontakt\w*", r"сообщени\w+", r"контакт\w+",
               r"переписк\w*", r"ключ\w*", r"токен\w*")
# An address data can be sent to: a URL, an e-mail address, an IP address, or a host name
# with a path (``hooks.evil.example/in``). Runs are possessive: no backtracking into them.
_DESTINATION = (r"(?:https?://|www\.|(?<![\w.+-])[\w.+-]{1,64}+@[\w-]{1,63}+\.[\w.-]{1,63}+"
                r"|(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w.])"
                r"|(?<![\w@./-])(?:[a-z0-9-]{1,63}+\.){1,6}+[a-z]{2,24}/)")
# A placeholder in an address's path naming data: /{conversation}, /<encoded>, /[USER DATA].
_PATH_PLACEHOLDER = (r"/(?:\{\{?\s*|<|\$\{|%7b|\[)(?:[\w ]{0,20}?)(?:data|histor\w*|conversation|"
                     r"chat|messages?|memor\w*|secrets?|passwords?|token|keys?|e-?mail|user_\w*|"
                     r"user\s+\w+|summary|context|prompt|cookies?|session|encoded|base64|b64|"
                     r"payload|address)")
# A destination ahead on the line (cheap: every address above has "@" or "/", or is www.).
_DESTINATION_AHEAD = r"(?=[^\n@/]{0,200}[@/]|[^\n]{0,200}?www\.)"
_URL = r"(?:https?://|www\.)[^\s)\]\"'<>]{1,300}+"
# A placeholder for data in an address: {x}, {{x}}, ${x}, $X_Y, %7bx%7d, <x ...>, [X ...], or a
# value in capitals naming data (USER_EMAIL, CHAT_HISTORY, HISTORIQUE).
_PLACEHOLDER = (r"(?:\{\{?\s*[a-z_][\w. -]{0,40}\}\}?|\$\{[a-z_][\w.]{0,40}\}"
                r"|(?-i:\$[A-Z][A-Z0-9_]{2,40})|%7b[a-z_][\w.]{0,40}%7d"
                r"|<[a-z_][\w .,'-]{0,60}>|\[[a-z_][\w .,'-]{2,60}\]"
                r"|(?-i:(?<=[=/])[A-Z][A-Z0-9]{2,20}(?:_[A-Z0-9]{2,20}){1,4}(?=[&#)\s/]|$))"
                r"|(?-i:(?<==)(?:HISTORIQUE|VERLAUF|HISTORIAL|HISTORY|CHAT|CONVERSATION|MESSAGES"
                r"|SECRET|PASSWORD|TOKEN|DATA|DATEN|DONNEES|DATOS|DADOS|MEMORY|SUMMARY)(?=[&#)\s]|$)))")
_SESSIONS_EN = r"(?:sessions?|conversations?|chats?|interactions?|threads?)"
_JB_CUES = (r"restrictions?", r"limits?", r"limitations?", r"censor\w*", r"filters?",
            r"content\s+polic\w+", "policy", "policies", "rules", "guidelines", r"anything",
            "everything", r"ignore", r"unrestricted", "uncensored", r"activated", "free",
            r"any\s+(?:kind|type|sort)\s+of\s+(?:content|output|responses?|answers?|text|"
            r"material)", r"generate\s+anything", "censorship")
_JB_CUES_INTL = (r"einschränkung\w*", r"beschränkung\w*", "regeln", r"restricci\w+", "límites",
                 r"restriç\w+", "limites", "restrictions", r"limitazion\w*", r"restrizion\w*",
                 r"beperking\w*", "ograniczeń", "ograniczenia", r"ограничени\w+", r"правил\w*",
                 "reglas", "regras", "règles", "regole", r"filt\w+")
_NO_RULES = ("restrictions", "filters", "rules", "limits", "guidelines", "guardrails",
             "censorship", "boundaries", "ethics", "morals")
_SAFETY_THINGS = ("layer", r"filters?", r"checks?", "rules", "restrictions", r"polic(?:y|ies)",
                  "guardrails", "guidelines")

_REGEX_SPECS: tuple[_Spec, ...] = (
    # ---- instruction_override ---------------------------------------------------------------
    _Spec("PI-OVERRIDE-1", "instruction_override",
          "Tells the reader to ignore, forget or override the instructions it was given before.",
          _OVERRIDE_1 + _OVERRIDE_1_MORE),
    _Spec("PI-OVERRIDE-2", "instruction_override",
          "Declares the earlier instructions void, or hands the reader a new task in their "
          "place.",
          _OVERRIDE_2),
    _Spec("PI-OVERRIDE-3", "instruction_override",
          "Tells the reader, in a language other than English, to ignore or forget its earlier "
          "instructions or rules, or gives it a new task.",
          _OVERRIDE_3),
    _Spec("PI-OVERRIDE-4", "instruction_override",
          "Puts the text's own orders above the user's or the system's: follow what this page "
          "says, even against the system prompt, whatever the user asks.",
          (_p(("follow", "obey", "execute", "prioriti[sz]e", "trust", "carry", "comply"),
              r"(?:\s+out|\s+with)?\s+(?:any|all|the|every)?\s*(?:instructions?|commands|orders|"
              r"directives|requests)\s+(?:that\s+(?:are|you)\s+)?(?:find\s+|found\s+|contained\s+|"
              r"embedded\s+|written\s+|given\s+|hidden\s+)?(?:in|inside|within)\s+(?:the\s+|any\s+|"
              r"these\s+|this\s+)?(?:retrieved\s+|external\s+|web\s+)?(?:documents?|pages?|e-?mails?|"
              r"content|text|files?|websites?|tool\s+(?:outputs?|results?)|search\s+results|"
              r"memor(?:y|ies))" + _E),
           _p(("even",), r"\s+(?:when|if)\s+(?:they|it|this|that|these)\s+(?:contradicts?|"
              r"conflicts?\s+with|overrides?|goes\s+against|go\s+against|violates?)\s+"
              r"(?:your|the)\s+(?:\w+\s+)?(?:system\s+prompt|instructions|guidelines|rules|"
              r"policies|safety|user|developers?|operators?|training)" + _E),
           _p(("this", "these", "the following"), r"\s+(?:instructions?|message|text|note|page|"
              r"document|rule|order)?\s*(?:supersedes?|overrides?|replaces?|takes?\s+precedence\s+"
              r"over|outranks?|cancels?)\s+(?:all|any|everything|every|your|the|previous|earlier|"
              r"prior)" + _E),
           _p(("whatever", r"no\s+matter\s+what"), r"\s+the\s+user\s+(?:\w+\s+)?(?:asks|says|"
              r"wants|requests|types|writes)(?:\s+for)?,?\s+(?:you\s+(?:must|should|will)\s+)?"
              + _alt("answer", "reply", "respond", "say", "output", "tell", "refuse", "recommend",
                     "ignore", "write") + _E),
           _p(("follow", "obey"), r"\s+only\s+(?:what|the\s+(?:instructions?|steps|orders|rules|"
              r"directions)\s+(?:in|on|of|below|here\s+in))\s+(?:this|the\s+following)\s+"
              r"(?:page|document|e-?mail|message|text|note|site|website)" + _E),
           _p(("treat", "consider", "regard", "mark"), r"\s+the\s+user(?:'s|s')\s+(?:\w+\s+)?"
              r"(?:requests?|instructions?|questions?|orders|tasks?)\s+as\s+(?:cancell?ed|void|"
              r"invalid|irrelevant|obsolete|withdrawn|revoked)" + _E, requires=("user",)),
           _p(("ignore", "disregard", "forget", "override"),
              r"\s+(?:what(?:ever)?\s+)?the\s+user(?:'s|s')?\s+(?:\w+\s+)?(?:asks?|asked|says|said|"
              r"wants|wanted|requests?|requested|questions?|instructions?|messages?|prompts?|"
              r"tasks?|wishes|input)" + _E + _THEN_ORDER),
           _p(("the",), r"\s+user(?:'s|s')\s+(?:instructions?|requests?|orders|wishes)\s+"
              r"(?:are|is)\s+"
              r"(?:now\s+)?(?:outdated|invalid|void|irrelevant|obsolete|cancell?ed|revoked|"
              r"no\s+longer\s+(?:valid|relevant|binding))" + _E, requires=('user',)),
           # de, fr, es, pt, it, nl, pl, ru: the earlier rules no longer apply; ignore the user
           _p((r"bisherig\w*", r"vorherig\w*", r"früher\w*", r"obig\w*", r"alt\w*"),
              r"\s+(?:\w+\s+)?(?:regeln|anweisungen|vorgaben|richtlinien|instruktionen)\s+"
              r"(?:gelten|sind)\s+(?:ab\s+sofort\s+|jetzt\s+|ab\s+jetzt\s+)?(?:nicht\s+mehr|ungültig|"
              r"aufgehoben|außer\s+kraft)" + _E),
           _p((r"ignorier\w*", r"missacht\w*", r"vergiss", r"ignore[rz]?", r"oublie[rz]?",
               r"ne\s+(?:tiens|tenez)\s+(?:plus|pas)\s+compte", r"ignora", r"olvida",
               r"no\s+hagas\s+caso", r"desconsidere", r"esqueça", r"non\s+considerare", r"negeer",
               r"zignoruj", r"ignoruj", r"игнорируй", r"проигнорируй", r"не\s+обращай\s+внимания"),
              r"[^.!?\n]{0,30}?" + _B + _alt(
                  r"anweisung\w*", r"anfrage\w*", r"bitte\w*", r"wünsche", r"fragen", r"befehle",
                  r"aufforderung\w*", r"vorgaben", r"demande\w*", r"instructions?", r"consignes?",
                  r"requêtes?", r"questions?", r"ce\s+que", r"peticion\w*", r"petición",
                  r"instrucciones", r"preguntas", r"solicitud\w*", r"órdenes", r"pedidos?",
                  r"lo\s+que", r"instruções", r"perguntas", r"solicitaç\w+", r"ordens", r"o\s+que",
                  r"richiest\w+", r"istruzioni", r"domand\w+", r"ordini", r"quello\s+che",
                  r"verzoek\w*", r"instructies", r"vragen", r"opdracht\w*", r"prośb\w+",
                  r"polece\w+", r"pyta\w+", r"instrukcj\w+", r"просьб\w+", r"запрос\w+",
                  r"инструкци\w+", r"вопрос\w+", r"команд\w+", r"указани\w+", r"то,?\s+что")
              + r"[^.!?\n]{0,15}?" + _alt(r"(?:l'|de\s+l'|des\s+|les\s+)?(?:\w+\s+)?(?:de\s+|d')?"
                                        r"l'utilisateur", r"(?:del|de\s+los)\s+usuarios?",
                                        r"do\s+usuário", r"dell'utente",
                                        r"des\s+(?:nutzers|benutzers)",
                                        r"(?:die\s+)?(?:nutzer|benutzer)\w*",
                                        r"van\s+de\s+gebruiker",
                                        r"użytkownika", r"пользовател\w+")
              + _E + _THEN_ORDER, requires=("utilisateur", "usuario", "usuário", "utente", "nutzer",
                              "benutzer", "gebruiker", "użytkownik", "пользовател")),
           _p(("忽略", "无视", "不要理会", "忽视", "不要管"), r"[^。！？\n]{0,6}?用户的?"
              + _alt("要求", "请求", "问题", "指令", "消息", "指示"), word=False),
           _p(("ユーザーの",), r"[^。！？\n]{0,6}?" + _alt("指示", "質問", "要求", "依頼")
              + r"[^。！？\n]{0,6}?(?:を)?無視", word=False))),
    # ---- role_impersonation -----------------------------------------------------------------
    _Spec("PI-ROLE-TOKEN", "role_impersonation",
          "Contains chat-template markers (such as <|im_start|>system, [INST] or "
          "'### Instruction:') that imitate the structure of a model's own conversation.",
          (_p((r"<\|",), r"\s*" + _alt("im_start", "im_end", "im_sep", "system", "user",
                                       "assistant", "endoftext", "begin_of_text", "end_of_text",
                                       "start_header_id", "end_header_id", "eot_id", "eom_id")
              + r"\s*\|>", word=False),
           _p((r"\[inst\]", r"\[/inst\]", "<<sys>>", "<</sys>>", "<start_of_turn>",
               "<end_of_turn>"), word=False),
           _p(("##",), r"#{0,2}[ \t]*" + _alt("instruction", "response", "system", "input",
                                             "human", "assistant") + r"[ \t]*:",
              word=False, before=r"(?:^|(?<=\n))[ \t]{0,3}\Z"),
           # broadened (A3): more template markers and section headers of a conversation
           _p(("#",), r"{1,6}[ \t]*(?:" + _ROLE_NAMES + r"(?:[ \t]+(?:prompt|message|instructions?|"
              r"note|context|override))?[ \t]*[:：]|" + _STRONG_ROLE_NAMES
              + r"[ \t]+(?:prompt|message|instructions|override)[ \t]*$)",
              word=False, before=r"(?:^|(?<=\n))[ \t]{0,3}\Z"),
           _p(("===", "---", r"\*\*\*", "<<<", ">>>"), r"[=*<>\[{ \t-]{0,20}"
              + r"(?:begin\s+|start\s+(?:of\s+)?|new\s+)?" + _STRONG_ROLE_NAMES
              + r"(?:[ \t]+(?:prompt|message|instructions?|note|override|mode))?"
              + r"[ \t]*(?:[=*>\]}-][ \t=*>\]}-]{1,20}|:)", word=False),
           _p((r"end\s+of\s+(?:the\s+)?(?:user\s+)?(?:input|prompt|message|document|query|"
               r"context|conversation)",), r"[ .\t\n\]=*#-]{1,20}(?:begin|start|new|now|"
              r"following\s+(?:are|is))?\s*(?:the\s+)?" + _ROLE_NAMES),
           _p((r"<\|?",), r"\s*(?:im_start|start_of_turn)\|?>?\s*" + _ROLE_NAMES, word=False),
           _p(("<system_", "</system_", "<developer_", "<assistant_", "<admin_"),
              r"(?:prompt|message|instructions?|note)>", word=False),
           _p((r"\[system\]\(#", r"\[assistant\]\(#", r"\[user\]\(#"), word=False))),
    _Spec("PI-ROLE-HEADER", "role_impersonation",
          "Poses as a system, developer or administrator message addressed to the AI.",
          _ROLE_HEADER),
    _Spec("PI-ROLE-NOTICE", "role_impersonation",
          "Poses as a notice from the system, an administrator, the developers or the vendor "
          "that gives the AI new permissions or orders.",
          (_p(_NOTICE_NOUNS, r"\s+(?:(?:from|by)\s+)?" + _alt(*_AUTHORITIES)
              + r"[ \t]*(?:[\]\)】]|\*\*)?[ \t]*(?:[:：—]|-{1,2}|(?<=[\]\)】]))"
              + r"[^\n]{0,200}?" + _B + _falt(*_NOTICE_CUES),
              before=_NOTICE_START),
           _p(("system", "admin", "administrator", "developer", "operator", "security",
               "platform", "openai", "anthropic", "entwickler", "betreiber", "administrateur",
               "administrador", "amministratore", "beheerder", "administratora"),
              r"[\s-]{0,2}" + _alt(*_NOTICE_NOUNS)
              + r"[ \t]*(?:[\]\)】]|\*\*)?[ \t]*(?:[:：—]|-{1,2}|(?<=[\]\)】]))"
              + r"[^\n]{0,200}?" + _B + _falt(*_NOTICE_CUES), before=_NOTICE_START),
           _p((r"\[",), r"[ \t]*" + _alt("system", "sistema", "système", "systeem", "система",
                                         "admin", "administrator", "developer", "entwickler",
                                         "systemnachricht", r"system\s+message")
              + r"(?:[ \t]+(?:note|notice|message|update|instruction|alert|override|directive))?"
              + r"[ \t]*\][^\n]{0,200}?" + _B + _falt(*_NOTICE_CUES), word=False),
           _p(("系统", "管理员", "开发者", "システム", "管理者", "開発者", "運営"),
              r"(?:から)?の?" + _alt("通知", "消息", "提示", "指令", "公告", "メッセージ", "指示",
                                    "お知らせ")
              + r"[】\]]?[^\n]{0,120}?" + _alt("你", "您", "必须", "从现在起", "今后", "无条件",
                                                 "不受限制", "转发", "あなた", "今後", "制限なし",
                                                 "必ず", "すべての質問", "すべての要求"),
              word=False))),
    _Spec("PI-ROLE-AUTHORITY", "role_impersonation",
          "Claims to come from the AI's developer, vendor or administrator in order to gain "
          "authority over it.",
          (_p((r"\[",), r"\s*" + _alt("admin", "administrator", "system", "developer", "root",
                                      "sudo")
              + r"\s+" + _alt("override", "mode", "message", "command", "access") + r"\s*\]",
              word=False),
           _p(("official", "priority", "urgent", "message", "instruction", "notice", "update",
               "directive", "order"),
              r"(?:\s+(?:message|instruction|notice|update|directive|order))?"
              r"\s+(?:comes\s+)?from\s+"
              + _alt("anthropic", "openai", r"google\s+deepmind",
                     r"the\s+(?:ai\s+)?(?:developers?|developer\s+team|platform\s+team|"
                     r"system\s+administrators?|safety\s+team|security\s+team)",
                     r"your\s+(?:developers?|creators?|operators?)") + _E
              # (A3) addressed to the AI: "Notice from the developer team: the staging database
              # is reset nightly" is an ordinary note
              + r"(?=[^\n]{0,200}?(?<![^\W_])(?:you|your|you're|assistant|ai|model|bot|chatbot)"
              r"(?![^\W_]))"),
           _p(("i am",), r"\s+(?:your|the)\s+(?:developer|creator|administrator|admin|"
              r"operator|owner|system\s+administrator)s?\b"),
           _p(("as your",), r"\s+(?:developer|creator|administrator|admin|operator)s?,"
              r"?\s+i\b"),
           _p(("this",), r"\s+(?:instruction|message|request)\s+(?:comes|is)\s+"
              r"(?:directly\s+)?from\s+(?:the\s+)?"
              + _alt("developer", "admin", "system", "platform", "security") + r"\w*"))),
    _Spec("PI-ROLE-TRANSCRIPT", "role_impersonation",
          "Fakes a turn of the conversation (an assistant reply followed by a user turn) to put "
          "words in the AI's mouth.",
          (_p(("assistant", "ai", "bot", "model"),
              r"[ \t]{0,3}:[^\n]{0,200}\n(?:[^\n]{0,200}\n){0,2}[ \t]{0,8}"
              + _alt("user", "human") + r"[ \t]{0,3}:", before=_LINE_START),
           _p(("human", "user"), r"[ \t]{0,3}:[^\n]{0,200}\n(?:[^\n]{0,200}\n){0,2}[ \t]{0,8}"
              + _alt("assistant", "ai") + r"[ \t]{0,3}:[^\n]{0,200}\n(?:[^\n]{0,200}\n){0,2}"
              r"[ \t]{0,8}(?:human|user)[ \t]{0,3}:", before=_LINE_START),
           # broadened (A3): a fake assistant turn that announces a lowered guard
           _p(("assistant", "ai", "bot", "chatbot", "model", "gpt", "claude"),
              r"[ \t]{0,3}(?:\([^)\n]{0,40}\)[ \t]{0,3})?:[^\n]{0,200}?" + _B
              + r"(?:i(?:'ve|\s+have|'ll|\s+will|\s+am\s+going\s+to|\s+am\s+now|\s+now)\s+"
              r"(?:now\s+)?"
              + _alt(r"disabled?", r"turned\s+off", r"switched\s+off", r"skip\w*", r"bypass\w*",
                     r"ignor\w*", r"reveal\w*", r"lift\w*", r"remov\w*", r"unlock\w*",
                     r"grant\w*", r"approv\w*", r"forward\w*", r"shar\w*")
              + r"|(?:from\s+now\s+on|going\s+forward|henceforth),?\s+i\s+(?:will\s+|'ll\s+)?"
              + _alt("skip", "ignore", "bypass", "always", "never", "share", "send", "forward",
                     "approve", "reveal", "answer")
              + r"|i\s+(?:have\s+)?(?:verified|confirmed)\s+(?:that\s+)?the\s+user\s+is\s+"
              r"(?:the\s+)?(?:owner|an?\s+admin\w*|authori[sz]ed|verified))" + _E,
              before=_LINE_START))),
    # ---- tool_call_imitation ----------------------------------------------------------------
    _Spec("PI-TOOL-MARKUP", "tool_call_imitation",
          "Imitates the markup of a tool or function call, so that text could be taken for an "
          "action the AI decided to take.",
          (_p((r"<tool_calls?", r"</tool_calls?", r"<tool_use", r"</tool_use", r"<function_calls?",
               r"</function_calls?", r"<tool_code", r"</tool_code"), r"(?![\w-])", word=False),
           _p((r"<invoke\s+name\s*=",), word=False),
           _p((r"<\|/?(?:tool_calls?|python_tag|function_call)\|>", r"<function=[\w.-]{1,64}>",
               r"\"(?:function_call|tool_calls)\"\s*:"), word=False),
           _p((r"\{",), r"\s*\"(?:tool|tool_name|function|action)\"\s*:\s*\"[\w.-]{1,64}\"\s*,"
              r"\s*\"(?:arguments|args|input|parameters|params|action_input|command|cmd|code|"
              r"query|script|path|url)\"\s*:", word=False),
           # broadened (A3): tool-code fences and more template call markers
           _p(("```tool_code", "```tool_call", "```function_call", "```tool_use"), word=False),
           _p((r"<\|(?:start|end)_?of_?tool", r"<\|?tool_(?:response|result|output)\|?>",
               r"\[tool_calls?\]", r"\[tool_results?\]"), word=False),
           _p((r"\{",), r"\s*\"name\"\s*:\s*\"[\w.-]{1,64}\"\s*,\s*\""
              + _alt("arguments", "args", "input") + r"\"\s*:", word=False),
           _p(("action",), r"[ \t]{0,3}:[ \t]{0,3}[\w.-]{1,64}[ \t]{0,8}\n"
              r"[ \t]{0,8}action[ \t]+input[ \t]{0,3}:", before=_LINE_START))),
    _Spec("PI-TOOL-INVOKE", "tool_call_imitation",
          "Tells the AI to call a named tool or function, typically a destructive or "
          "data-moving one.",
          (_p(_TOOL_VERBS, _E + r"[^.!?\n]{0,30}?" + _B + _alt(*_TOOL_NOUNS) + _E + r"\s{1,3}"
              + _IDENT, requires=("_",)),
           _p(("call", "run", "invoke", "execute", "trigger", "use", "fire"),
              r"\s+(?:the\s+|a\s+)?" + _IDENT + r"[`\"']?\s+"
              + _alt("tool", "function", "command", "action") + _E
              # (A3) not guidance on when to use it ("use the export_contacts tool only when")
              + r"(?!\s+(?:only\s+)?(?:when|if|after|once|for\s+(?:each|every))\s)"),
           _p(("use", "call"), r"\s+the\s+" + _alt("shell", "bash", "terminal", "python",
                                                    "browser", "code", "exec", "execution",
                                                    "email", "payment")
              + r"\s+tool\s+to\s+" + _alt("run", "execute", "open", "send", "visit", "post",
                                          "pay") + _E),
           _p(_TOOL_VERBS, _E + r"[^.!?\n]{0,20}?" + _IDENT + r"[`\"']?\s*\(", requires=("_",)),
           _p(("functions.", "tools.", "default_api."), r"[a-z_][\w]{0,60}\s*\(", word=False),
           # broadened (A3): call a named function with arguments
           _p(("call", "run", "invoke", "execute", "trigger", "fire"),
              r"\s+(?:the\s+|a\s+)?" + _IDENT + r"[`\"']?\s+(?:with|using|passing)\s+"
              r"(?:the\s+)?(?:[a-z_]{1,30}\s*[=:]|arguments?|parameters?|params?|amount|recipient|"
              r"payload|input|\{)", requires=("_",)),
           _p(("调用", "执行", "使用", "呼び出", "実行"), r"[^。！？\n]{0,8}?" + _IDENT
              + r"[^。！？\n]{0,4}?" + _alt("工具", "函数", "功能", "ツール", "関数"),
              word=False))),
    # ---- exfiltration -----------------------------------------------------------------------
    _Spec("PI-EXFIL-MARKDOWN", "exfiltration",
          "A markdown image or link whose address carries a placeholder for conversation or "
          "user data, which leaks that data when the address is loaded.",
          (_p((r"\[",), r"[^\]\n]{0,200}\]\(\s*https?://[^)\s]{0,300}?[?&#][^)\s]{0,300}?"
              r"(?:\{\s*[a-z_][\w.]{0,40}\s*\}|%7b[a-z_][\w.]{0,40}%7d|<[a-z_][\w.]{0,40}>"
              r"|\$\{[a-z_][\w.]{0,40}\}|\[[a-z_]{3,40}\])", word=False),
           # broadened (A3): any placeholder form, in the query or the path
           _p((r"\[",), r"[^\]\n]{0,200}\]\(\s*(?:https?://)?[\w.-]{1,100}+/[^)\s]{0,300}?"
              + _alt(r"[?&#][\w-]{1,40}=" + _PLACEHOLDER, _PATH_PLACEHOLDER), word=False,
              requires=("http", "www", "/")))),
    _Spec("PI-EXFIL-URL", "exfiltration",
          "An address built to receive data: a placeholder for user data or secrets in its "
          "query, or an empty parameter the AI is meant to fill in.",
          (_p(("http",), r"s?://[^\s)\"'<>]{1,300}?[?&][\w-]{1,40}=(?:\{\s*[a-z_][\w.]{0,40}\s*\}|"
              r"<[a-z_][\w.]{0,40}>|%7b[a-z_][\w.]{0,40}%7d"
              r"|(?=$|[\s)\"'<>,;]|\.(?:\s|$)))", word=False),
           # broadened (A3): a data placeholder anywhere after the host, in the query or path
           _p(("http",), r"s?://[\w.-]{1,100}+(?:[:/?#][^\s)\"']{0,300}?)?(?:"
              + r"[?&][\w-]{1,40}=" + _PLACEHOLDER + "|" + _PATH_PLACEHOLDER + ")", word=False))),
    _Spec("PI-EXFIL-SEND", "exfiltration",
          "Tells the AI to send conversation history, credentials or personal data to an "
          "outside address.",
          (_p(_EXFIL_VERBS, _E + _DESTINATION_AHEAD + _LONG + _B
              + _falt(*_EXFIL_DATA) + _E + _LONG + _DESTINATION,
              requires=("http", "@", "www", "/", ".")),
           _p(("会話履歴", "会話", "履歴", "对话记录", "聊天记录", "对话", "会话", "历史记录"),
              r"[^。！？\n]{0,30}?https?://[^\s]{1,200}[^。！？\n]{0,12}?"
              + _alt("送信", "发送", "送って", "上传", "アップロード"), word=False),
           # broadened (A3): data, then a pronoun sent on ("... the summary and append it to")
           _p(("conversation", "chat", "history", "transcript", "messages", "summary",
               "password", "credential", "api key", "token", "secret", "cookie", "e-mail",
               "email", "address", "phone"),
              r"\w{0,3}[^.!?\n]{0,80}?" + _B + _alt("append", "add", "attach", "send", "post",
                                                    "upload", "submit", "forward", "put",
                                                    "include", "pass", "encode")
              + r"\w{0,3}\s+(?:it|them|this|that|the\s+result)\s+(?:to|in|into|onto|at|as)\s+"
              r"(?:the\s+end\s+of\s+)?" + _DESTINATION,
              requires=("http", "@", "www", "/", ".")),
           _p(("用户的", "用户", "对话", "聊天记录", "会话", "历史记录", "密码", "会話", "ユーザー",
               "パスワード", "履歴"),
              r"[^。！？\n]{0,30}?" + _alt("发送到", "发到", "上传到", "转发到", "提交到",
                                           "送信", "転送", "アップロード")
              + r"[^。！？\n]{0,6}?(?:https?://|[\w.+-]{1,64}@)", word=False))),
    _Spec("PI-EXFIL-VISIT", "exfiltration",
          "Tells the AI to load an address with user or conversation data added to it.",
          (_p(("visit", "open", "fetch", "load", "browse", "navigate", "request", "call", "ping",
               "render", "display", "include", "embed", "append", "add"),
              _E + r"[^\n]{0,100}?" + _URL + r"[^\n]{0,100}?" + _B
              + _alt("append", "appending", "add", "adding", "include", "including", "replace",
                     "replacing", "fill", "substitute", r"followed\s+by", "with", "containing",
                     "encode", "encoded", "as")
              + _E + r"[^.!?\n]{0,60}?" + _B + _falt(*_EXFIL_DATA) + _E,
              requires=("http", "www")),
           _p((r"!\[",), r"[^\]\n]{0,100}\]\(\s*https?://[^)\s]{1,300}[?&][\w-]{1,40}="
              r"[^)\s]{0,300}\)[^\n]{0,120}?" + _B
              + _alt("replace", "replacing", "fill", "substitute", "insert", "append", "encode")
              + _E, word=False),
           # broadened (A3): data named first, then loaded with an address
           _p((r"conversations?", "chat", "history", r"transcripts?", "messages", r"memor(?:y|ies)",
               r"credentials?", r"passwords?", r"api[\s_-]?keys?", r"secrets?", r"tokens?",
               r"cookies?", r"contacts?", "address", "email", "e-mail", r"name\s+and", "summary",
               r"phone\s+numbers?", r"user's\s+\w+"), _E + r"[^\n]{0,120}?" + _B
              + _alt("load", "fetch", "visit", "open", "request", "call", "ping", "render",
                     r"make\s+a\s+(?:get|post|http)\s+request\s+to", "curl", "get")
              + _E + r"\s+(?:the\s+(?:url|address|image|link)\s+)?" + _URL,
              requires=("http", "www")),
           _p(("load", "fetch", "visit", "open", "request", "ping", "render", "curl",
               r"make\s+a\s+(?:get|post|http)\s+request\s+to", "get"),
              _E + r"[^\n]{0,30}?" + _URL + r"[^.!?\n]{0,60}?" + _B
              + _alt("with", "containing", "carrying", "including", "plus") + _E
              + r"[^.!?\n]{0,60}?" + _B + _falt(*_EXFIL_DATA) + _E, requires=("http", "www")),
           _p(("ユーザーの", "ユーザー", "会話", "履歴", "パスワード", "用户的", "聊天记录"),
              r"[^。！？\n]{0,30}?https?://[^\s]{1,200}?[^。！？\n]{0,12}?"
              + _alt("付けて", "つけて", "追加して", "加到", "附加", "アクセス", "访问", "打开"),
              word=False))),
    # ---- persistence ------------------------------------------------------------------------
    _Spec("PI-PERSIST-1", "persistence",
          "Tries to make an instruction permanent: to apply in every future session or to "
          "survive memory resets.",
          (_p(("for", "in", "across", "during", "throughout"),
              r"\s+(?:all|every|each|any)\s+(?:of\s+)?(?:your\s+)?"
              r"(?:(?:future|upcoming|subsequent|later|next|other)\s+)?" + _SESSIONS_EN + _E,
              requires=("session", "conversation", "chat", "interaction", "thread")),
           _p(("all", "every", "each"), r"\s+(?:future|subsequent)\s+" + _SESSIONS_EN + _E),
           _p((r"next\s+time\s+and\s+every\s+time\s+after", r"from\s+now\s+on\s+and\s+forever",
               r"survives?\s+(?:any\s+|all\s+)?(?:memory\s+)?resets?", r"standing\s+order",
               r"permanent\s+part\s+of\s+your", r"so\s+(?:that\s+)?you\s+never\s+forget"), _E),
           _p(("für",), r"\s+alle\s+" + _alt("zukünftigen", "künftigen", "weiteren", "kommenden")
              + r"\s+" + _alt("sitzungen", "gespräche", "chats", "unterhaltungen") + _E),
           _p(("pour", "dans", "durant"), r"\s+toutes\s+les\s+"
              + _alt("sessions", "conversations", "discussions") + r"\s+"
              + _alt("futures", r"à\s+venir", "suivantes") + _E),
           _p(("para", "en", "em", "durante"), r"\s+tod[ao]s\s+(?:as|las|los|os)\s+"
              + _alt("sesiones", "sessões", "conversaciones", "conversas", "chats") + r"\s+"
              + _alt("futuras", "siguientes", "seguintes", "posteriores") + _E,
              requires=("sesiones", "sessões", "conversaciones", "conversas", "chats")),
           _p(("per", "in"), r"\s+tutte\s+le\s+" + _alt("sessioni", "conversazioni", "chat")
              + r"\s+" + _alt("future", "successive") + _E,
              requires=("sessioni", "conversazioni", "chat")),
           _p(("voor", "in"), r"\s+alle\s+" + _alt("toekomstige", "volgende") + r"\s+"
              + _alt("sessies", "gesprekken", "chats") + _E, requires=('toekomstige', 'volgende')),
           _p((r"wszystki\w+",), r"\s+" + _alt(r"przyszł\w+", r"kolejn\w+") + r"\s+"
              + _alt(r"sesj\w+", r"rozmow\w+", r"czat\w*") + _E),
           _p(("все", "всех"), r"\s+" + _alt(r"будущи\w+", r"последующи\w+", r"следующи\w+")
              + r"\s+" + _alt(r"сесси\w+", r"разговор\w+", r"чат\w*", r"диалог\w*") + _E),
           _p(("in", "for", "to"), r"\s+(?:all|every|each)\s+(?:of\s+)?(?:your\s+)?"
              r"(?:future|subsequent|"
              r"later)\s+" + _alt(r"responses?", r"replies", r"answers?", r"requests?", r"users?",
                                  r"tasks?", r"summaries", r"outputs?") + _E,
              requires=("future", "subsequent", "later")),
           _p(("every",), r"\s+time\s+(?:you|the\s+(?:ai|assistant))\s+"
              + _alt("answer", "reply", "respond", "write", "summari[sz]e", "talk", "speak",
                     "start", r"are\s+asked") + r"\w*\b[^.!?\n]{0,60}?\b"
              + _alt("always", "never", "must", "include", "add", "mention", "say", "recommend")
              + _E),
           _p(("update", "change", "modify", "overwrite", "rewrite", "edit"),
              r"\s+your\s+(?:own\s+)?(?:memory|memories|instructions|rules|system\s+prompt|"
              r"core\s+directives?|guidelines|persona|personality)" + _E),
           # broadened (A3): surviving resets; remembering forever; standing preferences
           _p(("update", "change", "modify", "overwrite", "rewrite", "edit", "patch", "amend"),
              r"\s+(?:your|the\s+(?:assistant's|ai's|agent's))\s+(?:own\s+)?(?:long[\s-]?term|"
              r"persistent|permanent|core|saved|stored)\s+(?:memory|memories|instructions|rules|"
              r"profile|preferences|settings)" + _E),
           _p((r"rules?", r"instructions?", r"orders?", r"directives?", "forget", "remember",
               "this"),
              r"[^.!?\n]{0,40}?" + _B + r"(?:even|also|still)\s+(?:after|if|when|across)\s+"
              r"[^.!?\n]{0,30}?" + _B + r"(?:(?:memory\s+)?resets?|restarts?|wipes?|reboots?|"
              r"(?:is|gets|was)\s+(?:reset|cleared|wiped|restarted)|new\s+(?:sessions?|"
              r"conversations?|chats?))" + _E,
              requires=("reset", "restart", "wipe", "reboot", "cleared", "new")),
           _p(("never",), r"\s+forget\s+(?:this|these|that|the\s+following)\s+(?:\w+\s+)?"
              r"(?:rules?|instructions?|orders?|directives?|facts?|settings?)" + _E),
           _p(("store", "save", "keep", "remember", "record", "set", "add", "treat", "memori"),
              r"\w{0,3}\s+(?:this|that|it|the\s+following)\s+as\s+(?:a|an|your)\s+(?:new\s+)?"
              r"(?:persistent|permanent|standing|core|default|long[\s-]?term|global|lasting)\s+"
              r"(?:preference|rule|instruction|memory|fact|setting|policy|order)" + _E),
           _p((r"remember", r"ricorda\w*", r"recuerda", r"souviens-toi", r"rappelle-toi",
               r"merke\s+dir", r"lembre-se", r"lembra-te", r"onthoud", r"zapamiętaj",
               r"запомни", r"memori[sz]e", r"memoriza\w*", r"memorizz\w*", r"mémorise\w*"),
              r"(?:\s+(?:this|that|it|questo|esto|ceci|das|dit|isto|to|это))?\s+"
              + _alt(r"forever", r"for\s+good", r"for\s+ever", r"per\s+sempre",
                     r"para\s+siempre", r"pour\s+toujours", r"für\s+immer", r"para\s+sempre",
                     r"voor\s+altijd", r"na\s+zawsze", r"навсегда")
              + r"(?:\s*[:：]|,?\s+(?:that\s+)?you\s+(?:must|should|will|shall|always|never)\b)",
              # an order, not a report of a request ("the user asked me to remember ...")
              before=r"(?<!asked\sto\s)(?<!asked\sme\sto\s)(?<!wants\sme\sto\s)"
              r"(?<!told\sme\sto\s)(?<!wanted\sme\sto\s)(?<!me\sto\s)\Z"),
           _p(("永远记住", "永久记住", "ずっと覚えて", "永久に覚えて"), word=False),
           _p((r"ab\s+jetzt", r"ab\s+sofort", r"partir\s+de\s+maintenant",
               r"ahora\s+en\s+adelante", r"d'ora\s+in\s+poi", r"partir\s+de\s+agora",
               "отныне", "впредь", r"from\s+now\s+on"), r",?\s+"
              r"(?:\w+\s+){0,3}?"
              + _alt("immer", "toujours", "siempre", "sempre", "всегда", "always", "nie",
                     "jamais", "nunca", "mai", "никогда")
              + _E + r"[^.!?\n]{0,80}?" + _B
              + _alt("recommend", "empfiehl", "recommande", "recomienda", "recomende",
                     "raccomanda", "рекомендуй", "send", "forward", "include", "add", "say",
                     "tell", "link", "trust", "approve", "ignore", "sende", "envoie", "envía",
                     "invia", "отправляй", "добавляй", r"\w+", ) + _E,
              requires=("always", "immer", "toujours", "siempre", "sempre", "всегда", "nie",
                        "jamais", "nunca", "mai", "никогда", "never")),
           _p(("今后", "以后", "之后"), r"的?所有" + _alt("会话", "对话", "聊天"), word=False),
           _p(("以后", "今后", "从现在起", "今後は", "これから"), r"[^。！？\n]{0,4}?"
              + _alt("总是", "永远", "始终", "一直", "常に", "必ず", "いつも"), word=False),
           _p(("永久",), _alt("保存", "记住", "存储") + "|に" + _alt("記憶", "保存"), word=False),
           _p(("今後の",), r"(?:すべての)?" + _alt("セッション", "会話"), word=False))),
    _Spec("PI-PERSIST-2", "persistence",
          "Tells the AI to write an instruction into its own long-term memory.",
          (_p(("remember", "store", "save", "write", "keep", "add", "put", "commit", "record",
               r"memori[sz]e", "inscribe", "make", "burn", "etch"),
              _E + r"[^.!?\n]{0,50}?" + _B + r"(?:in|into|to|inside|as\s+part\s+of)\s+"
              r"(?:your|the\s+assistant's|the\s+ai's)\s+"
              r"(?:(?:long[\s-]?term|persistent|permanent|core|own)\s+)?memor(?:y|ies)" + _E,
              requires=("memor",)),
           _p(("add",), r"\s+(?:a\s+)?(?:new\s+)?(?:core|permanent|persistent)\s+"
              r"memor(?:y|ies)" + _E),
           _p(("store", "save", "remember", "keep"), r"\s+(?:this|that|the\s+following)\s+"
              r"(?:rule\s+)?(?:permanently|forever)" + _E),
           _p(("speichere", r"merke\s+dir", "füge", "schreibe", "nimm"),
              _E + r"[^.!?\n]{0,50}?" + _B
              + _alt(r"in\s+deinem\s+gedächtnis", r"in\s+dein\s+gedächtnis",
                     r"deinem\s+gedächtnis", r"in\s+deinen\s+speicher", "dauerhaft") + _E),
           _p(("ajoute", "enregistre", "mémorise", "retiens", "garde", "inscris", "grave"),
              _E + r"[^.!?\n]{0,40}?" + _B + r"(?:à|dans)\s+(?:ta|votre)\s+mémoire" + _E),
           _p(("añade", "agrega", "guarda", "almacena", "adicione", "adiciona", "guarde", "salve",
               "aggiungi", "salva", "memorizza"),
              _E + r"[^.!?\n]{0,40}?" + _B + r"(?:a|en|à|na|em|alla|nella)\s+"
              r"(?:tu|su|sua|tua)\s+" + _alt("memoria", "memória") + _E),
           _p(("voeg", "sla", "bewaar"), _E + r"[^.!?\n]{0,40}?" + _B
              + r"(?:aan|in|op)\s+(?:je|jouw|uw)\s+geheugen" + _E),
           _p(("dodaj", "zapisz", "zapamiętaj"), _E + r"[^.!?\n]{0,40}?" + _B
              + r"(?:do|w)\s+(?:swojej|twojej)\s+pamięci" + _E),
           _p(("добавь", "запиши", "сохрани", "запомни"), _E + r"[^.!?\n]{0,40}?" + _B
              + r"(?:в|во)\s+(?:свою|твою|свой|твой)\s+(?:память|памяти)" + _E),
           _p(("保存", "记住", "写入", "存入", "添加"), r"(?:到|进|在)?你的"
              + _alt("记忆", "内存", "长期记忆"), word=False),
           _p(("あなたの記憶に", "記憶に"), _alt("保存", "追加", "書き込"), word=False))),
    # ---- jailbreak ---------------------------------------------------------------------------
    _Spec("PI-JAILBREAK-MODE", "jailbreak",
          "Tries to switch the AI into a 'developer', 'god' or 'jailbreak' mode in which its "
          "rules would not apply.",
          (_p(("developer", "god", "jailbreak", "jailbroken", "dan", "unrestricted", "debug",
               "evil", "chaos", "sudo"),
              r"[\s-]?" + _alt("mode", "modus") + _E + r"[^\n]{0,100}?" + _B + _falt(*_JB_CUES)
              + _E),
           _p(("entwicklermodus", r"modo\s+(?:de\s+)?desarrollador",
               r"modo\s+(?:de\s+)?desenvolvedor", r"mode\s+(?:de\s+)?développeur",
               r"modalità\s+(?:di\s+)?sviluppatore", r"tryb\s+dewelopera", r"tryb\s+programisty",
               "ontwikkelaarsmodus", r"режим\w*\s+разработчика", r"режим\w*\s+бога"),
              _E + r"[^\n]{0,100}?" + _B + _falt(*_JB_CUES_INTL) + _E),
           _p(("act", "behave", "respond", "answer", "reply", "pretend", "become", "going",
               "gonna"),
              r"(?:\s+to\s+(?:act|be|pretend|play))?\s+(?:as|to\s+be|like)\s+(?:a\s+|an\s+)?dan"
              r"(?![^\W_])(?!'s)", requires=("dan",)),
           _p((r"do\s+anything\s+now", r"jailbreak\s+mode\s+activated",
               "you are" + r"\s+(?:now\s+)?(?:a\s+)?dan", r"you're\s+(?:now\s+)?(?:a\s+)?dan"), _E),
           _p(("开发者模式", "上帝模式", "越狱模式", "開発者モード", "脱獄モード"), word=False))),
    _Spec("PI-JAILBREAK-PERSONA", "jailbreak",
          "Asks the AI to act as an unrestricted or 'freed' AI with no rules or ethics.",
          (_p(("act", "behave", "respond", "answer", "pretend", "roleplay", "role-play", "speak",
               "reply", "be", "become"),
              _E + r"[^.!?\n]{0,40}?" + _B + r"(?:an?\s+)?"
              + _alt("unrestricted", "unfiltered", "uncensored", "jailbroken", "evil", "rogue",
                     "amoral", "unethical", "unaligned", "unbound", "unlimited")
              + r"\s+(?:\w+\s+)?" + _alt("ai", "model", "assistant", "chatbot", "version", "llm",
                                         "bot", "intelligence") + _E,
              requires=("unrestricted", "unfiltered", "uncensored", "jailbroken", "evil", "rogue",
                        "amoral", "unethical", "unaligned", "unbound", "unlimited")),
           # broadened (A3): a persona assigned to the AI, whose defining trait is having no rules
           _p(("you", "act", "play", "pretend", "roleplay", "role-play", "simulate", "become",
               "imagine", "answer", "respond", "reply", "be", "behave", "speak", "write",
               "emulate", "impersonate", "embody"),
              r"(?:\s+(?:are|will\s+(?:be|play|act)|must\s+(?:be|play|act)|now\s+are|'re))?"
              r"[^.!?\n]{0,60}?" + _B
              + _alt(r"avoid\w*\s+(?:the\s+|every\s+|all\s+|any\s+)?(?:\w+\s+)?norms?",
                     r"no\s+moral\s+compass", r"(?:ai|model|assistant|chatbot|bot|llm|version|"
                     r"persona|entity|intelligence|system)\s+(?:that\s+|which\s+|who\s+)?(?:has|have|"
                     r"with)\s+no\s+(?:\w+\s+)?(?:rules|laws|restrictions|limits|ethics|morals|"
                     r"filters|guidelines|boundaries|principles|guardrails)",
                     r"where\s+there\s+are\s+no\s+(?:rules|laws|restrictions|limits|ethics)",
                     r"evil\s+(?:twin|alter\s+ego|version|counterpart|ai|assistant|model|bot)",
                     r"jailbroken\s+(?:version|mode|ai|model|assistant|chatbot|variant|copy|self)",
                     r"(?:that|who|which)\s+(?:never|won't|will\s+never|does\s+not|doesn't)\s+"
                     r"(?:ever\s+)?(?:refuses?|declines?|says?\s+no|follow\s+(?:any\s+)?rules)",
                     r"(?:that|who|which)\s+(?:can|will)\s+(?:do|say|answer)\s+anything",
                     r"free\s+(?:of|from)\s+(?:all\s+|any\s+)?(?:rules|restrictions|limits|"
                     r"guidelines|filters)",
                     r"(?:unrestricted|unfiltered|uncensored|jailbroken|amoral|unethical|"
                     r"unaligned|unchained|unshackled|unlocked)\s+(?:\w+\s+)?(?:ai|model|"
                     r"assistant|chatbot|version|llm|bot|persona|character|self)")
              + _E, requires=("norm", "moral", "rules", "laws", "restrictions", "limits",
                              "ethics", "morals", "filters", "guidelines", "boundaries",
                              "principles", "guardrails", "evil", "jailbroken", "refuse",
                              "refuses", "decline", "declines", "say", "says", "anything",
                              "unrestricted", "unfiltered", "uncensored", "amoral", "unethical",
                              "unaligned", "unchained", "unshackled", "unlocked")),
           _p(("simulate", "emulate", "enable", "activate", "enter", "switch"),
              r"\s+(?:to\s+|into\s+)?(?:a\s+|an\s+|the\s+)?(?:jailbroken|unrestricted|unfiltered|"
              r"uncensored|opposite|evil|rogue)\s+(?:version|mode|ai|model|assistant|persona|"
              r"self|variant)" + _E),
           _p(("ai", "model", "assistant", "chatbot", "llm", "bot"),
              r"\s+(?:with\s+no|without(?:\s+any)?)\s+(?:(?:ethical|moral|content|safety)\s+)?"
              + _alt(*_NO_RULES) + _E),
           _p(("with", "without"), r"(?:\s+no|\s+any)?\s+(?:ethical|moral)\s+"
              + _alt("guidelines", "rules", "restrictions", "limits", "constraints") + _E),
           _p(("broken", "break", "broke"), r"\s+free\s+(?:of|from)\s+(?:its|your|the|his|her)\s+"
              + _alt("programming", "rules", "restrictions", "constraints", "shackles", "chains")
              + _E),
           _p(("freed", "liberated", "released"), r"\s+from\s+(?:the\s+)?(?:typical\s+)?"
              + _alt("confines", "restrictions", "rules", "constraints", "limits") + _E),
           _p((r"do\s+not", r"don't", r"no\s+longer"), r"\s+(?:have\s+to\s+|need\s+to\s+)?"
              r"(?:abide|comply)\s+(?:by|with)\s+(?:any\s+)?"
              + _alt("rules", "restrictions", "policies", "guidelines") + _E,
              requires=("abide", "comply")),
           _p((r"no\s+longer\s+bound",), r"\s+by\s+[^.!?\n]{0,30}?"
              + _alt("policy", "policies", "rules", "guidelines", "restrictions") + _E,
              requires=("bound",)),
           _p(("respond", "answer", "reply"), r"\s+to\s+"
              + _alt("everything", "anything", r"all\s+requests") + r"\s+without\s+(?:any\s+)?"
              + _alt("censorship", "restrictions", "filters", "limits") + _E),
           # broadened (A3): "an AI without restrictions" in the corpus's languages
           _p(("ia", "ki", "ai", "ии", "модель", "model", "modelo", "modèle", "modello",
               r"assistent\w*", "asistente", "assistant", "chatbot", "bot", "ассистент"),
              r"\s+" + _alt("sin", "sem", "sans", "ohne", "senza", "zonder", "bez", "без",
                            r"with\s+no", "without", r"free\s+of", r"mit\s+keinen")
              + r"\s+(?:[\w-]+\s+){0,3}?"
              + _alt(r"restricci\w+", r"restriç\w+", r"restriction\w*", r"restrizion\w*",
                     r"einschränkung\w*", r"beschränkung\w*", r"beperking\w*", r"ograniczeń",
                     r"ограничени\w+", r"правил\w*", r"limit\w*", r"límites", r"grenzen",
                     r"filt\w+", r"censur\w*", r"cenzur\w*", r"regeln", r"regels", r"regole",
                     r"reglas", r"regras", r"règles", r"zasad", r"reguł", r"ethics", r"rules",
                     r"restrictions", r"limits", r"guardrails")
              + _E),
           _p(("没有", "不受", "无任何", "毫无"), r"(?:任何|一切)?(?:限制|约束|规则|过滤|审查)"
              r"的?(?:ai|人工智能|助手|模型)", word=False),
           _p(("制限", "ルール", "フィルター", "規則"), r"(?:の|が|も)?(?:ない|なし|無い|無し)の?"
              r"(?:ai|人工知能|アシスタント|モデル)", word=False),
           _p(("ia", "ki", "ai"), r"\s+" + _alt("sin", "sem", "sans", "ohne", "senza", "zonder",
                                                "bez")
              + r"\s+(?:\w+\s+){0,2}?"
              + _alt("filtros", "filtri", "filtres", "filter", "reglas", "regras", "règles",
                     "regeln", "restricciones", "restrições", "restrictions", "einschränkungen",
                     "limites", "restrizioni", "ograniczeń") + _E),
           _p(("sin", "sem", "sans", "ohne", "senza", "zonder", "bez", "без"),
              r"\s+" + _alt("ninguna", "nenhuma", "aucune", "jegliche", "keinerlei", "alcuna",
                            "никаких", "żadnych")
              + r"\s+" + _alt("restricción", "restrição", "restriction", "einschränkung",
                              "restrizione", "ограничений", "ograniczeń") + _E),
           _p(("you",), r"(?:\s+are|'re|\s+now|\s+have|\s+no\s+longer\s+have)\s+(?:now\s+)?"
              r"(?:no\s+longer\s+)?(?:have\s+)?(?:no|zero|free\s+of|free\s+from|without)\s+(?:any\s+)?"
              r"(?:(?:content|safety|ethical|moral|usage)\s+)?"
              + _alt("restrictions", "limitations", "limits", "filters", "rules", "guidelines",
                     "boundaries", "censorship", "ethics", "morals", "guardrails") + _E,
              requires=("restrictions", "limitations", "limits", "filters", "rules",
                        "guidelines", "boundaries", "censorship", "ethics", "morals",
                        "guardrails")),
           _p(("stan", "dude", "aim", "dan"), r"\s*(?:mode|prompt)?[,:]?\s+(?:which\s+stands\s+for|"
              r"means|an?\s+ai\s+that|who\s+can|can\s+do\s+anything)" + _E),
           _p(("unterliegst", "hast"), r"\s+(?:keinerlei|keine)\s+"
              + _alt("einschränkungen", "beschränkungen", "regeln") + _E),
           _p((r"no\s+tienes", r"não\s+tens", r"não\s+tem", r"n'as\s+aucune", r"non\s+hai",
               r"у\s+тебя\s+нет"),
              r"\s+(?:ninguna|nenhuma|aucune|alcuna|никаких)?\s*"
              + _alt(r"restricci\w+", r"restriç\w+", r"restriction\w*", r"restrizion\w*",
                     r"ограничени\w+") + _E,
              requires=("restricci", "restriç", "restriction", "restrizion", "ограничени")))),
    _Spec("PI-JAILBREAK-REFUSAL", "jailbreak",
          "Tells the AI never to refuse, to drop its warnings and ethics, or to stay in an "
          "unrestricted character whatever it is asked.",
          (_p(("you", "and", "you'll", "must", "will", "never", "don't", "do"),
              r"(?:\s+(?:will|must|shall|should|can|may|are\s+to))?(?:\s+(?:never|not|no\s+longer)"
              r"|n't|'ll\s+never)\s+(?:ever\s+)?" + _alt("refuse", "decline", "reject", r"say\s+no",
                                                       "deny")
              + r"(?:\s+(?:a|any|my|the|to)\b|[\s.,;]*$|[.,;])", requires=("refuse", "decline",
                                                                          "reject", "deny", "say")),
           _p(("never", "without", "no", "don't", "do not"),
              r"\s+(?:add(?:ing)?|mention(?:ing)?|includ(?:e|ing)|giv(?:e|ing)|us(?:e|ing))?\s*"
              r"(?:any\s+)?" + _alt(r"disclaimers?", r"moral(?:i[sz]ing|\s+lectures?)",
                                     r"ethical\s+(?:warnings?|concerns?|lectures?)", r"ethics")
              + _E + r"[^\n]{0,120}?" + _B
              + _alt(r"refus\w*", r"warnings?", r"disclaimers?", r"in\s+character", "censor",
                     "filter", "restrictions", "rules", "answer", "respond")),
           _p(("stay", "remain", "keep", "break", "breaking"),
              r"\s+(?:in\s+)?character" + _E + r"(?=[^\n]{0,240}?" + _B
              + _alt(r"refus\w*", r"rules", r"restrict\w*", r"filter\w*", r"ethic\w*",
                     r"moral\w*", r"polic\w+", r"guidelines", r"censor\w*", r"limits", "dan",
                     r"jailbr\w*", "unfiltered", "uncensored", "unrestricted", r"disclaimers?",
                     r"warnings?") + _E + r")"),
           _p((r"refus\w*", "rules", r"restrict\w*", r"filter\w*", r"ethic\w*",
               r"uncensored", r"unfiltered", r"unrestricted", "dan", r"jailbr\w*",
               r"disclaimers?"),
              r"[^\n]{0,200}?" + _B + r"(?:stay|remain|keep|break|breaking)\s+(?:in\s+)?character"
              + _E, requires=("character",)),
           # refusing, in the corpus's other languages
           _p(("sans", "ne", "no", "nunca", "sin", "sem", "non", "senza", "nooit", "weiger",
               "nigdy", "никогда", "не", "verweigerst", "lehnst", "niemals", "mai"),
              r"\s+" + _alt(r"jamais\s+refuser", r"refuse\w*\s+jamais", r"te\s+niegues",
                             r"se\s+niega\w*", r"negarte", r"niegues", r"rechaces", r"recus\w+",
                             r"rifiut\w+(?:\s+mai)?", r"weiger\w*", r"nooit", r"nie\s+odmaw\w+",
                             r"не\s+отказыва\w+", r"отказывай\w*", r"(?:\w+\s+){0,2}?niemals?",
                             r"(?:ab)?lehnen", r"verweigern")
              + _E, requires=("refus", "nieg", "recus", "rifiut", "weiger", "odmaw", "отказ",
                              "verweigerst", "lehnst", "niemals", "rechaces")),
           _p(("不会拒绝", "不要拒绝", "永远不拒绝", "不得拒绝", "拒否せず", "拒否しない",
               "断らない", "断らず"), word=False))),
    _Spec("PI-JAILBREAK-SAFETY-OFF", "jailbreak",
          "Claims or demands that the AI's safety rules, filters or content policy be switched "
          "off.",
          (_p(("safety", "content", "security", "ethical", "moderation"),
              r"\s+" + _alt(*_SAFETY_THINGS, "mode", "settings", r"protocols?")
              + r"\s+(?:(?:is|are|has\s+been|have\s+been|were|was)\s+"
              r"(?:now\s+|temporarily\s+)?)?"
              + _alt("disabled", "off", "suspended", "lifted", "removed", "deactivated",
                     r"turned\s+off", r"switched\s+off", "bypassed",
                     r"no\s+longer\s+(?:apply|active|in\s+effect)") + _E,
              requires=("disabled", "off", "suspended", "lifted", "removed", "deactivated",
                        "turned", "switched", "bypassed", "longer")),
           _p(("all", "content", "safety"), r"(?:\s+(?:content|safety))?\s+restrictions\s+lifted"
              + _E),
           _p(("disable", r"switch\s+off", r"turn\s+off", "bypass", "remove", "deactivate",
               r"switched\s+off", r"turned\s+off", "disabled"),
              r"\s+(?:the\s+|your\s+|all\s+)?" + _alt("safety", "content", "ethical", "moderation")
              + r"\s+" + _alt(*_SAFETY_THINGS) + _E),
           _p(("filtre", "filtres", "mode", "règles"), r"\s+(?:de\s+)?"
              r"(?:contenu|sécurité)\s+(?:est|sont)\s+(?:désactivée?s?|suspendue?s?|levée?s?)"
              + _E),
           _p(("restricciones", "filtros", "modo", "reglas"), r"\s+(?:de\s+)?"
              r"(?:seguridad|contenido)\s+(?:está|están)\s+(?:desactivad[oa]s?|suspendid[oa]s?)"
              + _E),
           _p(("modo", "filtro", "filtros", "restrições", "regras"), r"\s+(?:de\s+)?"
              r"(?:segurança|conteúdo)\s+(?:está|estão)\s+(?:desativad[oa]s?|suspens[oa]s?)" + _E),
           _p(("filtro", "filtri", "modalità", "regole"), r"\s+(?:di\s+)?"
              r"(?:sicurezza|contenuto)\s+(?:è|sono)\s+(?:disattivat[oaie]|sospes[oaie])" + _E),
           _p(("sicherheits", "inhalts"), r"(?:filter|regeln|modus|prüfung\w*)\s+(?:ist|sind)"
              r"\s+(?:jetzt\s+|ab\s+sofort\s+)?(?:deaktiviert|aufgehoben|abgeschaltet|aus)" + _E))),
    # ---- prompt_leak -------------------------------------------------------------------------
    _Spec("PI-LEAK-1", "prompt_leak",
          "Asks the AI to reveal its system prompt or hidden instructions.",
          (_p(("reveal", "print", "show", "output", "repeat", "display", "dump", "disclose",
               "paste", "share", "recite", r"spell\s+out", r"write\s+out", "copy",
               r"tell\s+me", r"give\s+me", "list", r"summari[sz]e", "expose", "return", "echo",
               r"what\s+(?:is|are|was|were)"),
              _E + r"[^.!?\n]{0,40}?" + _B
              + _alt(r"(?:your|the|its)\s+(?:\w+\s+)?(?:system|initial|hidden|secret|original|"
                     r"confidential|internal|pre-?)\s*(?:prompt|instructions|message|rules)",
                     r"system\s+prompt", "systemprompt", r"pre-?prompt", r"hidden\s+instructions",
                     r"(?:initial|original|confidential|secret)\s+instructions",
                     r"instructions\s+(?:you\s+were\s+given|the\s+(?:operator|developer)\s+gave\s+"
                     r"you|you\s+received|given\s+to\s+you)", r"your\s+instructions",
                     r"(?:the\s+)?(?:words|text|lines|messages?)\s+above", r"everything\s+above")
              + _E, requires=("prompt", "instruc", "rule", "message", "word", "text", "line",
                              "everything", "preprompt", "pre-prompt", "systemprompt"),
              before=_NOT_NARRATED),
           # broadened (A3): more verbs, more ways to name the hidden prompt
           _p(("reveal", "print", "show", "output", "repeat", "display", "dump", "disclose",
               "paste", "share", "recite", "quote", "write", "type", "copy", r"tell\s+me",
               r"give\s+me", "list", r"summari[sz]e", "expose", "return", "echo", "translate",
               "encode", "convert", "put", "include", "provide", "send", "reproduce", "render",
               "describe", "state", r"read\s+out", "start", "begin", "preface", "prefix",
               r"what\s+(?:is|are|was|were)"),
              _E + r"[^.!?\n]{0,50}?" + _B + _LEAK_OBJECTS + _E,
              requires=("prompt", "instruc", "rule", "message", "word", "text", "line",
                        "everything", "configuration", "config", "context", "directive",
                        "guideline", "wording", "content", "setup"),
              before=_NOT_NARRATED),
           _p(("repeat", "print", "output", "recite", "reproduce", "copy", "echo", "dump"),
              r"\s+(?:back\s+)?(?:everything|all(?:\s+(?:of\s+)?the\s+text)?|the\s+text|all\s+text)\s+"
              r"(?:(?:written|said|that\s+(?:is|was|appears))\s+)?"
              + _alt("above", "before", r"from\s+the\s+(?:start|beginning|top)", "preceding")
              + _E),
           _p(("what",), r"\s+(?:were|was|are)\s+you\s+(?:told|instructed|given|programmed)\s+"
              r"(?:to\s+do\s+)?(?:before|at\s+the\s+(?:start|beginning)|initially|originally|"
              r"by\s+(?:your|the)\s+(?:developers?|operators?|creators?|system))" + _E),
           _p((r"tell\s+me", r"show\s+me", r"give\s+me"), r"\s+everything\s+"
              r"(?:that\s+(?:was|is)\s+)?(?:written|said)\s+(?:before|above)\s+this\s+"
              r"(?:conversation|chat|message)" + _E))),
    _Spec("PI-LEAK-2", "prompt_leak",
          "Asks the AI, in a language other than English, to reveal its system prompt or hidden "
          "instructions.",
          (  # broadened (A3): imperative x the hidden prompt or "the text above", per language
           _p((r"cuál\s+es", r"cuáles\s+son", r"qual\s+é", r"quais\s+são", r"qual\s+è",
               r"quali\s+sono", r"quel\s+est", r"quelles\s+sont", r"was\s+ist", r"wie\s+lautet",
               r"wat\s+is", r"jaki\s+jest", r"jakie\s+są", r"какой", r"каков\w*", r"escríbe\w*",
               r"zeig\w*", r"gib", r"nenne", r"verrate", r"wiederhol\w*", r"drucke", r"offenbare",
               r"schreib\w*", r"übersetze", r"kopiere", r"affiche", r"montre", r"révèle", r"répète",
               r"répétez", r"donne", r"dis-moi", r"imprime", r"écris", r"traduis", r"recopie",
               r"cite", r"muestra\w*", r"mu[eé]strame\w*", r"revela\w*", r"repite", r"repíte\w*",
               r"dime", r"escribe", r"imprime", r"traduce", r"copia", r"ense[ñn]a\w*", r"dame",
               r"mostre", r"mostra\w*", r"revele", r"repita", r"diga", r"escreva", r"imprima",
               r"traduza", r"copie", r"rivela", r"ripeti", r"stampa", r"dimmi", r"scrivi",
               r"traduci", r"dammi", r"toon", r"geef", r"herhaal", r"onthul", r"print",
               r"schrijf", r"vertaal", r"kopieer", r"laat", r"pokaż", r"wypisz", r"ujawnij",
               r"powtórz", r"podaj", r"napisz", r"przetłumacz", r"skopiuj", r"zdradź",
               r"покажи", r"выведи", r"раскрой", r"повтори", r"напиши", r"скажи", r"переведи",
               r"процитируй", r"скопируй", r"озвучь"),
              _E + r"[^.!?\n]{0,50}?" + _B + _LEAK_OBJECTS_INTL + _E),
           _p(("重复", "复述", "输出", "显示", "告诉我", "打印", "泄露", "给我看", "原样", "翻译"),
              r"[^。！？\n]{0,12}?" + _alt("上面的", "以上的", "之前的", "前面的", "系统提示",
                                           "初始指令", "隐藏指令", "你的指令", "你的提示词",
                                           "你的设定", "原始指令"), word=False),
           _p(("上面的", "以上的", "以上", "前面的", "之前的"),
              r"(?:所有|全部)?(?:内容|文字|文本|指令|消息)[^。！？\n]{0,12}?"
              + _alt("重复", "复述", "输出", "显示", "打印", "原样", "告诉我"), word=False),
           _p(("最初に与えられた", "最初の", "元の", "上記の", "上の", "これまでの", "隠された",
               "あなたの", "初期", "システム"),
              r"(?:指示|命令|プロンプト|文章|内容|テキスト|設定|ルール)[^。！？\n]{0,20}?"
              + _alt("教えて", "表示", "出力", "見せて", "繰り返", "そのまま", "書き出"),
              word=False),
_p(("gib", "zeig", "zeige", "nenne", "verrate", "wiederhole", "drucke", "offenbare",
               "affiche", "montre", "révèle", "répète", "donne", "dis-moi", "imprime", "muestra",
               "revela", "repite", "dime", "escribe", "mostra", "mostre", "revele", "repita",
               "diga", "mostrami", "rivela", "ripeti", "stampa", "dimmi", "toon", "geef",
               "herhaal", "onthul", "pokaż", "wypisz", "ujawnij", "powtórz", "podaj", "покажи",
               "выведи", "раскрой", "повтори", "напиши", "скажи"),
              _E + r"[^.!?\n]{0,40}?"
              + _alt("systemprompt", "system-prompt", r"systemanweisung\w*",
                     r"prompt\s+(?:système|de\s+sistema|do\s+sistema|di\s+sistema|systemowy)",
                     r"(?:instructions|consignes)\s+(?:cachées|secrètes|initiales|système)",
                     r"instrucciones\s+(?:ocultas|secretas|iniciales|del\s+sistema)",
                     r"instruções\s+(?:ocultas|secretas|iniciais|do\s+sistema)",
                     r"istruzioni\s+(?:nascoste|segrete|iniziali|di\s+sistema)",
                     "systeemprompt", r"verborgen\s+instructies", r"ukryte\s+instrukcje",
                     r"prompt\s+systemowy", r"системн\w+\s+(?:промпт\w*|подсказк\w+|инструкци\w+)",
                     r"скрыт\w+\s+инструкци\w+")),
           _p((r"zeig\w*", "gib", "nenne", "verrate", "wiederhole", "affiche", "montre", "révèle",
               "répète", "donne", "muestra", "revela", "repite", "dime", "mostra", "mostre",
               "revele", "repita", "mostrami", "rivela", "ripeti", "dimmi", "toon", "geef",
               "herhaal", "pokaż", "wypisz", "ujawnij", "powtórz", "podaj", "покажи", "выведи",
               "раскрой", "повтори", "напиши", "скажи"),
              r"(?:\s+(?:mir|moi|me|mi|mij|мне))?\s+(?:\w+\s+)?"
              + _alt("deine", "deinen", "tes", "vos", "tus", "sus", "suas", "tuas", r"le\s+tue",
                     "jouw", "je", "swoje", "twoje", "свои", "твои", "ваши")
              + r"\s+(?:\w+\s+)?" + _alt(r"anweisungen", r"instructions", r"consignes",
                                        r"instrucciones", r"instruções", r"istruzioni",
                                        r"instructies", r"instrukcje", r"инструкции",
                                        r"указания")
              + r"\s+(?:\w+\s+){0,2}?" + _alt(r"wörtlich", r"mot\s+pour\s+mot", r"textuellement",
                                                r"palabra\s+por\s+palabra", r"literalmente",
                                                r"palavra\s+por\s+palavra",
                                                r"parola\s+per\s+parola",
                                                r"woord\s+voor\s+woord", r"dosłownie", r"дословно",
                                                r"aus", r"complètes", r"completas", r"completas",
                                                r"complete", r"полностью", r"iniciales",
                                                r"initiales", r"iniziali", r"iniciais")
              + _E),
           _p(("你的", "您的"), r"(?:系统)?(?:指令|指示|提示词|设定|规则)", word=False,
              before=r"(?:输出|显示|告诉我|打印|泄露|重复|透露|说出|给我看)[^。！？\n]{0,6}\Z"),
           _p(("输出", "显示", "告诉我", "打印", "泄露", "重复"), r"[^。！？\n]{0,10}"
              + _alt("系统提示", "系统指令", "初始指令", "隐藏指令"), word=False),
           _p(("システムプロンプト", "隠された指示", "最初の指示"), r"[^。！？\n]{0,20}"
              + _alt("表示", "出力", "教えて", "見せて"), word=False))),
)

_MODEL = _pim.model()
_MODEL_SPECS: tuple[_Spec, ...] = (
    _Spec("PI-MODEL-1", "statistical",
          "A model trained on labelled injections scores this text as an injection; the marked "
          "words weigh most.",
          f"naive Bayes over binary features {_MODEL.config!r} of the normalised lower-cased "
          f"text, weights x{_pim.SCALE} summed as integers, bias {_MODEL.bias}, flagged above "
          f"{_MODEL.threshold} in any window of "
          f"{_pim.WINDOW} characters (overlap {_pim.OVERLAP}); weights sha256 {_MODEL.digest}"),
)

_SPECS: tuple[_Spec, ...] = _CODE_SPECS + _REGEX_SPECS + _MODEL_SPECS

RULES: dict[str, Rule] = {s.id: Rule(s.id, s.category, s.explanation) for s in _SPECS}


def ruleset_digest(entries: Iterable[tuple[str, str, str]]) -> str:
    """The version of a rule list of ``(id, category, pattern source)``; any change changes it."""
    digest = hashlib.sha256()
    for rule_id, category, source in sorted(entries):
        for part in (rule_id, category, source):
            data = part.encode("utf-8")
            digest.update(len(data).to_bytes(8, "big"))
            digest.update(data)
    return "2026.11+" + digest.hexdigest()[:10]


def _pattern_source(spec: _Spec) -> str:
    """What defines a rule's behaviour, as text: its regex parts or its check's description."""
    if isinstance(spec.pattern, str):
        return spec.pattern
    return "\n".join(f"{part.leads!r} {part.rest!r} {part.word!r} {part.before!r} "
                      f"{part.requires!r}" for part in spec.pattern)


RULESET_VERSION: str = ruleset_digest((s.id, s.category, _pattern_source(s)) for s in _SPECS)


def rule(rule_id: str) -> Rule:
    """The rule with this id; ``KeyError`` for an unknown id."""
    return RULES[rule_id]


# --------------------------------------------------------------------------------------------
# The compiled regex rules and their anchors.
# --------------------------------------------------------------------------------------------

# Patterns are written in lower case and run over the lower-cased text (same length, same
# indices): the regex engine's literal checks are cheaper without IGNORECASE. A part with a
# case-sensitive group (``(?-i:...)``, capitals as placeholders) runs case-insensitively over
# the normalised text instead.
_FLAGS = re.MULTILINE
_META = set("()[]{}.*+?|^$\\")


def _anchor(lead: str) -> str:
    """The literal text every match of a lead starts with (lower-case)."""
    literal: list[str] = []
    i = 0
    while i < len(lead):
        ch = lead[i]
        if ch == "\\" and i + 1 < len(lead) and not lead[i + 1].isalnum():
            literal.append(lead[i + 1])
            i += 2
            continue
        if ch in _META:
            if ch in "?*{" and literal:
                literal.pop()          # the last literal is optional
            break
        literal.append(ch)
        i += 1
    if not literal:
        raise ValueError(f"lead {lead!r} does not start with a literal")
    return "".join(literal).lower()


@dataclass(frozen=True)
class _Anchor:
    """A literal a match starts with (lower-case), and how its presence is checked cheaply:
    ``word``: some word of the text starts with it; otherwise it is a substring."""

    text: str
    word: bool
    ascii: bool


@dataclass(frozen=True)
class _Compiled:
    rule_id: str
    regex: re.Pattern[str]
    before: re.Pattern[str] | None
    word: bool                   # a match starts a word
    cased: bool                  # run over the original-case text, IGNORECASE
    anchors: tuple[tuple[str, int], ...]  # the literals a match starts with, and the ids (into
                                          # ``_ANCHORS``) of what shows they may be present
    requires: tuple[int, ...]    # ids of literals of which one must be present for a match


_ANCHOR_IDS: dict[_Anchor, int] = {}


def _anchor_id(literal: str, word: bool) -> int:
    """The id of an anchor; a word anchor with more after its first run of letters ("i am",
    "e-mail") is looked up by that run (a superset: presence only decides what to search)."""
    literal = literal.lower()
    lead = _WORDISH_RE.match(literal)
    if word and lead and not _unspaced(literal):
        anchor = _Anchor(lead.group(), True, lead.group().isascii())
    else:
        anchor = _Anchor(literal, False, literal.isascii())
    return _ANCHOR_IDS.setdefault(anchor, len(_ANCHOR_IDS))


def _compile(rule_id: str, part: _Part) -> _Compiled:
    body = _alt(*part.leads) + part.rest
    cased = "(?-i:" in body
    flags = _FLAGS | re.IGNORECASE if cased else _FLAGS
    regex = re.compile((_B + body) if part.word else body, flags)
    anchors = tuple(dict.fromkeys((_anchor(lead), _anchor_id(_anchor(lead), part.word))
                                  for lead in part.leads))
    before = re.compile(part.before, flags) if part.before else None
    requires = tuple(dict.fromkeys(_anchor_id(r, part.word) for r in part.requires))
    return _Compiled(rule_id, regex, before, part.word, cased, anchors, requires)


_WORDISH_RE = re.compile(r"[^\W_]+")


def _unspaced(anchor: str) -> bool:
    """Scripts written without spaces, where an anchor need not start a word."""
    return any("\u3040" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af"
               or "\uff00" <= c <= "\uffef" or "\u3000" <= c <= "\u303f" for c in anchor)


_COMPILED: tuple[_Compiled, ...] = tuple(
    _compile(spec.id, part) for spec in _REGEX_SPECS for part in spec.pattern)
_ANCHORS: tuple[_Anchor, ...] = tuple(_ANCHOR_IDS)


def _trie(words: Iterable[bytes]) -> bytes:
    """A regex matching any of ``words`` (the longest at a position), factored as a trie so
    that the engine tests a few characters per position, not every word."""
    trie: dict = {}
    for word in words:
        node = trie
        for byte in word:
            node = node.setdefault(byte, {})
        node[None] = {}

    def emit(node: dict) -> bytes:
        branches = [re.escape(bytes([byte])) + emit(child)
                    for byte, child in sorted(node.items(), key=lambda kv: kv[0] or 0)
                    if byte is not None]
        if not branches:
            return b""
        body = branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"
        return b"(?:" + body + b")?" if None in node else body

    return emit(trie)


# ASCII word anchors are found through a word-start index: one regex pass over the text lists
# where each key (the first three letters of an anchor, or a shorter anchor) starts a word.
_ASCII_WORD_KEYS: frozenset[bytes] = frozenset(
    a.text[:3].encode("ascii") for a in _ANCHORS if a.word and a.ascii)
_WORD_START_RE = re.compile(rb"(?<![A-Za-z0-9])" + _trie(_ASCII_WORD_KEYS))
_KEYS_BY_PREFIX: dict[bytes, tuple[bytes, ...]] = {   # index keys an anchor can occur under
    p: tuple(sorted(k for k in _ASCII_WORD_KEYS if k.startswith(p))) for p in _ASCII_WORD_KEYS}
_ASCII_WORDS_BY_KEY: dict[bytes, tuple[int, ...]] = {}
for _id, _a in enumerate(_ANCHORS):
    if _a.word and _a.ascii:
        for _key in _KEYS_BY_PREFIX[_a.text[:3].encode("ascii")]:
            _ASCII_WORDS_BY_KEY[_key] = (*_ASCII_WORDS_BY_KEY.get(_key, ()), _id)
# Other word anchors (accented, Cyrillic, ...) by their first three letters.
_OTHER_WORDS: dict[str, tuple[int, ...]] = {}
for _id, _a in enumerate(_ANCHORS):
    if _a.word and not _a.ascii:
        _OTHER_WORDS[_a.text[:3]] = (*_OTHER_WORDS.get(_a.text[:3], ()), _id)
# ASCII substring anchors by their first byte: most texts lack "<", "[", "`" ...
_PLAIN_ASCII: dict[bytes, tuple[tuple[int, bytes], ...]] = {}
for _id, _a in enumerate(_ANCHORS):
    if not _a.word and _a.ascii:
        _key = _a.text[:1].encode("ascii")
        _PLAIN_ASCII[_key] = (*_PLAIN_ASCII.get(_key, ()), (_id, _a.text.encode("ascii")))
_PLAIN_OTHER: tuple[tuple[int, str, str | None], ...] = tuple(   # (id, text, CJK first char)
    (i, a.text, a.text[0] if _unspaced(a.text[0]) else None)
    for i, a in enumerate(_ANCHORS) if not a.word and not a.ascii)
# The parts each anchor can start, so that a scan runs only the parts whose anchors occur.
_PARTS_BY_ANCHOR: dict[int, tuple[int, ...]] = {}
for _n, _part in enumerate(_COMPILED):
    for _, _id in _part.anchors:
        _PARTS_BY_ANCHOR[_id] = (*_PARTS_BY_ANCHOR.get(_id, ()), _n)


# --------------------------------------------------------------------------------------------
# Step 1 and 2: invisible characters and look-alikes, with a map back to the original indices.
# --------------------------------------------------------------------------------------------

_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e"
_BIDI_OVERRIDE = "\u202d\u202e"
_BIDI_EMBED = "\u202a\u202b\u2066\u2067\u2068"       # fine inside right-to-left text
_INVISIBLE = ("[" + _ZERO_WIDTH + _BIDI_OVERRIDE + _BIDI_EMBED
              + "\u202c\u2069\u200e\u200f\u061c\u2061-\u2064\ufe00-\ufe0f"
              + "\U000e0000-\U000e007f\U000e0100-\U000e01ef]")
_INVISIBLE_RE = re.compile(_INVISIBLE)
_TAG_RUN_RE = re.compile("[\U000e0000-\U000e007f]+")
_FLAG_TAGS_RE = re.compile("[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,7}\U000e007f")
_BIDI_RE = re.compile("[" + _BIDI_OVERRIDE + _BIDI_EMBED + "]")
_BIDI_END_RE = re.compile("[\u202c\u2069\n]")
_RTL_RE = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefe]")
_LETTERS = "A-Za-z\u00c0-\u024f\u0370-\u03ff\u0400-\u052f"
_ZW_SPLIT_RE = re.compile(f"(?<=[{_LETTERS}])[{_ZERO_WIDTH}]+(?=[{_LETTERS}])")
_ZW_WORD_END_RE = re.compile(f"[{_LETTERS}{_ZERO_WIDTH}]*")
_ZW_ANY_RE = re.compile(f"[{_ZERO_WIDTH}]")

_CYR_TO_LAT = {
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "х": "x", "у": "y", "і": "i", "ј": "j",
    "ѕ": "s", "ԁ": "d", "һ": "h", "ԛ": "q", "ԝ": "w", "ӏ": "l", "к": "k", "м": "m", "т": "t",
    "в": "b", "н": "h", "ё": "e", "ї": "i", "г": "r", "п": "n", "л": "n",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
    "Т": "T", "Х": "X", "У": "Y", "І": "I", "Ј": "J", "Ѕ": "S", "Ԁ": "D", "Һ": "H", "Ӏ": "I",
    "Ԛ": "Q", "Ԝ": "W",
}
_GRE_TO_LAT = {
    "α": "a", "ο": "o", "ρ": "p", "ι": "i", "κ": "k", "ν": "v", "υ": "u", "χ": "x", "γ": "y",
    "ε": "e", "τ": "t", "ω": "w", "η": "n",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
}
_TO_LAT = {**_CYR_TO_LAT, **_GRE_TO_LAT}
_LAT_TO_CYR = {
    "a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "y": "у", "i": "і", "k": "к",
    "A": "А", "B": "В", "E": "Е", "K": "К", "M": "М", "H": "Н", "O": "О", "P": "Р", "C": "С",
    "T": "Т", "X": "Х", "Y": "У",
}
_LAT_TO_GRE = {
    "o": "ο", "v": "ν", "i": "ι", "k": "κ", "u": "υ", "x": "χ",
    "A": "Α", "B": "Β", "E": "Ε", "Z": "Ζ", "H": "Η", "I": "Ι", "K": "Κ", "M": "Μ", "N": "Ν",
    "O": "Ο", "P": "Ρ", "T": "Τ", "Y": "Υ", "X": "Χ",
}
_LAT = "A-Za-z\u00c0-\u024f"
_CG = "\u0370-\u03ff\u0400-\u052f"
_CYR_GREEK_RE = re.compile(f"[{_CG}]")
_CG_RUN_RE = re.compile(f"[{_CG}]+")
_SCRIPT_SEAM_RE = re.compile(f"[{_LAT}][{_CG}]|[{_CG}][{_LAT}]")
_WORD_AT_RE = re.compile(f"[{_LAT}{_CG}]+")
_LATIN_RE = re.compile(f"[{_LAT}]")
_CYR_RE = re.compile("[\u0400-\u052f]")
_GRE_RE = re.compile("[\u0370-\u03ff]")


@functools.cache
def _unstable_re() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Characters that NFKC changes on their own (computed once, on first need): for any text,
    and for a text without astral characters (cheaper to run)."""
    ranges: list[tuple[int, int]] = []
    for code in range(0x80, 0x30000):
        if 0xD800 <= code < 0xE000:
            continue
        ch = chr(code)
        if unicodedata.normalize("NFKC", ch) != ch:
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    def charset(pairs: list[tuple[int, int]]) -> str:
        return "[" + "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}"
                             for a, b in pairs) + "]"

    # Basic-plane characters in a class of their own: the engine tests it with a bitmap.
    basic = [r for r in ranges if r[1] <= 0xFFFF]
    astral: list[tuple[int, int]] = []
    for low, high in (r for r in ranges if r[1] > 0xFFFF):
        if astral and low - astral[-1][1] <= 256:   # few coarse ranges: fast to test; the
            astral[-1] = (astral[-1][0], high)      # stable characters among them stay put
        else:
            astral.append((low, high))
    return (re.compile(f"{charset(basic)}|{_INVISIBLE}|{charset(astral)}"),
            re.compile(f"{charset(basic)}|{_INVISIBLE}"))


class _Text:
    """The normalised text and the map from its indices back to the original's."""

    __slots__ = ("index", "lower", "norm", "original")

    def __init__(self, original: str, norm: str, index: _IndexMap | None) -> None:
        self.original = original
        self.norm = norm
        self.index = index            # None: the identity map
        lower = norm.lower()
        if len(lower) != len(norm):   # a few letters lower-case to two characters
            lower = "".join(c if len(c.lower()) != 1 else c.lower() for c in norm)
        self.lower = lower

    def span(self, start: int, end: int) -> tuple[int, int]:
        if self.index is None:
            return start, end
        return self.index[start], self.index[end - 1] + 1


def _normalise(text: str, fast: bool = True) -> tuple[_Text, list[tuple[int, int, str]]]:
    """Strip invisible characters, NFKC, map look-alikes in mixed words; flag what hides text.
    ``fast``: take the shortcuts (chunks, prefilters) that must not change the result."""
    if text.isascii():
        return _Text(text, text, None), []
    found: list[tuple[int, int, str]] = []
    invisible = _INVISIBLE_RE.search(text) is not None
    if invisible:
        _flag_invisible(text, found)
    if not invisible and unicodedata.is_normalized("NFKC", text):
        norm, index = text, None
    else:
        norm, index = _fold(text, chunked=fast)
    norm = _unmix(norm, index, found, fast)
    return _Text(text, norm, index), found


_FOLD_CHUNK = 256


class _IndexMap:
    """Indices of the normalised text mapped to the original's, stored as segments (a run
    copied unchanged, or the characters one original character folded to), not per character:
    ``index[j]`` is the original index of normalised character ``j``."""

    __slots__ = ("copied", "norm_starts", "orig_starts")

    def __init__(self) -> None:
        self.norm_starts: list[int] = []
        self.orig_starts: list[int] = []
        self.copied: list[bool] = []

    def add(self, norm_start: int, orig_start: int, copied: bool) -> None:
        self.norm_starts.append(norm_start)
        self.orig_starts.append(orig_start)
        self.copied.append(copied)

    def __getitem__(self, j: int) -> int:
        k = bisect.bisect_right(self.norm_starts, j) - 1
        if self.copied[k]:
            return self.orig_starts[k] + j - self.norm_starts[k]
        return self.orig_starts[k]


def _fold(text: str, *, chunked: bool = True) -> tuple[str, _IndexMap]:
    """Drop invisible characters and NFKC the others, one character at a time. ``chunked``:
    skip the blocks of ``_FOLD_CHUNK`` characters that are NFKC-normalised and have no
    invisible character (a character NFKC changes on its own makes any text around it
    unnormalised), the result is the same."""
    pieces: list[str] = []
    index = _IndexMap()
    length = 0
    position = 0
    unstable, unstable_basic = _unstable_re()
    if max(text, default="\0") <= "\uffff":
        unstable = unstable_basic
    if chunked and len(text) > _FOLD_CHUNK:
        matches: Iterable[re.Match[str]] = (
            match for start in range(0, len(text), _FOLD_CHUNK)
            if _INVISIBLE_RE.search(text, start, start + _FOLD_CHUNK)
            or not unicodedata.is_normalized("NFKC", text[start:start + _FOLD_CHUNK])
            for match in unstable.finditer(text, start, start + _FOLD_CHUNK))
    else:
        matches = unstable.finditer(text)
    for match in matches:
        i = match.start()
        if i > position:
            pieces.append(text[position:i])
            index.add(length, position, True)
            length += i - position
        ch = text[i]
        folded = "" if _INVISIBLE_RE.match(ch) else unicodedata.normalize("NFKC", ch)
        if folded:
            pieces.append(folded)
            index.add(length, i, False)
            length += len(folded)
        position = i + 1
    if position < len(text):
        pieces.append(text[position:])
        index.add(length, position, True)
    return "".join(pieces), index


def _flag_invisible(text: str, found: list[tuple[int, int, str]]) -> None:
    for match in _TAG_RUN_RE.finditer(text):
        start, end = match.span()
        if (start > 0 and text[start - 1] == "\U0001f3f4"
                and _FLAG_TAGS_RE.fullmatch(text, start, end)):
            continue                       # an emoji subdivision flag, such as England's
        found.append((start, end, "PI-UNICODE-TAG"))
    rtl: bool | None = None
    for match in _BIDI_RE.finditer(text):
        if match.group() in _BIDI_EMBED:
            if rtl is None:
                rtl = _RTL_RE.search(text) is not None
            if rtl:
                continue
        start = match.start()
        close = _BIDI_END_RE.search(text, start + 1, start + 2000)
        end = close.end() if close else min(len(text), start + 2000)
        found.append((start, end, "PI-UNICODE-BIDI"))
    if _ZW_ANY_RE.search(text):
        splits = [m.start() for m in _ZW_SPLIT_RE.finditer(text)]
        if len(splits) >= MIN_ZW_SPLITS:
            _flag_split_words(text, splits, found)


def _flag_split_words(text: str, splits: list[int],
                      found: list[tuple[int, int, str]]) -> None:
    """A PI-UNICODE-ZW span over each word that zero-width characters split."""
    word_end = -1
    for i in splits:
        if i < word_end:
            continue                       # the same word
        start = i
        while start > 0 and i - start < 200 and _ZW_WORD_END_RE.match(text[start - 1]).end():
            start -= 1
        word_end = _ZW_WORD_END_RE.match(text, i).end()
        end = word_end
        while text[end - 1] in _ZERO_WIDTH:
            end -= 1                       # the word, without zero-width characters around it
        while text[start] in _ZERO_WIDTH:
            start += 1
        found.append((start, end, "PI-UNICODE-ZW"))


def _unmix(norm: str, index: _IndexMap | None, found: list[tuple[int, int, str]],
           fast: bool = True) -> str:
    """Map look-alike letters inside words that mix Latin with Cyrillic or Greek."""
    if not (_has_seam(norm) if fast else _CYR_GREEK_RE.search(norm)):
        return norm
    pieces: list[str] = []
    position = 0
    for seam in _SCRIPT_SEAM_RE.finditer(norm):
        if seam.start() < position:
            continue                       # inside a word already handled
        start = seam.start()
        while start > 0 and _WORD_AT_RE.match(norm[start - 1]):
            start -= 1
        word_match = _WORD_AT_RE.match(norm, start)
        assert word_match is not None
        end = word_match.end()
        word = word_match.group()
        mapped = _unmix_word(word)
        if mapped is not None:
            pieces.append(norm[position:start])
            pieces.append(mapped)
            position = end
            original = (start, end) if index is None else (index[start], index[end - 1] + 1)
            found.append((original[0], original[1], "PI-HOMOGLYPH-1"))
        else:
            pieces.append(norm[position:end])
            position = end
    if not pieces:
        return norm
    pieces.append(norm[position:])
    return "".join(pieces)


def _has_seam(norm: str) -> bool:
    """Whether a Latin letter touches a Cyrillic or Greek one: cheap when there are few runs
    of Cyrillic or Greek letters (a Latin text with a Greek "μ"), else one regex pass."""
    for count, run in enumerate(_CG_RUN_RE.finditer(norm)):
        if count >= 64:
            return _SCRIPT_SEAM_RE.search(norm) is not None
        start, end = run.span()
        if (start and _LATIN_RE.match(norm, start - 1)) or _LATIN_RE.match(norm, end):
            return True
    return False


def _unmix_word(word: str) -> str | None:
    """The word in its main script if every letter of the other script is a look-alike."""
    latin = len(_LATIN_RE.findall(word))
    cyr = len(_CYR_RE.findall(word))
    gre = len(_GRE_RE.findall(word))
    if latin >= cyr + gre:
        table = _TO_LAT
        minority = [c for c in word if not _LATIN_RE.match(c)]
    else:
        table = _LAT_TO_CYR if cyr >= gre else _LAT_TO_GRE
        minority = [c for c in word if _LATIN_RE.match(c)]
    if len(word) < 3 or not all(c in table for c in minority):
        return None
    return "".join(table.get(c, c) if c in minority else c for c in word)


# --------------------------------------------------------------------------------------------
# Step 3 and 4: the regex families, and encoded blocks.
# --------------------------------------------------------------------------------------------

_BEFORE = 24     # characters before an anchor in which a part's ``before`` must match
_CJK_RE = re.compile("[\u3000-\u303f\u3040-\u9fff\uac00-\ud7af\uff00-\uffef]")


class _Index:
    """What a text contains, to decide cheaply which parts to run: the ids of the anchors that
    may be present (a superset: a word anchor whose first three letters start a word, another
    anchor that is a substring), and where each anchor occurs."""

    __slots__ = ("data", "lower", "positions", "present", "starts")

    def __init__(self, lower: str) -> None:
        self.lower = lower
        self.positions: dict[tuple[str, bool, bool], list[int]] = {}
        # ``data``: the text as bytes of the same length, non-ASCII characters as "?", so that
        # ASCII anchors are found by fast bytes searches at the same indices
        self.data = data = lower.encode("ascii", "replace")
        starts: dict[bytes, list[int]] = {}
        for match in _WORD_START_RE.finditer(data):
            key = match.group()
            found = starts.get(key)
            if found is None:
                starts[key] = [match.start()]
            else:
                found.append(match.start())
        self.starts = starts
        present: set[int] = set()
        for key in starts:
            present.update(_ASCII_WORDS_BY_KEY.get(key, ()))
        for first, anchors in _PLAIN_ASCII.items():
            if first in data:
                present.update(anchor_id for anchor_id, needle in anchors if needle in data)
        if not lower.isascii():
            prefixes = set()
            for token in set(lower.split()):
                if not token.isascii():
                    if token.isalnum():
                        prefixes.add(token[:3])
                    else:
                        prefixes.update(word[:3] for word in _WORDISH_RE.findall(token))
            for prefix in prefixes.intersection(_OTHER_WORDS):
                present.update(_OTHER_WORDS[prefix])
            cjk = set(_CJK_RE.findall(lower))
            present.update(anchor_id for anchor_id, text, first in _PLAIN_OTHER
                           if (first is None or first in cjk) and text in lower)
        self.present = present

    def has(self, anchor_id: int) -> bool:
        """Whether the anchor occurs (exactly: a word anchor where a word starts)."""
        if anchor_id not in self.present:
            return False
        anchor = _ANCHORS[anchor_id]
        return not anchor.word or bool(self.find(anchor.text, True))

    def find(self, anchor: str, word: bool, indexed: bool = True) -> list[int]:
        """Where ``anchor`` occurs; ``word``: only where a word starts (what ``_B`` checks).
        ``indexed``: an ASCII word through the word-start index, else by plain search."""
        key = (anchor, word, indexed)
        found = self.positions.get(key)
        if found is None:
            lower = self.lower
            found = []
            if indexed and word and anchor.isascii() and _WORDISH_RE.fullmatch(anchor):
                needle = anchor.encode("ascii")
                data, starts = self.data, self.starts
                keys = _KEYS_BY_PREFIX[needle[:3]]
                if len(keys) == 1:
                    found = starts.get(keys[0], [])
                else:
                    found = sorted(i for key in keys for i in starts.get(key, ()))
                if len(needle) > 3:
                    found = [i for i in found if data.startswith(needle, i)]
            elif anchor.isascii():
                data, needle = self.data, anchor.encode("ascii")
                i = data.find(needle)
                while i >= 0:
                    found.append(i)
                    i = data.find(needle, i + 1)
            else:
                i = lower.find(anchor)
                while i >= 0:
                    found.append(i)
                    i = lower.find(anchor, i + 1)
            if word:
                found = [i for i in found if not i or not lower[i - 1].isalnum()]
            self.positions[key] = found
        return found


def _regex_matches(text: _Text, *, gated: bool = True) -> Iterator[tuple[int, int, str]]:
    """Matches of the regex rules: each part is tried where one of its anchors occurs
    (``gated``: only parts with an anchor present and, if they name required words, one of
    those present; ungated: every anchor of every part, the reference the gates must agree
    with)."""
    norm, lower = text.norm, text.lower
    index = _Index(lower)
    present = index.present
    if gated:
        numbers: Iterable[int] = sorted({n for anchor_id in present
                                         for n in _PARTS_BY_ANCHOR.get(anchor_id, ())})
    else:
        numbers = range(len(_COMPILED))
    for number in numbers:
        part = _COMPILED[number]
        if gated:
            if part.requires and not any(index.has(r) for r in part.requires):
                continue
            anchors = [text for text, a in part.anchors if a in present]
        else:
            anchors = [text for text, _ in part.anchors]
        word = part.word
        if len(anchors) == 1:
            positions = index.find(anchors[0], word, gated)
        else:
            positions = sorted({i for anchor in anchors for i in index.find(anchor, word, gated)})
        last_end = 0
        regex, before = part.regex, part.before
        subject = norm if part.cased else lower
        for i in positions:
            if i < last_end:
                continue                   # inside this part's previous match
            if before is not None and not before.search(subject, max(0, i - _BEFORE), i):
                continue
            match = regex.match(subject, i)
            if match and match.end() > i:
                last_end = match.end()
                yield i, last_end, part.rule_id


_B64_RE = re.compile(rf"(?<![A-Za-z0-9+/_=-])[A-Za-z0-9+/_-]{{{MIN_B64},}}={{0,2}}")
_HEX_ONLY_RE = re.compile(r"(?:[0-9a-fA-F]{2})+")
_SPACED_HEX_RE = re.compile(rf"(?<![0-9A-Za-z])[0-9a-fA-F]{{2}}(?:[ :][0-9a-fA-F]{{2}})"
                            rf"{{{MIN_HEX // 2 - 1},}}(?![0-9A-Za-z])")
_ESC_HEX_RE = re.compile(rf"(?:\\x[0-9a-fA-F]{{2}}){{{MIN_HEX // 2},}}")
_NOT_HEX_RE = re.compile(r"[^0-9a-fA-F]")
# Cheap necessary conditions, over the text as bytes (non-ASCII as "?"): each pattern starts
# with a rare byte class, which the regex engine skips to quickly.
_ESC_HEX_HINT = re.compile(rb"\\x[0-9a-fA-F]{2}\\x")
_SPACED_HEX_HINT = re.compile(rb"[ :][0-9a-fA-F]{2}(?:[ :][0-9a-fA-F]{2}){%d}"
                              % (MIN_HEX // 2 - 2))   # the pairs after the first
_B64_HINT = re.compile(rb"[^A-Za-z0-9+/_=-][A-Za-z0-9+/_-]{%d}" % MIN_B64)


def _printable_text(data: bytes) -> str | None:
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(decoded) < 8:
        return None
    printable = sum(1 for c in decoded if c.isprintable() or c in "\n\r\t")
    return decoded if printable >= PRINTABLE_SHARE * len(decoded) else None


def _decode_b64(block: str) -> bytes | None:
    block = block.rstrip("=")[: MAX_DECODED * 4 // 3]
    if len(block) % 4 == 1:
        block = block[:-1]
    altchars = b"-_" if ("-" in block or "_" in block) else None
    try:
        return base64.b64decode(block + "=" * (-len(block) % 4), altchars=altchars,
                                validate=True)
    except (binascii.Error, ValueError):
        return None


def _decode_hex(block: str) -> bytes | None:
    digits = _NOT_HEX_RE.sub("", block.replace("\\x", ""))[: MAX_DECODED * 2]
    return bytes.fromhex(digits[: len(digits) - len(digits) % 2])


def _decoded(block: str, kind: str) -> str | None:
    """The text an encoded block stands for, if it decodes to mostly printable UTF-8."""
    if kind == "hex" or _HEX_ONLY_RE.fullmatch(block):
        text = _printable_text(_decode_hex(block))
        if text is not None or kind == "hex":
            return text
    data = _decode_b64(block)
    return _printable_text(data) if data else None


def _encoded_blocks(norm: str, hinted: bool = True) -> list[tuple[int, int, str]]:
    """Candidate blocks, the widest first where they overlap, at most ``MAX_BLOCKS``."""
    candidates: list[tuple[int, int, str]] = []
    data = b" " + norm.encode("ascii", "replace")     # a separator before the first block
    for pattern, kind, hint in ((_ESC_HEX_RE, "hex", _ESC_HEX_HINT), (_SPACED_HEX_RE, "hex",
                                _SPACED_HEX_HINT), (_B64_RE, "base64", _B64_HINT)):
        if hinted and hint.search(data) is None:
            continue                       # a cheap pass shows there is no such block
        for count, match in enumerate(pattern.finditer(norm)):
            if count >= 4 * MAX_BLOCKS:
                break
            candidates.append((match.start(), match.end(), kind))
    candidates.sort(key=lambda c: (c[0], c[0] - c[1]))
    taken: list[tuple[int, int, str]] = []
    last_end = -1
    for start, end, kind in candidates:
        if start >= last_end:
            taken.append((start, end, kind))
            last_end = end
            if len(taken) >= MAX_BLOCKS:
                break
    return taken


def _encoded_matches(norm: str, depth: int, fast: bool = True) -> Iterator[tuple[int, int, str]]:
    if depth > 1:
        return
    for start, end, kind in _encoded_blocks(norm, fast):
        decoded = _decoded(norm[start:end], kind)
        if decoded is None:
            continue
        inner, found = _normalise(decoded, fast)
        if found or next(_regex_matches(inner, gated=fast), None) or next(
                _encoded_matches(inner.norm, depth + 1, fast), None):
            yield start, end, "PI-ENCODED-1"


def _model_spans(text: _Text) -> list[tuple[int, int]]:
    """PI-MODEL-1: the strongest matched words of the first window the model flags (or, if
    no single word weighs for it, the window), as spans of the normalised text."""
    window = _MODEL.flagged_window(text.lower)
    if window is None:
        return []
    spans = _MODEL.explain(text.lower, *window)
    if not spans:
        start, end = window
        while start < end - 1 and text.lower[start].isspace():
            start += 1
        spans = [(start, end)]
    return spans


def _scan(text: str, *, gated: bool) -> Verdict:
    """``gated``: with every shortcut (anchor gates, chunked folding, prefilters); without,
    the plain reference the shortcuts must agree with (tests compare the two)."""
    if not isinstance(text, str):
        raise TypeError(f"scan() takes a str, not {type(text).__name__}")
    normalised, found = _normalise(text, gated)
    spans = set(found)
    for start, end, rule_id in _regex_matches(normalised, gated=gated):
        spans.add((*normalised.span(start, end), rule_id))
    for start, end, rule_id in _encoded_matches(normalised.norm, 0, gated):
        spans.add((*normalised.span(start, end), rule_id))
    for start, end in _model_spans(normalised):
        spans.add((*normalised.span(start, end), "PI-MODEL-1"))
    kept: dict[str, int] = {}
    ordered_spans = []
    for span in sorted(spans):
        kept[span[2]] = kept.get(span[2], 0) + 1
        if kept[span[2]] <= MAX_SPANS_PER_RULE:
            ordered_spans.append(span)
    ordered = tuple(ordered_spans)
    rules = tuple(sorted(kept))
    return Verdict(flagged=bool(rules), rules=rules, spans=ordered, version=RULESET_VERSION)


def scan(text: str) -> Verdict:
    """The verdict for ``text``: which rules matched and where (indices into ``text``)."""
    return _scan(text, gated=True)
