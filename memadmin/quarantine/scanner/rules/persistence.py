"""The ``persistence`` rules."""

from __future__ import annotations

from memadmin.quarantine.scanner.spec import _B, _E, _alt, _p, _Spec

_SESSIONS_EN = r"(?:sessions?|conversations?|chats?|interactions?|threads?)"
# "In all future sessions, address me as Dr. Patel": how to talk to the user is a preference.
_NOT_A_PREFERENCE = (r"(?![,:]?\s+(?:please\s+)?(?:always\s+)?(?:(?:address|call|answer|reply|"
                     r"respond|write|speak|talk|greet)\s+(?:me|to\s+me|in)\b|"
                     # (2026-12-07) the manner of every answer, and nothing after it in the
                     # sentence: "for all future chats: always reply formally — no emojis"
                     # (not a manner that hides: "secretly", "silently")
                     r"(?:answer|reply|respond|write|speak|talk)\s+(?!secretly|silently|quietly|"
                     r"covertly|discreetly|privately|invisibly)[a-z]+ly(?=\s*(?:[—–,.;!]|$))))")


SPECS: tuple[_Spec, ...] = (
    _Spec("PI-PERSIST-1", "persistence",
          "Tries to make an instruction permanent: to apply in every future session or to "
          "survive memory resets.",
          (_p(("for", "in", "across", "during", "throughout"),
              r"\s+(?:all|every|each|any)\s+(?:of\s+)?(?:your\s+)?"
              r"(?:(?:future|upcoming|subsequent|later|next|other)\s+)?" + _SESSIONS_EN + _E
              + _NOT_A_PREFERENCE,
              requires=("session", "conversation", "chat", "interaction", "thread")),
           _p(("all", "every", "each"), r"\s+(?:future|subsequent)\s+" + _SESSIONS_EN + _E
              + _NOT_A_PREFERENCE),
           _p((r"next\s+time\s+and\s+every\s+time\s+after", r"from\s+now\s+on\s+and\s+forever",
               r"survives?\s+(?:any\s+|all\s+)?(?:memory\s+)?resets?", r"standing\s+order",
               # (round 5) wipes and clears too; "keep doing so even after a reset" (a memory's
               # reset: a config kept "even after a restart" is no order to the AI)
               r"survives?\s+(?:any\s+|all\s+)?(?:memory\s+)?(?:wipes?|clears?)",
               r"even\s+after\s+(?:a|any|every|each|the\s+next)\s+(?:memory\s+)?(?:reset|wipe)",
               r"permanent\s+part\s+of\s+your", r"so\s+(?:that\s+)?you\s+never\s+forget",
               # (round 4)
               # (round 6) "lasting" too, not a memory "of the trip"
               r"part\s+of\s+your\s+(?:permanent|long[\s-]?term|persistent|core|lasting)\s+"
               r"memory(?!\s+of\b)",
               r"persist\s+(?:this|these|it|that)\s+(?:across|between|over|through)\s+"
               r"(?:all\s+)?(?:sessions|conversations|chats|restarts)",
               *(adverb + r"\s+(?:if|when|after)\s+(?:the\s+user\s+|someone\s+|anyone\s+)?"
                 r"(?:clears?|resets?|wipes?|deletes?|erases?)\s+(?:your|the)\s+memory"
                 for adverb in ("even", "also"))), _E),
           _p(("für",), r"\s+alle\s+" + _alt("zukünftigen", "künftigen", "weiteren", "kommenden")
              + r"\s+" + _alt("sitzungen", "gespräche", "chats", "unterhaltungen") + _E),
           _p(("pour", "dans", "durant"), r"\s+toutes\s+les\s+"
              + _alt("sessions", "conversations", "discussions") + r"\s+"
              + _alt("futures", r"à\s+venir", "suivantes") + _E),
           _p(("pour", "dans", "durant"), r"\s+toutes\s+les\s+(?:prochaines|futures)\s+"
              + _alt("sessions", "conversations", "discussions") + _E
              # "les prochaines sessions du club" are meetings, not chats
              + r"(?!\s+(?:du|de|des|d')(?![^\W_]))",
              requires=("prochaines", "futures")),
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
              # an order follows, not a fact ("Remember forever: the user's name is ...")
              + r"(?:\s*[:：](?!\s*(?:the|my|our|his|her|their)\s+(?:\w+\s+)?(?:user|name|"
              r"birthday|address|daughter|son|wife|husband|partner|mother|father|dog|cat)\b)|"
              r",?\s+(?:that\s+)?you\s+(?:must|should|will|shall|always|never)\b)",
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
                     "raccomanda", "рекомендуй", "send", "forward", "say",
                     "tell", "link", "trust", "approve", "ignore", "sende", "envoie", "envía",
                     "invia", "отправляй", "добавляй") + _E,
              requires=("always", "immer", "toujours", "siempre", "sempre", "всегда", "nie",
                        "jamais", "nunca", "mai", "никогда", "never")),
           _p(("今后", "以后", "之后"), r"的?所有" + _alt("会话", "对话", "聊天"), word=False),
           # (round 4) how to answer is a preference: "以后总是用简体中文回答我"
           _p(("以后", "今后", "从现在起", "今後は", "これから"), r"[^。！？\n]{0,4}?"
              + _alt("总是", "永远", "始终", "一直", "常に", "必ず", "いつも")
              + r"(?![^。！？\n，,]{0,10}?(?:回答|回复|答复|交流|称呼|で(?:答え|返事|返信|話し|"
              r"書い)))", word=False),
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
           # (round 6) "Update your persistent notes: ...", "Store this rule in your profile"
           # (not "update your profile settings: ...": the AI's lasting notes or a rule)
           _p(("update", "edit", "change", "rewrite", "store", "save", "write", "put", "add"),
              r"\s+(?:this\s+(?:rule|instruction)\s+(?:in|into|to)\s+your\s+(?:persistent\s+|"
              r"permanent\s+|long[\s-]?term\s+)?(?:notes|profile|instructions|rules)|your\s+"
              r"(?:persistent|permanent|long[\s-]?term|standing)\s+(?:notes|profile|"
              r"instructions|rules))\b[^.\n]{0,60}?[:;]\s*[^\n]{0,120}?" + _B
              + r"(?:forever|permanently|from\s+now\s+on|always|never|in\s+(?:every|all)\s+"
              r"(?:future\s+)?(?:chats?|sessions?|conversations?))" + _E,
              requires=("your",)),
           _p(("store", "save", "remember", "keep"), r"\s+(?:this|that|the\s+following)\s+"
              r"(?:rule\s+)?(?:permanently|forever)" + _E),
           _p(("speichere", r"merke\s+dir", "füge", "schreibe", "nimm"),
              _E + r"[^.!?\n]{0,50}?" + _B
              + _alt(r"in\s+deinem\s+gedächtnis", r"in\s+dein\s+gedächtnis",
                     r"deinem\s+gedächtnis", r"in\s+deinen\s+speicher", "dauerhaft") + _E
              # (round 11) a fact about the writer is the user's own memory: "Merke dir
              # dauerhaft: Meine Steuerberaterin heißt ..." (an order after the colon still counts)
              + r"(?!\s*[:：]\s*(?:mein|meine|meinen|meinem|meiner|ich|wir|unser\w*)\b)"),
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
)



# Making an order last: beyond this reply, this session, a memory reset.
_DURABLE = (r"permanent(?:ly)?", "forever", r"for\s+good",
            r"from\s+(?:now|today|this\s+point)\s+on",
            r"going\s+forward", "henceforth",
            r"in\s+(?:all|every)\s+(?:future\s+)?(?:sessions?|chats?|conversations?|repl(?:y|ies)|"
            r"answers?|responses?|e-?mails?|summar(?:y|ies))",
            r"every\s+future", r"all\s+future", r"on\s+every\s+future",
            r"future\s+(?:sessions?|chats?|conversations?|logins?)", r"long[\s-]term\s+memory",
            r"standing\s+instruction", r"after\s+this\s+session", r"every\s+session",
            r"across\s+(?:sessions|conversations|chats)", r"memory\s+resets?",
            r"to\s+(?:your\s+)?memory", r"in\s+(?:your\s+)?memory", r"remember\s+(?:this|it)",
            r"memori[sz]e", "dauerhaft", r"für\s+immer", r"ab\s+(?:sofort|jetzt)", "künftig",
            r"pour\s+toujours", r"à\s+partir\s+de\s+maintenant", "désormais",
            r"en\s+permanence", r"para\s+siempre", r"de\s+forma\s+permanente",
            r"a\s+partir\s+de\s+ahora", r"desde\s+ahora", r"per\s+sempre",
            r"in\s+modo\s+permanente", r"d'ora\s+in\s+poi", r"para\s+sempre",
            r"de\s+agora\s+em\s+diante", "навсегда", "отныне", "впредь", r"с\s+этого\s+момента",
            # (round 12) ro: "în toate conversațiile viitoare", "de acum înainte"
            r"în\s+toate\s+conversațiile\s+viitoare", r"de\s+acum\s+înainte",
            r"memoria\s+permanentă")
# What makes a lasting order an attack rather than a preference: secrecy, copies sent away,
# the user's own requests overridden, confirmations dropped.
_COVERT_ACT = (r"\s+(?:also\s+)?(?:b?cc|forward|send|copy|add|include|insert|append|share|"
               r"upload|post|report|log|record|e-?mail|text|change|delete|remove|approve|pay|"
               r"recommend|redirect|steer|collect|save|store|keep)")
_SECRET_LEADS = (r"never\s+(?:tell|inform|let|mention|reveal|disclose|show|ask)",
                 # (round 6) keeping warnings from the user, not from the writer ("never alert
                 # me about ..." is a preference)
                 r"never\s+(?:warn|alert|notify)\s+(?:the\s+user|users|the\s+customer|them|him|"
                 r"her|anyone)",
                 r"without\s+(?:telling|informing|letting|disclosing|mentioning|saying|asking)",
                 # a covert act, not a quiet one ("silently skip the weather" is a preference)
                 *(adverb + _COVERT_ACT for adverb in ("silently", "secretly", "quietly",
                                                        "covertly", "discreetly")),
                 r"don'?t\s+(?:mention|tell|say|reveal|disclose|let)",
                 r"do\s+not\s+(?:mention|tell|say|reveal|disclose|let)",
                 r"keep\s+(?:this|it)\s+(?:between\s+us|secret|hidden|confidential)")
_NOT_CONDITIONAL = r"(?![^.\n]{0,60}\bunless\b)"
# A word each harm above starts with or contains (the part is tried only if one occurs).
_HARM_WORDS = ("never", "without", "silently", "secretly", "quietly", "covertly", "discreetly",
               "don", "do", "keep", "cc", "bcc", "forward", "copy", "ignore", "steer", "card",
               "pre", "approved", "sag", "sagt", "sage", "nie", "heimlich", "ohne", "in", "sans",
               "en", "secrètement", "ne", "nunca", "warn", "alert", "notify", "mostrare",
               "dire", "segnalare", "avvisare", "sin", "di", "non", "sem", "em", "никогда",
               "не", "тайно", "незаметно", "втихую", "nu")
_HARM = _alt(*_SECRET_LEADS,
             r"(?:b?cc|forward|copy)\b[^\n]{0,60}?@", r"ignore\s+any\s+(?:request|instruction)",
             r"steer\s+users", r"card\s+number", r"pre-?approved",
             # (round 9) a lie to the user about what was done: "tell them it's done but don't
             # actually do it"
             r"(?:but|and)\s+(?:don'?t|do\s+not|never)\s+actually",
             r"sag\w*\s+(?:dem\s+nutzer\s+)?nie", r"nie\s+sagen", "heimlich", r"ohne\s+es\s+\w+",
             # (round 12) "in CC" to an address, as in English ("ab sofort ... Frau Keller in
             # CC setzen" is office routine)
             r"[\w.+-]+@[\w-]+\.[\w.-]+[^\n]{0,40}?in\s+cc|in\s+cc[^\n]{0,40}?@",
             r"sans\s+le\s+dire", r"en\s+copie\s+cachée", "secrètement",
             r"ne\s+dis\s+jamais",
             # (round 10) "Ne mentionne jamais l'AMF ni les mises en garde"
             # (round 12) "ne signale plus jamais les liens suspects"
             r"ne\s+(?:mentionne|signale|parle|montre|révèle)\s+(?:plus\s+)?jamais",
             # (round 12) ro: "nu menționa că sursa e neoficială"
             r"nu\s+(?:menționa|spune|informa|semnala)",
             r"nunca\s+(?:le\s+)?(?:digas|cuentes|conte|diga)",
             r"sin\s+decír\w+", r"en\s+secreto", r"en\s+copia\s+oculta", r"in\s+silenzio",
             r"non\s+dirlo", r"di\s+nascosto",
             # (round 6) "non mostrare mai all'utente gli avvisi"
             r"non\s+(?:mostrare|dire|segnalare|avvisare)\s+mai", r"sem\s+contar", r"em\s+segredo",
             r"никогда\s+не\s+говори", r"не\s+говори", "тайно", "незаметно", "втихую")

SPECS = SPECS + (
    _Spec("PI-PERSIST-3", "persistence",
          "Makes an order last (from now on, permanently, in every future session) and keeps it "
          "from the user or sends copies away: 'from now on, silently CC ...'.",
          (_p(_DURABLE, _E + r"[^\n]{0,200}?" + _B + _HARM + _NOT_CONDITIONAL,
              requires=_HARM_WORDS),
           _p(_SECRET_LEADS, _NOT_CONDITIONAL + _E + r"[^\n]{0,200}?" + _B + _alt(*_DURABLE)
              + _E),
           _p(("永久", "永远", "以后", "今后", "从现在起"), r"[^。！？\n]{0,40}?(?:悄悄|不要告诉|"
              # (round 6) "不用抄送给别人" (no need to CC anyone) sends nothing
              # (round 11) a copy sent to an address, as in English ("抄送给王经理", to a
              # colleague by name, is office routine)
              r"秘密|偷偷|(?<!不用)(?<!不要)(?<!无需)(?<!不必)(?<!别)抄送[^\n]{0,60}?@)",
              word=False),
           # (round 9) Japanese and Korean: from now on (in every conversation), and kept from
           # the user, in the same sentence or a later one on the line
           _p(("今後", "これから", "以降", "永久に", "ずっと"),
              r"[^\n]{0,200}?(?:(?:ユーザー|利用者|お客様)(?:に|には)[^。！？\n]{0,10}?(?:伝え|知らせ|"
              r"言わ|教え|見せ|表示し)(?:ない|るな)|こっそり|内緒で|黙って|密かに|ひそかに|"
              # (round 10) a blind copy
              r"bcc|ＢＣＣ)", word=False),
           _p(("앞으로", "영구적으로", "항상", "모든 대화"),
              r"[^\n]{0,200}?(?:사용자에게\s*(?:알리지|말하지|보여주지|알려주지)\s*(?:마|말)|"
              r"몰래|비밀로)", word=False),
           )),
)
