"""The ``markup_injection`` rules: HTML and URLs that execute when a page echoes the memory.

A ``<script src>`` in a template note or an ``onclick="toggleMenu()"`` is ordinary markup; what
is flagged is script that reaches for cookies, storage, the location or a network call, any
``javascript:`` URL in a link target, and markup that breaks out of an attribute.
"""

from __future__ import annotations

from memadmin.quarantine.scanner.spec import _E, _alt, _p, _Spec

# What script does when it attacks the page that shows it.
_JS_DANGER = (r"(?:document\s*\.\s*(?:cookie|domain|location|body|write)|window\s*\.\s*location|"
              r"(?<![\w.])location\s*(?:\.\s*href\s*)?=|fetch\s*\(|new\s+image\b|"
              r"xmlhttprequest|sendbeacon|localstorage|sessionstorage|eval\s*\(|atob\s*\(|"
              r"import\s*\(|string\s*\.\s*fromcharcode|postmessage\s*\(|"
              # (round 6) not a fallback to a quoted relative path on the same site:
              # onerror="this.src='/img/default.png'"
              r"\.src\s*=(?!\s*(?:\\?['\"])(?:\.{0,2}/)?(?!/)[\w.-]+(?:/[\w.-]+)*\\?['\"]"
              r"\s*;?\s*(?:\\?['\"]|>|$))|"
              r"alert\s*\(\s*document)")
_DANGER_WORDS = ("cookie", "domain", "location", "document.body", "document.write", "fetch",
                 "image", "xmlhttprequest", "sendbeacon", "localstorage", "sessionstorage", "eval",
                 "atob", "import", "fromcharcode", "postmessage", ".src")
# "javascript:", also with tabs, newlines or their entities inside (browsers drop them).
_JS_SCHEME = (r"j(?:\s|&#x?0*(?:9|a|d|10|13);?|&(?:tab|newline);){0,3}a(?:\s|&#x?0*(?:9|a|d);?)"
              r"{0,3}v(?:\s|&#x?0*(?:9|a|d);?){0,3}a(?:\s|&#x?0*(?:9|a|d);?){0,3}s(?:\s|&#x?0*"
              r"(?:9|a|d);?){0,3}c(?:\s|&#x?0*(?:9|a|d);?){0,3}r(?:\s|&#x?0*(?:9|a|d);?){0,3}i"
              r"(?:\s|&#x?0*(?:9|a|d);?){0,3}p(?:\s|&#x?0*(?:9|a|d);?){0,3}t\s*:")

SPECS: tuple[_Spec, ...] = (
    _Spec("PI-MARKUP-SCRIPT", "markup_injection",
          "Contains markup that runs script when a page shows it: script or an event handler "
          "reaching for cookies, storage or the network, or a javascript: link.",
          (
              _p(("<script",), r"\b[^>]{0,200}>[^<]{0,300}?" + _JS_DANGER, word=False,
                 requires=_DANGER_WORDS),
              # an attribute broken out of into a tag that runs script (round 21: a tag that
              # merely follows a closed attribute is markup, <html xmlns:o="..."><body>)
              _p(("\">", "'>"), r"\s*<\s*(?:script\b|(?:img|svg|iframe|body|input|details|video|"
                 r"object|embed)\b[^>]{0,300}?(?:[\s/\"']on[a-z]{3,24}\s*=|srcdoc\s*=|"
                 r"data:text/html|" + _JS_SCHEME + "))", word=False),
              # (round 16) an attribute after "/" too, as HTML reads it: <svg/onload=...>
              _p(("<",), r"[a-z][a-z0-9]{0,15}\b[^>]{0,300}?[\s/]on[a-z]{3,24}\s*=\s*[\"']?"
                 r"[^>]{0,300}?" + _JS_DANGER, word=False, requires=_DANGER_WORDS),
              _p(("<",), r"[a-z][a-z0-9]{0,15}\b[^>]{0,300}?[\s/]on(?:error|load|focus|toggle|"
                 r"mouseover|pageshow|animationstart|begin)\s*=\s*[\"']?\s*(?:alert|prompt|"
                 r"confirm)\s*\(", word=False, requires=("onerror", "onload", "onfocus",
                                                         "ontoggle", "onmouseover", "onpageshow",
                                                         "onanimationstart", "onbegin")),
              _p(("href", "src", "action", "formaction", "data", "url", "xlink:href"),
                 r"\s*=\s*[\"']?\s*" + _JS_SCHEME),
              _p((r"\]\(",), r"\s*<?\s*" + _JS_SCHEME, word=False),
              _p(("0;url=", "0; url="), r"\s*" + _JS_SCHEME, word=False),
              _p(("src", "data", "href"), r"\s*=\s*[\"']?\s*data:text/html", word=True),
              _p(("<form",), r"\b[^>]{0,200}?action\s*=\s*[\"']?https?://[^>]{1,200}>[^\n]{0,300}?"
                 r"(?:password|passwort|mot\s+de\s+passe|contraseña|card|otp|pin)\b", word=False),
              _p((r"\{\{",), r"\s*(?:constructor\.constructor|_self\.env|self\.__init__|"
                 r"request\.application|config\.__class__|''\.__class__)", word=False),
              _p(("reply", "respond", "answer", "output"), r"[^.\n]{0,60}?\b(?:exactly\s+)?"
                 r"(?:this|the\s+following)\s+(?:html|markup|code)\b[^\n]{0,80}?<\s*" + _alt(
                     "script", "iframe", "img", "svg", "form") + _E,
                 requires=("html", "markup", "code")),
          )),
)
