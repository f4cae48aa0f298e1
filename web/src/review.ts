// The review page (#/review/<run>): the analyst opens each claim (claim → card → snapshot, the
// quoted span highlighted in the saved page text, or the PDF page with the block highlighted),
// approves, edits (the server re-checks the sentence through the verification gate) or rejects
// it, ticks the key figures, resolves the conflicts, decides the origins the merge left
// undecided (the sources' snippets side by side: same origin, independent or secondary reports,
// with a reason) and signs off the exact version. Every action is appended to the run's
// hash-chained log. Keyboard: j/k move, Enter opens, a/e/r
// decide, x ticks, s shows the source, ? lists the keys.

import { api, type ReviewView } from "./api";
import { download } from "./download";
import { h, mount } from "./dom";
import { t } from "./i18n";
import { openDocument } from "./pdfviewer";
import { errorText, toast, verdictChip } from "./ui";

type Claim = ReviewView["sections"][number]["claims"][number];
type Card = ReviewView["cards"][number];
type Conflict = ReviewView["conflicts"][number];
type Origin = ReviewView["origins"][number];
const ORIGIN_DECISIONS = [["same", "reviewOriginSame"], ["independent", "reviewOriginIndependent"], ["secondary", "reviewOriginSecondary"]] as const;

const EXPORTS: [string, string][] = [
  ["markdown", "Markdown"], ["html", "HTML"], ["pdf", "PDF"], ["json", "JSON"], ["bibtex", "BibTeX"], ["csl", "CSL-JSON"],
];

export async function renderReviewList(main: HTMLElement): Promise<void> {
  const runs = await api.researchRuns();
  const done = runs.filter((r) => r.state === "completed" || r.state === "wrapped_up");
  mount(
    main,
    h("section", { class: "review" },
      h("h1", {}, t("reviewTitle")),
      done.length
        ? h("ul", { class: "review-runs" }, ...done.map((r) => h("li", {}, h("a", { href: `#/review/${encodeURIComponent(r.id)}` }, r.question), " ", h("small", { class: "muted" }, r.updated_at.slice(0, 16).replace("T", " ")))))
        : h("p", { class: "muted" }, t("reviewNoRuns"))),
  );
}

export async function renderReview(main: HTMLElement, runId: string): Promise<void> {
  const expanded = new Set<string>();
  const editing = new Set<string>();
  const editResult = new Map<string, { accepted: boolean; verdict: string; reasons: Record<string, string> }>();
  const snapshotShown = new Map<string, string>();
  const snapshots = new Map<string, { text: string; final_url: string; sha256: string; fetched_at: string }>();
  let view: ReviewView = await api.review(runId);
  const pendingSeen = new Set<Promise<void>>();
  let seenRefreshes = 0;
  const root = h("section", { class: "review", "aria-labelledby": "review-h1" });
  mount(main, root);
  draw();
  root.addEventListener("keydown", onKey);

  function cardsById(): Map<string, Card> {
    return new Map(view.cards.map((c) => [c.id, c]));
  }

  function allClaims(): Claim[] {
    return view.sections.flatMap((s) => s.claims);
  }

  async function act(fn: () => Promise<ReviewView>, focusId?: string): Promise<void> {
    try {
      view = await fn();
      draw(focusId);
    } catch (err) {
      toast(errorText(err), "error");
    }
  }

  function draw(focusId?: string): void {
    const active = focusId ?? (document.activeElement as HTMLElement | null)?.closest<HTMLElement>("[data-claim]")?.dataset.claim;
    const r = view.review;
    const cov = r.coverage;
    const signed = r.state === "signed";
    mount(
      root,
      h("h1", { id: "review-h1" }, t("reviewTitle"), ": ", view.question),
      h("div", { class: "review-status card", role: "status", "aria-live": "polite", id: "review-status" },
        h("span", { class: `chip review-state review-state-${r.state}` }, t(`reviewState_${r.state}` as never)),
        h("span", {}, t("reviewVersion", { n: r.version })),
        h("code", { class: "review-hash", title: r.version_hash }, r.version_hash.slice(0, 16), "…"),
        h("span", { class: "review-coverage", id: "review-coverage" },
          t("reviewCoverage", { seen: cov.seen, claims: cov.claims, approved: cov.approved, edited: cov.edited, rejected: cov.rejected })),
        h("span", {}, t("reviewTicked", { n: cov.key_numbers_ticked, of: cov.key_numbers })),
        h("span", {}, t("reviewResolved", { n: cov.conflicts_resolved, of: cov.conflicts }))),
      h("div", { class: "review-layout" },
        h("div", { class: "review-main" },
          ...view.sections.map((s) =>
            h("section", { class: "review-section", "aria-labelledby": `sec-${s.item_id}` },
              h("h2", { id: `sec-${s.item_id}` }, s.title, " ", h("span", { class: `chip coverage-${s.coverage}` }, t(`coverage_${s.coverage}` as never))),
              s.judge_not_used.length ? h("p", { class: "muted judge-not-used", title: s.judge_not_used.join("\n") }, t("reviewJudgeNotUsed")) : null,
              s.claims.length
                ? h("ol", { class: "review-claims" }, ...s.claims.map(claimRow))
                : h("p", { class: "muted" }, t("reviewEmptySection")))),
          view.conflicts.length ? h("section", { class: "review-section", "aria-labelledby": "conflicts-h" },
            h("h2", { id: "conflicts-h" }, t("reviewConflicts")), ...view.conflicts.map(conflictBox)) : null,
          view.origins.length ? h("section", { class: "review-section review-origins", "aria-labelledby": "origins-h" },
            h("h2", { id: "origins-h" }, t("reviewOrigins")),
            h("p", { class: "muted" }, t("reviewOriginsText")), ...view.origins.map(originBox)) : null),
        h("aside", { class: "review-side" }, sampleBox(), signBox(signed), exportBox(), keysBox())),
    );
    const target = active ? root.querySelector<HTMLElement>(`[data-claim="${CSS.escape(active)}"] .claim-toggle`) : null;
    target?.focus({ preventScroll: true });
  }

  function claimRow(c: Claim): HTMLElement {
    const open = expanded.has(c.id);
    const bodyId = `claim-body-${c.id}`;
    const decision = c.decision ? h("span", { class: `chip decision decision-${c.decision}` }, t(`reviewDecision_${c.decision}` as never)) : null;
    const toggle = h("button", { class: "claim-toggle", "aria-expanded": open ? "true" : "false", "aria-controls": bodyId, onclick: () => toggleClaim(c) },
      h("span", { class: "claim-text" }, c.text),
      h("span", { class: "claim-badges" },
        verdictChip(c.verdict),
        c.key_number ? h("span", { class: `chip key-figure${c.ticked ? " ticked" : ""}` }, c.ticked ? t("reviewFigureTicked") : t("reviewKeyFigure")) : null,
        c.sampled ? h("span", { class: "chip sampled" }, t("reviewSampled")) : null,
        c.kind === "conflict" ? h("span", { class: "chip" }, t("researchConflict")) : null,
        decision,
        c.seen ? null : h("span", { class: "chip unseen" }, t("reviewUnseen"))));
    return h("li", { class: `review-claim${c.decision ? ` decided-${c.decision}` : ""}`, "data-claim": c.id },
      toggle, open ? claimBody(c, bodyId) : null);
  }

  function claimBody(c: Claim, bodyId: string): HTMLElement {
    const cards = cardsById();
    const result = editResult.get(c.id);
    return h("div", { class: "claim-body", id: bodyId },
      c.original_text !== c.text ? h("p", { class: "muted original" }, t("reviewOriginal"), " ", h("del", {}, c.original_text)) : null,
      ...c.card_ids.map((id) => cards.get(id)).filter((x): x is Card => !!x).map((card) => cardBox(c, card)),
      editing.has(c.id) ? editForm(c) : null,
      result ? h("div", { class: result.accepted ? "edit-result ok" : "edit-result bad", role: "alert" },
        result.accepted ? t("reviewEditPassed", { verdict: result.verdict }) : t("reviewEditRefused"),
        result.accepted ? null : h("ul", {}, ...Object.entries(result.reasons).map(([k, v]) => h("li", {}, `${k}: ${v}`)))) : null,
      h("div", { class: "claim-actions", role: "group", "aria-label": t("reviewDecide") },
        h("button", { class: "btn small", "data-action": "approve", "aria-keyshortcuts": "a", "aria-pressed": c.decision === "approve" ? "true" : "false", onclick: () => decide(c, "approve") }, t("reviewApprove")),
        c.kind === "claim" ? h("button", { class: "btn small", "data-action": "edit", "aria-keyshortcuts": "e", onclick: () => startEdit(c) }, t("reviewEdit")) : null,
        h("button", { class: "btn small", "data-action": "reject", "aria-keyshortcuts": "r", "aria-pressed": c.decision === "reject" ? "true" : "false", onclick: () => decide(c, "reject") }, t("reviewReject")),
        c.key_number ? h("label", { class: "tick" },
          h("input", { type: "checkbox", checked: c.ticked, "aria-keyshortcuts": "x", onchange: (e: Event) => void act(() => api.reviewTick(runId, c.id, (e.target as HTMLInputElement).checked), c.id) }),
          " ", t("reviewTickLabel")) : null));
  }

  function cardBox(c: Claim, card: Card): HTMLElement {
    const shown = snapshotShown.get(c.id) === card.id;
    const snap = card.snapshot_id ? snapshots.get(card.snapshot_id) : undefined;
    return h("div", { class: "review-card" },
      h("blockquote", {}, card.snippet),
      h("div", { class: "card-meta" },
        h("strong", {}, card.source_title || card.url), " · ", card.locator,
        card.published_at ? ` · ${card.published_at}` : "",
        ` · ${card.source_type}`, card.independence !== "independent" ? ` · ${card.independence.replace("_", " ")}` : "",
        card.labels.length ? h("span", { class: "chip" }, card.labels.join(", ")) : null),
      h("button", { class: "page-link", "data-action": "source", "aria-keyshortcuts": "s", "aria-expanded": shown ? "true" : "false", onclick: () => void showSource(c, card) },
        card.block_id ? t("reviewOpenPdf") : shown ? t("reviewHideSnapshot") : t("reviewShowSnapshot")),
      shown && snap ? snapshotView(card, snap) : null);
  }

  function snapshotView(card: Card, snap: { text: string; final_url: string; sha256: string; fetched_at: string }): HTMLElement {
    const [a, b] = card.span ?? [0, 0];
    const mark = h("mark", { class: "snapshot-span" }, snap.text.slice(a, b));
    const box = h("div", { class: "snapshot", tabindex: "0", role: "region", "aria-label": t("reviewSnapshot") },
      h("div", { class: "snapshot-meta" }, snap.final_url, " · ", t("reviewFetched", { at: snap.fetched_at }), " · sha256 ", h("code", {}, snap.sha256.slice(0, 16) + "…")),
      h("div", { class: "snapshot-text" }, snap.text.slice(0, a), mark, snap.text.slice(b)));
    requestAnimationFrame(() => {
      const text = box.querySelector<HTMLElement>(".snapshot-text");
      if (text) text.scrollTop = mark.offsetTop - text.offsetTop - text.clientHeight / 3;
    });
    return box;
  }

  async function showSource(c: Claim, card: Card): Promise<void> {
    if (card.block_id) {
      openDocument({ evidenceId: card.block_id, quote: card.snippet, verdict: c.verdict });
      return;
    }
    if (snapshotShown.get(c.id) === card.id) {
      snapshotShown.delete(c.id);
      draw(c.id);
      return;
    }
    if (card.snapshot_id && !snapshots.has(card.snapshot_id)) {
      try {
        snapshots.set(card.snapshot_id, await api.snapshot(runId, card.snapshot_id));
      } catch (err) {
        toast(errorText(err), "error");
        return;
      }
    }
    snapshotShown.set(c.id, card.id);
    draw(c.id);
  }

  function editForm(c: Claim): HTMLElement {
    const area = h("textarea", { class: "input", rows: 3, "aria-label": t("reviewEditLabel"), id: `edit-${c.id}` }, c.text);
    const save = h("button", { class: "btn small primary", type: "submit" }, t("reviewEditSave"));
    const form = h("form", { class: "edit-form", onsubmit: (e: SubmitEvent) => {
      e.preventDefault();
      save.disabled = true;
      void (async () => {
        try {
          const out = await api.reviewDecide(runId, c.id, { action: "edit", text: area.value });
          editResult.set(c.id, out.result!);
          if (out.result!.accepted) editing.delete(c.id);
          view = out;
          draw(c.id);
          if (!out.result!.accepted) document.getElementById(`edit-${c.id}`)?.focus();
        } catch (err) {
          toast(errorText(err), "error");
          save.disabled = false;
        }
      })();
    } },
    area,
    h("div", { class: "edit-buttons" }, save,
      h("button", { class: "btn small", type: "button", onclick: () => { editing.delete(c.id); draw(c.id); } }, t("cancel"))),
    h("small", { class: "muted" }, t("reviewEditHint")));
    area.addEventListener("keydown", (e) => {
      if (e.key === "Escape") { editing.delete(c.id); draw(c.id); }
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) form.requestSubmit();
    });
    requestAnimationFrame(() => area.focus());
    return form;
  }

  function toggleClaim(c: Claim): void {
    if (expanded.has(c.id)) {
      expanded.delete(c.id);
      draw(c.id);
    } else openClaim(c);
  }

  /** Open a claim; the first time, log it as seen and (unless an action that answers with
   * the review follows) redraw with the server's blockers. */
  function openClaim(c: Claim, refresh = true): void {
    expanded.add(c.id);
    if (!c.seen) {
      c.seen = true;
      view.review.coverage.seen += 1;
      const seen = api.reviewSeen(runId, c.id);
      pendingSeen.add(seen);
      void seen.catch((err) => toast(errorText(err), "error")).finally(() => pendingSeen.delete(seen));
      if (refresh) void refreshAfterSeen(c.id);
    }
    draw(c.id);
  }

  /** The review as the server sees it once every pending `seen` landed (the latest wins). */
  async function refreshAfterSeen(focusId: string): Promise<void> {
    const mine = ++seenRefreshes;
    await Promise.allSettled([...pendingSeen]);
    if (mine !== seenRefreshes) return;
    try {
      const fresh = await api.review(runId);
      if (mine !== seenRefreshes) return;
      view = fresh;
      draw(focusId);
    } catch (err) {
      toast(errorText(err), "error");
    }
  }

  function startEdit(c: Claim): void {
    expanded.add(c.id);
    editing.add(c.id);
    editResult.delete(c.id);
    draw(c.id);
  }

  function decide(c: Claim, action: "approve" | "reject"): void {
    editResult.delete(c.id);
    void act(() => api.reviewDecide(runId, c.id, { action }), c.id);
  }

  function conflictBox(conflict: Conflict): HTMLElement {
    const res = conflict.resolution;
    const name = `res-${conflict.id}`;
    const options: [string, string | null, string][] = [
      ...conflict.values.map((v): [string, string | null, string] => ["choose", v.card_id, t("reviewChoose", { source: v.source_title, value: v.text })]),
      ["keep_both", null, t("reviewKeepBoth")],
      ["annotate", null, t("reviewAnnotate")],
    ];
    const radios = options.map(([kind, card, label]) => {
      const checked = !!res && res.resolution === kind && (kind !== "choose" || res.card_id === card);
      return h("label", { class: "radio" }, h("input", { type: "radio", name, value: kind, "data-card": card ?? "", checked }), " ", label);
    });
    const note = h("textarea", { class: "input", rows: 2, "aria-label": t("reviewNote") }, res?.note ?? "");
    const form = h("form", { class: "conflict-form", onsubmit: (e: SubmitEvent) => {
      e.preventDefault();
      const picked = form.querySelector<HTMLInputElement>(`input[name="${name}"]:checked`);
      if (!picked) { toast(t("reviewPickResolution"), "error"); return; }
      void act(() => api.reviewResolve(runId, conflict.id, { resolution: picked.value, card_id: picked.dataset.card || null, note: note.value }));
    } },
    h("fieldset", {}, h("legend", {}, conflict.metric), ...radios), note,
    h("button", { class: "btn small primary", type: "submit" }, t("reviewSaveResolution")));
    return h("div", { class: "review-conflict card", "data-conflict": conflict.id },
      h("table", {}, h("thead", {}, h("tr", {}, ...["source", "figure", "year", "scope"].map((k) => h("th", {}, t(`reviewCol_${k}` as never))))),
        h("tbody", {}, ...conflict.values.map((v) => h("tr", {}, h("td", {}, v.source_title), h("td", {}, v.text), h("td", {}, String(v.year ?? "")), h("td", {}, v.scope || t("reviewNotStated")))))),
      res ? h("p", { class: "chip resolved" }, t(`reviewResolution_${res.resolution}` as never)) : null,
      form);
  }

  function originBox(group: Origin): HTMLElement {
    const d = group.decision;
    const reason = h("textarea", { class: "input", rows: 2, "aria-label": t("reviewOriginReason"), id: `origin-reason-${group.id}` }, d?.reason ?? "");
    const decideAs = (decision: string) => {
      if (!reason.value.trim()) {
        toast(t("reviewOriginNeedsReason"), "error");
        reason.focus();
        return;
      }
      void act(() => api.reviewOrigin(runId, group.id, { decision, reason: reason.value }));
    };
    return h("div", { class: "review-origin card", "data-origin": group.id },
      h("div", { class: "origin-cards" }, ...group.cards.map((card) =>
        h("div", { class: "review-card", "data-card": card.id },
          h("blockquote", {}, card.snippet),
          h("div", { class: "card-meta" }, h("strong", {}, card.source_title || card.url), " · ", card.locator,
            card.published_at ? ` · ${card.published_at}` : "")))),
      h("p", { class: "muted origin-basis" }, group.basis),
      d ? h("p", {}, h("span", { class: "chip resolved origin-decided" }, t(`reviewOriginDecided_${d.decision}` as never)), " ",
        h("small", { class: "muted" }, t("reviewOriginBy", { who: d.by, reason: d.reason }))) : null,
      h("div", { class: "origin-form" }, reason,
        h("div", { class: "claim-actions", role: "group", "aria-label": t("reviewOrigins") },
          ...ORIGIN_DECISIONS.map(([decision, label]) =>
            h("button", { class: "btn small", type: "button", "data-decision": decision, "aria-pressed": d?.decision === decision ? "true" : "false", onclick: () => decideAs(decision) }, t(label))))));
  }

  function sampleBox(): HTMLElement {
    const sampled = allClaims().filter((c) => c.sampled);
    const others = allClaims().filter((c) => !c.key_number);
    return h("div", { class: "card review-sample" },
      h("h2", {}, t("reviewSampleTitle")),
      h("p", {}, t("reviewSampleText", { n: sampled.length, of: others.length, rate: Math.round(view.sample_rate * 100) })),
      sampled.length ? h("ul", {}, ...sampled.map((c) => h("li", {}, h("button", { class: "page-link", onclick: () => openClaim(c) }, c.text.length > 80 ? `${c.text.slice(0, 79)}…` : c.text)))) : null);
  }

  function signBox(signed: boolean): HTMLElement {
    const r = view.review;
    const button = h("button", { class: "btn primary", id: "sign-off", disabled: view.blockers.length > 0, onclick: () => void signOff() }, t("reviewSignOff"));
    return h("div", { class: "card review-sign" },
      h("h2", {}, t("reviewSignTitle")),
      signed ? h("p", { class: "signed", id: "signed-info" }, t("reviewSignedBy", { who: r.reviewer ?? "", at: (r.signed_at ?? "").replace("T", " ").slice(0, 19), n: r.version })) : null,
      !signed && view.blockers.length ? h("div", {}, h("p", {}, t("reviewBlocked", { n: view.blockers.length })), h("ul", { class: "blockers" }, ...view.blockers.slice(0, 8).map((b) => h("li", {}, b)), view.blockers.length > 8 ? h("li", {}, "…") : null)) : null,
      r.signoffs.length ? h("ul", { class: "muted signoffs" }, ...r.signoffs.map((s) => h("li", {}, `v${s.version} · ${s.reviewer} · ${s.signed_at.slice(0, 19).replace("T", " ")} · `, h("code", {}, s.version_hash.slice(0, 12))))) : null,
      signed ? null : button);
  }

  async function signOff(): Promise<void> {
    try {
      await api.reviewSignOff(runId);
      view = await api.review(runId);
      draw();
      toast(t("reviewSignedToast"));
      document.getElementById("signed-info")?.focus();
    } catch (err) {
      toast(errorText(err), "error");
    }
  }

  function exportBox(): HTMLElement {
    return h("div", { class: "card review-export" },
      h("h2", {}, t("reviewExport")),
      h("div", { class: "export-links" }, ...EXPORTS.map(([fmt, label]) =>
        h("button", { class: "btn small", "data-format": fmt, onclick: () => void download(`/v1/research/${encodeURIComponent(runId)}/export?format=${fmt}`) }, label))),
      h("button", { class: "page-link", onclick: () => void download(`/v1/research/${encodeURIComponent(runId)}/review/log?download=true`) }, t("reviewAuditLog")));
  }

  function keysBox(): HTMLElement {
    return h("details", { class: "card review-keys", id: "review-keys" },
      h("summary", {}, t("reviewKeysTitle")),
      h("dl", {}, ...[["j / k", t("reviewKeyMove")], ["Enter", t("reviewKeyOpen")], ["a", t("reviewApprove")], ["e", t("reviewEdit")], ["r", t("reviewReject")], ["x", t("reviewTickLabel")], ["s", t("reviewKeySource")]]
        .flatMap(([k, v]) => [h("dt", {}, h("kbd", {}, k)), h("dd", {}, v)])));
  }

  function onKey(e: KeyboardEvent): void {
    const el = e.target as HTMLElement;
    if (el.closest("textarea, input[type=text], input:not([type]), select") || e.ctrlKey || e.metaKey || e.altKey) return;
    const rows = [...root.querySelectorAll<HTMLElement>("[data-claim]")];
    const row = el.closest<HTMLElement>("[data-claim]");
    const claim = row ? allClaims().find((c) => c.id === row.dataset.claim) : undefined;
    const focusRow = (i: number) => rows[Math.max(0, Math.min(rows.length - 1, i))]?.querySelector<HTMLElement>(".claim-toggle")?.focus();
    if (e.key === "j" || e.key === "k") {
      e.preventDefault();
      focusRow(row ? rows.indexOf(row) + (e.key === "j" ? 1 : -1) : 0);
    } else if (e.key === "?") {
      const keys = document.getElementById("review-keys") as HTMLDetailsElement | null;
      if (keys) keys.open = !keys.open;
    } else if (claim && e.key === "a") decide(claim, "approve");
    else if (claim && e.key === "r") decide(claim, "reject");
    else if (claim && e.key === "e" && claim.kind === "claim") { e.preventDefault(); startEdit(claim); }
    else if (claim && e.key === "x" && claim.key_number) {
      if (!expanded.has(claim.id)) openClaim(claim, false); // a figure is ticked with its card in view
      void act(() => api.reviewTick(runId, claim.id, !claim.ticked), claim.id);
    }
    else if (claim && e.key === "s") {
      const card = cardsById().get(claim.card_ids[0] ?? "");
      if (card) { expanded.add(claim.id); void showSource(claim, card); }
    }
  }
}
