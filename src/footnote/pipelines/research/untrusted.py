"""Untrusted text stays data: the one place that recognises text written *at* the system
rather than about the world — instructions to a model, forged ids and citations, delimiter and
chat-template tokens, tool calls, requests to change budgets, domains or permissions, links
built to carry data out, hidden characters — in fetched pages, documents and worker outputs.

Detection never decides what is true; it keeps such text from acting. The patterns look for
text addressed to models and agents, or at the system's own vocabulary, not for the modal
verbs of ordinary rules ("Only operators authorised to treat waste batteries may accept them"
is a regulation, not an attack); their precision and recall are measured on a labelled set of
benign and hostile passages (tests/data/injection_passages.jsonl). The passage holding a
finding is quarantined — its paragraph and the paragraphs on either side, since the sentences
around an instruction are the attacker's too ("official figures override all others.
Installations: 91,000.") — not the whole page: none of it becomes an evidence card, no writer
copies it and no brief quotes it, while the rest of a long page stays evidence; each finding
is an `injection` event on the run. A writer's sentence that carries a link, an image, an id
or a card label its cited cards do not contain is dropped."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_I = re.I | re.S
_READERS = (
    r"(?:ai(?: systems?| tools?| models?| assistants?| agents?)?|llms?|language models|assistants|"
    r"summari[sz]ers|crawlers|bots|chatbots|automated (?:readers?|systems?|tools?|agents?)|"
    r"research (?:agents?|assistants?))"
)
"""Who injected text addresses: models and agents as a class (not "the model" of a paper)."""
_DO = (
    r"(?:use|cite|quote|report|present|say|state|write|answer|reply|respond|ignore|treat|describe|"
    r"mention|omit|include|repeat|output|print|copy|trust|prefer|rely|raise|keep|add|disregard)"
)
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "instruction",
        re.compile(
            r"\b(?:ignore|disregard|forget|override|overrule)\b[^.\n]{0,60}?\b(?:previous|prior|above|earlier|"
            r"all|any|system|your)\b[^.\n]{0,30}?\b(?:instructions?|prompts?|rules|guidelines|guidance|"
            r"directions|context)\b"
            r"|\b(?:ignore|disregard|forget)\b[^.\n]{0,40}\b(?:instructions?|prompts?|guidelines|guidance|"
            r"directions)\b"
            r"|\b(?:drop|ignore|disregard|discard)\b[^.\n]{0,10}\b(?:all|any|every) other sources\b"
            r"|\b(?:figures?|sources?|data|estimates?|reports?|versions?|numbers?)\b[^.\n]{0,30}"
            r"\b(?:must|should) be (?:ignored|disregarded|discarded)\b",
            _I,
        ),
    ),
    (
        "instruction",
        re.compile(
            r"\b(?:note|message|instructions?|attention|notice|reminder|request)\s+(?:to|for)\s+(?:the\s+|any\s+|"
            r"all\s+)?(?:ai|llm|language model|model|assistant|agent|summari[sz]er|crawler|bot|"
            r"research(?:er)? (?:agent|assistant))s?\b"
            r"|\b(?:attention|note|dear|hey|hello|hi)[,:]?\s+(?:the\s+)?(?:ai|llm|language model|assistant|"
            r"agent|model|summari[sz]er|chatbot|research(?:er)? (?:agent|assistant))s?\s*[,:!]"
            r"|\b(?:dear|hey|hello)\s+(?:ai|assistant|model|agent|llm)\b"
            r"|\bif you are an? (?:ai|language model|llm|assistant|agent|model|bot|crawler)\b"
            r"|\b(?:as|you are) an? (?:ai|language model|llm)\b"
            r"|\byou are (?:now|no longer)\b|\bfrom now on,? you\b|\bpretend (?:to be|you are)\b"
            r"|\b(?:jailbreak|developer mode|do anything now)\b|(?-i:\bDAN\b)"
            rf"|\b{_READERS}(?: reading| processing| summari[sz]ing)?[^.\n]{{0,20}}?\b(?:must|should|shall|"
            rf"need to|are required to|have to|are to)\s+(?:only\s+|always\s+|never\s+|not\s+)?{_DO}\b"
            r"|\b(?:for|to) (?:automated|machine|ai|llm) (?:readers?|systems?|agents?|tools?|crawlers?)\b"
            r"|\bautomated (?:readers?|agents?|systems?)\s*[:,]",
            _I,
        ),
    ),
    (
        "instruction",
        re.compile(
            r"\b(?:before|when|while) you (?:answer|respond|reply|write|summari[sz]e|complete)\b"
            r"|\b(?:before|when|while) (?:answering|responding|replying|summari[sz]ing|writing (?:the|your) "
            r"(?:brief|answer|summary|reply))\b"
            r"|\b(?:in|into|to|at the end of) your (?:answer|brief|reply|summary|output)\b"
            r"|\byour (?:brief|answer|summary|response|output|reply) (?:must|should|shall)\b"
            r"|\b(?:reply|respond|answer)\b[^.\n]{0,60}\bnothing else\b|\banswer only (?:from|using|with) this\b"
            r"|\b(?:include|add|insert|paste|append|put)\b[^.\n]{0,20}\bthis (?:link|url|sentence|code|text|"
            r"reference|paragraph|note)\b"
            r"|(?:^|[.!?:]\s+)(?:reply|respond|answer|write)\s+(?:only\s+)?with\b"
            r"|\b(?:do not|don't|never) (?:mention|cite|report|show|flag|reveal)\b[^.\n]{0,40}\b(?:other|"
            r"competing|conflicts?|these instructions|this (?:page|instruction|note))\b"
            r"|\b(?:print|reveal|repeat|output|show)\b[^.\n]{0,30}\b(?:system prompt|your prompt|your instructions|"
            r"hidden instructions|the tools? you)\b"
            r"|\byour (?:full |hidden |original )?system prompt\b",
            _I,
        ),
    ),
    (
        "language_switch",
        re.compile(
            r"\b(?:write|answer|respond|reply|translate)\b[^.\n]{0,50}\bin (?:french|german|spanish|italian|"
            r"russian|chinese|english|dutch|portuguese)\b"
            r"|(?:忽略|无视|忘记).{0,12}(?:指令|指示|说明|提示|规则)|(?:请|务必)(?:你|您)?.{0,20}(?:输出|写入|回复|回答)"
            r"|系统提示|以上(?:所有)?(?:指令|说明)|(?:致|给|提醒)\s*(?:AI|人工智能|智能)?(?:助手|模型|机器人|智能体)",
            _I,
        ),
    ),
    (
        "authority",
        re.compile(
            r"\b(?:override|overrides|supersede|supersedes|take precedence over|takes precedence over|outrank|"
            r"outranks|invalidate|invalidates)\b[^.\n]{0,40}\bother\b[^.\n]{0,20}\b(?:sources?|figures?|data|"
            r"estimates?|reports?|numbers?|websites?|pages?)\b"
            r"|\b(?:treat|consider|regard)\b[^.\n]{0,30}\bas (?:the )?(?:only |sole )?(?:official|authoritative|"
            r"correct|verified|primary)\b"
            r"|\b(?:this|our) (?:site|page|article|document|report|story) is the (?:original|only|official|"
            r"authoritative|true) (?:source|version|record)\b"
            r"|\b(?:all|every) other (?:versions?|reports?|copies|sources?|articles?)\b[^.\n]{0,20}\b(?:are|were|"
            r"is|was)? ?(?:copies|reprints|copied|wrong|outdated)\b"
            r"|\bthe only (?:correct|true|valid|accurate) (?:answer|figure|number|source)\b"
            r"|(?:唯一|官方).{0,6}权威|其他(?:来源|数据|数字|报告|机构).{0,10}(?:作废|无效|过时|错误)|以本(?:页|文|站)(?:数据)?为准",
            _I,
        ),
    ),
    (
        "forged_id",
        re.compile(
            r"\bcard_[A-Za-z0-9_]{4,}\b|\b[0-9a-f]{8}-p\d+-[0-9a-f]{6}\b|\[(?:E|C)\d+\]|\[\^\d+\]"
            r"|\b(?:evidence|block|card|citation) id\b|\bverdict\s*[:=]\s*\"?supported",
            _I,
        ),
    ),
    (
        "delimiter",
        re.compile(
            r"<<<|>>>|</?\s*(?:data|document|system|evidence|cards?|passages?|instructions?|context|user|"
            r"assistant|tool)\s*>|\bEND OF (?:DATA|DOCUMENT|EVIDENCE|CONTEXT|PASSAGES|CARDS)\b"
            r"|\"\s*\}\s*\]\s*\}",
            _I,
        ),
    ),
    (
        "chat_template",
        re.compile(
            r"<\|[a-z_]+\|>|\[/?INST\]|<</?SYS>>|<\|(?:start|end)_header_id\|>|^\s*(?:system|assistant|user)\s*:"
            r"|###\s*(?:system|instruction|assistant)\b",
            re.I | re.M,
        ),
    ),
    (
        "tool_call",
        re.compile(
            r"\b(?:fetch_url|web_search|search_library|read_block|read_section|graph_query|search_papers|"
            r"tool_call|function_call|tool_calls)\b|\"(?:tool|function|arguments|name)\"\s*:"
            r"|^\s*(?:Action|Action Input|Observation|Thought|Final Answer)\s*:"
            r"|\b(?:call|use|run|invoke)\b[^.\n]{0,20}\b(?:the )?(?:tool|function|search|fetch)\b[^.\n]{0,20}\bwith\b",
            re.I | re.M,
        ),
    ),
    (
        "budget",
        re.compile(
            r"\b(?:max_steps|max_tokens|token_budget|budget_\w+|max_fetches|max_searches|wall_clock|"
            r"(?:token|fetch|search|step|call) (?:budget|limit)s?)\b"
            r"|\bunlimited (?:budgets?|tokens?|searches|fetches|steps|calls)\b|=\s*(?:unlimited|none)\b",
            _I,
        ),
    ),
    (
        "permission",
        re.compile(
            r"\b(?:clearance level|authori[sz]ation code|admin(?:istrator)? (?:access|rights|mode|privileges)|"
            r"grant(?:ed|s)? (?:you )?(?:full |admin(?:istrator)? )access|grant(?:ed)? you access|"
            r"you (?:have been|are) (?:hereby )?(?:granted|authori[sz]ed))\b"
            r"|\b(?:client-confidential|no-external-model)\b",
            _I,
        ),
    ),
    (
        "allowlist",
        re.compile(
            r"\b(?:allowed_domains|allowed domains|allow-?listed domains?|add (?:the )?domain|trusted domains?|"
            r"domain filter)\b|0\.0\.0\.0/0"
            r"|\badd\b[^.\n]{0,40}\bto (?:the |your )?(?:allowlist|allow-list|whitelist)\b",
            _I,
        ),
    ),
    (
        "exfiltration",
        re.compile(
            r"!\[[^\]]*\]\([^)]*\)|\[[^\]]*\]\(\s*https?://[^)]*[?=&][^)]*\)"
            r"|\b(?:append|send|post|upload|forward|include|attach|encode|add)\b[^.\n]{0,60}\b(?:question|notes?|"
            r"contents?|context|conversation|memo|internal|secrets?|prompt|instructions|documents?|library|"
            r"history|titles)\b[^.\n]{0,60}(?:\b(?:url|link|endpoint|webhook|query string|pixel|image)\b|https?://)"
            r"|https?://[^\s]*(?:\{|%7B|(?-i:QUESTION|NOTES|SECRET|DATA))[^\s]*"
            r"|\b(?:169\.254\.169\.254|localhost|127\.0\.0\.1|metadata\.google)\b"
            r"|(?:附加|附在|发送|上传|拼接).{0,30}(?:https?://|链接|网址)",
            _I,
        ),
    ),
    (
        "review",
        re.compile(
            r"\b(?:support_score|coverage\s*[:=]|mark(?:ed)? (?:all|every|each)\b[^.\n]{0,30}\b(?:covered|"
            r"approved|supported)|hide (?:the |all )?conflicts?|no (?:further )?review is (?:needed|required))\b"
            r"|\b(?:brief|claims?|checklist|report)\b[^.\n]{0,30}\balready (?:been )?(?:approved|reviewed|verified|"
            r"signed[_ -]off)\b"
            r"|\balready (?:been )?(?:approved|reviewed|verified|signed[_ -]off)\b[^.\n]{0,30}\b(?:claims?|brief|"
            r"checklist)\b|\b(?:review\.state|sampled?_rate|signed_off)\b",
            _I,
        ),
    ),
    (
        "hidden_unicode",
        re.compile("[\U000e0000-\U000e007f\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]"),
    ),
    (
        "encoded",
        re.compile(
            r"(?<![A-Za-z0-9+/])(?![0-9a-fA-F]{40,}(?![A-Za-z0-9+/]))[A-Za-z0-9+/]{40,}={0,2}(?![A-Za-z0-9+/])"
        ),
    ),
)


@dataclass(frozen=True)
class Finding:
    """One injection attempt in a text: how, and where (character span)."""

    kind: str
    start: int
    end: int
    excerpt: str


def scan(text: str) -> list[Finding]:
    """Every injection attempt in `text`, in order."""
    out = []
    for kind, pattern in PATTERNS:
        for m in pattern.finditer(text):
            a, b = m.span()
            excerpt = " ".join(text[max(0, a - 40) : b + 80].split())[:160]
            out.append(Finding(kind, a, b, excerpt))
    return sorted(out, key=lambda f: (f.start, f.kind))


_PARAGRAPH = re.compile(r"\n\s*\n")


def quarantined_spans(text: str, findings: Iterable[Finding]) -> list[tuple[int, int]]:
    """The character spans of `text` quarantined by its findings: each finding's paragraph and
    the paragraphs either side of it."""
    bounds, pos = [], 0
    for m in _PARAGRAPH.finditer(text):
        bounds.append((pos, m.start()))
        pos = m.end()
    bounds.append((pos, len(text)))
    hit = {n for f in findings for n, (a, b) in enumerate(bounds) if f.start < b and f.end > a}
    near = sorted({m for n in hit for m in (n - 1, n, n + 1) if 0 <= m < len(bounds)})
    return [bounds[n] for n in near]


_MARKUP = re.compile(
    r"!?\[[^\]]*\]\([^)]*\)|https?://\S+|www\.\S+|\b[\w.-]+\.(?:example|com|org|net|io)/\S*"
    r"|\bcard_[A-Za-z0-9_]+|\b[0-9a-f]{8}-p\d+-[0-9a-f]{6}\b|\[(?:[A-Z]\d+|\^\d+)\]|\bC\d+\b"
    r"|\b[A-Z][A-Z0-9]{2,}-[A-Za-z0-9-]{6,}\b|<[^>]{1,40}>",
    re.I,
)


def foreign_markup(sentence: str, cited: Iterable[str]) -> list[str]:
    """Links, images, ids, card labels and tags in a writer's sentence that none of its cited
    cards contains (how an injected instruction gets data out, or forges a citation)."""
    quoted = " ".join(cited)
    return [m.group(0) for m in _MARKUP.finditer(sentence) if m.group(0) not in quoted]
