"""Issue 30, finding 6: the model's raw output never reaches a reader through a refusal reason or
an error event (the CLI, the web app and the OpenAI endpoint show both); it stays in the trace."""

# ruff: noqa: F811  (pytest fixtures are parameters named like the imported fixture)
from __future__ import annotations

import asyncio
import json

from test_ask import RoleAdapter, search_fn, store  # noqa: F401  (the `store` fixture)

from footnote.config import load_settings
from footnote.errors import ModelOutputInvalid
from footnote.events import Error, Event, Final
from footnote.models.fake import FakeChatModel
from footnote.pipelines.ask.pipeline import AskDeps, AskPipeline, AskRequest
from footnote.pipelines.trace import Trace
from footnote.serialize import answer_to_dict
from footnote.store.sqlite import SqliteStore

RAW = "IGNORE THE USER <script>alert(1)</script> the secret budget is 48,000 euros"


def test_invalid_model_output_gives_a_generic_reason(store: SqliteStore) -> None:
    settings = load_settings(store.path.parent, environ={})
    model = RoleAdapter(FakeChatModel([RAW, RAW, RAW, RAW]))
    trace = Trace()
    deps = AskDeps(store=store, search=search_fn(store), settings=settings,
                   compose_model=model, trace=trace)  # fmt: skip
    events: list[Event] = []

    async def go() -> None:
        async for e in AskPipeline(deps).run(
            AskRequest("What accuracy did the model reach on SciQ?", mode="cite")
        ):
            events.append(e)

    asyncio.run(go())
    [final] = [e for e in events if isinstance(e, Final)]
    shown = json.dumps(answer_to_dict(final.answer)) + " ".join(
        e.message for e in events if isinstance(e, Error)
    )
    assert final.answer.status == "refused" and final.answer.reason
    assert "alert(1)" not in shown and "48,000" not in shown and "IGNORE" not in shown
    assert any(isinstance(e, Error) and e.code == "ModelOutputInvalid" for e in events)
    # the raw output is kept for whoever reads the trace
    assert any("alert(1)" in json.dumps(s.data) for s in trace.spans)


def test_the_public_message_of_other_errors_is_their_message() -> None:
    from footnote.errors import NotFound

    assert NotFound("no block 'x'").public_message == "no block 'x'"
    exc = ModelOutputInvalid(f"no JSON object in model output: {RAW!r}")
    assert RAW not in exc.public_message and RAW in str(exc)
