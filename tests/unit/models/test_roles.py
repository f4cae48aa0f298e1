import threading

import pytest
from models_fakes import FakeChatModel, ProbeModel, roles_with, settings

from footnote.config import ModelBinding
from footnote.errors import BudgetExceeded, ConfigError, LicenceRefused, ModelError
from footnote.models.base import Message
from footnote.models.budget import Budget
from footnote.models.factories import is_external
from footnote.models.ledger import Ledger, UsageRecord
from footnote.models.roles import build_roles

REMOTE = "openai+http://127.0.0.1:9/v1?model=big"
LOCAL = "local:qwen2.5-coder-1.5b"
MSG = [Message("user", "hello there")]


def test_unbound_role_is_config_error_naming_role() -> None:
    roles = build_roles(settings())
    assert not roles.is_bound("cypher_fallback")
    with pytest.raises(ConfigError, match="cypher_fallback"):
        roles.chat("cypher_fallback")
    with pytest.raises(ConfigError, match="unknown model role"):
        roles.chat("nonsense")


def test_unknown_local_model_and_bad_url() -> None:
    with pytest.raises(ConfigError, match="known"):
        build_roles(settings(compose="local:gpt-9")).chat("compose")
    with pytest.raises(ConfigError, match="unsupported model URL"):
        build_roles(settings(compose="ftp://x")).chat("compose")


def test_external_decision() -> None:
    assert not is_external(ModelBinding.model_validate({"url": LOCAL}))
    assert is_external(ModelBinding.model_validate({"url": REMOTE}))
    assert not is_external(ModelBinding.model_validate({"url": REMOTE, "external": False}))
    b = build_roles(settings(compose=REMOTE)).bindings()
    assert b["compose"].external and b["judge"].bound and not b["judge"].external
    assert not b["cypher_fallback"].bound


def test_roles_on_same_url_share_one_model() -> None:
    roles = build_roles(settings(compose=LOCAL, judge=LOCAL))
    assert roles.chat("compose").model is roles.chat("judge").model


def test_ledger_records_and_budget_charged(ledger: Ledger) -> None:
    fake = FakeChatModel(["one two three"])
    roles = roles_with({LOCAL: fake}, settings(compose=LOCAL), ledger)
    budget = Budget(max_tokens=1000, max_calls=10)
    out = roles.chat("compose").complete(MSG, labels=(), budget=budget, run_id="r1")
    assert out.text == "one two three"
    [rec] = ledger.records("r1")
    assert (rec.role, rec.model, rec.tokens_in, rec.tokens_out, rec.ok) == (
        "compose",
        "fake:chat",
        2,
        3,
        True,
    )
    assert budget.tokens_used == 5 and budget.calls_used == 1
    assert ledger.totals("r1").model_calls == 1


def test_failed_call_is_recorded(ledger: Ledger) -> None:
    m = ProbeModel("p", error=ModelError("boom"))
    roles = roles_with({LOCAL: m}, settings(compose=LOCAL), ledger)
    with pytest.raises(ModelError):
        roles.chat("compose").complete(MSG, labels=(), run_id="r")
    [rec] = ledger.records()
    assert not rec.ok and "boom" in (rec.error or "")


def test_budget_exhausted_refuses_before_calling(ledger: Ledger) -> None:
    m = ProbeModel("p")
    roles = roles_with({LOCAL: m}, settings(compose=LOCAL), ledger)
    budget = Budget(max_calls=1)
    roles.chat("compose").complete(MSG, labels=(), budget=budget)
    with pytest.raises(BudgetExceeded):
        roles.chat("compose").complete(MSG, labels=(), budget=budget)
    assert len(m.calls) == 1


def test_licence_gate_refuses_external(ledger: Ledger) -> None:
    remote = ProbeModel(REMOTE)
    roles = roles_with({REMOTE: remote}, settings(compose=REMOTE), ledger)
    rm = roles.chat("compose")
    assert rm.external
    with pytest.raises(LicenceRefused) as e:
        rm.complete(MSG, labels=("internal", "no-external-model"))
    assert (e.value.role, e.value.label, e.value.model) == ("compose", "no-external-model", REMOTE)
    with pytest.raises(LicenceRefused):
        rm.stream(MSG, labels=("no-external-model",))
    assert remote.calls == []
    rm.complete(MSG, labels=("internal",))  # other labels pass
    assert len(remote.calls) == 1


def test_licence_gate_allows_local(ledger: Ledger) -> None:
    local = ProbeModel(LOCAL)
    roles = roles_with({LOCAL: local}, settings(compose=LOCAL), ledger)
    roles.chat("compose").complete(MSG, labels=("no-external-model",))
    assert len(local.calls) == 1


def test_licence_gate_reroutes_when_allowed(ledger: Ledger) -> None:
    remote, local = ProbeModel(REMOTE), ProbeModel("local:qwen2.5-coder-0.5b")
    s = settings(compose=REMOTE).model_copy(
        update={"allow_local_reroute": True, "reroute_local": "local:qwen2.5-coder-0.5b"}
    )
    roles = roles_with({REMOTE: remote, "local:qwen2.5-coder-0.5b": local}, s, ledger)
    out = roles.chat("compose").complete(MSG, labels=("no-external-model",), run_id="x")
    assert out.model == "local:qwen2.5-coder-0.5b" and remote.calls == []
    [rec] = ledger.records("x")
    assert rec.model == "local:qwen2.5-coder-0.5b" and "rerouted" in rec.note
    roles.chat("compose").complete(MSG, labels=())  # unlabelled text still goes to the bound model
    assert len(remote.calls) == 1


def test_reroute_target_must_be_local() -> None:
    s = settings(compose=REMOTE).model_copy(
        update={"allow_local_reroute": True, "reroute_local": REMOTE}
    )
    with pytest.raises(ConfigError, match="reroute_local"):
        roles_with({REMOTE: ProbeModel(REMOTE)}, s).chat("compose")


def test_response_cache_for_temperature_zero(ledger: Ledger) -> None:
    m = ProbeModel("p", "cached")
    rm = roles_with({LOCAL: m}, settings(judge=LOCAL), ledger).chat("judge")
    a = rm.complete(MSG, labels=(), cache=True, max_tokens=5)
    b = rm.complete(MSG, labels=(), cache=True, max_tokens=5)
    assert a == b and len(m.calls) == 1
    rm.complete(MSG, labels=(), cache=True, max_tokens=6)  # other options: a miss
    rm.complete(
        MSG, labels=(), cache=True, temperature=0.7, max_tokens=5
    )  # not deterministic: no cache
    rm.complete(MSG, labels=(), max_tokens=5)  # not asked for
    assert len(m.calls) == 4
    assert [r.cache_hit for r in ledger.records()] == [False, True, False, False, False]


def test_stream_cache_serves_a_finished_temperature_zero_stream(ledger: Ledger) -> None:
    m = ProbeModel("p", "cached draft")
    rm = roles_with({LOCAL: m}, settings(compose=LOCAL), ledger).chat("compose")
    first = "".join(rm.stream(MSG, labels=(), cache=True, max_tokens=5))
    again = list(rm.stream(MSG, labels=(), cache=True, max_tokens=5))
    assert again == [first] and len(m.calls) == 1  # one delta, no second generation
    "".join(rm.stream(MSG, labels=(), cache=True, max_tokens=6))  # other options: a miss
    "".join(rm.stream(MSG, labels=(), cache=True, temperature=0.7, max_tokens=5))  # not cached
    "".join(rm.stream(MSG, labels=(), max_tokens=5))  # not asked for
    assert len(m.calls) == 4
    assert [r.cache_hit for r in ledger.records()] == [False, True, False, False, False]
    # a completion cached by `complete` is not a stream's entry (the key says which)
    rm.complete(MSG, labels=(), cache=True, max_tokens=5)
    assert len(m.calls) == 5


def test_stream_cache_keeps_no_cancelled_stream(ledger: Ledger) -> None:
    m = ProbeModel("p", "a b c d")
    rm = roles_with({LOCAL: m}, settings(compose=LOCAL), ledger).chat("compose")
    cancel = threading.Event()
    it = rm.stream(MSG, labels=(), cache=True, cancel=cancel, max_tokens=5)
    next(it)
    cancel.set()
    list(it)
    "".join(rm.stream(MSG, labels=(), cache=True, max_tokens=5))
    assert len(m.calls) == 2  # the cancelled stream was not kept


def test_stream_records_usage_and_cancel(ledger: Ledger) -> None:
    m = ProbeModel("p")
    rm = roles_with({LOCAL: m}, settings(compose=LOCAL), ledger).chat("compose")
    budget = Budget()
    assert "".join(rm.stream(MSG, labels=(), budget=budget, run_id="s")) == "a b c"
    rec = ledger.records("s")[0]
    assert rec.ok and rec.tokens_out == 3 and budget.calls_used == 1
    cancel = threading.Event()
    got = []
    for piece in rm.stream(MSG, labels=(), run_id="c", cancel=cancel):
        got.append(piece)
        cancel.set()
    assert got == ["a "] and "cancelled" in ledger.records("c")[0].note


def test_ledger_sink_and_threads() -> None:
    seen: list[UsageRecord] = []
    ledger = Ledger(sink=seen.append)
    m = ProbeModel("p")
    rm = roles_with({LOCAL: m}, settings(compose=LOCAL), ledger).chat("compose")
    threads = [
        threading.Thread(target=lambda: [rm.complete(MSG, labels=()) for _ in range(50)])
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ledger) == 200 and len(seen) == 200


def test_embedder_cached_and_gated() -> None:
    roles = build_roles(settings(embed="local:wordllama"))
    assert roles.embedder() is roles.embedder()
    roles.embedder().gate(("no-external-model",))  # local: fine
    roles.embed_gate(("no-external-model",))
    roles2 = build_roles(settings(embed="openai+http://127.0.0.1:9/v1?model=e"))
    with pytest.raises(LicenceRefused):
        roles2.embed_gate(("no-external-model",))
    with pytest.raises(LicenceRefused):  # refused before anything is sent (nothing listens)
        roles2.embedder().embed_query("q", labels=("no-external-model",))
    with pytest.raises(LicenceRefused):
        roles2.embedder().embed_passages(["p"], labels=("internal", "no-external-model"))
    with pytest.raises(TypeError):  # labels cannot be left out
        roles2.embedder().embed_query("q")  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match="embed"):
        build_roles(settings(embed="")).embedder()
