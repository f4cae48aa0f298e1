"""`footnote models`: what each role is bound to, what a bound model can do, pulling GGUFs."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table as RichTable

from footnote.cli.common import JsonOpt, WorkspaceOpt, _fail, _print_json, _workspace, err, out
from footnote.cli.common import app as root
from footnote.errors import FootnoteError

if TYPE_CHECKING:
    from footnote.models.roles import RoleModel

app = typer.Typer(help="Model roles: list bindings and files, probe a role, pull a GGUF.",
                  no_args_is_help=True)  # fmt: skip
root.add_typer(app, name="models")

PROBE_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "confidence": {"type": "number"}},
    "required": ["answer", "confidence"],
}


@app.command("ls")
def ls(workspace: WorkspaceOpt = None, as_json: JsonOpt = False) -> None:
    """Each role's binding, and the model files on this machine (embedded and pulled)."""
    from footnote.models.hub import pulled_files
    from footnote.models.weights import GGUF_MODELS, default_cache_dir, is_assembled

    with _workspace(workspace) as ws:
        bindings = ws.models.bindings()
        cache = default_cache_dir(ws.settings.models.cache_dir)
    roles: list[dict[str, Any]] = [
        {"role": b.role, "url": b.url, "bound": b.bound, "external": b.external}
        for b in bindings.values()
    ]
    files: list[dict[str, Any]] = [
        {"url": f"local:{name}", "file": str(cache / spec.filename), "size": spec.size,
         "ready": is_assembled(spec, cache / spec.filename), "kind": "embedded"}
        for name, spec in GGUF_MODELS.items()
    ] + [
        {"url": f"local:{p}", "file": str(p), "size": p.stat().st_size, "ready": True,
         "kind": "pulled"}
        for p in pulled_files(cache)
    ]  # fmt: skip
    if as_json:
        _print_json({"roles": roles, "files": files, "cache_dir": str(cache)})
        return
    table = RichTable("role", "binding", "where")
    for r in roles:
        where = "external" if r["external"] else "local"
        table.add_row(r["role"], escape(r["url"] or "(unbound)"), where if r["bound"] else "")
    out.print(table)
    files_table = RichTable("model", "kind", "size", "ready", title=f"model files in {cache}")
    for f in files:
        files_table.add_row(escape(f["url"]), f["kind"], f"{f['size'] / 2**20:.0f} MiB",
                            "yes" if f["ready"] else "assembled on first use")  # fmt: skip
    out.print(files_table)


def probe_chat(model: RoleModel) -> dict[str, Any]:
    """Declared capabilities, then measured: a timed completion (tokens/s), a JSON-schema
    reply validated here, top log-probabilities when declared."""
    from footnote.models.base import Message
    from footnote.models.jsontext import find_json_object

    caps = model.capabilities()
    report: dict[str, Any] = {
        "model": model.name,
        "context_length": caps.context_length,
        "json_schema": caps.json_schema,
        "tools": caps.tools,
        "logprobs": caps.logprobs,
        "streaming": caps.streaming,
    }
    prompt = [Message("user", "Count from one to twenty in words, separated by commas.")]
    t0 = time.perf_counter()
    done = model.complete(prompt, labels=(), max_tokens=48, note="probe")
    seconds = time.perf_counter() - t0
    report["tokens_out"] = done.tokens_out
    report["seconds"] = round(seconds, 3)
    report["tokens_per_s"] = round(done.tokens_out / seconds, 1) if seconds > 0 else None
    if caps.json_schema:
        reply = model.complete(
            [Message("user", "Is the sky blue? Reply as JSON with answer and confidence.")],
            labels=(), max_tokens=64, json_schema=PROBE_SCHEMA, note="probe",
        )  # fmt: skip
        data = find_json_object(reply.text)
        ok = isinstance(data, dict) and set(PROBE_SCHEMA["required"]) <= set(data)
        report["json_schema_check"] = "valid" if ok else f"invalid reply: {reply.text[:80]!r}"
    if caps.logprobs:
        reply = model.complete([Message("user", "Answer yes or no: is water wet?")],
                               labels=(), max_tokens=1, logprobs=3, note="probe")  # fmt: skip
        report["logprobs_check"] = "returned" if reply.top_logprobs else "none returned"
    return report


@app.command("probe")
def probe(
    role: Annotated[str, typer.Argument(help="A model role: compose, judge, embed, …")],
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Load the model bound to ROLE and measure what it can do (context size, JSON schema,
    tools, logprobs, tokens/s; texts/s and dimensions for `embed`)."""
    from footnote.pipelines.graph.rungs import graph_rung

    with _workspace(workspace) as ws:
        roles = ws.models
        rung = ""
        if role in ("cypher", "cypher_fallback"):
            urls = (roles.binding("cypher").url, roles.binding("cypher_fallback").url)
            rung = graph_rung(role, *urls, ws.settings.graph.fallback_candidates)
        if not roles.is_bound(role):
            served = f"; {rung}" if rung else ""
            _fail(ValueError(f"role {role!r} is not bound (see `footnote models ls`){served}"))
        try:
            if role == "embed":
                embedder = roles.embedder()
                texts = [f"probe sentence number {i} about retrieval" for i in range(32)]
                t0 = time.perf_counter()
                vectors = embedder.embed_passages(texts, labels=())  # probe text: no labels
                seconds = time.perf_counter() - t0
                report: dict[str, Any] = {
                    "model": embedder.name, "dimensions": int(vectors.shape[1]),
                    "texts_per_s": round(len(texts) / seconds, 1),
                }  # fmt: skip
            else:
                report = probe_chat(roles.chat(role))
        except FootnoteError as exc:
            if rung:  # known without the model: say it even when the probe cannot run
                err.print(f"[dim]rung[/] {escape(rung)}")
            _fail(exc)
    report = {"role": role, **report, **({"rung": rung} if rung else {})}
    if as_json:
        _print_json(report)
        return
    for key, value in report.items():
        out.print(
            f"[dim]{key:<18}[/] {escape(json.dumps(value) if not isinstance(value, str) else value)}"
        )


@app.command("pull")
def pull(
    repo: Annotated[
        str, typer.Argument(help="Hub repository, e.g. Qwen/Qwen2.5-0.5B-Instruct-GGUF.")
    ],
    file: Annotated[
        str | None, typer.Argument(help="The .gguf file, or a part of its name (e.g. q4_k_m).")
    ] = None,
    revision: Annotated[str, typer.Option(help="Branch, tag or commit.")] = "main",
    endpoint: Annotated[
        str | None,
        typer.Option(envvar="HF_ENDPOINT", help="Hub URL (default: the public Hugging Face hub)."),
    ] = None,
    token_env: Annotated[
        str, typer.Option(help="Environment variable holding a hub token, if one is needed.")
    ] = "HF_TOKEN",
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Download a GGUF model file from a Hugging Face-style hub (sha256-checked) into the
    model cache, and print the `local:` URL to bind a role to."""
    import os

    from footnote.models.hub import pull_gguf
    from footnote.models.weights import default_cache_dir

    with _workspace(workspace) as ws:
        cache = default_cache_dir(ws.settings.models.cache_dir)
        pulled = pull_gguf(
            repo, cache, filename=file, revision=revision, endpoint=endpoint,
            token=os.environ.get(token_env) or None,
            progress=None if as_json else (lambda m: err.print(f"… {escape(m)}")),
        )  # fmt: skip
    data = {"repo": pulled.repo, "file": pulled.filename, "revision": pulled.revision,
            "path": str(pulled.path), "size": pulled.size, "sha256": pulled.sha256,
            "url": pulled.url}  # fmt: skip
    if as_json:
        _print_json(data)
        return
    out.print(f"[green]pulled[/] {escape(pulled.filename)} ({pulled.size / 2**20:.0f} MiB, "
              f"sha256 {pulled.sha256[:12]}…) → {escape(str(pulled.path))}")  # fmt: skip
    out.print("bind a role to it in config.toml:")
    out.print(f'  [models.compose]\n  url = "{escape(pulled.url)}"')
