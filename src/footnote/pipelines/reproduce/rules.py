"""The rule extractor: settings found by patterns in English and Chinese sentences, no model.

Each pattern reads a value *as written* ("2e-5", "10,000 frames", "Tesla K80 GPU") from one
sentence of one block; the sentence is the quote. What it finds is a candidate like any
other: the verification gate decides whether it is kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from footnote.pipelines.reproduce.fields import SIZE_CUE
from footnote.textnorm import CJK_IDEOGRAPHS, split_sentences
from footnote.types import Block


@dataclass(frozen=True)
class Candidate:
    """A value for a field, the evidence id it comes from and the quote that states it."""

    field: str
    value: str
    evidence_id: str
    quote: str
    by: str = "rules"


_SCI = (
    r"\d+(?:\.\d+)?\s*[eE]\s*[-−+]?\s*\d+"
    r"|\$?\d+(?:\.\d+)?\s*(?:\\times|×|x)\s*10\s*\^\s*\{?\s*[-−]?\d+\s*\}?\$?"
    r"|\$?10\s*\^\s*\{?\s*[-−]?\d+\s*\}?\$?"
)
_PLAIN = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
NUM = rf"(?:{_SCI}|{_PLAIN})(?!\d|\.\d)"
_WORDS = r"one|two|three|four|five|six|seven|eight|nine|ten|twenty|fifty|hundred"
_LIST = rf"{NUM}(?:\s*(?:,|and|or|/|、|和|及)\s*{NUM})*"
_TO = (
    r"(?:\s*(?:\([^)]{0,30}\)\s*)?(?:of|is|was|were|are|to|=|:|as|at|set to|is set to|was set to|"
    r"are set to|were set to|fixed (?:at|to)|equal to|initiali[sz]ed (?:to|at)|started at|"
    r"为|设为|设置为|是|取|：)\s*)?"
)
_COUNT_UNITS = (
    r"tokens|frames|sentences|examples|samples|pairs|images|sequences|words|characters|"
    r"documents|instances|tweets|reviews|questions|utterances|stanzas|cases"
)
_LEN_UNITS = r"tokens|words|characters|subwords|frames|wordpieces|sub-?word units|字符|字|词"
_SPLIT = {
    "train": "train_size", "training": "train_size", "训练集": "train_size",
    "validation": "dev_size", "development": "dev_size", "dev": "dev_size",
    "valid": "dev_size", "held-out": "dev_size", "验证集": "dev_size", "开发集": "dev_size",
    "test": "test_size", "testing": "test_size", "测试集": "test_size",
}  # fmt: skip
_COUNT = rf"(?:{NUM})\s*(?:%|K\b|M\b|k\b|million|thousand|万)?(?:\s*(?:{_COUNT_UNITS}))?"

_I = re.IGNORECASE
PATTERNS: dict[str, tuple[re.Pattern[str], ...]] = {
    "learning_rate": (
        re.compile(rf"learning[ -]rates?{_TO}(?:of\s*)?({_LIST})", _I),
        re.compile(rf"\blr\s*(?:=|of|:)\s*({NUM})", _I),
        re.compile(rf"学习率{_TO}({_LIST})"),
    ),
    "batch_size": (
        re.compile(rf"batch[ -]?sizes?{_TO}(?:of\s*)?({_LIST}(?:\s*(?:{_COUNT_UNITS}))?)", _I),
        re.compile(rf"(?:mini-?)?batch(?:es)? of ({NUM}(?:\s*(?:{_COUNT_UNITS}))?)", _I),
        re.compile(rf"批(?:量|次)?大小{_TO}({_LIST})"),
    ),
    "epochs": (
        re.compile(rf"\b({NUM}|{_WORDS})\s*(?:training\s*)?(?:epochs?)\b", _I),
        re.compile(rf"\b(?:number of )?epochs?{_TO}({NUM})\b", _I),
        re.compile(rf"\b({NUM}\s*(?:k\s*)?(?:updates|iterations|training steps))\b", _I),
        re.compile(rf"({NUM})\s*个?\s*(?:轮次|轮|epoch)"),
    ),
    "optimizer": (
        re.compile(
            r"\b(AdamW|Adam|SGD|Adagrad|AdaGrad|Adadelta|AdaDelta|RMSProp|RMSprop|Adafactor|"
            r"LAMB|Nesterov|stochastic gradient descent)\b"
        ),
    ),
    "dropout": (
        re.compile(
            rf"drop-?out(?:\s*(?:rate|probability|ratio|rates))?{_TO}(?:of\s*)?({_LIST}%?)", _I
        ),
        re.compile(r"\b(0?\.\d+)\s*dropout", _I),
    ),
    "max_length": (
        re.compile(
            rf"(?:max(?:imum|imal)?)\s*(?:input\s*|sequence\s*|sentence\s*|document\s*|source\s*|"
            rf"target\s*|context\s*)?(?:length|len)s?{_TO}(?:of\s*)?({NUM}(?:\s*(?:{_LEN_UNITS}))?)",
            _I,
        ),
        re.compile(
            rf"truncat\w*\s*(?:\S+\s*){{0,4}}?to\s*(?:the first\s*)?({NUM}\s*(?:{_LEN_UNITS}))", _I
        ),
        re.compile(rf"(?:longer than|more than|at most|up to)\s*({NUM}\s*(?:{_LEN_UNITS}))", _I),
        re.compile(rf"最大长度(?:截断)?{_TO}({NUM})\s*个?(?:字符|字|词)?"),
    ),
    "seeds": (
        re.compile(rf"random seeds?{_TO}({_LIST})", _I),
        re.compile(
            rf"\b({NUM}|{_WORDS})\s*(?:different\s*|independent\s*|random\s*)*(?:runs|seeds|"
            rf"restarts|random initiali[sz]ations|initiali[sz]ations|trials)\b",
            _I,
        ),
        re.compile(rf"随机种子(?:分别)?{_TO}({_LIST})"),
        re.compile(rf"({NUM})\s*次(?:独立)?(?:运行|实验)"),
    ),
    "hardware": (
        re.compile(
            r"((?:(?:\d+|one|two|three|four|eight|a single|single)\s+)?(?:NVIDIA\s*|Nvidia\s*|NVidia\s*)?"
            r"(?:GeForce\s*|Tesla\s*|Quadro\s*)?(?:RTX\s*A?\d{4}(?:\s*Ti)?|GTX\s*\d{3,4}(?:\s*Ti)?|"
            r"[VAPKTH]\d{2,3}\b|Titan\s*[VXZ]p?\b|TITAN\s*[VXZ]p?\b)(?:\s*\(\d+\s*GB\))?(?:\s*GPUs?)?)"
        ),
        re.compile(r"\b((?:\d+\s*x\s*)?(?:Cloud\s*)?TPUs?(?:\s*v\d)?)\b"),
        re.compile(r"\b(\d+\s*G(?:i?B)?\s*(?:of\s*)?RAM)\b"),
        re.compile(
            r"\b((?:Intel\s*)?(?:Core\s*)?i[3579]-\d{4}\w*(?:\s*CPU)?|Xeon\s*[\w-]+(?:\s*CPU)?)"
        ),
        re.compile(r"\b(Raspberry Pi\s*\d?(?:\s*\(Model [AB]\+?\))?)"),
    ),
    "training_time": (
        re.compile(
            rf"\b((?:about|roughly|around|approximately|over|nearly)?\s*(?:{NUM}|{_WORDS})\s*"
            rf"(?:hours?|days?|weeks?|minutes?|mins?|hrs?))\b",
            _I,
        ),
        re.compile(rf"({NUM}\s*(?:个)?(?:小时|天|分钟))"),
    ),
    "metrics": (
        re.compile(
            r"(?<![\w-])((?:macro|micro|weighted)(?:-average[d]?)?[- ]?F1(?:[- ]score)?|F1[- ]scores?|F1|"
            r"accuracy|precision|recall|BLEU|ROUGE(?:-[12L]|-\{1,2,L\})?|Rouge(?:-[12L]|-\{1,2,L\})?|"
            r"METEOR|CIDEr|perplexity|exact match|EM|AUC|ROC-AUC|MRR|NDCG|WER|CER|BERTScore|"
            r"Spearman(?:'s)? correlation|Pearson correlation|MAE|RMSE)(?![\w-])",
            _I,
        ),
        re.compile(r"(准确率|精确率|召回率|宏平均\s*F1\s*值?|F1\s*值|Macro-F1)"),
    ),
}
_TRAIN_CONTEXT = re.compile(r"train|took|takes|converge|run|fine-?tun|训练|耗时", _I)
_METRIC_CONTEXT = re.compile(r"metric|evaluat|measur|report|score|指标|评价|评测", _I)
_OPT_CONTEXT = re.compile(r"optimi|train|using|with|learning rate|优化|训练", _I)
_SPLIT_EN = re.compile(
    rf"\b(training|train|validation|development|dev|valid|held-out|testing|test)\s*"
    rf"(?:set|split|data|portion|partition|sets|splits)?\s*(?:of|has|contains|consists of|with|:|=|"
    rf"\(|comprises|includes|containing)\s*({_COUNT})",
    _I,
)
_SPLIT_EN_AFTER = re.compile(
    rf"({_COUNT})\s*(?:\S+\s*){{0,4}}?(?:for|as|in)\s*(?:the\s*)?(?:\w+\s*)?"
    rf"(training|train|validation|development|dev|testing|test)\b",
    _I,
)
_SPLIT_ZH = re.compile(
    r"(训练集|验证集|开发集|测试集)\s*(?:共|包含|有|为|约)?\s*([\d,]+(?:\.\d+)?\s*万?)\s*(?:条|句|个|篇)?"
)
_RATIO = re.compile(r"(?<![\d:])(\d+\s*:\s*\d+\s*:\s*\d+)(?![\d:])")
_RATIO_CONTEXT = re.compile(r"split|divid|partition|ratio|划分|比例", _I)
_LIST_SPLIT = re.compile(r"\s*(?:,|\band\b|\bor\b|/|、|和|及)\s*")
_BASELINES = re.compile(
    r"baselines?(?:\s*(?:models?|systems?|methods?))?\s*(?:include|including|are|:|such as|"
    r"consist of)\s*(.+)|基线(?:模型|方法)?(?:包括|有|为|：)\s*(.+)",
    _I,
)
_ZH_DATASETS = re.compile(
    r"([A-Za-z][\w\-]*(?:\s*[、,，和及与]\s*[A-Za-z][\w\-]*)+)\s*(?:[两三四五六]个)?(?:公开)?数据集"
)
_EN_DATASET = re.compile(
    r"\b((?:[A-Z][\w\-]*|\d+[\w\-]*)(?:\s+(?:[A-Z0-9][\w\-]*)){0,3})\s+(?:dataset|corpus|treebank|"
    r"benchmark|data set)s?\b"
)
_NAME = re.compile(rf"^[A-Z0-9{CJK_IDEOGRAPHS}][\w\-.+{CJK_IDEOGRAPHS}（）() ]{{0,60}}$")


def _values(field_name: str, raw: str) -> list[str]:
    """The values in one match (a list "0.001 and 0.0001" gives both)."""
    raw = raw.strip().strip("$").strip()
    if field_name in ("learning_rate", "seeds", "dropout", "batch_size") and _LIST_SPLIT.search(
        raw
    ):
        parts = [p.strip() for p in _LIST_SPLIT.split(raw) if p.strip()]
        if all(re.match(NUM, p) for p in parts[:-1]):
            return parts
    return [raw]


def _sentences(block: Block) -> Iterator[str]:
    if block.table is not None or block.kind in ("reference", "heading", "figure"):
        return
    yield from split_sentences(block.text)


def _names(text: str) -> list[str]:
    """Names in a list such as "TextCNN, BiLSTM and BERT" (stops at the sentence's end)."""
    text = re.split(r"[.;。；]|，其中|, where|, which", text, maxsplit=1)[0]
    out = []
    for part in re.split(r"\s*(?:,|\band\b|、|和|及|与)\s*", text):
        part = re.sub(r"\s*(?:BIBREF\d+|\[[\d,\s]+\]|\(\w+ et al\.?,? \d{4}\))", "", part).strip()
        part = re.sub(r"^(?:the|a|an)\s+", "", part, flags=re.I)
        if part and _NAME.match(part) and len(part.split()) <= 6:
            out.append(part)
    return out


def extract(blocks: list[Block]) -> list[Candidate]:
    """Every candidate the patterns find, in reading order."""
    found: list[Candidate] = []

    def add(field_name: str, value: str, block: Block, sentence: str) -> None:
        value = value.strip(" ,;")
        if value and value in sentence:
            found.append(Candidate(field_name, value, block.id, sentence))

    for block in blocks:
        for sent in _sentences(block):
            for name, patterns in PATTERNS.items():
                if name == "training_time" and not _TRAIN_CONTEXT.search(sent):
                    continue
                if name == "metrics" and not _METRIC_CONTEXT.search(sent):
                    continue
                if name == "optimizer" and not _OPT_CONTEXT.search(sent):
                    continue
                for pattern in patterns:
                    for m in pattern.finditer(sent):
                        for value in _values(name, m.group(1)):
                            add(name, value, block, sent)
            _splits(block, sent, add)
            _names_in(block, sent, add)
    return found


def _splits(block: Block, sent: str, add: object) -> None:
    """Split sizes: "training set of 5,000 reviews", "617 … for training", 训练集 24,000 条, 8:1:1."""
    assert callable(add)
    for m in _SPLIT_EN.finditer(sent):
        if SIZE_CUE.search(sent) or "%" in m.group(2):
            add(_SPLIT[m.group(1).lower()], m.group(2), block, sent)
    for m in _SPLIT_EN_AFTER.finditer(sent):
        if SIZE_CUE.search(m.group(1)) or "%" in m.group(1) or SIZE_CUE.search(sent):
            add(_SPLIT[m.group(2).lower()], m.group(1), block, sent)
    for m in _SPLIT_ZH.finditer(sent):
        add(_SPLIT[m.group(1)], m.group(2), block, sent)
    if _RATIO_CONTEXT.search(sent):
        for m in _RATIO.finditer(sent):
            for name in ("train_size", "dev_size", "test_size"):
                add(name, m.group(1), block, sent)


def _names_in(block: Block, sent: str, add: object) -> None:
    """Baselines and datasets named in list sentences."""
    assert callable(add)
    m = _BASELINES.search(sent)
    if m:
        for name in _names(m.group(1) or m.group(2) or ""):
            add("baselines", name, block, sent)
    for m in _ZH_DATASETS.finditer(sent):
        for name in _names(m.group(1)):
            add("datasets", name, block, sent)
    for m in _EN_DATASET.finditer(sent):
        name = m.group(1).strip()
        if name.split()[0].lower() not in {"the", "this", "our", "a", "each", "we", "in"}:
            add("datasets", name, block, sent)
