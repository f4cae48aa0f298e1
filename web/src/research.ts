// The research form: a question becomes a proposed outline the analyst edits (section titles,
// what each must answer, remove a section) and confirms; then the run streams its progress per
// sub-question and the brief is shown (Markdown from the API). The review page is separate.

import { api } from "./api";
import { h, mount } from "./dom";
import { renderMarkdown } from "./markdown";
import { followStream } from "./sse";
import { t } from "./i18n";
import type { OutlineItemInfo, ResearchInfo } from "./types";

const TEMPLATES = ["", "players", "market_size", "regulation", "trends", "literature_review"];

export function renderResearch(main: HTMLElement): void {
  const question = h("textarea", { id: "research-question", rows: 3, required: true, "aria-label": t("researchQuestion") });
  const template = h("select", { id: "research-template", "aria-label": t("researchTemplate") },
    ...TEMPLATES.map((k) => h("option", { value: k }, k ? templateName(k) : t("researchTemplateAuto"))));
  const web = h("input", { type: "checkbox", id: "research-web", checked: true });
  const status = h("p", { class: "muted", role: "status", "aria-live": "polite" });
  const outline = h("div", { id: "research-outline" });
  const result = h("div", { id: "research-result", class: "research-brief" });
  const form = h(
    "form",
    { class: "research-form", onsubmit: (e: SubmitEvent) => { e.preventDefault(); void propose(); } },
    h("label", { for: "research-question" }, t("researchQuestion")), question,
    h("div", { class: "research-options" },
      h("label", {}, t("researchTemplate"), " ", template),
      h("label", {}, web, " ", t("researchWeb"))),
    h("button", { type: "submit", class: "primary", id: "research-propose" }, t("researchPropose")),
  );
  mount(main, h("section", { class: "research" }, h("h1", {}, t("navResearch")), form, status, outline, result));

  async function propose(): Promise<void> {
    status.textContent = t("loading");
    try {
      const run = await api.proposeResearch({ question: question.value, template: template.value || null, web: web.checked });
      status.textContent = t("researchConfirmHint");
      showOutline(run);
    } catch (err) {
      status.textContent = (err as Error).message;
    }
  }

  function showOutline(run: ResearchInfo): void {
    const items = run.outline.items.map((item) => ({ item, keep: true }));
    const rows = items.map((row) => {
      const title = h("input", { value: row.item.title, "aria-label": t("researchSectionTitle") });
      const asks = h("textarea", { rows: 2, "aria-label": t("researchSectionAsks") }, row.item.asks);
      const keep = h("input", { type: "checkbox", checked: true, "aria-label": t("researchKeep") });
      title.addEventListener("input", () => (row.item = { ...row.item, title: title.value }));
      asks.addEventListener("input", () => (row.item = { ...row.item, asks: asks.value }));
      keep.addEventListener("change", () => (row.keep = keep.checked));
      return h("li", { class: "outline-item" }, keep, title, asks, h("small", { class: "muted" }, standard(row.item)));
    });
    const confirm = h("button", { class: "primary", id: "research-confirm" }, t("researchConfirm"));
    confirm.addEventListener("click", () => {
      confirm.disabled = true;
      void start(run.id, items.filter((r) => r.keep).map((r) => r.item));
    });
    mount(outline, h("h2", {}, t("researchOutline"), ` (${templateName(run.outline.template)})`), h("ol", {}, ...rows), confirm);
  }

  async function start(id: string, items: OutlineItemInfo[]): Promise<void> {
    const progress = h("ul", { id: "research-progress", class: "muted" });
    mount(result, progress);
    const run = await api.startResearch(id, { items });
    await followStream(run.stream_url, {
      terminal: ["done"],
      onEvent: (ev) => {
        const data = ev.data as Record<string, any>;
        if (ev.type === "subquestion_stop") progress.append(h("li", {}, `${data.sub_question_id}: ${data.stop_reason} (${data.cards})`));
        else if (ev.type === "conflict") progress.append(h("li", {}, `${t("researchConflict")}: ${data.conflict.metric}`));
      },
    });
    const markdown = await api.briefMarkdown(id);
    const brief = h("article", { class: "markdown" });
    brief.innerHTML = renderMarkdown(markdown);
    result.append(h("p", {}, h("a", { class: "btn primary", href: `#/review/${encodeURIComponent(id)}`, id: "research-review" }, t("researchReview"))), brief);
    status.textContent = t("researchDone");
  }
}

/** A report kind (`market_size`) in the interface language. */
export function templateName(kind: string): string {
  return kind && TEMPLATES.includes(kind) ? t(`template_${kind}` as never) : kind.replace(/_/g, " ");
}

function standard(item: OutlineItemInfo): string {
  const s = item.standard;
  const parts = [`≥${s.min_independent}`];
  if (s.primary_required) parts.push(t("researchPrimary"));
  parts.push(s.web ? "web" : t("researchLibraryOnly"));
  return parts.join(" · ");
}
