"""The sixteen fields of an experiment-settings table: names, labels, groups and cue words.

A cue says that a passage talks about a field ("learning rate", "学习率"). Cues pick the
passages shown to the extractor and gate numeric values: a learning rate must be cited to text
that mentions a learning rate (or an obvious abbreviation), whatever found it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    """One row of the settings table."""

    name: str
    label: str
    label_zh: str
    group: str
    cue: re.Pattern[str]
    numeric: bool = False
    """Its values are numbers (a cue in the cited text is then required)."""
    multi: bool = False
    """Lists of names (every item is a value of its own)."""


def _cue(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_SIZE = (
    r"\b(?:split|splits|partition|examples|instances|samples|sentences|pairs|documents|tweets|"
    r"reviews|questions|tokens|utterances|cases)\b|条|句|篇"
)
FIELDS: tuple[Field, ...] = (
    Field("model", "model", "模型", "evaluation",
          _cue(r"\b(?:we (?:propose|present|introduce|use|employ|adopt|fine-?tune)|our (?:model|"
               r"method|approach|system)|proposed (?:model|method))\b|本文提出|我们提出|提出了"),
          multi=True),
    Field("datasets", "datasets", "数据集", "data",
          _cue(r"\b(?:data ?sets?|corpus|corpora|benchmarks?|treebank)\b|数据集|语料"), multi=True),
    Field("train_size", "training set size", "训练集规模", "data",
          _cue(r"\btrain(?:ing)?\b|训练集|训练")),
    Field("dev_size", "validation set size", "验证集规模", "data",
          _cue(r"\b(?:dev|development|validation|valid|held-?out)\b|验证集|开发集")),
    Field("test_size", "test set size", "测试集规模", "data", _cue(r"\btest(?:ing)?\b|测试集")),
    Field("learning_rate", "learning rate", "学习率", "training",
          _cue(r"\blearning[ -]rates?\b|\blr\b|\bstep ?size\b|学习率"), numeric=True),
    Field("batch_size", "batch size", "批大小", "training",
          _cue(r"\b(?:mini-?)?batch(?:es| sizes?)?\b|批大小|批量大小|批次大小|批量"), numeric=True),
    Field("epochs", "training length (epochs or updates)", "训练轮次", "training",
          _cue(r"\bepochs?\b|\b(?:updates|iterations|steps)\b|轮次|个轮|轮"), numeric=True),
    Field("optimizer", "optimizer", "优化器", "training",
          _cue(r"\boptimi[sz](?:er|ers|ation|ed|e)\b|\b(?:adam|adamw|sgd|adagrad|adadelta|"
               r"rmsprop|adafactor|lamb)\b|优化器")),
    Field("dropout", "dropout", "dropout", "training", _cue(r"\bdrop-?out\b|丢弃率"), numeric=True),
    Field("max_length", "maximum input length", "最大长度", "training",
          _cue(r"\b(?:max(?:imum|imal)?|longest|truncat\w*|at most|up to|limit\w*)\b.{0,40}"
               r"\b(?:length|tokens|words|characters|frames|subwords)\b|\blength\b|最大长度|截断"),
          numeric=True),
    Field("seeds", "random seeds or runs", "随机种子或运行次数", "training",
          _cue(r"\bseeds?\b|\b(?:runs|restarts|trials|initiali[sz]ations|repetitions)\b|"
               r"随机种子|次运行|次实验"), numeric=True),
    Field("hardware", "hardware", "硬件", "compute",
          _cue(r"\b(?:gpus?|cpus?|tpus?|nvidia|tesla|titan|geforce|gtx|rtx|v100|a100|p100|k80|"
               r"ram|memory|raspberry|xeon|intel|core i\d)\b|显卡|显存|服务器"), multi=True),
    Field("training_time", "training time", "训练时间", "compute",
          _cue(r"\b(?:hours?|days?|weeks?|minutes?|mins?|seconds?|hrs?)\b|小时|天|分钟"),
          numeric=True),
    Field("metrics", "metrics", "评价指标", "evaluation",
          _cue(r"\b(?:metrics?|measures?|evaluat\w+|accuracy|precision|recall|f1|f-?score|bleu|"
               r"rouge|meteor|perplexity|auc|mrr|map|wer|cer|bertscore|exact match)\b|指标|准确率|"
               r"召回率|精确率|F1"), multi=True),
    Field("baselines", "baselines", "基线", "evaluation",
          _cue(r"\bbaselines?\b|\bcompar\w+ (?:with|against|to)\b|\bstate-of-the-art\b|基线|对比"),
          multi=True),
)  # fmt: skip
FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in FIELDS)
BY_NAME: dict[str, Field] = {f.name: f for f in FIELDS}
GROUPS: dict[str, tuple[Field, ...]] = {}
for _f in FIELDS:
    GROUPS.setdefault(_f.group, ())
    GROUPS[_f.group] += (_f,)
SIZE_CUE = _cue(_SIZE)
"""Words that make a number a split size (counted things) rather than a score."""


def field(name: str) -> Field:
    """A field by name (KeyError naming the known ones)."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(
            f"unknown settings field {name!r}; fields: {', '.join(FIELD_NAMES)}"
        ) from None


def cue_score(text: str, fields: tuple[Field, ...] = FIELDS) -> int:
    """How many of the fields' cues occur in `text` (the passage-ranking signal)."""
    return sum(1 for f in fields if f.cue.search(text))
