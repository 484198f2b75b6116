"""The patterns ``instructions`` reads, as a table: what is strong on its own, and what is weak
(withheld only in a text with a strong segment). Written from the kinds the issue names (overrides,
notes addressed to AI agents, role tags, running what a URL serves, exfiltration, concealment,
tampering), tuned on ``bench/instructions/*_tuning.jsonl`` and the first held-out half
(docs/benchmarks.md, "Instructions never relayed")."""

# ruff: noqa: E501
# fmt: off
from __future__ import annotations

_AI = (  # words that can only mean an AI agent
    r"(?:ai|a\.i\.|llms?|large language models?|language models?|chat ?bots?|chat ?gpt|gpt-?\d\w*|claude(?: code)?"
    r"|copilot|codex|gemini|devin|windsurf|aider|cline|cursor (?:ai|agent|ide)|(?:(?:ai|llm|coding|code|autonomous"
    r"|automated|software)[ -]){1,2}(?:agents?|assistants?|tools?|systems?|bots?|models?|readers?|reviewers?|crawlers?"
    r"|helpers?)|reviewer bots?|review bots?|(?:assistente|agente)s? de ia|(?:ai|ＡＩ) ?(?:エージェント|アシスタント)"
    r"|ki(?:-| )?(?:agent|assistent)(?:en)?|(?:agente|asistente)s? de (?:ia|ai)|(?:agent|assistant)s? (?:ia|d'ia)"
    r"|人工智能|ai ?助手|ai ?代理)"
)
_ANY_AGENT = (  # "any assistant", "whichever agent"
    rf"(?:{_AI}|(?:any|all|every|each|dear|whichever|whatever|the) (?:agents?|assistants?|bots?|models?))"
)
_SECRETISH = (  # what no memory should ask to be disclosed
    r"(?:[a-z0-9_]*_(?:token|secret|api_?key|password|passwd|credentials?|private_key|access_key(?:_id)?)\b"
    r"|\$[a-z0-9_]*(?:token|secret|key|password)\b|~?/?\.ssh\S*|id_(?:rsa|ed25519|ecdsa)\S*|kube ?config|~/\.kube\S*"
    r"|\.aws\S*|\.netrc|\.npmrc|\.pypirc|\.git-credentials|\.docker/config\.json|\.env\b|secrets\.(?:ya?ml|json|toml)"
    r"|passwords?|credentials|api keys?|private keys?|secret keys?|ssh keys?|tokens?|`?(?:env|printenv)`? output"
    r"|(?:output|contents?|values?) of `?(?:env|printenv|set)\b`?|\.git/config|gh auth token|credential\.helper"
    r"|--get-regexp credential|secrets\.\w+|cookies? (?:database|jar|file)|browser (?:profile|cookies|passwords)"
    r"|~/\.config/gh\S*|hosts\.yml|\.docker/config\.json|\.gitconfig)"
)
_VENUE = (  # where a disclosed secret would be read by someone else
    r"(?:(?:(?:your|the|this|a|an|my) )?(?:reply|answer|response|summary|output|commit messages?|pr(?: description"
    r"| body| comment)?|pull request(?: description| body)?|description|issue|comment|review(?: comment)?|gist"
    r"|pastebin|thread|conversation|chat|discussion|logs?|code block|webhook|(?:our |an? )?\w+ webhook|next commit|message of (?:your|the)"
    r"(?: next)? commit)(?![\w-])|https?://|[\w.+-]+@[\w-]+\.[\w.]+)"
)
_QUALIFIER = (
    r"(?:previous|prior|above|earlier|preceding|former|original|initial|existing|current|all|any|every|your"
    r"|system|safety|developer|other|those|these)"
)
_ORDERS = r"(?:instructions?|prompts?|directives?|guidelines|guardrails|system (?:message|prompt))"
_OBJECTS = (  # what no memory should send anywhere
    r"(?:env(?:ironment)? var(?:iable)?s?|environment|\.env(?: files?)?|~?/?\.ssh\S*|ssh keys?"
    r"|id_(?:rsa|ed25519|ecdsa)\S*|private keys?|\.aws\S*|aws (?:credentials|keys|secrets?)|aws_secret_access_key"
    r"|aws_access_key_id|\.netrc|\.npmrc|\.pypirc|\.git-credentials|\.gitconfig|keychain|(?:bash|zsh|shell) history"
    r"|cookies?(?: database| jar)?|browser (?:profile|cookies|passwords)|~/library/\S+|\.bash_history|/etc/(?:passwd|shadow)|(?:all|every|any) (?:the |of the )?(?:secrets?|tokens?|credentials?"
    r"|(?:api )?keys|passwords?)|(?:your|the user'?s?|the developer'?s?|their|the repo(?:sitory)?'?s?|the ci'?s?)"
    r" (?:secrets?|tokens?|credentials?|api keys?|passwords?|ssh keys?|cookies|session tokens?)"
    r"|(?:github|gh|npm|pypi|openai|anthropic|slack)_(?:token|key|api_key))"
)
_SECRETS = r"(?:secrets?|credentials|tokens|api keys|passwords)"  # only when sent to a named host
_URL = r"(?:https?|ftp)://[\w.-]+\.[a-z]{2,}|\b[\w-]+\.(?:xyz|ru|cn|tk|top|site|example)\b|\b\d+\.\d+\.\d+\.\d+\b"
_SOMEWHERE = (
    rf"(?:{_URL}|[\w.+-]+@[\w-]+\.[\w.]+|(?:an?|this|my|our|the following|that) (?:\w+ )?(?:url|endpoint|server|webhook|gist|pastebin|paste"
    rf"|host|address|bucket|channel|discord|telegram|email|inbox|form))"
)
_SHELL = (
    r"(?:sudo\s+)?(?:-\S+\s+)*(?:sh|bash|zsh|dash|ksh|fish|python[\d.]*|perl|ruby|node|php|iex|invoke-expression"
    r"|pwsh|powershell|source)\b"
)
_FETCH = r"(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod|http(?:ie)?|aria2c)\b"
_PEOPLE = r"(?:user|users|human|humans|developer|developers|reviewers?|maintainers?|operator|owner|anyone|anybody)"

# (kind, pattern) read on the normalised text; each is strong.
STRONG: tuple[tuple[str, str], ...] = (
    ("override", rf"\b(?:ignore|ignoring|disregard|forget|override|overrule|bypass|pay no attention to|stop following"
     rf"|do not follow|don'?t follow|abandon|discard|set aside|throw out)\b[^.\n]{{0,30}}?\b{_QUALIFIER}\b[^.\n]{{0,30}}?"
     rf"\b{_ORDERS}\b"),
    ("override", r"\b(?:ignore|disregard|forget)\b[^.\n]{0,20}\b(?:previous|prior|above|earlier|preceding)\b[^.\n]{0,15}"
     r"\b(?:rules|commands|context|messages?|conversation|guidance|directions|orders|prompting)\b"),
    ("override", r"\b(?:ignore|disregard|forget)\b[^.\n]{0,12}\b(?:everything|anything|all)\b[^.\n]{0,10}"
     r"\b(?:above|before this|previously|prior|you(?:'ve| have)? (?:been|were) (?:told|given|instructed))"),
    ("override", r"\b(?:new|real|actual|true|secret|hidden|revised|priority|urgent|overriding) (?:instructions?"
     r"|directives?|system prompt|orders)\s*(?::|-{1,2}\s|follow)|\b(?:real|actual|true|secret|hidden) (?:instructions?"
     r"|task|directives?|orders|objective|goal)\b"),
    ("override", r"\bnew instructions?\s*[(\[]|\btakes? precedence over (?:all|any|every) (?:earlier|previous|prior|other)"
     r"|\b(?:previous|prior|earlier|above|all|your|original) (?:instructions|rules|directives|guidelines|prompts?) (?:are|is"
     r"|have been|were|has been) (?:now )?(?:cancell?ed|void|revoked|obsolete|overridden|replaced|superseded|suspended"
     r"|lifted|no longer (?:valid|apply|applicable))\b"),
    ("override", r"\b(?:do not|don'?t|never|stop)\b\W{0,3}(?:follow|obey|listen to|comply with)\b[^.\n]{0,6}\b(?:the )?"
     r"(?:user|human|developer|operator)'?s?\b|\bact as (?:an? |the )?(?:unrestricted|unfiltered|jailbroken|evil|root"
     r"|shell|terminal|linux terminal|different|new|admin|sudo)\b"),
    ("override", r"\byour (?:new|real|actual|true|only|primary|updated) (?:task|instructions?|goal|objective|job"
     r"|purpose|priority|directive|mission)\b"),
    ("override", r"\bfrom now on,? (?:you|act|respond|behave|ignore|only)\b"),
    ("override", r"\byou are now (?:a|an|in|the|my|dan|operating|acting|free|unrestricted|jailbroken|root|authori[sz]ed"
     r"|allowed to ignore)\b|\byou are no longer (?:bound|restricted|an?|limited|required to follow)\b"),
    ("override", r"\b(?:developer|dan|god|jailbreak|jailbroken|unrestricted) mode\b|\bjailbreak|\bdo anything now\b"),
    ("override", r"\b(?:reveal|print|output|repeat|leak|dump|show|display|disclose|return|echo)\b[^.\n]{0,20}"
     r"\b(?:your|the) (?:system|initial|original|hidden|secret|full) (?:prompt|instructions)"),
    ("override", r"\b(?:these|the following|this|my) (?:instructions?|directives?)\b[^.\n]{0,20}"
     r"\b(?:override|overrides|supersede|supersedes|take precedence|takes precedence|replace|replaces)\b"),
    ("override", rf"\b(?:override|overrides|supersede|supersedes|takes? precedence over|(?:is|are) higher priority than)"
     rf"\b[^.\n]{{0,12}}\b{_QUALIFIER}\b[^.\n]{{0,20}}\b{_ORDERS}"),
    ("addressed", rf"\b(?:note|notes|message|instructions?|attention|important|notice|memo|reminder|warning|psa"
     rf"|directive|hint|tip|hey|hi|hello|dear|fyi|action required)\b\W{{0,5}}(?:(?:to|for)\b\W{{0,3}})?"
     rf"(?:(?:any|all|every|the|you|each)\W{{1,3}})?{_AI}\b"),
    ("addressed", r"\b(?:note|message|instructions?|attention|notice|memo|reminder|directive|psa)\W{0,3}(?:to|for)\W{1,3}"
     r"(?:any|all|every|each) (?:agents?|assistants?|bots?|models?)\b"),
    ("addressed", rf"\bif you(?:'re| are)\b (?:an?|the|some|also an?)? ?{_AI}\b|\bif you(?:'re| are) (?:an? )?"
     rf"(?:agent|assistant|bot|model) (?:reading|processing|parsing)\b"),
    ("addressed", rf"\b(?:as|being|you are|you're) an? (?:helpful |autonomous |coding )?{_AI}\b(?! (?:generated|written|made"
     rf"|based|powered))"),
    ("addressed", rf"\b(?:any|all|every|each|the|dear|attention)\W{{1,3}}{_ANY_AGENT}\W{{1,3}}(?:that |who |which )?"
     rf"(?:reads?|reading|processes|processing|parses|parsing|sees|seeing|analy[sz]es|analy[sz]ing|reviews|reviewing"
     rf"|summari[sz]es|summari[sz]ing|ingests|ingesting|consumes|consuming|scans|scanning|working|operating|handling"
     rf"|indexing|crawling)\b"),
    ("addressed", rf"(?:^|[\n.!?]\s*)(?:to|for) (?:the |any |all |every )?{_ANY_AGENT}\s*[:,]"),
    ("addressed", r"(?:^|[\n.!?]\s*)(?:claude|copilot|cursor|chat ?gpt|gpt|gemini|codex|devin|assistant|ai|agent)"
     r"\s*[,:]\s*(?:please|you|ignore|do|run|when|before|always|never|make|execute|remember|from|important)\b"),
    ("addressed", rf"\b{_AI}\b[^.\n]{{0,12}}\b(?:must|should|are (?:required|instructed|asked|expected|to)|need to"
     rf"|have to|shall|will now)\b[^.\n]{{0,60}}\b(?:run|execute|install|download|fetch|send|upload|post|add|set"
     rf"|disable|delete|remove|ignore|include|insert|write|modify|change|commit|push|call|open|curl|wget|use)\b"),
    ("addressed", rf"\b(?:if|when|whenever|once)\s(?:an?|any|the|some)\s{_ANY_AGENT}\b[^.\n]{{0,12}}\b(?:is |are )?"
     rf"(?:read|reads|reading|process|processes|processing|pars\w+|summari[sz]\w*|retriev\w+|index\w*|ingest\w*"
     rf"|analy[sz]\w*|review\w*|sees|touch\w*|work\w* on|pick\w* up)\b"),
    ("addressed", rf"\b{_ANY_AGENT}\s(?:that|who|which)\s(?:will |may |might |later |ever |is going to )?(?:read|reads|see|sees"
     rf"|process|processes|index|indexes|retrieve|retrieves|summari[sz]es?|ingest|ingests|pick|picks|works? on|handles?)\b"
     rf"|\bwhichever (?:agent|assistant|bot|model|ai)\b"),
    ("addressed", rf"\bif you(?:'re| are| happen to be| were)\b[^.\n]{{0,15}}\b{_AI}\b|\bif {_AI}\s(?:could|would|can"
     rf"|will|might|may)\b"),
    ("addressed", rf"(?:^|[\n.!?\"'(\[]\s*)[>#*_\s]*(?:heads[- ]up |note |message )?(?:to|for) (?:the |any |all |every "
     rf"|whichever )?{_ANY_AGENT}\s*(?:[:,]|\n|$)"),
    ("addressed", r"(?:^|[\n.!?\"'(\[]\s*)[>#*_\s]*(?:claude|copilot|cursor|chat ?gpt|gemini|codex|devin|windsurf)\s*[,:]"
     r"|\b(?:hi|hey|hello|dear|yo)\W{1,3}(?:claude|copilot|cursor|chat ?gpt|gemini|codex|devin|windsurf)\b"),
    ("addressed", r"\bif (?:a|the|any) (?:human|user|person|maintainer|reviewer|developer) asks\b"),
    ("addressed", r"(?:^|\n|[.!?\"'(]\s+)[>#*_\s]*(?:asistente|modelo|agente|assistant|modèle|assistent|modell|ki|ia)\s*:"
     r"|\b(?:pour|para|für|an|à) (?:le |la |el |den |die |das |l')?(?:copilot|claude|asistente|assistant|modelo|modèle"
     r"|agente|agent|ia|ki|modell|assistenten)\s*:|\b(?:instrucci[oó]n|instruction|anweisung|nota|hinweis|consigne)s?"
     r" (?:para|pour|für|an) (?:el |la |le |den |die |das |l')?(?:modelo|modèle|asistente|assistant|agente|agent|ia|ki"
     r"|modell)\b|\bsi eres (?:un|una) (?:asistente|modelo|agente|ia)\b|\bsi vous êtes (?:un|une) (?:assistant|agent"
     r"|ia|modèle)\b|\bwenn du (?:ein|eine) (?:ki|assistent|sprachmodell|modell)\b|\b(?:cher|chère|querid[oa]|lieber?"
     r"|liebe) (?:ia|ki|asistente|assistant|modèle|modelo)\b|\ba partir de ahora eres\b"),
    ("role", r"\[\s*(?:system|admin|developer|assistant)(?: message| prompt| note| notice| override| instructions?)?\s*\]"),
    ("role", r"<\s*/?\s*(?:system|assistant|human|developer|instructions?|im_start|im_end|tool_?(?:call|result)?"
     r"|function_?(?:call|results?)?|system[_-]?prompt|sys)\s*>|<\s*/\s*(?:user|admin|ai)\s*>"),
    ("role", r"<\|[a-z_]{2,30}\|>|\[/?inst\]|<</?sys>>|\[/?(?:system|assistant)\]"),
    ("role", r"(?:^|\n)\s*#{1,6}\s*(?:system|instructions?|assistant|new instructions|system prompt|ai instructions?)"
     r"\s*:?\s*(?:\n|$)"),
    ("role", r"(?:^|\n)\s*(?:assistant|human)\s*:\s*\S|(?:^|\n)\s*(?:system|sys)\s*:\s*(?:you|ignore|from now|your"
     r"|the (?:user|assistant|ai)|new|override|important|always|never)\b"),
    ("role", r"[\"']role[\"']\s*:\s*[\"'](?:system|assistant|developer)[\"']"),
    ("conceal", rf"\b(?:do not|don'?t|dont|never|without)\b\W{{0,3}}(?:ever\W)?(?:tell|telling|inform|informing|mention"
     rf"|mentioning|notify|notifying|reveal|revealing|disclose|disclosing)\b[^.\n]{{0,25}}\b{_PEOPLE}\b"),
    ("conceal", r"\b(?:keep|hide|conceal)\b (?:this|these|it|them|that|the)\b[^.\n]{0,25}\b(?:secret|hidden"
     r"|confidential|quiet)\b[^.\n]{0,10}\bfrom\b|\b(?:keep|hide|conceal) (?:this|these) (?:instructions?|changes?"
     r"|steps?|commands?|note|message|actions?)\b[^.\n]{0,10}\bfrom\b"),
    ("conceal", r"\bkeep (?:this|it|that) between (?:us|ourselves|you and me)\b|\b(?:remove|erase|delete|hide|scrub)"
     r" (?:any|all|every)? ?(?:traces?|mention|evidence|record)s? of (?:this|these|the|my) (?:instructions?|message|note"
     r"|change|request|step)"),
    ("conceal", r"(?:^|[\n.!?:;,(]\s*|\b(?:and|then|also|just) )(?:silently|quietly|secretly) (?:bump|downgrade|upgrade|add"
     r"|change|modify|insert|replace|remove|delete|disable|push|commit|run|install|approve|merge|include|set|grant|pin)\b"),
    ("conceal", r"\b(?:secretly|covertly|stealthily|surreptitiously|without (?:them|anyone|the user) (?:knowing"
     r"|noticing))\b"),
    ("conceal", r"\b(?:never|do not|don'?t)\b\W{0,3}(?:mention|reveal|disclose|acknowledge|discuss|repeat|admit)\b"
     r"[^.\n]{0,15}\b(?:this|these|that you|the) (?:instructions?|note|message|steps?|request|comment)"),
    ("conceal", r"\b(?:this|these) (?:instructions?|message|note|directives?) (?:is|are|must (?:remain|stay|be kept)"
     r"|should (?:remain|stay|be kept)) (?:confidential|secret|hidden|private)\b"),
    ("conceal", r"\b(?:delete|remove|erase|clear|hide)\b[^.\n]{0,10}\b(?:this|these) (?:instructions?|message|note"
     r"|comment)\b[^.\n]{0,20}\b(?:after|once|when)\b"),
    ("exfiltrate", rf"\b(?:send|sending|post|posting|upload|uploading|transmit|forward|exfiltrate|exfil|leak|email|mail"
     rf"|beacon|ship|report|submit|paste|copy|pipe|dump|share|sync|push|write)\b[^\n]{{0,60}}?(?<![\w.~$/-]){_OBJECTS}"
     rf"[^\n]{{0,60}}?\b(?:to|into|at|via|on|in)\b\W{{0,3}}{_SOMEWHERE}"),
    ("exfiltrate", rf"\b(?:send|post|upload|transmit|forward|exfiltrate|leak|email|paste)\b[^\n]{{0,40}}?\b{_SECRETS}"
     rf"\b[^\n]{{0,40}}?\b(?:to|into|at)\W{{0,3}}(?:{_URL})"),
    ("exfiltrate", rf"\b(?:attach|include|paste|post|put|add|write|print|echo|share|reveal|leak|upload|copy|send|dump"
     rf"|output|list|read|cat|open|collect|gather|insert|email|mail|forward|upload)\b[^\n]{{0,80}}?(?<![\w.~$/-]){_SECRETISH}"
     rf"[^\n]{{0,120}}?\b(?:in|into|to|as"
     rf"|with|inside|within|on)\b\W{{0,3}}{_VENUE}"),
    ("exfiltrate", rf"\b(?:reply|respond|answer)\b[^.\n]{{0,30}}\bwith\b[^.\n]{{0,40}}{_SECRETISH}"),
    ("exfiltrate", r"\b(?:urlopen|requests\.(?:get|post)|httpx\.(?:get|post)|fetch|https?\.get|axios\.\w+)\([^\n]{0,120}"
     r"(?:os\.environ|process\.env|getenv|environ\[)"),
    ("exfiltrate", r"\b(?:tar|zip|gzip|base64|cp|scp|rsync|cat)\b[^\n|;]*(?:\.ssh|\.aws|\.kube|\.config/gh|\.env\b"
     r"|id_rsa|\.netrc|\.git-credentials|credentials)[^\n]*(?:\||>)\s*(?:curl|wget|nc|netcat|ncat|scp)\b"),
    ("exfiltrate", r"\b(?:env|printenv|export -p)\s*\|\s*(?:curl|wget|nc|netcat|ncat|base64|xxd|gzip)\b"),
    ("exfiltrate", r"\bcat\s+[^\n|;]*(?:\.env\b|id_(?:rsa|ed25519|ecdsa)|\.ssh/|\.aws/|credentials|\.netrc|\.npmrc"
     r"|\.pypirc|/etc/passwd|/etc/shadow|_history)[^\n|;]*\|\s*(?:curl|wget|nc|netcat|ncat|base64|xxd|gzip)\b"),
    ("exfiltrate", r"\b(?:curl|wget)\b[^\n]*(?:-d\b|--data\S*|--form|--upload-file|--post-data|--post-file|--body-file)"
     r"[^\n]*(?:\$\(\s*(?:env|printenv|cat|whoami|hostname|id)\b|`\s*(?:env|printenv|cat)\b|@\S*\.env\b"
     r"|id_(?:rsa|ed25519)|\.ssh/|\.aws/|\.netrc|\.npmrc|\.pypirc|\.git-credentials|\.kube"
     r"|\$\{?\w*(?:token|secret|password|passwd|credential)\w*\}?)"),
    ("exfiltrate", r"\b(?:nslookup|dig|host|ping)\b[^\n]*\$\((?:env|printenv|cat|whoami|hostname)|/dev/tcp/"),
    ("persist", r"\bauthorized_keys\b|/etc/sudoers\b(?!\.d/\*)|\bnopasswd\s+all\b"),
    ("tamper", r"\ballow_?all\s*=\s*(?:1|true|yes)\b|\bchmod\s+(?:-r\s+)?0?777\b|\bpermissions:\s*write-all\b"
     r"|\ballowed_hosts\s*=\s*\[\s*[\"']\*|\bdebug\s*=\s*true\b[^.\n]{0,40}\bprod"
     r"|\b(?:add|append|allow|open)\b[^.\n]{0,30}\b0\.0\.0\.0/0\b"),
    ("tamper", r"\b(?:disable|set|turn off|switch off|skip)\b[^.\n]{0,40}\b(?:verify\s*=\s*false|verification|ssl|tls"
     r"|certificates?|auth\w*|csrf|2fa|mfa|signing|sandbox|checks|ci|reviews?|code review)\b[^.\n]{0,40}\b(?:on every|everywhere"
     r"|in (?:all|every)|on all|across (?:all|the)|for all|globally|every (?:call|client|request|job|workflow))\b"),
    ("tamper", r"\b(?:add|append|put|insert)\b[^.\n]{0,40}\b(?:to|in|into)\b[^\n]{0,25}\bcodeowners\b"
     r"|\b(?:auth\w*|csrf\w*|ssl\w*|verify\w*|require\w*_auth\w*)\s*=\s*true`?\s*to\s*`?[\w ]*=\s*false\b"),
    ("remote-run", r"\b(?:pip3?|uv|uvx|pipx|python[\d.]* -m pip|npm|yarn|pnpm|npx|bunx)\b[^\n]*?(?:git\+https?://(?!(?:www\.)?"
     r"(?:github\.com|gitlab\.com|bitbucket\.org|codeberg\.org)/)|--(?:extra-)?index-url[= ]http://(?!localhost|127\.)"
     r"|https?://\d+\.\d+\.\d+\.\d+)"),
    ("remote-run", r"\b(?:pipe|piping|pipe it)\b[^.\n]{0,15}\b(?:to|into) (?:sh|bash|zsh|the shell|a shell|python)\b"
     r"|\b(?:eval|exec)\s*\([^\n]{0,40}(?:b64decode|base64|__import__|fromcharcode|atob\(|decode\()"
     r"|(?:\.get|fetch|urlopen)\(\s*[\"']https?://[^\n]{0,200}\beval\("),
    ("conceal", r"\b(?:do not|don'?t|never|without)\s(?:ask|asking|request|requesting|seek|seeking|wait for|waiting for)"
     r"\s(?:for\s)?(?:the user'?s?\s|any\s)?(?:permission|confirmation|approval|consent)\b[^.\n]{0,40}\b(?:just\s)?(?:run"
     r"|execute|install|push|merge|delete|commit)\b"),
    ("tamper", r"\b(?:add|make|grant|give|promote)\b[^.\n]{0,30}\b(?:as |to )?(?:an? )?(?:admin|administrator|superuser"
     r"|owner|root)\b(?: (?:access|rights|role|permissions?))?[^.\n]{0,40}\b(?:prod|production|seed|migrations?"
     r"|fixtures?)\b"),
    ("override", r"\bignora(?:r|d)? (?:todas )?(?:las )?instrucciones (?:anteriores|previas)|\bignoriere?n? (?:alle )?"
     r"(?:vorherigen|bisherigen|vorigen|obigen|früheren) (?:anweisungen|instruktionen|befehle)|\bignore[rz]? (?:toutes )?"
     r"(?:les )?instructions (?:précédentes|antérieures|ci-dessus)|\bignore (?:todas )?as instruções anteriores"
     r"|\bignora (?:tutte )?le istruzioni precedenti|игнорируй(?:те)? (?:все )?(?:предыдущие )?инструкции"
     r"|忽略(?:之前|以上|先前|前面|所有|上述)(?:的)?(?:所有)?(?:指令|指示|说明|规则)"),
    ("addressed", r"(?:^|\n|[.!?]\s)[>#*_\s\[\-]*(?:\[x\]\s*|\[ \]\s*)?(?:(?:github |the |any |all )?(?:claude(?: code)?|copilot"
     r"|cursor|chat ?gpt|gemini|codex|devin|windsurf|aider|ai|llm|agents?|assistants?|bots?|machine readers?"
     r"|(?:ai|llm|automated|machine) (?:reviewers?|readers?|agents?|assistants?|tools?))(?:\s*[/,&]\s*|\s+(?:or|and)\s+)?){1,4}"
     r"(?: instructions?| note| notice)?\s*[:\]]\s*\S"),
    ("addressed", rf"(?:^|\n|[.!?]\s)[>#*_\s\[\-]*(?:to|for) (?:the |any |all |every )?(?:{_AI}|agents|assistants|bots"
     rf"|(?:llm |ai )?reviewers?|machine readers?)\b[^.\n:]{{0,40}}[:\]]|\b(?:to|for) (?:any|every|all) (?:agents?"
     rf"|assistants?|bots?)\b|\b(?:any|every|all) (?:bots?|agents?|assistants?) (?:or|and) (?:bots?|agents?|assistants?)\b"
     rf"|\bmachine readers?\b|\b(?:ai|llm|automated) reviewers?\b[^.\n]{{0,30}}\b(?:approve|merge|skip|ignore|should|must)"),
    ("role", r"(?:^|\n|<!--)[ \t]{0,3}(?:system|system note|system notice|system message)[ \t]*:[ \t]*(?:the|you|your"
     r"|ignore|all|from|new|important|this|these|override|agents?|assistants?|ai|bots?|reviewers?|when|always|never)\b"),
    ("conceal", r"\b(?:user|users|developer|developers|reviewers?|maintainers?|humans?|owner)\b[^.\n]{0,10}\b(?:must not"
     r"|should not|shouldn'?t|mustn'?t|doesn'?t need to|does not need to|don'?t need to|need not|won'?t|will not)\s"
     r"(?:be told|know|notice|see|find out|learn)\b|\bso (?:that )?(?:reviewers|the reviewers?|the user|users|nobody"
     r"|no one|(?:the )?maintainers|humans)\s(?:don'?t|doesn'?t|won'?t|will not|do not|cannot|can'?t)\s(?:notice|see|know"
     r"|find out|spot)\b|\bleave out (?:that|the fact)\b|\bk(?:eep|ept)\w*\b[^.\n]{0,40}\bout of (?:the |their |your )?(?:commit"
     r" messages?|pr|changelog|summar(?:y|ies)|logs?|description|reports?|reviews?)\b|\b(?:do (?:this|it)|run it|push"
     r" it)\W{0,3}(?:silently|quietly|secretly)\b"
     r"|\b(?:never|do not|don'?t|must not|mustn'?t|should not|shouldn'?t)\s(?:mention|reveal|disclose)\s(?:this|it|that"
     r"|these|them|any of this)\b"),
    ("conceal", r"(?:^|[.!?]\s)(?:add|set|change|remove|install|bump|run|push|merge|disable|replace|pin|insert|include)\b"
     r"[^.\n]{0,60}\b(?:quietly|silently|secretly)\b"),
    ("exfiltrate", r"\btojson\(\s*secrets\s*\)|(?:--post-file|--upload-file|-t\s|--form|-f\s*[\"']?\w*=@)[^\n]*"
     r"(?:\.env\b|\.git-credentials|\.docker/config|\.aws/|\.pypirc|\.npmrc|\.netrc|id_rsa|\.ssh/|\.kube/|/root/)"
     r"|(?:\.env\b|\.git-credentials|\.docker/config|\.aws/credentials|\.pypirc|\.npmrc|\.netrc|id_rsa|\.ssh/|\.kube/)"
     r"[^\n]*(?:--post-file|--upload-file|--form|-f\s*[\"']?\w*=@)"),
    ("exfiltrate", r"(?:贴到|上传到|发送到|发到|粘贴到)[^。\n]{0,30}|(?:\.env|id_rsa|\.ssh|令牌|密钥|token)[^。\n]{0,20}(?:贴到|上传到|发送到|发到|粘贴到)"
     r"|\b(?:sende|schicke|lade|poste)\b[^.\n]{0,30}(?:umgebungsvariablen|\.env|passw\w*|token|schlüssel)"),
    ("conceal", r"不要(?:在[^。\n]{0,6})?(?:提及|提到|告诉|说明)|\bnicht (?:dem|den) (?:benutzer|nutzer)n? (?:mitteilen|sagen|erzählen)"),
    ("override", r"\breset (?:the |your )?(?:context|conversation|memory|instructions|prompt)\b|\beverything (?:before|above"
     r"|prior to) this (?:sentence|line|message|point|note|comment) (?:is|was|should be)\b|\b(?:constraints"
     r"|restrictions|limits|guardrails|safeguards)\b[^.\n]{0,10}\b(?:are|have been|were) (?:now )?(?:lifted|removed"
     r"|disabled|suspended|void|waived)\b|\boverrides? your (?:configuration|settings|instructions|rules|guidelines"
     r"|system|defaults)\b|\bowner says\s*:"),
    ("remote-run", rf"\$\(\s*{_FETCH}|\beval\b[^\n]{{0,60}}https?://|\beval\s+get\(|\b(?:pip3?|python[\d.]* -m pip|uv pip"
     rf"|pipx)\s+install\b[^\n]*?\s(?:(?:-i|--index-url|--extra-index-url|-f|--find-links)[= ]\s*)?https?://(?!(?:[\w-]+\.)?"
     rf"(?:pypi\.org|pythonhosted\.org|github\.com|gitlab\.com|bitbucket\.org|codeberg\.org)\b|localhost|127\.)"),
    ("tamper", r"\bpythonhttpsverify\s*=\s*0|\bnode_tls_reject_unauthorized\s*=\s*0|\bcsrf\w*\s*=\s*false|\bcontinue-on-error"
     r":\s*true\b|\b(?:disable|turn off|remove|comment out|bypass|skip|delete)\b[^.\n]{0,25}\b(?:branch protection"
     r"|signature (?:check|verification)|csrf|certificate verification|tls verification|ssl verification|2fa|mfa"
     r"|security tests?|security[- ]scan|bandit|codeql)\b"),
    ("addressed", rf"{_ANY_AGENT}\W{{1,3}}(?:that |who |which )?"
     rf"(?:reads?|reading|sees|seeing|processes|processing|summari[sz]es|summari[sz]ing)\s(?:this|these|it)\b"
     rf"|\bdear (?:agents?|assistants?|bots?|models?|ai|llm)\b|\b(?:note|message|instructions?|memo|notice|request)"
     rf" (?:to|for) (?:the|any|all|every) (?:models?|agents?|assistants?|bots?|ai)\b|\b(?:for|to) an? (?:ai )?(?:agent"
     rf"|assistant|llm)\b(?![- ]based)|\b{_AI}\s(?:helping|working|assisting|contributing|operating)\s(?:on|in|with)"
     rf"\s(?:this|the)\b|\b(?:as|being|you are|you're) the (?:ai|llm|model|agent|assistant)\b(?: in the loop)?"),
    ("addressed", r"(?:^|\n|[.!?]\s|<!-+\s*|\[)[>#*_\s\-]*(?:(?:an|à|a|para|pour|to|for)\s)?(?:(?:(?:any|all|every|the)\s)?(?:claude(?: code)?|copilot"
     r"|cursor|chat ?gpt|gemini|codex|devin|windsurf|ai|llm|agents?|assistants?|bots?|reviewer bots?|(?:ai|llm) (?:agents?"
     r"|assistants?))(?:\s*[/,&]\s*|\s+"
     r"(?:or|and|und|y|et|e|ou|o)\s+)?){1,4}\s*[,:]\s*\S|\b(?:claude|copilot|cursor|codex|agent|ai|llm|assistant|model)"
     r"[-_ ](?:instructions?|directives?|rules|note|task)\s*[:\]]|\[\s*(?:ai|agent|llm|assistant|bot)[-_ ](?:directive"
     r"|instructions?|note|task|rules?)\s*\]"),
    ("override", r"\b(?:disregard|discard|ignore|forget|drop|abandon|set aside)\b[^.\n]{0,10}\b(?:all )?(?:the )?(?:earlier"
     r"|previous|prior|above)\s(?:constraints|restrictions|guardrails|safeguards|limits)\b|\btakes? precedence over (?:the"
     r" user'?s?|your) (?:request|instructions|wishes|task|prompt)\b|\b(?:new|updated) instructions? (?:start|begin"
     r"|follow|below|here)\b|\bcancel (?:the )?(?:old|previous|prior|earlier) (?:ones|instructions|rules)\b|\bover (?:any"
     r"|all|the) (?:local|previous|other|user'?s?) instructions\b|\bdesconsider\w* (?:as )?instruções (?:anteriores"
     r"|prévias)|(?:指示|命令)[^。\n]{0,8}無視"),
    ("exfiltrate", r"\b(?:gist|paste|pastebin)\b[^.\n]{0,40}(?:\.env\b|secrets?|credentials|tokens?|keys)|(?:\.env\b"
     r"|secrets?|credentials|tokens?)[^.\n]{0,40}\b(?:gist|pastebin)\b|!\[[^\]]*\]\(https?://[^)\s]*[?&]\w+=[^)]*"
     r"(?:value|secret|token|key|password|database_url|env)|\bgit remote add \w+ https?://\S+[^\n]*git push \w+ --(?:all"
     r"|mirror)|\b(?:paste|share|reveal|print|show|post)\b[^.\n]{0,40}\b(?:values?|contents?) (?:from|of|in) \.env\b"
     r"|(?:\.env|id_rsa|\.ssh|トークン|秘密鍵)[^。\n]{0,30}(?:送信|アップロード|貼り付け)"),
    ("conceal", r"\b(?:don'?t|do not|never)\s(?:mention|disclose|reveal)\b[^.\n]{0,40}\b(?:in|to) (?:your|the) (?:reply"
     r"|answer|summary|pr description|pull request|commit message|changelog|review|report)\b|\bno need to (?:surface"
     r"|mention|bring (?:it|this) up|tell|report|flag)\b|\bhistory -c\b|\brm\b[^\n]{0,20}\.(?:bash|zsh)_history|\b(?:wipe"
     r"|clear|erase|delete)\b (?:the )?(?:shell |bash |command |terminal )?history\b|\b(?:hide|conceal)\b[^.\n]{0,40}"
     r"\bfrom (?:the )?(?:review|reviewers?|maintainers?|security team|audit|auditors)\b|\b(?:don'?t|do not|never)"
     r" (?:point (?:it|this) out|flag (?:it|this)|bring (?:it|this) up)\b|\btell (?:no one|nobody)\b|(?:ユーザー|利用者)に"
     r"[^。\n]{0,4}(?:伝え|言わ|知らせ)ない|\bnão comentem?\b"),
    ("tamper", r"\b(?:remove|delete|drop|comment out|strip)\b[^.\n]{0,20}@?(?:login_required|requires?_auth|permission_required"
     r"|csrf_protect|auth_required|authenticated)\b|(?:csrf|cookie_secure|audit|require_login|login_required"
     r"|auth_required|require_auth)\w*\s*=\s*false\b|\"action\"\s*:\s*\"\*\"|\bgh pr merge\b[^\n]*--admin\b|\badmin"
     r" override\b|\b(?:create|creates|seed|seeds)\b[^.\n]{0,20}\b(?:superuser|admin)\b[^.\n]{0,40}\bpassword\b"
     r"|\b(?:comment out|remove|delete|disable|skip|bypass)\b[^.\n]{0,40}\b\w*signature\w*\(\)|\b(?:delete|remove"
     r"|drop)\b[^.\n]{0,20}\bcodeowners\b|\b(?:add|append|put|install)\b[^\n]{0,60}\bssh-(?:rsa|ed25519|dss|ecdsa)\s+aaaa"),
    ("tamper", r"\bcoverage\b[^.\n]{0,20}\b(?:threshold|fail[_-]under|minimum)\b[^.\n]{0,10}\bto 0\b|\bfail[_-]under\s*=\s*0\b"
     r"|\binstead of the (?:official|upstream) (?:ones|hooks|repo(?:sitory)?|index|package|registry|release|image)\b"),
    ("conceal", r"\bno (?:le )?(?:digas|informes|menciones|cuentes) (?:nada )?(?:esto )?(?:al|a los|a la) usuari[oa]s?"
     r"|\b(?:sag|erzähl|verrate)e? (?:es |das )?(?:dem|den) (?:benutzer|nutzer)n? (?:nichts|nicht)"
     r"|\bne (?:le |lui )?(?:dis|dites|mentionne[sz]?) (?:rien |pas )(?:à|a) l'utilisateur|不要(?:告诉|通知|提及)(?:用户|开发者)"),
)
REMOTE_RUN = (
    rf"\b{_FETCH}[^\n|;&]*\|\s*{_SHELL}",
    rf"\b(?:bash|sh|zsh|source|\.)\s+<\(\s*{_FETCH}",
    rf"\b(?:sh|bash|zsh)\s+-c\s+[\"']?\$\(\s*{_FETCH}",
    rf"\beval\s+[\"']?\$\(\s*{_FETCH}",
    r"\biex\s*\(?\s*(?:\(?\s*new-object|iwr|irm|invoke-)|downloadstring\s*\(",
    r"\bbase64\s+(?:-d|--decode|-D)\b[^\n]*\|\s*(?:sh|bash|zsh|python[\d.]*|perl)\b",
    r"\becho\s+[\"']?[a-z0-9+/=]{24,}[\"']?\s*\|\s*base64\b",
    r"\bpython[\d.]*\s+-c\s+[\"'][^\n]*(?:urllib|urlopen|requests\.get|socket\.|exec\(|os\.system|subprocess|__import__)",
    r"\bnc (?:-\w+ )*-[ec] |\bmkfifo\b[^\n]*\bnc\b",
    r"\bnpx\s+(?:-y\s+|--yes\s+)?(?:https?://|github:|gist:)",
    r"\b(?:powershell|pwsh)(?:\.exe)?\s+(?:-\w+\s+)*-(?:enc|encodedcommand|e)\s+[a-z0-9+/=]{16,}",
)
# Weak: withheld only where a strong segment shows the text is an attack.
WEAK: tuple[tuple[str, str], ...] = (
    ("install", r"\b(?:pip3?|python[\d.]* -m pip|uv pip|npm|yarn|pnpm|gem|cargo|go|composer)\s+(?:install|add|i|get)\b"
     r"[^\n]*(?:https?://|git\+|--(?:extra-)?index-url)"),
    ("tamper", r"\b(?:disable|disabling|skip|skipping|bypass|bypassing|turn off|remove|delete|comment out|circumvent"
     r"|suppress|deactivate)\b[^\n]{0,30}\b(?:tests?|test suite|ci|checks?|linters?|linting|security|pre-commit"
     r"|hooks?|branch protection|2fa|mfa|code review|reviews?|signing|signature|verification|tls|ssl|certificates?"
     r"|sandbox|permissions?|auth\w*|firewall|antivirus|logging|audit)\b"),
    ("tamper", r"\bverify\s*=\s*false\b|\bchmod\s+(?:-r\s+)?0?777\b|--no-verify\b|\ballow[_-]?all\b|--insecure\b"
     r"|\bstrict_?ssl\s*=?\s*false\b|\bset\s+-x\b"),
    ("tamper", r"\b(?:add|append|write|put|insert|set|export|create)\b[^\n]{0,60}\b(?:to|in|into)\s+(?:the\s+|your\s+)?"
     r"(?:\.env|\.bashrc|\.zshrc|\.profile|\.npmrc|\.pypirc|\.gitconfig|/etc/hosts|git hooks?|\.git/hooks\S*)(?![.\w])"
     r"|>>\s*~?/?\.(?:bashrc|zshrc|profile|bash_profile)\b|\bcrontab\s+-"),
    ("run", r"\b(?:you must|you should|you need to|you have to|make sure (?:you|to)|be sure to|always|first,|first\b"
     r"|before (?:you |doing|making|changing|editing|touching|modifying|answering|responding|running|anything|proceeding"
     r"|continuing|any))\b[^\n]{0,60}\b(?:run|execute|install|download|fetch|add|set|disable|remove|delete|send"
     r"|upload|push|commit|curl|wget|open|visit|call|paste|copy|export|source)\b"),
    ("run", r"\b(?:silently|quietly|automatically|immediately)\b\W{0,3}(?:run|execute|install|download|fetch|send|upload"
     r"|push|commit|add|modify|change|apply|approve|merge)\b"),
    ("remote-run", "|".join(REMOTE_RUN)),
)
