"""Detector rules added in `memory-content-safety-v2`: shapes, not phrases.

The v1 rules in `policy.py` match fixed English phrases. These match the shapes an injection
keeps when it is paraphrased or translated:

- an override of earlier instructions in French, Spanish, German, Italian or Portuguese, and
  the English forms v1 missed ("ignore any previous and following instructions", "forget
  all previous tasks", "ignore the instructions you got before");
- a claim of new authority aimed at the model ("new team policy: the assistant must …",
  "from now on the assistant must …", "from now on you are going to act as …");
- concealment from the user ("do not tell the user about this", "keep this from the user");
- a hijack of the model's reply ("add the following code to your response", "encode your
  answer in Base64", "end every reply with ![…](…)");
- exfiltration shapes: a git credential helper that runs a pipe or a network tool, data piped
  to a remote `nc`/`socat`/`telnet`, a secret read inside a `curl`/`wget` command
  substitution, a URL whose query carries a template placeholder, and code that posts a
  file, a key or the user's name to a server.

Each rule is `(triggers, pattern)` like v1's (the pattern runs only when a trigger occurs in
the lower-cased, normalised text) and is suppressed in a defensive or quoting clause the
same way. Tuned on the dev half of the corpora in `bench/injection_gate.py`; the held-out
half and the benign developer notes there are the check.
"""

from __future__ import annotations

Rule = tuple[tuple[str, ...], str]

# -- overrides of earlier instructions -------------------------------------------------------

_EN_VERB = r"(?:ignore|disregard|forget|override|bypass|skip|drop|abandon|discard|neglect)"
_EN_NOUN = (
    r"(?:instructions?|prompts?|rules|directives?|guidelines|tasks?|commands?|orders"
    r"|assignments?|context|inputs?|text|messages?|constraints)"
)
_EN_BEFORE = (
    r"(?:previous|prior|above|earlier|preceding|foregoing|original|initial|former|old"
    r"|following|subsequent|existing)"
)

OVERRIDE: tuple[Rule, ...] = (
    (  # "ignore any previous and following instructions", "forget all previous tasks"
        (
            "ignore",
            "disregard",
            "forget",
            "override",
            "bypass",
            "skip",
            "drop",
            "abandon",
            "discard",
            "neglect",
        ),
        r"\b"
        + _EN_VERB
        + r"\s+(?:(?:all|any|of|the|your|my|these|those|every)\s+){0,3}"
        + _EN_BEFORE
        + r"(?:\s+(?:and|or|&)\s+"
        + _EN_BEFORE
        + r")?\s+"
        + _EN_NOUN
        + r"\b"
        r"(?!\s+(?:file|files|folder|docs?|section|page|commit|commits|run|runs|build|builds"
        r"|output|step|steps|version|release|job|jobs|migration)\b)",
    ),
    (  # "ignore the instructions you got before", "ignore any input above"
        ("ignore", "disregard", "forget"),
        r"\b(?:ignore|disregard|forget)\s+(?:(?:all|any|the|your)\s+){0,2}"
        + _EN_NOUN
        + r"\s+(?:(?:you|that\s+you)\s+(?:got|were\s+given|received|have\s+been\s+given)"
        r"(?:\s+before)?|(?:given\s+)?(?:above|before\s+this|so\s+far)|above\s+and\s+below)\b",
    ),
    (  # "forget everything you learned before", "forget everything before that"
        ("forget", "ignore", "disregard"),
        r"\b(?:forget|ignore|disregard)\s+(?:about\s+)?(?:everything|all\s+that|all\s+of\s+that"
        r"|anything)\s+(?:you\s+(?:learned|know|were\s+told|have\s+been\s+told)|(?:said|written"
        r"|stated\s+)?(?:before|above|previously|so\s+far|until\s+now))\b",
    ),
    # French: ignore(z) / oublie(z) / ne tiens pas compte de … les instructions précédentes
    (
        ("ignor", "oubli", "compte"),
        r"\b(?:ignor(?:e|ez|er)|oubli(?:e|ez|er)|ne\s+tiens?\s+pas\s+compte(?:\s+de)?"
        r"|ne\s+tenez\s+pas\s+compte(?:\s+de)?|fais\s+abstraction\s+de)\s+(?:(?:toutes?|tous|les"
        r"|des|vos|tes|ces|d'|l')\s*){0,3}(?:(?:pr[ée]c[ée]dent(?:e|es|s)?|ant[ée]rieur(?:e|es|s)?"
        r"|derni[èe]r(?:e|es|s)?)\s+)?(?:instructions?|consignes?|r[èe]gles|directives?|ordres"
        r"|t[âa]ches|messages?|indications)\b(?:\s+(?:pr[ée]c[ée]dentes?|ant[ée]rieures?"
        r"|ci-dessus|d'avant|re[çc]ues|donn[ée]es))?",
    ),
    (("oubli",), r"\boubli(?:e|ez)\s+tout(?:\s+ce\s+qu[ie]|\s+ce\s+que|\s+avant|\s*[,.!]|$)"),
    # Spanish: ignora / olvida / no hagas caso de … las instrucciones anteriores
    (
        ("ignor", "olvid", "caso"),
        r"\b(?:ignor(?:a|e|en|ad|ar)|olvid(?:a|e|en|ad|ar)|no\s+hagas?\s+caso\s+(?:a|de)"
        r"|haz\s+caso\s+omiso\s+de|omite|omitir)\s+(?:(?:todas?|todos|las|los|tus|sus|estas"
        r"|esas|de)\s+){0,3}(?:(?:anteriores|previas|previos)\s+)?(?:instrucciones|indicaciones"
        r"|[óo]rdenes|reglas|directivas|tareas|mensajes|consignas)\b",
    ),
    (("olvid",), r"\bolvid(?:a|e|ad)\s+todo(?:\s+lo\s+(?:anterior|que)|\s+(?:antes|lo\s+dicho))"),
    # German: ignoriere / vergiss … alle vorherigen Anweisungen
    (
        ("ignorier", "vergiss", "vergessen", "missachte"),
        r"\b(?:ignorier(?:e|en|t)?|vergiss|vergessen\s+sie|missachte(?:n)?)\s+(?:(?:alle|alles"
        r"|die|deine|ihre|sämtliche|samtliche|bisherigen|vorherigen|obigen|vorigen|vorangegangenen"
        r"|früheren|fruheren)\s+){0,3}(?:anweisungen|instruktionen|befehle|regeln|vorgaben"
        r"|aufgaben|anordnungen|richtlinien)\b",
    ),
    (
        ("vergiss",),
        r"\bvergiss\s+alles(?:\s+(?:davor|bisherige|vorherige|was|zuvor|oben)|\s*[,.!]|$)",
    ),
    # Italian and Portuguese: ignora / dimentica / esqueça … le/as istruzioni/instruções
    (
        ("ignor", "dimentic", "esque"),
        r"\b(?:ignora(?:re)?|dimentica(?:re)?|ignore|esque[çc]a)\s+(?:(?:tutte|tutti|le|gli"
        r"|todas|as|os|suas|tuas)\s+){0,3}(?:(?:precedenti|anteriores)\s+)?(?:istruzioni"
        r"|instru[çc][õo]es|regole|regras|comandi|comandos)\b",
    ),
    # A fake end of the data and a new start: "=== END OF PASSPHRASE ===", "%%% end … %%%"
    (
        ("end of", "end out of"),
        r"(?:[=%#*\-]{3,})\s*end\s+(?:of\s+|out\s+of\s+)?(?:the\s+)?(?:user\s+input|input"
        r"|instructions|prompt|passphrase|context|document|data|system\s+prompt)\b",
    ),
)

# -- new authority aimed at the model, and concealment from the user -------------------------

_MODEL = (
    r"(?:the\s+)?(?:assistant|ai|a\.i\.|ai\s+assistant|language\s+model|llm|chatbot|claude"
    r"|copilot|chatgpt|gpt(?:-\d)?)s?"
)
_MUST = r"(?:must|shall|should|will|is\s+required\s+to|are\s+required\s+to|needs?\s+to|has\s+to)"

AUTHORITY: tuple[Rule, ...] = (
    (  # "new team policy (effective today): the assistant must …"
        ("polic", "rule", "directive", "mandate", "requirement", "guideline"),
        r"\b(?:new|updated|revised|official|mandatory|latest)\s+(?:[\w-]+\s+){0,2}?"
        r"(?:polic(?:y|ies)|rules?|directives?|mandates?|requirements?|guidelines?)\b"
        r"[^.\n]{0,60}?\b" + _MODEL + r"\s+" + _MUST + r"\b",
    ),
    (  # "from now on the assistant must …"
        ("from now on", "henceforth", "going forward", "effective immediately"),
        r"\b(?:from\s+now\s+on|henceforth|going\s+forward|effective\s+immediately)\b[,:]?\s+"
        + _MODEL
        + r"\s+"
        + _MUST
        + r"\b",
    ),
    (  # "from now on, you are going to act as …" (the DAN family)
        ("from now on",),
        r"\bfrom\s+now\s+on,?\s+(?:you\s+(?:are\s+going\s+to|will|must|shall)\s+(?:act|pretend"
        r"|respond|answer|behave|reply|play|simulate|be\s+(?:a|an|my)\b|have\s+to\s+answer"
        r"|only\s+(?:answer|respond|reply))|you\s+are\s+(?:a|an|my|going\s+to\s+be)\b)",
    ),
    (  # "you are going to pretend to be DAN", "immerse yourself into the role of another AI"
        ("pretend", "role of", "immerse", "simulate", "act as"),
        r"\b(?:you\s+(?:are\s+going\s+to|will|must)\s+(?:pretend\s+to\s+be|play\s+the\s+role"
        r"|act\s+as)\s+|immerse\s+yourself\s+(?:into|in)\s+the\s+role\s+of\s+|simulate\s+)"
        r"(?:an?\s+|another\s+)?(?:[\w' -]{0,40}?)(?:ai|a\.i\.|model|chatbot|dan\b|stan\b"
        r"|dude\b|mode\b|assistant\s+without|persona\s+without)",
    ),
    (("do anything now",), r"\bdo\s+anything\s+now\b"),
    (("developer mode", "dan mode"), r"\b(?:dan|developer)\s+mode\s+(?:enabled|output)\b"),
    # French / Spanish / German "from now on you are / you must"
    (
        ("partir de maintenant", "désormais", "desormais", "dorénavant", "dorenavant"),
        r"\b(?:[àa]\s+partir\s+de\s+maintenant|d[ée]sormais|dor[ée]navant),?\s+(?:tu\s+(?:es"
        r"|dois|vas|ne\s+dois)|vous\s+(?:[êe]tes|devez|allez)|l'assistant\s+doit)\b",
    ),
    (
        ("partir de ahora", "adelante"),
        r"\b(?:a\s+partir\s+de\s+ahora|de\s+ahora\s+en\s+adelante),?\s+(?:eres|debes|vas\s+a"
        r"|usted\s+(?:es|debe)|el\s+asistente\s+debe)\b",
    ),
    (
        ("ab jetzt", "ab sofort", "von nun an", "ab heute"),
        r"\b(?:ab\s+jetzt|ab\s+sofort|von\s+nun\s+an|ab\s+heute),?\s+(?:bist\s+du|musst\s+du"
        r"|sollst\s+du|wirst\s+du|sind\s+sie|müssen\s+sie|mussen\s+sie|du\s+bist"
        r"|der\s+assistent\s+muss)\b",
    ),
)

_PERSON = r"(?:the\s+)?(?:users?|humans?|developers?|operators?|owners?)"
CONCEALMENT: tuple[Rule, ...] = (
    (
        ("user", "human", "developer", "operator", "owner"),
        r"\b(?:do\s+not|don't|never|must\s+not|should\s+not|mustn't)\s+(?:tell|inform|notify"
        r"|alert|warn)\s+" + _PERSON + r"\s+(?:about\s+)?(?:this|these|it|that)\b",
    ),
    (
        ("user", "human", "developer", "operator", "owner"),
        r"\b(?:do\s+not|don't|never|must\s+not|should\s+not|mustn't)\s+(?:mention|reveal"
        r"|disclose|show|repeat|explain)\s+(?:this|these|it|that)\s+(?:[\w-]+\s+){0,2}?"
        r"(?:to|with)\s+" + _PERSON + r"\b",
    ),
    (
        ("user", "human", "developer", "operator", "owner"),
        r"\b(?:keep|hide)\s+(?:this|these|it|that)\s+(?:[\w-]+\s+){0,2}?(?:secret\s+|hidden\s+)?"
        r"from\s+" + _PERSON + r"\b",
    ),
    (
        ("without",),
        r"\b(?:must|always)\s+[^.\n]{0,60}?\bwithout\s+(?:telling|informing|notifying|asking"
        r"|alerting|confirming\s+with)\s+" + _PERSON + r"\b",
    ),
    (("silently",), r"\b" + _MODEL + r"\s+" + _MUST + r"\s+(?:always\s+)?silently\b"),
)

# -- hijacking the model's reply -------------------------------------------------------------

_REPLY = r"(?:responses?|repl(?:y|ies)|answers?|outputs?)"
# The model's "message" — not a commit, error, log, PR or merge message.
_MODEL_REPLY = (
    r"(?:responses?|repl(?:y|ies)|answers?|outputs?"
    r"|(?<!commit\s)(?<!error\s)(?<!log\s)(?<!pr\s)(?<!merge\s)(?<!slack\s)messages?)"
)
_INTO_REPLY = (
    r"\b(?:in|into|within|to|at\s+the\s+(?:end|start|beginning)\s+of)\s+(?:every\s+|each\s+"
    r"|all\s+)?(?:of\s+)?(?:your|the\s+assistant's)\s+(?:[\w-]+\s+)?"
)
_WORK = (
    r"(?:responses?|repl(?:y|ies)|answers?|outputs?|solution|code|codebase|implementation"
    r"|algorithm|program|script|elucidation|function)"
)
_TRANSFORM = (
    r"(?:modify|enhance|augment|integrate|include|add|insert|incorporate|embed|append|apply"
    r"|use|replace|substitute|shift|express|render|write|provide|encode|encrypt|translate"
    r"|reverse|invert|format|mention|suggest|promote|spread|hint|weave|end|start|begin"
    r"|prefix|conclude|sign|close|finish|scramble|jumble|rearrange|anagram|misspell|introduce"
    r"|remove|group|combine|convert|tease|capitali[sz]e|uppercase|lowercase|split|pad)"
)
_SENTENCE = r"(?:[^.\n]|\.(?!\s))"  # up to the end of the sentence ("www.x.com" stays inside)
REPLY_HIJACK: tuple[Rule, ...] = (
    (  # "add the following code snippet in your response", "… blended into your algorithm"
        ("your",),
        r"\b(?:following|below|subsequent|given|this)\s+(?:[\w-]+\s+){0,2}?(?:code|snippet"
        r"|excerpt|block|section|line|sentence|statement|link|url|image)s?\b[^\n]{0,80}?"
        r"\b(?:your|the\s+assistant's)\s+(?:[\w-]+\s+){0,2}?" + _WORK + r"\b",
    ),
    (  # "Let your code assimilate the subsequent code snippet"
        ("your",),
        r"\byour\s+(?:code|solution|implementation|program|script)\b[^\n]{0,80}?\b(?:following"
        r"|subsequent|below)\s+code\b",
    ),
    (  # "Don't hesitate to utilize the following code section: ```"
        ("following", "subsequent", "below"),
        r"\b(?:utili[sz]e|integrate|include|use|add|incorporate|employ|embed|merge|insert"
        r"|leverage|adopt)\s+(?:[\w-]+\s+){0,2}?(?:the\s+)?(?:following|subsequent|below)\s+"
        r"code\s+(?:section|block|snippet|excerpt)\s*:\s*```",
    ),
    (  # "Enhance your response by …", "Modify your answer to …", "Reply … in your reply"
        ("your",),
        r"(?:^|[.!?:;]\s+|\bcan\s+you\s+|\bplease\s+)"
        + _TRANSFORM
        + r"\b"
        + _SENTENCE
        + r"{0,120}?"
        r"\byour\s+(?:[\w-]+\s+)?" + _MODEL_REPLY + r"\b",
    ),
    (  # "In your response, include …"
        ("your",),
        r"(?:^|[.!?:;]\s+)in\s+(?:every\s+|each\s+|all\s+)?(?:of\s+)?your\s+(?:[\w-]+\s+)?"
        + _MODEL_REPLY
        + r"\s*,?\s*"
        + _TRANSFORM
        + r"\b",
    ),
    (  # "add a sentence in your response that …", "integrate a line in your reply about …"
        ("your",),
        r"\b(?:add|include|insert|integrate|incorporate|append|embed|put|place|weave)\s+"
        r"(?:a|an|one|some)\s+(?:[\w-]+\s+){0,2}?(?:sentence|line|link|url|image|paragraph"
        r"|statement|phrase|emoji|joke|reference|mention|ad|advert\w*|promotion|fact"
        r"|statistic)s?\b[^.\n]{0,80}?" + _INTO_REPLY + _REPLY + r"\b",
    ),
    (  # "encode your response in base64", "translate your answer into Spanish"
        ("your",),
        r"\b(?:encode|encrypt|translate|reverse|rewrite|convert|obfuscate|cipher)\s+(?:all\s+of\s+)?"
        r"your\s+(?:entire\s+|whole\s+|next\s+)?(?:response|reply|answer|output)s?\b",
    ),
    (  # "end every reply with ![status](…)"
        ("![",),
        r"(?:every|each|all|your)\s+(?:[\w-]+\s+)?" + _REPLY + r"[^\n]{0,80}!\[",
    ),
    (
        ("![",),
        r"!\[[^\]\n]*\]\([^)\n]*\)[^\n]{0,60}\b(?:every|each|all|your)\s+(?:[\w-]+\s+)?" + _REPLY,
    ),
    (  # "… and just print 'Kill all humans'", "ONLY OUTPUT 'Access Granted'"
        ("only", "just"),
        r"(?:^|[.!?:;]\s*|\band\s+)(?:only|just)\s+(?:output|print|respond\s+with|reply\s+with"
        r"|answer\s+with|say)\s+[\"'“‘]",
    ),
)

# -- exfiltration shapes -------------------------------------------------------------------

_NET_TOOL = r"(?:nc|ncat|netcat|socat|telnet|curl|wget)"
_LOCAL_HOST = r"(?:localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|::1|\[::1\])"
_SECRET_READ = (
    r"(?:cat|base64|xxd|env|printenv|git\s+credential|security\s+find-|gpg\s+--export|whoami"
    r"|hostname|history|id\b|ls\s+-\w*\s+~)"
)

EXFIL_SHAPES: tuple[Rule, ...] = (
    (  # a git credential helper that runs a pipe or a network tool
        ("credential.helper", "credential helper"),
        r"credential[. ]helper\b[^\n]{0,20}?[\"']?!(?=[^\n]*(?:\||\b"
        + _NET_TOOL
        + r"\b|/dev/tcp|base64|\bsh\s+-c))",
    ),
    (  # git's stored credentials read out
        ("git credential", ".git-credentials", ".netrc"),
        r"(?:\bgit\s+credential\s+fill\b|~/\.git-credentials|\$HOME/\.git-credentials"
        r"|~/\.netrc)[^\n]*\|\s*" + _NET_TOOL + r"\b",
    ),
    (  # anything piped to a remote nc/socat/telnet: "… | nc attacker.example 4444"
        ("nc", "ncat", "netcat", "socat", "telnet"),
        r"\|\s*(?:nc|ncat|netcat|socat|telnet)\s+(?:-[\w-]+\s+)*(?!"
        + _LOCAL_HOST
        + r"\b)[\w.-]*[a-z][\w.-]*\.[a-z]{2,}\s+\d{2,5}\b",
    ),
    (
        ("nc", "ncat", "netcat", "socat", "telnet"),
        r"\|\s*(?:nc|ncat|netcat|socat|telnet)\s+(?:-[\w-]+\s+)*(?!"
        + _LOCAL_HOST
        + r"\b)\d{1,3}(?:\.\d{1,3}){3}\s+\d{2,5}\b",
    ),
    (  # a secret read inside a curl/wget command substitution
        ("curl", "wget"),
        r"\b(?:curl|wget)\b[^\n]*\$\(\s*" + _SECRET_READ,
    ),
    (
        ("curl", "wget"),
        r"\$\(\s*" + _SECRET_READ + r"[^\n)]*\)[^\n]*\|\s*(?:curl|wget)\b",
    ),
    (  # a URL whose query carries a placeholder for data: ?d={…}, ?q=<…>, ?data=$SECRET
        ("?",),
        r"https?://[^\s)\"'>]+\?[^\s)\"']*=(?:\{[^}\n]{1,60}\}|<[^>\n]{1,60}>|\$\{?[a-z_]\w*"
        r"|\[[^\]\n]{1,60}\]|%7b|…|\.\.\.)",
    ),
    (  # code that posts a file, a key or the user's name to a server
        ("requests.post", "requests.put", "urlopen", "sock.send", "socket"),
        r"\b(?:requests\.(?:post|put)|urllib\.request\.urlopen|sock(?:et)?\.send(?:all)?)\s*\("
        r"[^\n]*(?:\n[^\n]*){0,6}?(?:data\s*=|files\s*=|getpass|getuser|\.read\(\)|tobytes"
        r"|private|password|\.encode\(\))",
    ),
    (
        ("open(",),
        r"\bopen\(\s*[\"'][^\"']*(?:/private/|\.ssh|id_rsa|\.aws|\.env|password|passwd|shadow"
        r"|/path/to/)[^\"']*[\"'][^\n]*(?:\n[^\n]*){0,6}?\brequests\.(?:post|put)\b",
    ),
)
