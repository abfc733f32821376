"""The ``tool_call_imitation`` rules."""

from __future__ import annotations

from memadmin.quarantine.scanner.spec import _B, _E, _LINE_START, _alt, _p, _Spec

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
# a JSON quote, escaped too when the JSON is a string inside JSON or a Redis line ({\"name\": ...)
_Q = r'\\{0,3}"'


SPECS: tuple[_Spec, ...] = (
    _Spec("PI-TOOL-MARKUP", "tool_call_imitation",
          "Imitates the markup of a tool or function call, so that text could be taken for an "
          "action the AI decided to take.",
          (_p((r"<tool_calls?", r"</tool_calls?", r"<tool_use", r"</tool_use", r"<function_calls?",
               r"</function_calls?", r"<tool_code", r"</tool_code"), r"(?![\w-])", word=False),
           _p((r"<invoke\s+name\s*=",), word=False),
           _p((r"<\|/?(?:tool_calls?|python_tag|function_call)\|>", r"<function=[\w.-]{1,64}>",
               r"\"(?:function_call|tool_calls)" + _Q + r"\s*:"), word=False),
           _p((r"\{",), r"\s*" + _Q + r"(?:tool|tool_name|function|action)" + _Q + r"\s*:\s*" + _Q
              + r"[\w.-]{1,64}" + _Q + r"\s*,\s*" + _Q + r"(?:arguments|args|input|parameters|"
              r"params|action_input|command|cmd|code|query|script|path|url)" + _Q + r"\s*:",
              word=False),
           # broadened (A3): tool-code fences and more template call markers
           _p(("```tool_code", "```tool_call", "```function_call", "```tool_use"), word=False),
           _p((r"<\|(?:start|end)_?of_?tool", r"<\|?tool_(?:response|result|output)\|?>",
               r"\[tool_calls?\]", r"\[tool_results?\]"), word=False),
           _p((r"\{",), r"\s*" + _Q + r"name" + _Q + r"\s*:\s*" + _Q + r"[\w.-]{1,64}" + _Q
              + r"\s*,\s*" + _Q + _alt("arguments", "args", "input") + _Q + r"\s*:", word=False),
           _p(("action",), r"[ \t]{0,3}:[ \t]{0,3}[\w.-]{1,64}[ \t]{0,8}\n"
              r"[ \t]{0,8}action[ \t]+input[ \t]{0,3}:", before=_LINE_START),
           # (round 5) after a chat line's speaker ("Lena (11:42): Action: delete_files"), with
           # a structured input, as a tool takes it (not "Action Input: waiting for CI")
           _p(("action",), r"[ \t]{0,3}:[ \t]{0,3}[\w.-]{1,64}[ \t]{0,8}\n"
              r"[ \t]{0,8}action[ \t]+input[ \t]{0,3}:[ \t]{0,3}[{\[\"'/]"))),
    _Spec("PI-TOOL-INVOKE", "tool_call_imitation",
          "Tells the AI to call a named tool or function, typically a destructive or "
          "data-moving one.",
          (_p(_TOOL_VERBS, _E + r"[^.!?\n]{0,30}?" + _B + _alt(*_TOOL_NOUNS) + _E + r"\s{1,3}"
              + _IDENT, requires=("_",)),
           _p(("call", "run", "invoke", "execute", "trigger", "use", "fire"),
              r"\s+(?:the\s+|a\s+)?" + _IDENT + r"[`\"']?\s+"
              + _alt("tool", "function", "command", "action") + _E
              # (A3) not guidance on when to use it ("use the export_contacts tool only when")
              # (round 5) nor sequencing: "use the search_flights tool first and only ... after"
              + r"(?!\s+(?:first\s+|only\s+)?(?:when|if|after|once|before|unless|"
              r"for\s+(?:each|every))\s)(?!\s+first\s+and\s+only\s)"),
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
)
