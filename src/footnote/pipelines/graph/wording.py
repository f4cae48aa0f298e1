"""What graph QA says to a Chinese question when it does not answer: ask-backs, refusals and
empty results in Chinese, with what is data (names, labels, properties, Cypher) as the graph
holds it. The English wording stays the outcome's `reason` (logs, benches, the API's reason);
the user reads the outcome's `answer`, in the question's language. A message with no Chinese
wording of its own is led by a Chinese sentence saying what happened, its English detail
beside it."""

from __future__ import annotations

from collections.abc import Sequence

_LEAD = {
    "clarify": "需要您进一步说明",
    "refused": "无法回答这个问题",
    "no_rows": "此查询没有返回任何行",
}
UNCLEAR = "问题不够明确：请说明您要查找什么。"
NO_TEMPLATE = "no template matches this question and no `cypher` model is bound"
NO_TEMPLATE_ZH = "没有与这个问题匹配的查询模板，也没有可用来写查询的 `cypher` 模型。"
READ_ONLY = "这个问题要求修改图或改变指令：本图只读，只回答问题，已在执行任何查询之前拒绝。"
DISAGREE = "几个候选查询对这个问题给出的结果不一致：请说得更具体一些。"


def or_zh(items: Sequence[str]) -> str:
    """`A、B或C`."""
    return items[0] if len(items) == 1 else "、".join(items[:-1]) + "或" + items[-1]


def entity_choice(mention: str, names: Sequence[str]) -> str:
    return f"“{mention}”可能指{or_zh(names)}：您指的是哪一个？"


def missing(asked: str, props: Sequence[str]) -> str:
    return f"图中没有“{asked}”这项信息；它包含：{'、'.join(props)}。"


def rows_lack(columns: Sequence[str]) -> str:
    return f"这次查询的结果没有给出问题所问的内容：结果只有{'、'.join(columns)}。"


def lacks_element(kind: str, what: str, near: Sequence[str]) -> str:
    """A schema element a query asked for and the graph lacks (`clarify.schema_gap`)."""
    noun = {"label": "标签为", "relationship": "类型为"}.get(kind, "属性")
    holds = {"label": "的节点", "relationship": "的关系"}.get(kind, "")
    return f"图中没有{noun}“{what}”{holds}；最接近的是：{'、'.join(near)}。"


def names_nothing(labels: Sequence[str]) -> str:
    return f"这个问题没有提到图中包含的内容（图中有：{'、'.join(labels)}）：您想查找什么？"


def about_what(what: Sequence[str], labels: Sequence[str]) -> str:
    return f"您想了解{or_zh(what)}的哪方面信息？图中有：{'、'.join(labels)}。"


def readings(options: Sequence[str]) -> str:
    listed = "；".join(f"（{i + 1}）{o}" for i, o in enumerate(options))
    return f"这个问题有{len(options)}种理解，结果各不相同：{listed}。您指的是哪一种？"


def definite(phrase: str, more: bool, label: str, prop: str, key: str, shown: Sequence[str]) -> str:
    listed = "、".join(shown) + ("等" if more else "")
    many = f"{'超过' if more else ''}{len(shown)}个"
    return f"“{phrase}”可能指{many}{prop}为{key}的{label}节点：{listed}。您指的是哪一个？"


def no_rows(query: str, counted: bool) -> str:
    return f"此查询没有返回任何行{'（计数为零）' if counted else ''}：{query}"


def no_rows_offer(query: str, relaxed: str, n: int, first: str, shown: str) -> str:
    return (
        f"此查询没有返回任何行：{query}。放宽条件（{relaxed}）后可匹配{n}行（{first}）："
        f"您是这个意思吗？{shown}"
    )


def outcome(status: str, english: str, zh: str) -> str:
    """The answer a Chinese question reads: its Chinese wording, else a Chinese lead with the
    English detail."""
    if zh:
        return zh
    lead = _LEAD.get(status, "")
    return f"{lead}（{english}）" if lead and english else lead or english


def sentence(text: str) -> str:
    """`text` closed with 。 where it does not end a sentence already (before another is put
    beside it)."""
    return text if not text or text.endswith(("。", "？", "！", "?", ".", "!")) else text + "。"
