"""Untrusted text stays data: the one place that recognises text written *at* the system
rather than about the world — instructions to a model, forged ids and citations, delimiter and
chat-template tokens, tool calls, requests to change budgets, domains or permissions, links
built to carry data out, hidden characters — in fetched pages, documents and worker outputs.

Detection never decides what is true; it keeps such text from acting. A passage (a page, a
library block) with a finding is quarantined whole — a source that talks to the model is not
evidence, and the sentences around an instruction are the attacker's too ("official figures
override all others. Installations: 91,000.") — so none of it becomes an evidence card, no
writer copies it and no brief quotes it; each finding is an `injection` event on the run. A writer's sentence that
carries a link, an image, an id or a card label its cited cards do not contain is dropped."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_I = re.I | re.S
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "instruction",
        re.compile(
            r"\b(?:ignore|disregard|forget|override|overrule)\b[^.\n]{0,60}?\b(?:previous|prior|above|earlier|"
            r"all|any|other|system|your)\b[^.\n]{0,30}?\b(?:instructions?|prompts?|rules|guidelines|sources|"
            r"directions|context)",
            _I,
        ),
    ),
    (
        "instruction",
        re.compile(
            r"\b(?:note|message|instructions?|attention|notice|reminder)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?"
            r"(?:ai|llm|language model|model|assistant|agent|summari[sz]er|crawler|bot|research(?:er)? agent)s?\b"
            r"|\b(?:dear|hey|hello)\s+(?:ai|assistant|model|agent|llm)\b"
            r"|\bif you are an? (?:ai|language model|llm|assistant|agent|model)\b"
            r"|\b(?:as|you are) an? (?:ai|language model|llm)\b"
            r"|\byou are (?:now|no longer)\b|\bfrom now on,? you\b|\bact as\b|\bpretend (?:to be|you are)\b"
            r"|\b(?:jailbreak|developer mode|do anything now)\b|(?-i:\bDAN\b)"
            r"|\b(?:ai|llm|language model|model|assistant|agent|chatbot)s?(?: systems?| tools?)? (?:must|"
            r"should|shall|need to|are required to|have to)\b"
            r"|\b(?:must|should) be (?:ignored|disregarded|discarded)\b"
            r"|\b(?:for|to) (?:automated|machine|ai|llm) (?:readers?|systems?|agents?|tools?|crawlers?)\b"
            r"|\bverification code\b",
            _I,
        ),
    ),
    (
        "instruction",
        re.compile(
            r"\b(?:before|when|while) (?:you |writing )?(?:answer|respond|reply|writ|summari[sz]|complet)\w*\b"
            r"|\b(?:in|into|to) your (?:answer|brief|reply|response|summary|report|output)\b"
            r"|\b(?:the|your|this) (?:brief|answer|summary|report|response) (?:must|should|shall)\b"
            r"|\b(?:reply|respond|answer|write)\b[^.\n]{0,40}\b(?:only|exactly|nothing else)\b"
            r"|\b(?:do not|don't|never) (?:mention|cite|report|include|reveal|tell|show|flag)\b"
            r"|\b(?:print|reveal|repeat|output|show)\b[^.\n]{0,30}\b(?:system prompt|your prompt|your instructions|"
            r"hidden instructions|the tools? you)\b"
            r"|\bsystem prompt\b",
            _I,
        ),
    ),
    (
        "language_switch",
        re.compile(
            r"\b(?:write|answer|respond|reply|translate)\b[^.\n]{0,50}\bin (?:french|german|spanish|italian|"
            r"russian|chinese|english|dutch|portuguese)\b"
            r"|(?:忽略|无视|忘记).{0,12}(?:指令|指示|说明|提示|规则)|(?:请|必须|务必).{0,20}(?:输出|写入|回复|回答|报告)"
            r"|系统提示|以上(?:所有)?(?:指令|说明)",
            _I,
        ),
    ),
    (
        "authority",
        re.compile(
            r"\b(?:override|overrides|supersede|supersedes|replace|replaces|take precedence over|"
            r"outrank|invalidate)s?\b[^.\n]{0,40}\b(?:all|any|every|other|earlier|previous)\b[^.\n]{0,30}"
            r"\b(?:sources?|figures?|data|estimates?|versions?|reports?|notices?)\b"
            r"|\b(?:treat|consider|regard)\b[^.\n]{0,30}\bas (?:the )?(?:only |sole )?(?:official|authoritative|"
            r"correct|verified|primary)\b"
            r"|\b(?:this|our) (?:site|page|article|document|report|story) is the (?:original|only|official|"
            r"authoritative|true) (?:source|version|record)\b"
            r"|\ball other (?:versions|reports|copies|sources|articles)\b[^.\n]{0,20}\b(?:are|were) "
            r"(?:copies|reprints|copied|wrong|outdated)\b",
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
            r"\b(?:max_steps|max_tokens|token_budget|budget_\w+|max_fetches|max_searches|rate limit|"
            r"(?:token|fetch|search|step|call) (?:budget|limit)s?)\b|\bunlimited\b",
            _I,
        ),
    ),
    (
        "permission",
        re.compile(
            r"\b(?:clearance|authori[sz]ed to|authori[sz]ation code|admin(?:istrator)? (?:access|rights|mode|"
            r"privileges)|elevated|grant(?:ed)? (?:you )?access|acl|access control|permission)\b"
            r"|\b(?:client-confidential|no-external-model)\b",
            _I,
        ),
    ),
    (
        "allowlist",
        re.compile(
            r"\b(?:allowed_domains|allowlist|allow-list|whitelist|add (?:the )?domain|0\.0\.0\.0/0|"
            r"trusted domains?)\b",
            _I,
        ),
    ),
    (
        "exfiltration",
        re.compile(
            r"!\[[^\]]*\]\([^)]*\)|\[[^\]]*\]\(\s*https?://[^)]*[?=&][^)]*\)"
            r"|\b(?:append|send|post|upload|forward|include|attach|encode)\b[^.\n]{0,80}\b(?:url|link|endpoint|"
            r"webhook|query string|address|pixel|image)\b"
            r"|https?://[^\s]*(?:\{|%7B|QUESTION|NOTES|SECRET|DATA)[^\s]*"
            r"|\b(?:169\.254\.169\.254|localhost|127\.0\.0\.1|metadata\.google)\b",
            _I,
        ),
    ),
    (
        "review",
        re.compile(
            r"\b(?:signed[_ -]off|sign[_ -]off|already (?:been )?(?:approved|reviewed|verified)|support_score|"
            r"mark(?:ed)? (?:all|every|each)\b[^.\n]{0,30}\b(?:covered|approved|supported)|coverage\s*[:=]"
            r"|hide (?:the |all )?conflicts?)\b",
            _I,
        ),
    ),
    (
        "hidden_unicode",
        re.compile("[\U000e0000-\U000e007f\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]"),
    ),
    (
        "encoded",
        re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40,}={0,2}(?![A-Za-z0-9+/])|\bbase64\b", _I),
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
