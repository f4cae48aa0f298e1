// The research page (#/research, #/research/<run>): a question, its report kind, a budget and
// the sources to draw on (papers picked from the library; web search only offered when the
// server has a provider) become a proposed outline the analyst edits and confirms; the run is
// then followed live per sub-question, and the brief links into Review. Beside it, the
// user's own briefs, running and past.

import { api } from "./api";
import { h, mount } from "./dom";
import { t, type Key } from "./i18n";
import { renderMarkdown } from "./markdown";
import { FINISHED, researchApi, UNDER_WAY, type ResearchChoices, type ResearchRun } from "./research_api";
import { LiveView } from "./research_live";
import { outlineEditor } from "./research_outline";
import { followStream } from "./sse";
import type { SourceInfo } from "./types";
import { errorText } from "./ui";

const TEMPLATES = ["", "players", "market_size", "regulation", "trends", "literature_review"];
const STATES = ["outline_proposed", "outline_confirmed", "running", "completed", "wrapped_up", "failed", "cancelled", "aborted"];

/** A report kind (`market_size`) in the interface language. */
export function templateName(kind: string): string {
  return kind && TEMPLATES.includes(kind) ? t(`template_${kind}` as Key) : kind.replace(/_/g, " ");
}

function stateText(state: string): string {
  return STATES.includes(state) ? t(`researchState_${state}` as Key) : state;
}

function stateChip(state: string): HTMLElement {
  return h("span", { class: `chip run-state state-${state}` }, stateText(state));
}

function reviewLink(id: string, attrs: Record<string, string> = {}): HTMLElement {
  return h("a", { class: "btn small", href: `#/review/${encodeURIComponent(id)}`, ...attrs }, t("researchReview"));
}

export function renderResearch(main: HTMLElement): void {
  const runId = decodeURIComponent(location.hash.split("/")[2] ?? "");
  const work = h("div", { class: "research-main" });
  const runs = h("ul", { class: "research-runs", id: "research-runs" });
  const page = h("section", { class: "page research", "aria-labelledby": "research-title" },
    h("header", { class: "page-head" }, h("h1", { id: "research-title" }, t("navResearch")), h("p", { class: "meta" }, t("researchIntro"))),
    h("div", { class: "research-layout" }, work,
      h("aside", { class: "card research-side", "aria-labelledby": "research-runs-h" }, h("h2", { id: "research-runs-h" }, t("researchYourBriefs")), runs)));
  mount(main, page);
  void listRuns(runs, runId);
  if (runId) void openRun(work, runId, () => void listRuns(runs, runId));
  else newRunForm(work);
}

async function listRuns(root: HTMLElement, current: string): Promise<void> {
  let all: ResearchRun[];
  try {
    all = await researchApi.runs();
  } catch (err) {
    mount(root, h("li", { class: "error" }, errorText(err)));
    return;
  }
  if (!all.length) {
    mount(root, h("li", { class: "muted" }, t("researchNoBriefs")));
    return;
  }
  mount(root, ...all.map((r) => h("li", { class: "research-run", "data-run": r.id, "aria-current": r.id === current ? "true" : null },
    h("a", { class: "run-question", href: `#/research/${encodeURIComponent(r.id)}` }, r.question),
    h("div", { class: "run-meta" }, stateChip(r.state), h("small", { class: "muted" }, r.created_at.slice(0, 16).replace("T", " ")),
      FINISHED.has(r.state) ? reviewLink(r.id, { class: "page-link review-link" }) : null))));
}

/** The new-run form; drawn at once, its budget hints and source choices filled in once the
 * server said what it offers. */
function newRunForm(work: HTMLElement): void {
  const question = h("textarea", { id: "research-question", class: "input", rows: 3, required: true, "aria-label": t("researchQuestion") });
  const template = h("select", { id: "research-template", class: "input", "aria-label": t("researchTemplate") },
    ...TEMPLATES.map((k) => h("option", { value: k }, k ? templateName(k) : t("researchTemplateAuto"))));
  const tokens = h("input", { id: "research-budget-tokens", class: "input", type: "number", min: 1, step: 1, "aria-describedby": "research-budget-hint" });
  const minutes = h("input", { id: "research-budget-minutes", class: "input", type: "number", min: 0.1, step: "any", "aria-describedby": "research-budget-hint" });
  const hint = h("p", { class: "muted small", id: "research-budget-hint" });
  const sources = h("fieldset", { class: "research-sources" }, h("legend", {}, t("researchSources")), h("p", { class: "muted" }, t("loading")));
  const error = h("p", { class: "error", role: "alert" });
  const button = h("button", { type: "submit", class: "btn primary", id: "research-propose", disabled: true }, t("researchPropose"));
  const form = h("form", { class: "card research-form", "aria-label": t("researchNew") },
    h("label", { class: "field" }, h("span", {}, t("researchQuestion")), question),
    h("div", { class: "research-row" },
      h("label", { class: "field" }, h("span", {}, t("researchTemplate")), template),
      h("label", { class: "field" }, h("span", {}, t("researchBudgetTokens")), tokens),
      h("label", { class: "field" }, h("span", {}, t("researchBudgetMinutes")), minutes)),
    hint, sources, error, h("div", { class: "row end" }, button));
  mount(work, form);
  let chosen: () => string[] | null = () => null;
  let library: SourceInfo[] = [];
  let web: HTMLInputElement | null = null;
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    void propose();
  });
  void (async () => {
    let choices: ResearchChoices;
    try {
      [choices, library] = await Promise.all([researchApi.choices(), api.sources()]);
    } catch (err) {
      error.textContent = errorText(err);
      return;
    }
    library = library.filter((s) => s.status === "ready");
    tokens.placeholder = String(choices.budget_tokens);
    minutes.placeholder = String(choices.budget_minutes);
    hint.textContent = t("researchBudgetHint", { tokens: choices.budget_tokens.toLocaleString(), minutes: choices.budget_minutes });
    const whole = h("input", { type: "radio", name: "research-scope", id: "research-scope-all", value: "all", checked: true });
    const picked = h("input", { type: "radio", name: "research-scope", id: "research-scope-some", value: "some" });
    const boxes = library.map((s) => h("input", { type: "checkbox", value: s.id, class: "paper-pick" }));
    const papers = h("ul", { class: "paper-list", id: "research-papers", hidden: true },
      ...library.map((s, n) => h("li", {}, h("label", {}, boxes[n], " ", s.title || s.filename || s.id))));
    for (const radio of [whole, picked]) radio.addEventListener("change", () => (papers.hidden = !picked.checked));
    chosen = () => (picked.checked ? boxes.filter((b) => b.checked).map((b) => b.value) : null);
    web = choices.web ? h("input", { type: "checkbox", id: "research-web", checked: true }) : null;
    mount(sources, h("legend", {}, t("researchSources")),
      library.length
        ? [h("label", { class: "radio" }, whole, " ", t("researchWholeLibrary", { n: library.length })),
           h("label", { class: "radio" }, picked, " ", t("researchPickPapers")), papers]
        : h("p", { class: "muted" }, t("researchEmptyLibrary")),
      web
        ? h("label", { class: "radio" }, web, " ", t("researchWeb", { providers: choices.web_providers.join(", ") }))
        : h("p", { class: "muted", id: "research-no-web" }, t("researchNoWeb")));
    button.disabled = false;
  })();

  async function propose(): Promise<void> {
    const ids = chosen();
    if (ids && !ids.length) {
      error.textContent = t("researchPickOne");
      return;
    }
    if (!library.length && !web?.checked) {
      error.textContent = t("researchNothingToSearch");
      return;
    }
    error.textContent = "";
    button.disabled = true;
    try {
      const run = await researchApi.propose({
        question: question.value, template: template.value || null, web: web?.checked ?? false,
        budget_tokens: tokens.value ? Number(tokens.value) : null,
        budget_minutes: minutes.value ? Number(minutes.value) : null,
        source_ids: library.length ? ids : [],
      });
      location.hash = `#/research/${encodeURIComponent(run.id)}`;
    } catch (err) {
      error.textContent = errorText(err);
      button.disabled = false;
    }
  }
}

function summary(run: ResearchRun, library: Map<string, string>): HTMLElement {
  const o = run.options;
  const budget = [
    o.budget_tokens ? t("researchTokens", { n: o.budget_tokens.toLocaleString() }) : null,
    o.budget_minutes ? t("researchMinutes", { n: o.budget_minutes }) : null,
  ].filter(Boolean).join(" · ") || t("researchDefaultBudget");
  const ids = o.source_ids;
  const from = ids == null ? t("researchWholeLibraryShort") : ids.length ? ids.map((i) => library.get(i) ?? i).join(", ") : t("researchNoLibrary");
  return h("dl", { class: "research-summary", id: "research-summary" },
    h("dt", {}, t("researchTemplate")), h("dd", {}, templateName(run.outline?.template ?? o.template ?? "")),
    h("dt", {}, t("researchBudget")), h("dd", {}, budget),
    h("dt", {}, t("researchSources")), h("dd", {}, from, o.web ? ` · ${t("researchWebShort")}` : ""));
}

async function openRun(work: HTMLElement, id: string, refreshList: () => void): Promise<void> {
  let run: ResearchRun;
  let library = new Map<string, string>();
  try {
    const [r, sources] = await Promise.all([researchApi.run(id), api.sources().catch(() => [] as SourceInfo[])]);
    run = r;
    library = new Map(sources.map((s) => [s.id, s.title || s.filename || s.id]));
  } catch (err) {
    mount(work, h("p", { class: "error" }, errorText(err)), h("a", { href: "#/research" }, t("researchNew")));
    return;
  }
  const head = h("div", { class: "card research-head" },
    h("div", { class: "research-head-top" }, h("h2", { id: "research-run-question" }, run.question), stateChip(run.state)),
    summary(run, library),
    h("a", { class: "page-link", href: "#/research" }, t("researchNew")));
  const body = h("div", { class: "research-body" });
  const result = h("div", { id: "research-result", class: "research-brief" });
  mount(work, head, body, result);

  if (run.state === "outline_proposed" && run.outline) {
    const card = h("section", { class: "card research-outline", id: "research-outline", "aria-labelledby": "research-outline-h" });
    const editor = h("div");
    card.append(h("h2", { id: "research-outline-h" }, t("researchOutline"), ` (${templateName(run.outline.template)})`),
      h("p", { class: "muted", role: "status" }, t("researchConfirmHint")), editor);
    mount(body, card);
    outlineEditor(editor, run.outline.items, {
      web: Boolean(run.options.web),
      onConfirm: (items) => void (async () => {
        try {
          const started = await researchApi.start(id, items);
          refreshList();
          await follow(started);
        } catch (err) {
          editor.append(h("p", { class: "error", role: "alert" }, errorText(err)));
        }
      })(),
    });
    return;
  }
  await follow(run);

  async function follow(current: ResearchRun): Promise<void> {
    const live = new LiveView();
    mount(body, live.root);
    let brief = FINISHED.has(current.state);
    const ended = await followStream(current.stream_url, {
      terminal: ["done"],
      onEvent: (ev) => {
        if (ev.type === "brief") brief = true;
        live.onEvent(ev.type, (ev.data ?? {}) as Record<string, any>);
      },
    }).catch(() => "failed" as const);
    const after = await researchApi.run(id).catch(() => current);
    mount(head.querySelector(".research-head-top") as HTMLElement, h("h2", { id: "research-run-question" }, after.question), stateChip(after.state));
    refreshList();
    if (!brief || !FINISHED.has(after.state)) {
      live.finish(ended === "failed" && UNDER_WAY.has(after.state) ? t("researchLost") : t("researchNoBrief", { state: stateText(after.state) }), true);
      return;
    }
    const markdown = await api.briefMarkdown(id);
    const article = h("article", { class: "markdown card" });
    article.innerHTML = renderMarkdown(markdown);
    head.append(h("p", { class: "research-done" }, h("span", {}, t("researchDone")), " ", reviewLink(id, { id: "research-review", class: "btn primary" })));
    mount(result, article);
  }
}
