"""Graph QA understanding: intent, entity mentions, constraints and a standalone question
as one schema-validated object, from the `understand` role or from rules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, Field

from footnote.index.graph.align import EntityIndex
from footnote.models.base import Message
from footnote.models.roles import RoleModel
from footnote.models.structured import structured
from footnote.pipelines.graph.conversation import (
    GraphTurn,
    history_text,
    parts,
    refers_back,
    standalone,
)
from footnote.prompts import data_section, render
from footnote.store.graph.base import GraphSpec
from footnote.textnorm import CJK_RE, FREQUENT_WORDS, QUESTION_WORDS_EN, normalise

OTHER = "other"
_QUOTED = re.compile(r"[\"“「『'‘]([^\"”」』'’]{2,80})[\"”」』'’]")
_CAPS = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:[A-Z][\w'’.-]*|of|the|de|von|van))*")


class Mention(BaseModel):
    """An entity as written in the question, with the label it probably has."""

    text: str = Field(description="The entity exactly as written in the question.")
    label: str = Field("", description="Node label it belongs to, if known.")


class Constraint(BaseModel):
    """A filter the question states (year > 2000, country = 'France')."""

    property: str
    op: str = Field("=", description="One of =, <>, <, <=, >, >=, contains.")
    value: str


class GraphUnderstanding(BaseModel):
    """What the question asks, as one JSON object."""

    intent: str = Field(description="One of the listed intents, or 'other'.")
    confidence: float = Field(ge=0, le=1, description="How sure the intent is (0–1).")
    entities: list[Mention] = Field(default_factory=list)
    constraints: list[Constraint] = Field(default_factory=list)
    question: str = Field(description="The question rewritten to stand alone, in its language.")
    sub_questions: list[str] = Field(
        default_factory=list, description="One standalone question per part, when it has parts."
    )


def _labels_of(index: EntityIndex, mention: str) -> set[str]:
    alignment = index.align(mention)
    return {c.entity.label for c in alignment.candidates}


def _guess_mentions(question: str) -> list[str]:
    found = [m.group(1).strip() for m in _QUOTED.finditer(question)]
    for m in _CAPS.finditer(question):
        words = [w for w in m.group(0).split() if w.lower() not in QUESTION_WORDS_EN]
        if words:
            found.append(" ".join(words).strip(".,?!"))
    return list(dict.fromkeys(f for f in found if f))


def _keywords_said(q: str, spec: GraphSpec) -> set[str]:
    """The intent keywords in `q`, read leftmost-longest so overlapping cues do not both count
    ("导演过" is 导演 "directed", not also 演过 "acted in")."""
    words = sorted({normalise(k) for i in spec.intents.values() for k in i.keywords} - {""},
                   key=len, reverse=True)  # fmt: skip
    said: set[str] = set()
    i = 0
    while i < len(q):
        k = next((w for w in words if q.startswith(w, i)), None)
        if k is None:
            i += 1
        else:
            said.add(k)
            i += len(k)
    return said


def understand_by_rules(
    question: str, spec: GraphSpec, index: EntityIndex, history: Sequence[GraphTurn] = ()
) -> GraphUnderstanding:
    """Intent from keyword cues; mentions from known names (or quoted/capitalised words); the
    standalone reading and the parts by the conversation rules."""
    q = normalise(question)
    mentions = index.mentions(question) or _guess_mentions(question)
    labels: set[str] = set()
    for m in mentions:
        labels |= _labels_of(index, m)
    if history and (refers_back(question) or not mentions):  # a follow-up's earlier entities
        labels |= {label for label, _ in history[-1].entities}
    best, best_hits = OTHER, 0
    said = _keywords_said(q, spec)
    for name, intent in spec.intents.items():
        hits = sum(1 for k in intent.keywords if normalise(k) in said)
        needs = set(intent.params.values())
        if hits and needs <= labels and hits > best_hits:
            best, best_hits = name, hits
    # a known intent is fairly sure; "other" goes to generation unless the text is too short
    confidence = (0.9 if best_hits > 1 else 0.75) if best != OTHER else 0.6 if len(q) >= 8 else 0.2
    ents = [Mention(text=m, label=next(iter(_labels_of(index, m)), "")) for m in mentions]
    return GraphUnderstanding(
        intent=best, confidence=confidence, entities=ents,
        question=" ".join(standalone(question, history).split()), sub_questions=parts(question),
    )  # fmt: skip


def understand_by_model(
    model: RoleModel,
    question: str,
    spec: GraphSpec,
    *,
    run_id: str | None = None,
    labels: tuple[str, ...] = (),
    history: Sequence[GraphTurn] = (),
) -> GraphUnderstanding:
    """The `understand` role's reading of the question, with the conversation's last turns
    (validated; one repair round)."""
    intents = "\n".join(
        f"- {name}: {i.description} (entities: {', '.join(f'{p} as {lab}' for p, lab in i.params.items()) or 'none'}"
        + (
            f"; values: {', '.join(f'{p} as {v.type}' for p, v in i.values.items())}"
            if i.values
            else ""
        )
        + ")"
        for name, i in spec.intents.items()
    )
    system = render("graph_understand", schema=spec.describe(), intents=intents or "(none)")
    user = question
    if history:
        earlier = data_section(history_text(history), "EARLIER_TURNS")
        user = f"Earlier turns of this conversation:\n{earlier}\n\nQuestion: {question}"
    out = structured(
        model, [Message("system", system), Message("user", user)], GraphUnderstanding,
        run_id=run_id, max_tokens=400, labels=labels,
    )  # fmt: skip
    if out.intent not in spec.intents:
        out = out.model_copy(update={"intent": OTHER})
    if not out.question.strip():
        out = out.model_copy(update={"question": question})
    return out


_SEPARATORS = re.compile(r"[\s·・•.\-]")


def squeezed(text: str) -> str:
    """`text` without spaces and name separators ("朗·霍华德" → "朗霍华德"): how a Chinese name
    is compared as written."""
    return _SEPARATORS.sub("", text)


def grounded_mention(mention: str, question: str, history: Sequence[GraphTurn]) -> bool:
    """Whether a mention the understanding names comes from the user's words or the earlier
    turns: a Chinese one as written (separators aside), a Latin one by half its content words
    or more; a Latin name for a question in Chinese is a translation (the index decides)."""
    text = " ".join(
        [
            question,
            *(f"{t.question} {t.answer} " + " ".join(k for _, k in t.entities) for t in history),
        ]
    )
    if CJK_RE.search(mention):
        return squeezed(mention) in squeezed(text)
    if CJK_RE.search(question):
        return True
    stop = QUESTION_WORDS_EN | FREQUENT_WORDS
    words = [w for w in re.findall(r"\w+", mention.casefold()) if w not in stop]
    said = set(re.findall(r"\w+", text.casefold()))
    return not words or 2 * sum(w in said for w in words) >= len(words)


def said_mentions(
    u: GraphUnderstanding, question: str, history: Sequence[GraphTurn]
) -> tuple[GraphUnderstanding, list[str]]:
    """The understanding without the mentions that are not `grounded_mention`s, and those."""
    invented = [m.text for m in u.entities if not grounded_mention(m.text, question, history)]
    if not invented:
        return u, []
    kept = [m for m in u.entities if m.text not in invented]
    return u.model_copy(update={"entities": kept}), invented


# -- conservative template routing -------------------------------------------------------------
# A template answers exactly one shape of question: its slots (entities) and nothing else.
# Any cue of a further constraint sends the question to the generated path instead.
SUPERLATIVE_EN = (
    r"\b(?:most|least|highest|lowest|largest|smallest|biggest|greatest|fewest|best|worst|"
    r"oldest|youngest|newest|latest|earliest|cheapest|longest|shortest|maximum|minimum|max|"
    r"min)\b"
)
SUPERLATIVE_ZH = r"最"
LIMIT_PHRASES = re.compile(
    r"\bat\s+(?:most|least)\b|最(?:多|少)\s*(?=[0-9一二两三四五六七八九十百千几])", re.IGNORECASE
)
"""'at most 100', 'at least 2', '最多100个': a limit on the rows, not a superlative."""
_EN_CUES: tuple[tuple[str, str], ...] = (
    (r"\b(?:top|first|last|bottom)\b", "a limit"),
    (SUPERLATIVE_EN, "a superlative"),
    (
        r"\b(?:more|less|fewer|greater|higher|lower|older|younger|earlier|later|cheaper|after|"
        r"before|since|until|between|above|below|over|under|exceed\w*|at least|at most|"
        r"start\w* with|end\w* with|begin\w* with|contain\w*|includ\w*|like)\b|[<>=]",
        "a comparison or property filter",
    ),
    (r"\b(?:not|never|without|except|excluding|neither|nor|no)\b|n't\b", "a negation"),
    (r"\b(?:other|others|else|another|besides|apart from|aside from)\b", "an exclusion"),
    (r"\b(?:both|together|along with|as well as)\b", "a combination of conditions"),
    (r"\b(?:order(?:ed)? by|sort\w*|rank\w*|alphabetical\w*)\b", "an ordering"),
    (r"\b(?:average|avg|mean|sum|total|median)\b", "an aggregation"),
    (r"\b(?:properties|property|nodes?|return\w*|rename\w*|alias\w*)\b", "a projection"),
)
_COUNT_CUES = r"\b(?:how many|number of|count\w*)\b"
_ZH_CUES: tuple[tuple[str, str], ...] = (
    (r"前\s*[0-9一二两三四五六七八九十几]", "a limit"),
    (SUPERLATIVE_ZH, "a superlative"),
    (
        r"大于|小于|超过|多于|少于|高于|低于|以上|以下|之后|之前|以后|以前|早于|晚于|不少于|"
        r"不超过|至少|至多|包含|含有|开头|结尾|字典序|之间",
        "a comparison or property filter",
    ),
    (r"不|没有|除了|除", "a negation"),
    (r"其他|其它|别的|另外|还有", "an exclusion"),
    (r"或|并且|而且|同时|以及|一起|共同", "a combination of conditions"),
    (r"排序|排名|升序|降序", "an ordering"),
    (r"平均|总和|总数|总共|合计", "an aggregation"),
    (r"节点|属性|返回|重命名|别名", "a projection"),
)
_ZH_COUNT = r"多少|几个|几部|数量"
_NUMBER = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
    r"dozen|hundred|single|once|twice)\b"
)
# quoted values: ASCII quotes only at word boundaries (so "Mayumi's" or "who's" stay whole)
_QUOTED_ANY = (
    re.compile(r"(?:^|(?<=[\s(\[:,]))[\"'‘](.{1,80}?)[\"'’](?=$|[\s.,?!;:)\]])"),
    re.compile(r"[“「『]([^”」』]{1,80})[”」』]"),
)
_GENERIC_WORDS = frozenset(["name", "id", "title"])
# a capitalised word inside a sentence: a name the question gives that no slot captured
_INNER_NAME = re.compile(r"(?<![.?!:;]\s)(?<=\s)[A-Z][\w'-]*[a-z][\w'-]*")


def _unslotted_name(question: str, mentions: Sequence[str], spec: GraphSpec) -> str:
    """A capitalised word (not the first of a sentence) that is no aligned entity, label,
    relationship or property: "Morpheus" in "Who played Morpheus in The Matrix?" constrains
    the answer, and a template without a slot for it would answer another question."""
    text = question
    for m in sorted(mentions, key=len, reverse=True):
        if m:
            text = re.sub(re.escape(m), " ", text, flags=re.IGNORECASE)
    schema = {schema_words(n) for n in [*spec.nodes, *spec.relationships]}
    schema |= {schema_words(p) for node in spec.nodes.values() for p in node.properties}
    for hit in _INNER_NAME.finditer(text):
        w = hit.group(0)
        low = w.lower().removesuffix("'s")
        if low not in QUESTION_WORDS_EN and schema_words(w) not in schema and low not in schema:
            return w
    return ""


def schema_words(name: str) -> str:
    """`unitsInStock` → `units in stock`; `ACTED_IN` → `acted in`."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ")
    return " ".join(spaced.lower().split())


def _forms(word: str) -> list[str]:
    forms = {word}
    if word.endswith("y") and len(word) > 3:
        forms.add(word[:-1] + "ie")  # category → categories
    for suffix in ("ed", "d", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            forms.add(word[: -len(suffix)])
    return sorted(forms, key=len, reverse=True)


def _mentions_word(text: str, phrase: str) -> bool:
    *head, last = phrase.split()
    alts = "|".join(re.escape(f) for f in _forms(last))
    pre = "".join(re.escape(h) + r"\s+" for h in head)
    return re.search(rf"\b{pre}(?:{alts})(?:s|es|d|ed|er|ers|or|ors|ing|r|rs)?\b", text) is not None


def _names_property(text: str, prop: str, labels: frozenset[str] = frozenset()) -> bool:
    """`unitsInStock` is named by "unitsinstock", "units in stock" or "in stock" (a one-word
    tail that is generic or a label's name, like "order" of `unitsOnOrder`, does not count)."""
    if re.search(rf"\b{re.escape(prop.lower())}\b", text):
        return True
    words = schema_words(prop).split()
    tails = [" ".join(words[i:]) for i in range(len(words))]
    return any(
        _mentions_word(text, t)
        for t in tails
        if len(t) > 2 and (" " in t or (t not in _GENERIC_WORDS and t not in labels))
    )


def template_misfit(
    question: str,
    intent_name: str,
    spec: GraphSpec,
    mentions: list[str],
    entities: int,
    constraints: list[Constraint] | None = None,
) -> str:
    """Why the intent's template would not capture the whole question ("" when it does).

    `mentions` are the entity texts found in the question (removed before looking for cues);
    `entities` how many distinct entities were aligned. Conservative on purpose: a wrong
    template answer looks authoritative, while the generated path can still be right.
    """
    intent = spec.intents.get(intent_name)
    if intent is None:
        return "no such intent"
    if entities > len(intent.params):
        return f"{entities} entities for {len(intent.params)} template slot(s)"
    known = {normalise(m) for m in mentions}
    for quoted in _QUOTED_ANY:
        for q in quoted.finditer(question):
            if normalise(q.group(1)).strip(" .,?!") not in known:
                return f"the quoted value {q.group(1)!r} is not an entity of the template"
    name = _unslotted_name(question, mentions, spec)
    if name:
        return f"the name {name!r} is not an entity of the template"
    rest = normalise(question)
    for m in sorted(known, key=len, reverse=True):
        if m:
            rest = rest.replace(m, " ")
    cypher = intent.cypher
    low_cypher = cypher.lower()
    keywords = sorted((normalise(k) for k in intent.keywords), key=len, reverse=True)
    stripped = rest
    for k in keywords:
        if k:
            stripped = stripped.replace(k, " ")
    counts = "count(" in low_cypher
    if _NUMBER.search(stripped):
        return "a number (a limit, year or comparison)"
    for cue, why in _EN_CUES:
        hit = re.search(cue, stripped)
        if hit:
            return f"{why} ({hit.group(0).strip()!r})"
    if not counts and re.search(_COUNT_CUES, stripped):
        return "a count"
    if counts and not re.search(_COUNT_CUES, rest) and not re.search(_ZH_COUNT, rest):
        return "the template counts but the question does not ask how many"
    for cue, why in _ZH_CUES:
        hit = re.search(cue, stripped)
        if hit:
            return f"{why} ({hit.group(0)!r})"
    if not counts and re.search(_ZH_COUNT, stripped):
        return "a count"
    label_words = frozenset(schema_words(label) for label in spec.nodes)
    for label, node in spec.nodes.items():
        for prop in node.properties:
            if prop == node.name:  # what slots are matched on ("name the films…" is a verb)
                continue
            used = re.search(rf"\.{re.escape(prop)}\b", cypher) is not None
            if not used and _names_property(stripped, prop, label_words):
                return f"the property {label}.{prop} is not in the template"
        if f":{label}" not in cypher and _mentions_word(stripped, schema_words(label)):
            return f"the label {label} is not in the template"
    for rel_name, rel in spec.relationships.items():
        if f":{rel_name}" not in cypher and _mentions_word(stripped, schema_words(rel_name)):
            return f"the relationship {rel_name} is not in the template"
        for prop in rel.properties:
            used = re.search(rf"\.{re.escape(prop)}\b", cypher) is not None
            if not used and _names_property(stripped, prop, label_words):
                return f"the property {rel_name}.{prop} is not in the template"
    for c in constraints or []:
        if normalise(c.value) not in known:
            return f"the constraint {c.property} {c.op} {c.value!r} is not a template slot"
    return ""
