// The graph tab: pick a graph, ask a question; the answer arrives with a footnote per cited
// result row, the Cypher that ran is shown, and the rows as a table (each row's id is the
// footnote's target). Clarifying questions list the readings; refusals say why.
// The question is POSTed to /v1/graph/ask; the run is then followed on its replayable stream.

import { authHeaders, loginRequired } from "./auth";
import { h, mount } from "./dom";
import { t } from "./i18n";
import { followStream } from "./sse";

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
  const select = h("select", { id: "graph-select", "aria-label": t("graphName") });
  const question = h("input", { id: "graph-question", type: "text", required: true, "aria-label": t("graphQuestion"), placeholder: t("graphPlaceholder") });
  const button = h("button", { type: "submit", class: "btn primary", id: "graph-ask" }, t("ask"));
  const status = h("p", { class: "muted", id: "graph-status", role: "status", "aria-live": "polite" });
  const answer = h("div", { id: "graph-answer", class: "graph-answer" });
  const cypher = h("pre", { id: "graph-cypher", class: "graph-cypher", hidden: true });
  const table = h("div", { id: "graph-rows", class: "graph-rows" });
  const form = h(
    "form",
    { class: "graph-form", onsubmit: (e: SubmitEvent) => { e.preventDefault(); void ask(); } },
    h("label", { for: "graph-select" }, t("graphName")), select,
    h("label", { for: "graph-question" }, t("graphQuestion")), question,
    button,
  );
  mount(main, h("section", { class: "graph" }, h("h1", {}, t("navGraph")), form, status, answer,
    h("h2", { class: "graph-subhead" }, t("graphCypher")), cypher, table));
  try {
    const list = await graphs();
    for (const g of list) select.append(h("option", { value: g.name }, g.name));
    if (!list.length) status.textContent = t("graphNone");
  } catch (err) {
    status.textContent = (err as Error).message;
  }

  async function ask(): Promise<void> {
    if (!select.value || !question.value.trim()) return;
    button.disabled = true;
    answer.replaceChildren();
    table.replaceChildren();
    cypher.hidden = true;
    status.textContent = t("working");
    let columns: string[] = [];
    let rows: unknown[][] = [];
    try {
      const runId = await startAsk(select.value, question.value);
      await followStream(`/v1/runs/${encodeURIComponent(runId)}/events`, {
        terminal: ["done"],
        onEvent: (ev) => {
          const data = ev.data as Record<string, any>;
          if (ev.type === "rows") {
            columns = data.columns as string[];
            rows = data.rows as unknown[][];
          } else if (ev.type === "guard" && data.ok) {
            cypher.textContent = data.cypher as string;
            cypher.hidden = false;
          } else if (ev.type === "answer") {
            show(data as GraphAnswer, columns, rows);
          } else if (ev.type === "error") {
            status.textContent = `${t("errorPrefix")}: ${data.message ?? ""}`;
          }
        },
      });
    } catch (err) {
      status.textContent = (err as Error).message;
    } finally {
      button.disabled = false;
    }
  }

  function show(a: GraphAnswer, columns: string[], rows: unknown[][]): void {
    status.textContent = a.status === "answered" ? `${t("status_answered")} · ${t("supportScore")} ${a.support.toFixed(2)}` : a.reason;
    const marks = new Map<string, number>();
    const para = h("p", { class: "graph-text" });
    if (a.status === "answered") {
      for (const s of a.sentences) {
        para.append(s.text);
        for (const id of s.rows) {
          if (!marks.has(id)) marks.set(id, marks.size + 1);
          const n = marks.get(id)!;
          para.append(h("sup", {}, h("a", { href: `#${rowAnchor(id)}`, class: "footnote-mark", "aria-label": t("footnote", { n }),
            onclick: (e: MouseEvent) => { e.preventDefault(); document.getElementById(rowAnchor(id))?.scrollIntoView({ block: "nearest" }); } }, `[${n}]`)));
        }
        para.append(" ");
      }
      mount(answer, para);
    } else {
      const parts: (HTMLElement | string)[] = [h("p", { class: "graph-text graph-unsure" }, a.reason || a.text)];
      if (a.options.length) parts.push(h("ul", { class: "graph-options" }, ...a.options.map((o) => h("li", {}, o))));
      mount(answer, ...parts);
    }
    if (columns.length) {
      const head = h("tr", {}, h("th", { scope: "col" }, "#"), ...columns.map((c) => h("th", { scope: "col" }, c)));
      const body = rows.map((r, i) => {
        const id = `row:${i}`;
        const mark = marks.get(id);
        return h("tr", { id: rowAnchor(id), class: mark ? "cited" : null },
          h("td", {}, mark ? `[${mark}] ${id}` : id), ...r.map((v) => h("td", {}, cell(v))));
      });
      mount(table, h("h2", { class: "graph-subhead" }, t("graphRows", { n: rows.length })),
        h("table", { class: "graph-table" }, h("thead", {}, head), h("tbody", {}, ...body)));
    }
  }
}

function rowAnchor(id: string): string {
  return `graph-${id.replace(":", "-")}`;
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}
