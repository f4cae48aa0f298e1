// The live view of a research run, drawn from its typed events: one card per sub-question
// (waiting, investigating, or stopped with its reason; the evidence cards found; its budget
// used), the run's budget, the stage it is at, conflicts, and each section's coverage once
// the checklist is known. Replaying a finished run's stream draws the same view.

import { h, mount } from "./dom";
import { t, type Key } from "./i18n";
import type { BudgetInfo, SubQuestionInfo } from "./research_api";
import { spinner } from "./ui";

interface SubQuestionView {
  sq: SubQuestionInfo;
  title: string;
  asks: string;
  state: "waiting" | "running" | "stopped";
  cards: number;
  stop: string;
  budget: BudgetInfo | null;
  coverage: string;
  el: HTMLElement;
}

const RESOURCES = ["tokens", "calls", "searches", "fetches"] as const;

const STOPS = ["done", "budget_tokens", "budget_calls", "budget_time", "budget_searches", "budget_fetches"];
const COVERAGE = ["covered", "uncovered", "conflicting"];

/** A stop reason (`done`, `budget_tokens`, …) in words. */
export function stopText(reason: string): string {
  return STOPS.includes(reason) ? t(`researchStop_${reason}` as Key) : reason.replace(/_/g, " ");
}

function coverageText(state: string): string {
  return COVERAGE.includes(state) ? t(`coverage_${state}` as Key) : state;
}

function used(b: BudgetInfo | null): string {
  if (!b) return t("researchNoUseYet");
  const parts: string[] = [];
  for (const r of RESOURCES) {
    const u = Math.round(b.used[r] ?? 0);
    const limit = b.limits[r];
    if (!u && r !== "tokens") continue;
    parts.push(t(`researchUse_${r}` as Key, { n: u.toLocaleString(), of: limit == null ? "∞" : Math.round(limit).toLocaleString() }));
  }
  return parts.join(" · ");
}

function meter(fraction: number, label: string): HTMLElement {
  const pct = Math.max(0, Math.min(100, Math.round(fraction * 100)));
  return h("div", { class: "meter", role: "meter", "aria-valuemin": 0, "aria-valuemax": 100, "aria-valuenow": pct, "aria-label": label },
    h("span", { class: pct >= 100 ? "meter-fill full" : "meter-fill", style: `width: ${pct}%` }));
}

export class LiveView {
  readonly root: HTMLElement;
  private readonly stage = h("p", { class: "research-stage", id: "research-stage", role: "status", "aria-live": "polite" });
  private readonly runBudget = h("div", { class: "research-run-budget", id: "research-run-budget" });
  private readonly grid = h("ol", { class: "sq-grid", id: "research-progress", "aria-label": t("researchLiveTitle") });
  private readonly notes = h("ul", { class: "research-notes", id: "research-notes" });
  private readonly views = new Map<string, SubQuestionView>();
  private readonly items = new Map<string, { title: string; asks: string }>();
  private finished = false;
  private lastRun: BudgetInfo | null = null;

  constructor() {
    this.root = h("section", { class: "card research-live", "aria-labelledby": "research-live-h" },
      h("h2", { id: "research-live-h" }, t("researchLiveTitle")), this.stage, this.runBudget, this.grid, this.notes);
    this.stage.append(spinner(), h("span", {}, t("researchStarting")));
  }

  /** Apply one event of the run's stream. */
  onEvent(type: string, data: Record<string, any>): void {
    if (type === "outline") {
      for (const i of data.outline.items as { id: string; title: string; asks: string }[]) this.items.set(i.id, i);
    } else if (type === "plan") {
      for (const sq of data.sub_questions as SubQuestionInfo[]) this.add(sq);
    } else if (type === "subquestion_start") {
      const v = this.add(data.sub_question as SubQuestionInfo);
      v.state = "running";
      this.draw(v);
    } else if (type === "card") {
      const v = this.views.get(data.card.sub_question);
      if (v) { v.cards += 1; this.draw(v); }
    } else if (type === "subquestion_stop") {
      const v = this.views.get(data.sub_question_id);
      if (v) {
        v.state = "stopped";
        v.stop = data.stop_reason;
        v.cards = data.cards;
        if (data.used && Object.keys(data.used).length) v.budget = { ...(v.budget ?? { scope: v.sq.id, limits: {}, fraction: 0, warning: false, exhausted: null }), used: data.used };
        this.draw(v);
      }
    } else if (type === "budget") {
      const b = data as BudgetInfo;
      if (b.scope === "run") this.drawRunBudget(b);
      else {
        const v = this.views.get(b.scope);
        if (v) { v.budget = b; this.draw(v); }
      }
    } else if (type === "status") {
      if (!this.finished) mount(this.stage, spinner(), h("span", {}, String(data.message)));
    } else if (type === "conflict") {
      this.notes.append(h("li", { class: "chip warn" }, `${t("researchConflict")}: ${data.conflict.metric}`));
    } else if (type === "checklist") {
      for (const item of data.items as { item_id: string; state: string }[]) {
        for (const v of this.views.values()) if (v.sq.item_id === item.item_id) { v.coverage = item.state; this.draw(v); }
      }
    } else if (type === "brief") {
      this.finish(t("researchLiveDone"));
      if (data.brief?.budget_used) this.drawRunBudget({ ...(this.lastRun ?? { scope: "run", limits: {}, fraction: 0, warning: false, exhausted: null }), used: data.brief.budget_used }, false);
    } else if (type === "error") {
      this.finish(String(data.message ?? t("researchFailed")), true);
    }
  }

  /** The stream ended (or the run stopped) with this message. */
  finish(message: string, failed = false): void {
    this.finished = true;
    mount(this.stage, h("span", { class: failed ? "error" : "" }, message));
  }

  private add(sq: SubQuestionInfo): SubQuestionView {
    let v = this.views.get(sq.id);
    if (v) return v;
    const el = h("li", { class: "sq-card", "data-sq": sq.id });
    const item = this.items.get(sq.item_id);
    v = { sq, title: item?.title || sq.item_id, asks: item?.asks || sq.question, state: "waiting", cards: 0, stop: "", budget: null, coverage: "", el };
    this.views.set(sq.id, v);
    this.grid.append(el);
    this.draw(v);
    return v;
  }

  private drawRunBudget(b: BudgetInfo, withMeter = true): void {
    this.lastRun = b;
    mount(this.runBudget, h("span", { class: "label" }, t("researchRunBudget")), " ", h("span", { class: "sq-use" }, used(b)),
      withMeter ? meter(b.fraction, t("researchRunBudget")) : null,
      b.exhausted ? h("span", { class: "chip warn" }, stopText(b.exhausted === "seconds" ? "budget_time" : `budget_${b.exhausted}`)) : null);
  }

  private draw(v: SubQuestionView): void {
    const state =
      v.state === "running"
        ? h("span", { class: "chip sq-state running" }, spinner(), t("researchInvestigating"))
        : v.state === "stopped"
          ? h("span", { class: `chip sq-state ${v.stop === "done" ? "stop-done" : "stop-budget"}` }, stopText(v.stop))
          : h("span", { class: "chip sq-state" }, t("researchWaiting"));
    mount(
      v.el,
      h("div", { class: "sq-head" }, h("h3", {}, v.title), state),
      h("p", { class: "sq-question muted", title: v.sq.question }, v.asks),
      h("dl", { class: "sq-facts" },
        h("dt", {}, t("researchCardsFound")), h("dd", { class: "sq-cards" }, String(v.cards)),
        h("dt", {}, t("researchBudgetUsed")), h("dd", { class: "sq-use" }, used(v.budget)),
        v.coverage ? [h("dt", {}, t("researchCoverage")), h("dd", {}, h("span", { class: `chip coverage-${v.coverage}` }, coverageText(v.coverage)))] : null),
      v.budget && v.state === "running" ? meter(v.budget.fraction, t("researchBudgetUsed")) : null,
    );
  }
}
