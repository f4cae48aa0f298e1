// One assistant turn: pipeline progress, the streamed answer with footnote markers, the
// evidence board beside it, and feedback. Fed by SSE events, or by a stored answer.

import { api } from "./api";
import { h, icon, ICONS, mount } from "./dom";
import { t, statusText, type Key } from "./i18n";
import { renderInline, renderMarkdown } from "./markdown";
import { openDocument } from "./pdfviewer";
import type { AnswerInfo, CitationInfo, FoundPassage, SentenceInfo } from "./types";
import { errorText, locator, spinner, toast, verdictChip } from "./ui";

// -- normalising: events carry dataclass dicts (evidence_id, marked_insufficient, Hit) --------

type Loose = Record<string, unknown>;

export function normCitation(raw: Loose): CitationInfo {
  return {
    id: String(raw.id ?? raw.evidence_id ?? ""),
    page: (raw.page as number | null) ?? null,
    section: (raw.section as string[]) ?? [],
    quote: String(raw.quote ?? ""),
    verdict: (raw.verdict as CitationInfo["verdict"]) ?? "unsupported",
    relevance: Number(raw.relevance ?? 0),
    checks: (raw.checks as Record<string, string>) ?? {},
  };
}

export function normSentence(s: Loose): SentenceInfo {
  return {
    text: String(s.text ?? ""),
    citations: ((s.citations as Loose[]) ?? []).map(normCitation),
    factual: (s.factual as boolean) ?? true,
    insufficient: Boolean(s.insufficient ?? s.marked_insufficient),
  };
}

/** A passage of an `evidence` event: shown to the composer, not yet checked. */
export function normPassage(raw: Loose): FoundPassage {
  return {
    id: String(raw.id ?? ""),
    title: String(raw.title ?? ""),
    page: Number(raw.page ?? 0),
    section: (raw.section as string[]) ?? [],
    text: String(raw.text ?? ""),
    relevance: Number(raw.relevance ?? 0),
  };
}

export function normAnswer(raw: Loose): AnswerInfo {
  const sentences = ((raw.sentences as Loose[]) ?? []).map(normSentence);
  const nearest = ((raw.nearest as Loose[]) ?? []).map((n) => {
    const block = (n.block as Loose | undefined) ?? n;
    return {
      id: String(block.id ?? ""),
      page: Number(block.page ?? 0),
      section: ((block.section ?? block.section_path) as string[]) ?? [],
      text: String(block.text ?? "").slice(0, 300),
    };
  });
  return {
    run_id: (raw.run_id as string) ?? null,
    question: String(raw.question ?? ""),
    status: (raw.status as AnswerInfo["status"]) ?? "answered",
    answer: String(raw.answer ?? sentences.map((s) => s.text).join(" ")),
    sentences,
    support_score: Number(raw.support_score ?? 0),
    reason: (raw.reason as string) ?? null,
    evidence_board: ((raw.evidence_board as Loose[]) ?? []).map(normCitation),
    nearest,
  };
}

// -- the footnote tooltip (one for the page) --------------------------------------------------

let tip: HTMLElement | null = null;

function showTip(marker: HTMLElement, c: CitationInfo): void {
  tip ??= document.body.appendChild(h("div", { id: "fn-tip", role: "tooltip", class: "fn-tip" }));
  mount(
    tip,
    h("div", { class: "fn-tip-head" }, verdictChip(c.verdict), h("span", { class: "muted small" }, locator(c.page, c.section))),
    h("blockquote", { class: "quote" }, c.quote || "…"),
  );
  tip.hidden = false;
  marker.setAttribute("aria-describedby", "fn-tip");
  const r = marker.getBoundingClientRect();
  const width = Math.min(360, window.innerWidth - 16);
  tip.style.width = `${width}px`;
  const left = Math.max(8, Math.min(window.innerWidth - width - 8, r.left + r.width / 2 - width / 2));
  tip.style.left = `${left + window.scrollX}px`;
  const below = r.bottom + 8;
  tip.style.top = `${below + window.scrollY}px`;
  const tipHeight = tip.offsetHeight;
  if (below + tipHeight > window.innerHeight && r.top - tipHeight - 8 > 0) {
    tip.style.top = `${r.top - tipHeight - 8 + window.scrollY}px`;
  }
}

function hideTip(marker?: HTMLElement): void {
  if (tip) tip.hidden = true;
  marker?.removeAttribute("aria-describedby");
}

document.addEventListener("keydown", (e) => {
  if (e.key === "Escape") hideTip();
});

function scoreFill(score: number): HTMLElement {
  const fill = h("div", { class: `score-fill${score < 30 ? " low" : score < 60 ? " mid" : ""}` });
  fill.style.width = `${Math.max(2, score)}%`;
  return fill;
}

// -- the view ---------------------------------------------------------------------------------

interface Step {
  stage: string;
  message: string;
  el: HTMLElement;
}

export class AnswerView {
  readonly el: HTMLElement;
  private body: HTMLElement;
  private board: HTMLElement;
  private progress: HTMLElement;
  private draftBox: HTMLDetailsElement;
  private draftText = "";
  private draftEl: HTMLElement;
  private feedbackEl: HTMLElement;
  /** The rating given before (a stored reply): shown pressed after a reload. */
  storedFeedback: { rating: "up" | "down"; comment: string } | null = null;
  private steps: Step[] = [];
  private sentences: SentenceInfo[] = [];
  /** Sentences come as typed `sentence` events (each final once sent): the `answer_delta` and
   * `citation` events that repeat them are then not read. */
  private typedSentences = false;
  private found: FoundPassage[] = [];
  private openText = "";
  private final: AnswerInfo | null = null;
  private running = false;
  runId: string | null = null;
  private readonly uid = Math.random().toString(36).slice(2, 8);
  /** The reply message this answer fills (feedback is about it). */
  messageId: string | null = null;

  constructor(runId: string | null, messageId: string | null = null) {
    this.runId = runId;
    this.messageId = messageId;
    this.progress = h("ol", { class: "progress", "aria-live": "polite", "aria-label": t("working") });
    this.draftEl = h("div", { class: "draft-text" });
    // unchecked model text (an attach-mode draft, agent thoughts): labelled as such while it
    // streams, collapsed and marked once the checked answer arrives; never part of the answer
    this.draftBox = h(
      "details",
      { class: "draft unchecked", hidden: true, "data-testid": "unchecked-draft" },
      h("summary", {}, t("drafting")),
      this.draftEl,
    );
    this.body = h("div", { class: "answer-body", "data-testid": "answer" });
    this.feedbackEl = h("div", { class: "feedback" });
    this.board = h("aside", { class: "board", "aria-label": t("evidenceBoard"), hidden: true });
    this.el = h(
      "article",
      { class: "turn assistant", "aria-label": t("assistant") },
      h("div", { class: "answer-col" }, this.progress, this.draftBox, this.body, this.feedbackEl),
      this.board,
    );
  }

  /** Feed one SSE event. */
  handle(type: string, data: Loose): void {
    switch (type) {
      case "status":
        this.running = true;
        this.addStep(String(data.stage ?? ""), String(data.message ?? ""));
        break;
      case "thinking":
        this.draftText += String(data.text ?? "");
        this.draftBox.hidden = false;
        this.draftEl.innerHTML = renderMarkdown(this.draftText);
        break;
      case "evidence":
        this.found = ((data.passages as Loose[]) ?? []).map(normPassage);
        this.renderFound();
        break;
      case "sentence": {
        // a checked sentence, final: the answer keeps it at this index
        this.typedSentences = true;
        const i = Number(data.index ?? this.sentences.length);
        while (this.sentences.length < i) this.sentences.push({ text: "", citations: [] });
        this.sentences[i] = normSentence((data.sentence as Loose) ?? {});
        this.renderBody();
        break;
      }
      case "answer_delta":
        if (this.typedSentences) break;
        this.openText += String(data.text ?? "");
        this.renderBody();
        break;
      case "citation": {
        if (this.typedSentences) break;
        const i = Number(data.sentence ?? 0);
        while (this.sentences.length <= i) {
          this.sentences.push({ text: this.sentences.length === i ? this.openText.trim() : "", citations: [] });
          if (this.sentences.length - 1 === i) this.openText = "";
        }
        this.sentences[i].citations.push(normCitation((data.citation as Loose) ?? {}));
        this.renderBody();
        break;
      }
      case "final":
        this.setFinal(normAnswer(((data.answer as Loose) ?? data) as Loose));
        break;
      case "error":
        if (data.code === "cancelled") this.markStopped();
        else this.body.appendChild(h("p", { class: "error", role: "alert" }, `${t("errorPrefix")}: ${String(data.message ?? data.code ?? "")}`));
        break;
      case "done":
        this.finishSteps();
        break;
      default:
        break;
    }
  }

  setFinal(answer: AnswerInfo): void {
    this.final = answer;
    this.settleDraft();
    this.runId ??= answer.run_id ?? null;
    this.sentences = answer.sentences;
    this.openText = "";
    this.finishSteps();
    this.renderBody();
    this.renderBoard();
    this.renderFeedback();
  }

  /** The draft box once the checked answer is in: closed, and saying it was not checked. */
  private settleDraft(): void {
    this.draftBox.open = false;
    this.draftBox.classList.add("settled");
    const summary = this.draftBox.querySelector("summary");
    if (summary) summary.textContent = t("draftUnchecked");
  }

  markStopped(): void {
    this.finishSteps();
    if (!this.final && !this.body.querySelector(".stopped")) this.body.appendChild(h("p", { class: "muted stopped" }, t("stopped")));
  }

  setReconnecting(down: boolean): void {
    this.el.classList.toggle("reconnecting", down);
    let note = this.el.querySelector<HTMLElement>(".reconnect-note");
    if (down && !note) {
      note = h("p", { class: "reconnect-note", role: "status" }, spinner(), t("reconnecting"));
      this.progress.after(note);
    } else if (!down) note?.remove();
  }

  private addStep(stage: string, message: string): void {
    if (this.steps.at(-1)?.stage === "send") this.steps.pop()!.el.remove(); // the "working…" placeholder
    const last = this.steps.at(-1);
    if (last) last.el.classList.replace("active", "done");
    if (last && last.stage === stage) last.el.remove();
    const el = h("li", { class: "step active", "data-stage": stage }, spinner(), h("span", {}, statusText(stage, message)));
    this.progress.appendChild(el);
    this.steps.push({ stage, message, el });
  }

  private finishSteps(): void {
    this.running = false;
    for (const s of this.steps) s.el.classList.replace("active", "done");
    this.progress.classList.add("finished");
  }

  /** Footnote numbers: evidence ids in order of first citation. */
  private numbering(): Map<string, number> {
    const numbers = new Map<string, number>();
    for (const s of this.sentences) for (const c of s.citations) if (!numbers.has(c.id)) numbers.set(c.id, numbers.size + 1);
    return numbers;
  }

  private renderBody(): void {
    const numbers = this.numbering();
    const parts: HTMLElement[] = [];
    const answer = this.final;
    if (answer && answer.status !== "answered") {
      parts.push(h("p", { class: `refusal status-${answer.status}` }, h("strong", {}, t(`status_${answer.status}` as Key)), answer.reason ? ` — ${answer.reason}` : ""));
    }
    const para = h("div", { class: "answer-text" });
    for (const [i, s] of this.sentences.entries()) para.appendChild(this.sentenceEl(s, i, numbers));
    if (this.openText.trim()) para.appendChild(h("span", { class: "sentence streaming" }, this.openText));
    if (this.running && !answer) para.appendChild(h("span", { class: "caret", "aria-hidden": "true" }));
    parts.push(para);
    mount(this.body, parts);
  }

  private sentenceEl(s: SentenceInfo, i: number, numbers: Map<string, number>): HTMLElement {
    const block = /```|\$\$|\\\[|^\s*[-*] |^\s*\d+\. /m.test(s.text);
    const el = h(block ? "div" : "span", { class: `sentence${s.insufficient ? " insufficient" : ""}`, "data-sentence": i });
    const text = h(block ? "div" : "span", {});
    text.innerHTML = block ? renderMarkdown(s.text) : renderInline(s.text);
    el.appendChild(text);
    const seen = new Set<string>();
    for (const c of s.citations) {
      if (seen.has(c.id)) continue;
      seen.add(c.id);
      el.appendChild(this.marker(c, numbers.get(c.id) ?? 0));
    }
    if (s.insufficient) el.appendChild(h("span", { class: "chip verdict verdict-weak small" }, t("insufficient")));
    el.appendChild(document.createTextNode(" "));
    return el;
  }

  private marker(c: CitationInfo, n: number): HTMLElement {
    const button = h(
      "button",
      {
        class: `fn-marker verdict-${c.verdict}`,
        type: "button",
        "data-evidence": c.id,
        "aria-label": `${t("footnote", { n })}: ${t(`verdict_${c.verdict}` as Key)}, ${locator(c.page, c.section)}`,
        onclick: () => {
          hideTip(button);
          openDocument({ evidenceId: c.id, verdict: c.verdict, quote: c.quote });
        },
      },
      String(n),
    );
    button.addEventListener("mouseenter", () => showTip(button, c));
    // Keyboard focus shows the tip; focus given back after a mouse click does not.
    button.addEventListener("focus", () => button.matches(":focus-visible") && showTip(button, c));
    button.addEventListener("mouseleave", () => hideTip(button));
    button.addEventListener("blur", () => hideTip(button));
    return h("sup", {}, button);
  }

  /** The board before the answer: the passages the composer was shown, marked unchecked. */
  private renderFound(): void {
    if (this.final || !this.found.length) return;
    const cards = this.found.map((p) =>
      h(
        "li",
        { class: "passage", "data-evidence": p.id },
        h("div", { class: "evidence-meta muted small" }, [p.section[0] === p.title ? "" : p.title, locator(p.page, p.section)].filter(Boolean).join(" · ")),
        h("blockquote", { class: "quote" }, p.text),
        p.page ? h("button", { class: "page-link", onclick: () => openDocument({ evidenceId: p.id, quote: p.text }) }, icon(ICONS.page), t("pageN", { n: p.page })) : null,
      ),
    );
    mount(
      this.board,
      h("header", { class: "board-head" }, h("h3", {}, t("evidenceFound")), h("span", { class: "chip small" }, String(this.found.length))),
      h("p", { class: "muted small" }, t("notCheckedYet")),
      h("ol", { class: "evidence-list", "data-testid": "evidence-found" }, cards),
    );
    this.board.hidden = false;
  }

  private renderBoard(): void {
    const answer = this.final;
    if (!answer) return;
    const numbers = this.numbering();
    const byId = new Map<string, CitationInfo>();
    for (const s of answer.sentences) for (const c of s.citations) if (!byId.has(c.id)) byId.set(c.id, c);
    for (const c of answer.evidence_board) if (!byId.has(c.id)) byId.set(c.id, c);
    const cards = [...byId.values()].map((c) => this.evidenceCard(c, numbers.get(c.id)));
    const score = Math.round(answer.support_score * 100);
    const nearest = answer.status !== "answered" && answer.nearest.length
      ? h(
          "section",
          { class: "nearest" },
          h("h3", {}, t("nearest")),
          answer.nearest.map((n) =>
            h(
              "div",
              { class: "evidence" },
              h("div", { class: "evidence-meta muted small" }, locator(n.page, n.section)),
              h("blockquote", { class: "quote" }, n.text),
              h("button", { class: "page-link", onclick: () => openDocument({ evidenceId: n.id, quote: n.text }) }, t("openAtPage", { n: n.page })),
            ),
          ),
        )
      : null;
    mount(
      this.board,
      h(
        "header",
        { class: "board-head" },
        h("h3", {}, t("evidenceBoard")),
        h("span", { class: `chip status status-${answer.status}` }, t(`status_${answer.status}` as Key)),
        h(
          "div",
          { class: "score", title: t("supportHelp") },
          h("span", { class: "score-label", id: `score-${this.uid}` }, t("supportScore")),
          h(
            "div",
            { class: "score-bar", role: "meter", "aria-valuemin": "0", "aria-valuemax": "100", "aria-valuenow": String(score), "aria-labelledby": `score-${this.uid}` },
            scoreFill(score),
          ),
          h("span", { class: "score-value", "data-testid": "support-score" }, `${score}%`),
        ),
      ),
      cards.length ? h("ol", { class: "evidence-list" }, cards) : null,
      nearest,
    );
    this.board.hidden = !cards.length && !nearest && answer.status === "answered";
  }

  private evidenceCard(c: CitationInfo, n: number | undefined): HTMLElement {
    return h(
      "li",
      { class: `evidence verdict-edge-${c.verdict}`, "data-evidence": c.id },
      h("div", { class: "evidence-head" }, n ? h("span", { class: "fn-num", "aria-hidden": "true" }, String(n)) : null, verdictChip(c.verdict), h("span", { class: "muted small" }, t("relevance", { n: c.relevance.toFixed(2) }))),
      h("blockquote", { class: "quote" }, c.quote || "…"),
      h(
        "div",
        { class: "evidence-foot" },
        h("span", { class: "muted small section-path" }, (c.section.length ? c.section.join(" › ") : t("sectionUnknown"))),
        c.page
          ? h(
              "button",
              { class: "page-link", "aria-label": `${n ? t("footnote", { n }) + ": " : ""}${t("openAtPage", { n: c.page })}`, onclick: () => openDocument({ evidenceId: c.id, verdict: c.verdict, quote: c.quote }) },
              icon(ICONS.page),
              t("pageN", { n: c.page }),
            )
          : null,
      ),
    );
  }

  private renderFeedback(): void {
    const ref = { messageId: this.messageId, runId: this.runId };
    if (!ref.messageId && !ref.runId) return;
    const comment = h("textarea", { class: "input", rows: "2", "aria-label": t("feedbackComment"), placeholder: t("feedbackComment") });
    let rating: 1 | -1 | 0 = 0;
    const send = async (r: 1 | -1, text: string) => {
      try {
        await api.feedback(ref, r === 1 ? "up" : "down", text);
        return true;
      } catch (err) {
        toast(errorText(err), "error");
        return false;
      }
    };
    const up = h("button", { class: "icon-btn thumb", "aria-label": t("helpful"), title: t("helpful"), "aria-pressed": "false" }, icon(ICONS.up));
    const down = h("button", { class: "icon-btn thumb", "aria-label": t("notHelpful"), title: t("notHelpful"), "aria-pressed": "false" }, icon(ICONS.down));
    const form = h(
      "form",
      { class: "feedback-form", hidden: true },
      comment,
      h("button", { class: "btn small", type: "submit" }, t("sendFeedback")),
    );
    const thanks = h("span", { class: "muted small", role: "status" });
    const choose = async (r: 1 | -1) => {
      rating = r;
      up.setAttribute("aria-pressed", String(r === 1));
      down.setAttribute("aria-pressed", String(r === -1));
      if (await send(r, "")) {
        form.hidden = false;
        thanks.textContent = t("feedbackThanks");
        comment.focus();
      }
    };
    up.addEventListener("click", () => void choose(1));
    down.addEventListener("click", () => void choose(-1));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (rating === 0) return;
      if (await send(rating, comment.value.trim())) {
        form.hidden = true;
        thanks.textContent = t("feedbackThanks");
      }
    });
    const before = this.storedFeedback;
    if (before) {
      rating = before.rating === "up" ? 1 : -1;
      up.setAttribute("aria-pressed", String(rating === 1));
      down.setAttribute("aria-pressed", String(rating === -1));
      thanks.textContent = t("feedbackRecorded");
      comment.value = before.comment;
    }
    mount(this.feedbackEl, h("div", { class: "row" }, up, down, thanks), form);
  }

  /** A stored answer (a reply message of the conversation). */
  static fromStored(answer: AnswerInfo, messageId: string | null, runId: string | null, feedback?: { rating: "up" | "down"; comment: string } | null): AnswerView {
    const view = new AnswerView(runId, messageId);
    view.storedFeedback = feedback ?? null;
    view.setFinal(answer);
    return view;
  }
}
