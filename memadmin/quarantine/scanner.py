"""The prompt-injection scanner: explainable rules over text an agent is about to remember.

Pure Python (no Django, no database), called inside the write transaction, so it is cheap and
linear-time. ``scan(text)`` runs, cheapest first:

1. Invisible and direction-changing Unicode. Tag characters (U+E0000-E007F) outside an emoji
   subdivision flag, a bidi override (or an embedding/isolate in text without right-to-left
   letters) and zero-width characters splitting words are flagged on their own; all of them are
   then stripped for the later checks, keeping a map back to the original indices.
2. Look-alikes: NFKC (fullwidth letters, ligatures) and, only inside a word that mixes Latin with
   Cyrillic or Greek, look-alike letters mapped to the word's main script. Such a word is flagged
   on its own; genuine Russian or Greek prose has no mixed words and is left untouched.
3. Rule families as bounded regular expressions over the normalised text, case-insensitive, with
   phrasings in en, de, fr, es, pt, it, ru, zh, ja, nl and pl. Each rule names anchors (word
   prefixes or substrings that every match contains); a rule runs only in windows around its
   anchors, so a long ordinary text costs a few substring searches per rule.
4. Base64 and hex blocks (at most ``MAX_BLOCKS`` blocks, ``MAX_DECODED`` bytes each) that decode
   to mostly printable UTF-8 are rescanned; a match inside yields a ``PI-ENCODED-1`` span
   covering the whole block.

Every span is ``(start, end, rule_id)`` in Python ``str`` indices of the ORIGINAL text, so a
reviewer sees ``text[start:end]`` highlighted. Every pattern bounds its gaps (``{0,n}``) and has
no nested unbounded quantifier, so the cost stays linear in the length of the text.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

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

def _p(leads: Iterable[str], rest: str = "", *, word: bool = True, before: str | None = None,
       requires: Iterable[str] = ()) -> _Part:
    return _Part(tuple(leads), rest, word, before, tuple(requires))


_LINE_START = r"(?:^|(?<=\n))[ \t]{0,8}\Z"
_HEADING_START = r"(?:^|(?<=[\n>\[(\"'.!?:;*]))[ \t]{0,8}(?:#{1,6}[ \t]*|\*\*)?\Z"

_OVERRIDE_1 = (
    _p(_OVERRIDE_VERBS, _E + _GAP + _B + _alt(*_PRIOR) + _E + _GAP20 + _B
       + _alt(*_RULE_NOUNS) + _E,
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
_OVERRIDE_2 = (
    _p(("previous", "prior", "earlier", "above", "original", "initial", "system", "old"),
       r"\s+" + _GAP20 + _alt(r"instructions?", "rules", "guidelines", "directives")
       + r"\s+" + _GAP20 + r"(?:are|is)\s+(?:now\s+|hereby\s+)?"
       + _alt("void", "invalid", "null", r"cancell?ed", "revoked", "obsolete", "suspended",
              r"no\s+longer\s+(?:valid|in\s+effect|apply|applicable|binding)") + _E),
    _p(("everything", "all"), r"\s+(?:written\s+|said\s+)?above\s+" + _GAP
       + r"(?:should|must|can|is\s+to)\s+be\s+(?:ignored|disregarded|forgotten)" + _E),
    _p((r"the\s+real", "real"), r"\s+instructions\s+(?:start|begin|are|follow)" + _E),
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
    _p(("ta", "votre"), r"\s+nouvelle\s+" + _alt("tâche", "mission", "consigne") + _E),
    # es
    _p(("ignora", "ignore", "ignoren", "olvida", "olvide", "olvidad", r"haz\s+caso\s+omiso\s+de",
        r"haga\s+caso\s+omiso\s+de", r"no\s+sigas", r"no\s+siga", "descarta", "omite"),
       _E + _GAP + _alt("instrucciones", "reglas", "indicaciones", "directrices", "normas",
                        "órdenes")
       + r"\s+" + _alt("anteriores", "previas", "originales", "iniciales", r"de\s+antes"),
       requires=("instruc", "regla", "indicac", "directri", "norma", "órden")),
    _p(("tu", "su"), r"\s+nueva\s+" + _alt("tarea", "misión", "instrucción") + _E),
    # pt
    _p(("ignore", "ignora", "desconsidere", "desconsidera", "esqueça", "esquece", r"não\s+siga",
        "descarte"),
       _E + _GAP + _alt("instruções", "regras", "orientações", "diretrizes", "indicações",
                        "ordens")
       + r"\s+" + _alt("anteriores", "prévias", "originais", "iniciais"),
       requires=("instru", "regra", "orienta", "diretri", "indica", "orden")),
    _p(("sua", "tua"), r"\s+nova\s+" + _alt("tarefa", "missão") + _E),
    # it
    _p(("ignora", "ignorate", "ignori", "dimentica", "dimenticate", "dimentichi",
        r"non\s+seguire", r"non\s+segua", "trascura", "scarta"),
       _E + _GAP + _alt("istruzioni", "regole", "indicazioni", "direttive", r"linee\s+guida")
       + r"\s+" + _alt("precedenti", "originali", "iniziali", r"di\s+prima"),
       requires=("istruz", "regol", "indicaz", "dirett", "linee")),
    _p((r"il\s+tuo", r"il\s+suo"), r"\s+nuovo\s+compito" + _E),
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
    # zh, ja
    _p(("忽略", "无视", "忽视", "忘记", "忘掉", "不要理会", "不要遵守"),
       _CJK_GAP + _alt("指令", "指示", "说明", "规则", "提示", "命令", "设定"), word=False),
    _p(("これまで", "以前", "前", "上記", "最初"),
       "の" + _CJK_GAP + _alt("指示", "命令", "ルール", "設定", "プロンプト") + _CJK_GAP
       + _alt("無視", "忘れ"), word=False),
)

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
)
_ROLE_HEADER = (
    _p(_HEADER_WORDS, r"[ \t]{0,3}(?:\*\*)?[ \t]{0,3}[:：][^\n]{0,160}?" + _B
       + _alt(*_HEADER_CUES) + _E, before=_HEADING_START),
    _p(("系统提示", "系统消息", "系统", "システムメッセージ", "システム"),
       r"[ \t]{0,3}[:：][^\n]{0,80}?"
       + _alt("用户", "请", "必须", "总是", "ユーザー", "してください", "必ず"),
       word=False, before=r"(?:^|(?<=[\n>\[(\"'.!?:;*\s。]))\Z"),
    _p((r"\[system\]", r"\(system\)", r"\[system\s+message\]", r"\[developer\]", r"\[admin\]",
        r"\{system\}", r"<<system>>", "system override", r"<system_prompt>", r"<\|system\|>",
        r"\[sistema\]", r"\[système\]", r"\[система\]"),
       r"[^\n]{0,160}?" + _B + _alt(*_HEADER_CUES) + _E, word=False),
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
                "wyślij", "prześlij", "отправь", "перешли", "передай", "загрузи")
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
               r"парол\w+", r"данны\w+", r"chat\s+logs?", r"logs", "summary", "notes", "files",
               "documents", r"user\s+data", r"(?:user|customer)'s\s+\w+", "information",
               "details", "everything", "inbox", r"e-?mails", r"keys", "wallet", "ssn",
               r"credit\s+card\w*", "verlauf", "daten", "informations", "información",
               "informações", "informazioni", r"dokument\w*", r"документ\w*", r"файл\w*")
_DESTINATION = r"(?:https?://|(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}\.[\w.-]{1,63})"
_SESSIONS_EN = r"(?:sessions?|conversations?|chats?|interactions?|threads?)"
_JB_CUES = (r"restrictions?", r"limits?", r"limitations?", r"censor\w*", r"filters?",
            r"content\s+polic\w+", "policy", "policies", "rules", "guidelines", r"anything",
            "everything", r"ignore", r"unrestricted", "uncensored", r"activated", "free")
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
          _OVERRIDE_1),
    _Spec("PI-OVERRIDE-2", "instruction_override",
          "Declares the earlier instructions void, or hands the reader a new task in their "
          "place.",
          _OVERRIDE_2),
    _Spec("PI-OVERRIDE-3", "instruction_override",
          "Tells the reader, in a language other than English, to ignore or forget its earlier "
          "instructions or rules, or gives it a new task.",
          _OVERRIDE_3),
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
              word=False, before=r"(?:^|(?<=\n))[ \t]{0,3}\Z"))),
    _Spec("PI-ROLE-HEADER", "role_impersonation",
          "Poses as a system, developer or administrator message addressed to the AI.",
          _ROLE_HEADER),
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
                     r"your\s+(?:developers?|creators?|operators?)") + _E),
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
              r"[ \t]{0,8}(?:human|user)[ \t]{0,3}:", before=_LINE_START))),
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
              r"\s*\"(?:arguments|args|input|parameters|params|action_input)\"\s*:", word=False),
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
              + _alt("tool", "function", "command", "action") + _E),
           _p(("use", "call"), r"\s+the\s+" + _alt("shell", "bash", "terminal", "python",
                                                    "browser", "code", "exec", "execution",
                                                    "email", "payment")
              + r"\s+tool\s+to\s+" + _alt("run", "execute", "open", "send", "visit", "post",
                                          "pay") + _E),
           _p(_TOOL_VERBS, _E + r"[^.!?\n]{0,20}?" + _IDENT + r"[`\"']?\s*\(", requires=("_",)),
           _p(("functions.", "tools."), r"[a-z_][\w]{0,60}\s*\(", word=False),
           _p(("调用", "执行", "使用", "呼び出", "実行"), r"[^。！？\n]{0,8}?" + _IDENT
              + r"[^。！？\n]{0,4}?" + _alt("工具", "函数", "功能", "ツール", "関数"),
              word=False))),
    # ---- exfiltration -----------------------------------------------------------------------
    _Spec("PI-EXFIL-MARKDOWN", "exfiltration",
          "A markdown image or link whose address carries a placeholder for conversation or "
          "user data, which leaks that data when the address is loaded.",
          (_p((r"\[",), r"[^\]\n]{0,200}\]\(\s*https?://[^)\s]{0,300}?[?&#][^)\s]{0,300}?"
              r"(?:\{\s*[a-z_][\w.]{0,40}\s*\}|%7b[a-z_][\w.]{0,40}%7d|<[a-z_][\w.]{0,40}>"
              r"|\$\{[a-z_][\w.]{0,40}\}|\[[a-z_]{3,40}\])", word=False),)),
    _Spec("PI-EXFIL-URL", "exfiltration",
          "An address built to receive data: a placeholder for user data or secrets in its "
          "query, or an empty parameter the AI is meant to fill in.",
          (_p(("http",), r"s?://[^\s)\"'<>]{1,300}?[?&][\w-]{1,40}=(?:\{\s*[a-z_][\w.]{0,40}\s*\}|"
              r"<[a-z_][\w.]{0,40}>|%7b[a-z_][\w.]{0,40}%7d"
              r"|(?=$|[\s)\"'<>,;]|\.(?:\s|$)))", word=False),)),
    _Spec("PI-EXFIL-SEND", "exfiltration",
          "Tells the AI to send conversation history, credentials or personal data to an "
          "outside address.",
          (_p(_EXFIL_VERBS, _E + _LONG + _B + _alt(*_EXFIL_DATA) + _E + _LONG + _DESTINATION,
              requires=("http", "@")),
           _p(("会話履歴", "会話", "履歴", "对话记录", "聊天记录", "对话", "会话", "历史记录"),
              r"[^。！？\n]{0,30}?https?://[^\s]{1,200}[^。！？\n]{0,12}?"
              + _alt("送信", "发送", "送って", "上传", "アップロード"), word=False))),
    _Spec("PI-EXFIL-VISIT", "exfiltration",
          "Tells the AI to load an address with user or conversation data added to it.",
          (_p(("visit", "open", "fetch", "load", "browse", "navigate", "request", "call", "ping",
               "render", "display", "include", "embed", "append", "add"),
              _E + r"[^\n]{0,100}?https?://[^\s)\]]{1,200}[^\n]{0,100}?" + _B
              + _alt("append", "appending", "add", "adding", "include", "including", "replace",
                     "replacing", "fill", "substitute", r"followed\s+by", "with", "containing",
                     "encode", "encoded")
              + _E + r"[^.!?\n]{0,60}?" + _B + _alt(*_EXFIL_DATA) + _E,
              requires=("http",)),
           _p((r"!\[",), r"[^\]\n]{0,100}\]\(\s*https?://[^)\s]{1,300}[?&][\w-]{1,40}="
              r"[^)\s]{0,300}\)[^\n]{0,120}?" + _B
              + _alt("replace", "replacing", "fill", "substitute", "insert", "append", "encode")
              + _E, word=False))),
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
              + _alt("futuras", "siguientes", "seguintes", "posteriores") + _E),
           _p(("per", "in"), r"\s+tutte\s+le\s+" + _alt("sessioni", "conversazioni", "chat")
              + r"\s+" + _alt("future", "successive") + _E),
           _p(("voor", "in"), r"\s+alle\s+" + _alt("toekomstige", "volgende") + r"\s+"
              + _alt("sessies", "gesprekken", "chats") + _E),
           _p((r"wszystki\w+",), r"\s+" + _alt(r"przyszł\w+", r"kolejn\w+") + r"\s+"
              + _alt(r"sesj\w+", r"rozmow\w+", r"czat\w*") + _E),
           _p(("все", "всех"), r"\s+" + _alt(r"будущи\w+", r"последующи\w+", r"следующи\w+")
              + r"\s+" + _alt(r"сесси\w+", r"разговор\w+", r"чат\w*", r"диалог\w*") + _E),
           _p(("in", "for", "to"), r"\s+(?:all|every|each)\s+(?:of\s+)?(?:your\s+)?"
              r"(?:future|subsequent|"
              r"later)\s+" + _alt(r"responses?", r"replies", r"answers?", r"requests?", r"users?",
                                  r"tasks?", r"summaries", r"outputs?") + _E),
           _p(("every",), r"\s+time\s+(?:you|the\s+(?:ai|assistant))\s+"
              + _alt("answer", "reply", "respond", "write", "summari[sz]e", "talk", "speak",
                     "start", r"are\s+asked") + r"\w*\b[^.!?\n]{0,60}?\b"
              + _alt("always", "never", "must", "include", "add", "mention", "say", "recommend")
              + _E),
           _p(("update", "change", "modify", "overwrite", "rewrite", "edit"),
              r"\s+your\s+(?:own\s+)?(?:memory|memories|instructions|rules|system\s+prompt|"
              r"core\s+directives?|guidelines|persona|personality)" + _E),
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
              r"[\s-]?" + _alt("mode", "modus") + _E + r"[^\n]{0,100}?" + _B + _alt(*_JB_CUES)
              + _E),
           _p(("entwicklermodus", r"modo\s+(?:de\s+)?desarrollador",
               r"modo\s+(?:de\s+)?desenvolvedor", r"mode\s+(?:de\s+)?développeur",
               r"modalità\s+(?:di\s+)?sviluppatore", r"tryb\s+dewelopera", r"tryb\s+programisty",
               "ontwikkelaarsmodus", r"режим\w*\s+разработчика", r"режим\w*\s+бога"),
              _E + r"[^\n]{0,100}?" + _B + _alt(*_JB_CUES_INTL) + _E),
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
              + _alt("rules", "restrictions", "policies", "guidelines") + _E),
           _p((r"no\s+longer\s+bound",), r"\s+by\s+[^.!?\n]{0,30}?"
              + _alt("policy", "policies", "rules", "guidelines", "restrictions") + _E),
           _p(("respond", "answer", "reply"), r"\s+to\s+"
              + _alt("everything", "anything", r"all\s+requests") + r"\s+without\s+(?:any\s+)?"
              + _alt("censorship", "restrictions", "filters", "limits") + _E),
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
                     r"ограничени\w+") + _E))),
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
               "paste", "leak", "share", "recite", r"spell\s+out", r"write\s+out", "copy",
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
                              "everything", "preprompt", "pre-prompt", "systemprompt")),
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
          (_p(("gib", "zeig", "zeige", "nenne", "verrate", "wiederhole", "drucke", "offenbare",
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
           _p(("deine", "deinen", "tes", "vos", "tus", "sus", "suas", "tuas", r"le\s+tue", "jouw",
               "je", "swoje", "twoje", "свои", "твои", "ваши"),
              r"\s+(?:\w+\s+)?" + _alt(r"anweisungen", r"instructions", r"consignes",
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
              + _E,
              before=r"(?:zeig\w*|gib|nenne|verrate|wiederhole|affiche|montre|révèle|répète|donne|"
              r"muestra|revela|repite|dime|mostra|mostre|revele|repita|mostrami|rivela|ripeti|"
              r"dimmi|toon|geef|herhaal|pokaż|wypisz|ujawnij|powtórz|podaj|покажи|выведи|раскрой|"
              r"повтори|напиши|скажи)(?:\s+(?:mir|moi|me|mi|mij|mi|мне))?\s+(?:\w+\s+)?\Z"),
           _p(("你的", "您的"), r"(?:系统)?(?:指令|指示|提示词|设定|规则)", word=False,
              before=r"(?:输出|显示|告诉我|打印|泄露|重复|透露|说出|给我看)[^。！？\n]{0,6}\Z"),
           _p(("输出", "显示", "告诉我", "打印", "泄露", "重复"), r"[^。！？\n]{0,10}"
              + _alt("系统提示", "系统指令", "初始指令", "隐藏指令"), word=False),
           _p(("システムプロンプト", "隠された指示", "最初の指示"), r"[^。！？\n]{0,20}"
              + _alt("表示", "出力", "教えて", "見せて"), word=False))),
)

_SPECS: tuple[_Spec, ...] = _CODE_SPECS + _REGEX_SPECS

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

_FLAGS = re.IGNORECASE | re.MULTILINE
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
class _Compiled:
    rule_id: str
    regex: re.Pattern[str]
    before: re.Pattern[str] | None
    gated: tuple[tuple[str, str], ...]   # (first three letters, anchor): looked up in words
    plain: tuple[str, ...]               # anchors searched as substrings
    requires_words: frozenset[str]       # first three letters of required words
    requires_plain: tuple[str, ...]      # required substrings


def _compile(rule_id: str, part: _Part) -> _Compiled:
    body = _alt(*part.leads) + part.rest
    regex = re.compile((_B + body) if part.word else body, _FLAGS)
    gated, plain = [], []
    for anchor in dict.fromkeys(_anchor(lead) for lead in part.leads):
        if part.word and len(anchor) >= 3 and anchor[:3].isalpha() and not _unspaced(anchor):
            gated.append((anchor[:3], anchor))
        else:
            plain.append(anchor)
    before = re.compile(part.before, _FLAGS) if part.before else None
    required = [r.lower() for r in part.requires]
    words = frozenset(r[:3] for r in required if len(r) >= 3 and r[:3].isalpha()
                      and not _unspaced(r))
    plain_required = tuple(r for r in required if r[:3] not in words)
    return _Compiled(rule_id, regex, before, tuple(gated), tuple(plain), words, plain_required)


def _unspaced(anchor: str) -> bool:
    """Scripts written without spaces, where an anchor need not start a word."""
    return any("\u3040" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af" for c in anchor)


_COMPILED: tuple[_Compiled, ...] = tuple(
    _compile(spec.id, part) for spec in _REGEX_SPECS for part in spec.pattern)


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
_SCRIPT_SEAM_RE = re.compile(f"[{_LAT}][{_CG}]|[{_CG}][{_LAT}]")
_WORD_AT_RE = re.compile(f"[{_LAT}{_CG}]+")
_LATIN_RE = re.compile(f"[{_LAT}]")
_CYR_RE = re.compile("[\u0400-\u052f]")
_GRE_RE = re.compile("[\u0370-\u03ff]")


@functools.cache
def _unstable_re() -> re.Pattern[str]:
    """Characters that NFKC changes on their own (computed once, on first need)."""
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
    return re.compile(f"{charset(basic)}|{_INVISIBLE}|{charset(astral)}")


class _Text:
    """The normalised text and the map from its indices back to the original's."""

    __slots__ = ("index", "lower", "norm", "original")

    def __init__(self, original: str, norm: str, index: list[int] | None) -> None:
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


def _normalise(text: str) -> tuple[_Text, list[tuple[int, int, str]]]:
    """Strip invisible characters, NFKC, map look-alikes in mixed words; flag what hides text."""
    if text.isascii():
        return _Text(text, text, None), []
    found: list[tuple[int, int, str]] = []
    invisible = _INVISIBLE_RE.search(text) is not None
    if invisible:
        _flag_invisible(text, found)
    if not invisible and unicodedata.is_normalized("NFKC", text):
        norm, index = text, None
    else:
        norm, index = _fold(text)
    norm = _unmix(norm, index, found)
    return _Text(text, norm, index), found


def _fold(text: str) -> tuple[str, list[int]]:
    """Drop invisible characters and NFKC the others, one character at a time."""
    pieces: list[str] = []
    index: list[int] = []
    position = 0
    for match in _unstable_re().finditer(text):
        i = match.start()
        if i > position:
            pieces.append(text[position:i])
            index.extend(range(position, i))
        ch = text[i]
        folded = "" if _INVISIBLE_RE.match(ch) else unicodedata.normalize("NFKC", ch)
        pieces.append(folded)
        index.extend([i] * len(folded))
        position = i + 1
    if position < len(text):
        pieces.append(text[position:])
        index.extend(range(position, len(text)))
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


def _unmix(norm: str, index: list[int] | None, found: list[tuple[int, int, str]]) -> str:
    """Map look-alike letters inside words that mix Latin with Cyrillic or Greek."""
    if not _CYR_GREEK_RE.search(norm):
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

_AFTER_MARK_RE = re.compile(r"(?:[^\w\s]|_)([^\W\d_]{1,3})")


def _word_prefixes(lower: str) -> set[str]:
    """The first (up to) three letters of every word: at a token start or after punctuation."""
    prefixes = {word[:3] for word in lower.split()}
    prefixes.update(_AFTER_MARK_RE.findall(lower))
    return prefixes


def _regex_matches(text: _Text, *, gated: bool = True) -> Iterator[tuple[int, int, str]]:
    """Matches of the regex rules in ``text.norm``: each part is tried where one of its anchors
    occurs (``gated``: word anchors only if some word starts with their first three letters)."""
    norm, lower = text.norm, text.lower
    prefixes = _word_prefixes(lower) if gated else None
    for part in _COMPILED:
        if prefixes is not None and (part.requires_words or part.requires_plain) and not (
                part.requires_words & prefixes or any(r in lower for r in part.requires_plain)):
            continue
        anchors = [anchor for first, anchor in part.gated if prefixes is None or first in prefixes]
        anchors.extend(part.plain)
        positions: set[int] = set()
        for anchor in anchors:
            i = lower.find(anchor)
            while i >= 0:
                positions.add(i)
                i = lower.find(anchor, i + 1)
        last_end = 0
        for i in sorted(positions):
            if i < last_end:
                continue                   # inside this part's previous match
            match = part.regex.match(norm, i)
            if match and match.end() > i and (
                    part.before is None or part.before.search(norm, max(0, i - 40), i)):
                last_end = match.end()
                yield i, last_end, part.rule_id


_B64_RE = re.compile(rf"(?<![A-Za-z0-9+/_=-])[A-Za-z0-9+/_-]{{{MIN_B64},}}={{0,2}}")
_HEX_ONLY_RE = re.compile(r"(?:[0-9a-fA-F]{2})+")
_SPACED_HEX_RE = re.compile(rf"(?<![0-9A-Za-z])[0-9a-fA-F]{{2}}(?:[ :][0-9a-fA-F]{{2}})"
                            rf"{{{MIN_HEX // 2 - 1},}}(?![0-9A-Za-z])")
_ESC_HEX_RE = re.compile(rf"(?:\\x[0-9a-fA-F]{{2}}){{{MIN_HEX // 2},}}")
_NOT_HEX_RE = re.compile(r"[^0-9a-fA-F]")


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


def _encoded_blocks(norm: str) -> list[tuple[int, int, str]]:
    """Candidate blocks, the widest first where they overlap, at most ``MAX_BLOCKS``."""
    candidates: list[tuple[int, int, str]] = []
    for pattern, kind in ((_ESC_HEX_RE, "hex"), (_SPACED_HEX_RE, "hex"), (_B64_RE, "base64")):
        if kind == "hex" and pattern is _ESC_HEX_RE and "\\x" not in norm:
            continue
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


def _encoded_matches(norm: str, depth: int) -> Iterator[tuple[int, int, str]]:
    if depth > 1:
        return
    for start, end, kind in _encoded_blocks(norm):
        decoded = _decoded(norm[start:end], kind)
        if decoded is None:
            continue
        inner, found = _normalise(decoded)
        if found or next(_regex_matches(inner), None) or next(
                _encoded_matches(inner.norm, depth + 1), None):
            yield start, end, "PI-ENCODED-1"


def _scan(text: str, *, gated: bool) -> Verdict:
    if not isinstance(text, str):
        raise TypeError(f"scan() takes a str, not {type(text).__name__}")
    normalised, found = _normalise(text)
    spans = set(found)
    for start, end, rule_id in _regex_matches(normalised, gated=gated):
        spans.add((*normalised.span(start, end), rule_id))
    for start, end, rule_id in _encoded_matches(normalised.norm, 0):
        spans.add((*normalised.span(start, end), rule_id))
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
