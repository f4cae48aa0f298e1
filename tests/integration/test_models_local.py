"""Embedded models for real: Qwen2.5-Coder-1.5B on llama.cpp, and e5 embeddings."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest
from pydantic import BaseModel

from footnote.errors import ProviderUnavailable
from footnote.models import LlamaCppChatModel, Message, RoleModel, ensure_gguf, judge_support
from footnote.models.ledger import Ledger
from footnote.models.structured import structured

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytestmark = pytest.mark.slow


def local_gguf(name: str) -> Path:
    """The assembled model, or skip saying what is missing."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (pip install llama-cpp-python==0.3.36)")
    try:
        return ensure_gguf(name)
    except ProviderUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def judge_role() -> RoleModel:
    path = local_gguf("qwen2.5-coder-1.5b")
    model = LlamaCppChatModel("qwen2.5-coder-1.5b", model_path=path, n_ctx=2048)
    return RoleModel("judge", model, ledger=Ledger(), external=False)


class Answer(BaseModel):
    answer: str
    citations: list[int]


def test_json_schema_call(judge_role: RoleModel) -> None:
    msgs = [
        Message(
            "user",
            "[1] The Eiffel Tower was completed in 1889.\n"
            "[2] Berlin is the capital of Germany.\n"
            "When was the Eiffel Tower completed? Cite the passage numbers.",
        )
    ]
    out = structured(judge_role, msgs, Answer, labels=(), max_tokens=60)
    assert "1889" in out.answer and 1 in out.citations


def test_judge_supported_and_unsupported(judge_role: RoleModel) -> None:
    passage = "The Eiffel Tower was completed in March 1889 for the World's Fair in Paris."
    yes = judge_support(judge_role, "The Eiffel Tower was finished in 1889.", passage, labels=())
    no = judge_support(judge_role, "The Eiffel Tower was finished in 1925.", passage, labels=())
    assert yes > 0.6 > 0.3 > no
    assert judge_role.count_tokens("Eiffel Tower") > 0


def test_e5_zh_en_retrieval() -> None:
    from footnote.models import E5Embedder

    e5 = E5Embedder()
    passages = [
        "Paris has about 2.1 million inhabitants.",
        "The Great Wall of China is over 20,000 kilometres long.",
        "Photosynthesis turns light, water and carbon dioxide into sugar.",
    ]
    queries_zh = ["巴黎有多少人口？", "长城有多长？", "光合作用产生什么？"]
    P = e5.embed_passages(passages)
    assert P.dtype == np.float32 and np.allclose(np.linalg.norm(P, axis=1), 1, atol=1e-4)
    for i, q in enumerate(queries_zh):
        assert int(np.argmax(P @ e5.embed_query(q))) == i
    Z = e5.embed_passages(["巴黎约有210万居民。", "长城全长两万多公里。"])
    assert int(np.argmax(Z @ e5.embed_query("How many people live in Paris?"))) == 0


def test_a_prompt_that_starts_like_an_earlier_one_evaluates_only_its_tail() -> None:
    """`models.prefix_cache_mb`: with another role's call in between (llama.cpp alone reuses
    only the previous call's prefix), a prompt sharing a long system prompt with an earlier
    one restores that state and evaluates only its tail; off, it evaluates all of it. The
    reply is bit for bit a fresh evaluation's: the same text and the same log-probabilities
    (seen on graph QA before the batches were aligned: 1 answer in 6 differed)."""
    path = local_gguf("qwen2.5-coder-1.5b")
    schema = "\n".join(
        f"- node Label{i}: name STRING, born INT64, code{i} STRING" for i in range(40)
    )
    system = Message("system", "You answer questions about this graph schema.\n" + schema)
    other = [Message("system", "You are a judge."), Message("user", "Is the sky green? yes/no")]
    seen: dict[int, tuple[int, str, tuple[dict[str, float], ...]]] = {}
    for mb in (64, 0):
        model = LlamaCppChatModel(
            "qwen2.5-coder-1.5b", model_path=path, n_ctx=2048, prefix_cache_mb=mb
        )
        model.complete([system, Message("user", "Which label has code7?")], max_tokens=6)
        model.complete(other, max_tokens=2)
        before = model.evaluated_tokens()
        out = model.complete(
            [system, Message("user", "Which label has code12? Reply with the label only.")],
            max_tokens=8,
            logprobs=5,
        )
        seen[mb] = (model.evaluated_tokens() - before, out.text, out.top_logprobs)
    prompt = LlamaCppChatModel("qwen2.5-coder-1.5b", model_path=path).count_tokens(schema)
    assert prompt > 400
    assert seen[0][0] > prompt  # off: the whole system prompt again
    assert seen[64][0] < 160  # on: from the last batch boundary of the shared prefix
    assert seen[64][1:] == seen[0][1:]  # the same text and the same log-probabilities
