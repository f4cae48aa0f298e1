// The graph tab, laid out like the other pages: pick a graph, ask a question; while the run
// works its stages appear as they stream (understanding, names recognised, query written,
// checked, ran, answer checked). Then the answer's sentences, each with a footnote per cited
// result row, sit beside the rows table (a row's id is its footnote's target), and below them
// the Cypher that ran with its parameter values. Nothing about a query is shown before one ran.
// Clarifying questions list the readings; refusals say why.
// The question is POSTed to /v1/graph/ask; the run is then followed on its replayable stream.

import { authHeaders, loginRequired } from "./auth";
import { h, mount } from "./dom";
import { t } from "./i18n";
import { followStream } from "./sse";
import { spinner } from "./ui";

interface GraphInfo {
  name: string;
  description: string;
  node_labels: string[];
  restricted: string[];
}

interface GraphSentence {
  text: string;
  rows: string[];
  factual: boolean;
}

interface GraphAnswer {
  status: string;
  text: string;
  sentences: GraphSentence[];
  cypher: string;
  params: Record<string, unknown>;
  reason: string;
  options: string[];
  support: number;
}

async function graphs(): Promise<GraphInfo[]> {
  const response = await fetch("/v1/graphs", { headers: { Accept: "application/json", ...authHeaders() } });
  if (response.status === 401) loginRequired();
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return (await response.json()) as GraphInfo[];
}

async function startAsk(graph: string, question: string): Promise<string> {
  const response = await fetch("/v1/graph/ask", {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream", ...authHeaders() },
    body: JSON.stringify({ graph, question }),
  });
  if (response.status === 401) loginRequired();
  if (!response.ok) {
    let message = `HTTP ${response.status}`;
    try {
      message = ((await response.json()) as { error?: { message?: string } }).error?.message ?? message;
    } catch {
      /* not JSON */
    }
    throw new Error(message);
  }
  const runId = response.headers.get("X-Run-Id") ?? "";
  // the run lives in the server's hub: follow its replayable stream instead of this body
  void response.body?.cancel();
  return runId;
}

export async function renderGraph(main: HTMLElement): Promise<void> {
  const select = h("select", { id: "graph-select", class: "input", "aria-label": t("graphName") });
  const question = h("input", { id: "graph-question", class: "input", type: "text", required: true, "aria-label": t("graphQuestion"), placeholder: t("graphPlaceholder") });
  const button = h("button", { type: "submit", class: "btn primary", id: "graph-ask" }, t("ask"));
  const about = h("p", { class: "meta", id: "graph-about" });
  const progress = h("ol", { class: "progress", id: "graph-progress", "aria-live": "polite", "aria-label": t("graphSteps") });
  const status = h("p", { class: "graph-status", id: "graph-status", role: "status", "aria-live": "polite" });
  const answer = h("div", { id: "graph-answer", class: "graph-answer" });
  const query = h("section", { id: "graph-query", class: "graph-query", hidden: true });
  const table = h("section", { id: "graph-rows", class: "card graph-rows", hidden: true });
  const result = h("div", { class: "graph-result", id: "graph-result", hidden: true },
    h("div", { class: "answer-col graph-answer-col" }, status, answer, query), table);
  const form = h(
    "form",
    { class: "card graph-form", onsubmit: (e: SubmitEvent) => { e.preventDefault(); void ask(); } },
    h("label", { class: "field graph-pick", for: "graph-select" }, h("span", {}, t("graphName")), select),
    h("label", { class: "field graph-ask", for: "graph-question" }, h("span", {}, t("graphQuestion")), question),
    button,
  );
  mount(main, h("section", { class: "page graph", "aria-labelledby": "graph-title" },
    h("header", { class: "page-head" }, h("h1", { id: "graph-title" }, t("navGraph")), about),
    h("p", { class: "muted graph-intro" }, t("graphIntro")), form, progress, result));
  let list: GraphInfo[] = [];
  const describe = (): void => {
    const g = list.find((x) => x.name === select.value);
    about.textContent = g ? g.description || g.node_labels.join(" · ") : "";
  };
  select.addEventListener("change", describe);
  try {
    list = await graphs();
    for (const g of list) select.append(h("option", { value: g.name }, g.name));
    if (!list.length) mount(progress, h("li", { class: "step" }, t("graphNone")));
    describe();
  } catch (err) {
    mount(progress, h("li", { class: "step error" }, (err as Error).message));
  }

  let steps: HTMLElement[] = [];
  function step(text: string, failed = false): void {
    steps.at(-1)?.classList.replace("active", "done");
    const el = h("li", { class: failed ? "step failed" : "step active" }, failed ? null : spinner(), h("span", {}, text));
    progress.append(el);
    steps.push(el);
  }
  function finishSteps(): void {
    for (const el of steps) el.classList.replace("active", "done");
    progress.classList.add("finished");
  }

  async function ask(): Promise<void> {
    if (!select.value || !question.value.trim()) return;
    button.disabled = true;
    steps = [];
    progress.replaceChildren();
    progress.classList.remove("finished");
    result.hidden = true;
    answer.replaceChildren();
    query.replaceChildren();
    query.hidden = true;
    table.replaceChildren();
    table.hidden = true;
    status.replaceChildren();
    let columns: string[] = [];
    let rows: unknown[][] = [];
    let truncated = false;
    try {
      const runId = await startAsk(select.value, question.value);
      await followStream(`/v1/runs/${encodeURIComponent(runId)}/events`, {
        terminal: ["done"],
        onEvent: (ev) => {
          const data = ev.data as Record<string, any>;
          if (ev.type === "status" && data.stage === "understand") {
            step(t("graphStepUnderstand"));
          } else if (ev.type === "entities") {
            const names = ((data.aligned ?? []) as { candidates: { name: string }[] }[])
              .map((a) => a.candidates[0]?.name).filter((n): n is string => !!n);
            const unclear = (data.ambiguous ?? []) as { mention: string }[];
            if (names.length || !unclear.length) step(names.length ? t("graphStepEntities", { names: names.join(", ") }) : t("graphStepNoEntities"));
            for (const a of unclear) step(t("graphStepAmbiguous", { name: a.mention }));
          } else if (ev.type === "cypher") {
            step(data.source === "template" ? t("graphStepTemplate") : t("graphStepWrite", { n: Number(data.attempt) || 1 }));
          } else if (ev.type === "guard") {
            step(data.ok ? t("graphStepChecked") : t("graphStepRejected", { reason: ((data.reasons ?? []) as string[]).join("; ") }), !data.ok);
          } else if (ev.type === "rows") {
            columns = data.columns as string[];
            rows = data.rows as unknown[][];
            truncated = !!data.truncated;
            step(t("graphStepRan", { n: rows.length }));
          } else if (ev.type === "status" && data.stage === "compose") {
            step(t("graphStepCompose"));
          } else if (ev.type === "status" && data.stage === "verify") {
            step(t("graphStepVerify", { message: String(data.message ?? "") }));
          } else if (ev.type === "answer") {
            finishSteps();
            show(data as GraphAnswer, columns, rows, truncated);
          } else if (ev.type === "error") {
            step(`${t("errorPrefix")}: ${data.message ?? ""}`, true);
          }
        },
      });
    } catch (err) {
      step((err as Error).message, true);
    } finally {
      finishSteps();
      button.disabled = false;
    }
  }

  function show(a: GraphAnswer, columns: string[], rows: unknown[][], truncated: boolean): void {
    result.hidden = false;
    const answered = a.status === "answered";
    mount(status, h("span", { class: `chip status-${answered ? "answered" : a.status === "no_rows" ? "no_evidence" : "refused"}` }, answered ? t("status_answered") : a.status),
      answered ? h("span", { class: "muted small" }, `${t("supportScore")} ${a.support.toFixed(2)}`) : null);
    const marks = new Map<string, number>();
    if (answered) {
      const para = h("p", { class: "answer-text graph-text" });
      for (const s of a.sentences) {
        para.append(h("span", { class: s.factual ? "sentence" : "sentence insufficient" }, s.text));
        for (const id of s.rows) {
          if (!marks.has(id)) marks.set(id, marks.size + 1);
          const n = marks.get(id)!;
          para.append(h("sup", {}, h("a", { href: `#${rowAnchor(id)}`, class: "fn-marker footnote-mark", "aria-label": t("footnote", { n }),
            onclick: (e: MouseEvent) => { e.preventDefault(); focusRow(id); } }, `${n}`)));
        }
        para.append(" ");
      }
      mount(answer, para);
    } else {
      const parts: (HTMLElement | string)[] = [h("p", { class: `refusal status-${a.status} graph-text graph-unsure` }, a.reason || a.text)];
      if (a.options.length) parts.push(h("ul", { class: "graph-options" }, ...a.options.map((o) => h("li", {}, o))));
      mount(answer, ...parts);
    }
    if (a.cypher) {
      const params = Object.entries(a.params ?? {});
      mount(query, h("h2", { class: "graph-subhead" }, t("graphCypher")),
        h("pre", { id: "graph-cypher", class: "graph-cypher" }, h("code", {}, a.cypher)),
        params.length
          ? h("dl", { class: "graph-params", id: "graph-params", "aria-label": t("graphParams") },
              ...params.flatMap(([k, v]) => [h("dt", {}, `$${k}`), h("dd", {}, JSON.stringify(v))]))
          : null);
      query.hidden = false;
    }
    if (columns.length) {
      const head = h("tr", {}, h("th", { scope: "col" }, "#"), ...columns.map((c) => h("th", { scope: "col" }, c)));
      const body = rows.map((r, i) => {
        const id = `row:${i}`;
        const mark = marks.get(id);
        return h("tr", { id: rowAnchor(id), class: mark ? "cited" : null },
          h("td", {}, mark ? h("span", { class: "fn-num" }, `${mark}`) : `${i + 1}`), ...r.map((v) => h("td", {}, cell(v))));
      });
      mount(table, h("h2", { class: "graph-subhead" }, t("graphRows", { n: rows.length })),
        h("div", { class: "table-scroll" }, h("table", { class: "data graph-table" }, h("thead", {}, head), h("tbody", {}, ...body))),
        truncated ? h("p", { class: "muted small" }, t("graphTruncated", { n: rows.length })) : null);
      table.hidden = false;
    }
    result.classList.toggle("with-rows", columns.length > 0);
  }
}

function focusRow(id: string): void {
  const row = document.getElementById(rowAnchor(id));
  if (!row) return;
  row.scrollIntoView({ block: "nearest" });
  row.classList.remove("flash");
  void row.offsetWidth;
  row.classList.add("flash");
}

function rowAnchor(id: string): string {
  return `graph-${id.replace(":", "-")}`;
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}
