// The outline editor: the proposed sections, each with its title and what it must answer,
// moved up or down, removed, or new ones added; nothing is searched until the analyst
// confirms. Dependencies on a removed section are dropped with it.

import { h, icon, ICONS, mount } from "./dom";
import { t } from "./i18n";
import type { OutlineItemInfo } from "./types";

export interface OutlineEditorOptions {
  /** Whether new sections may search the web (the run's choice). */
  web: boolean;
  onConfirm: (items: OutlineItemInfo[]) => void;
}

/** A blank section the analyst adds, with the default evidence standard. */
function blankItem(n: number, web: boolean): OutlineItemInfo {
  return {
    id: `added-${n}`,
    title: "",
    asks: "",
    standard: { primary_required: false, min_independent: 1, date_from: null, date_to: null, web },
    depends_on: [],
  };
}

/** The sections as the server wants them: dependencies only on sections still there. */
export function outlineForServer(items: OutlineItemInfo[]): OutlineItemInfo[] {
  const ids = new Set(items.map((i) => i.id));
  return items.map((i) => ({ ...i, title: i.title.trim(), asks: i.asks.trim(), depends_on: i.depends_on.filter((d) => ids.has(d)) }));
}

function standardText(item: OutlineItemInfo): string {
  const s = item.standard;
  const parts = [t("researchMinSources", { n: s.min_independent })];
  if (s.primary_required) parts.push(t("researchPrimary"));
  parts.push(s.web ? t("researchWebAllowed") : t("researchLibraryOnly"));
  return parts.join(" · ");
}

/** Draw the editor into `root`; it keeps its own list of sections. */
export function outlineEditor(root: HTMLElement, proposed: OutlineItemInfo[], opts: OutlineEditorOptions): void {
  let items = proposed.map((i) => ({ ...i }));
  let added = 0;
  const error = h("p", { class: "error", role: "alert" });
  const list = h("ol", { class: "outline-list", id: "research-outline-list" });
  const addButton = h("button", { type: "button", class: "btn", id: "research-add-section" }, icon(ICONS.plus), t("researchAddSection"));
  const confirm = h("button", { type: "button", class: "btn primary", id: "research-confirm" }, t("researchConfirm"));
  addButton.addEventListener("click", () => {
    items.push(blankItem(++added, opts.web));
    draw(items.length - 1);
  });
  confirm.addEventListener("click", () => {
    const ready = outlineForServer(items);
    if (!ready.length) {
      error.textContent = t("researchNoSections");
      return;
    }
    const untitled = ready.findIndex((i) => !i.title);
    if (untitled >= 0) {
      error.textContent = t("researchUntitled", { n: untitled + 1 });
      (list.children[untitled]?.querySelector("input") as HTMLInputElement | null)?.focus();
      return;
    }
    error.textContent = "";
    confirm.disabled = true;
    opts.onConfirm(ready);
  });
  mount(root, list, error, h("div", { class: "row outline-actions" }, addButton, h("span", { class: "grow" }), confirm));
  draw();

  function move(index: number, by: number): void {
    const to = index + by;
    if (to < 0 || to >= items.length) return;
    const copy = items.slice();
    [copy[index], copy[to]] = [copy[to], copy[index]];
    items = copy;
    draw(to, by < 0 ? "up" : "down");
  }

  function draw(focusIndex?: number, focusWhat: "title" | "up" | "down" = "title"): void {
    list.replaceChildren(...items.map((item, n) => row(item, n)));
    if (focusIndex !== undefined) {
      const li = list.children[focusIndex] as HTMLElement | undefined;
      const target = focusWhat === "title" ? li?.querySelector("input") : li?.querySelector(`[data-move="${focusWhat}"]`);
      (target as HTMLElement | null)?.focus();
    }
  }

  function row(item: OutlineItemInfo, n: number): HTMLElement {
    const title = h("input", { class: "input outline-title", value: item.title, "aria-label": t("researchSectionTitle"), placeholder: t("researchSectionTitle") });
    const asks = h("textarea", { class: "input outline-asks", rows: 2, "aria-label": t("researchSectionAsks"), placeholder: t("researchSectionAsks") }, item.asks);
    title.addEventListener("input", () => (items[n] = { ...items[n], title: title.value }));
    asks.addEventListener("input", () => (items[n] = { ...items[n], asks: asks.value }));
    const tool = (what: string, label: string, path: string, action: () => void, disabled = false) =>
      h("button", { type: "button", class: "icon-btn small", "data-move": what, "aria-label": label, title: label, disabled, onclick: action }, icon(path));
    return h(
      "li",
      { class: "outline-item", "data-item": item.id },
      h("span", { class: "outline-num", "aria-hidden": "true" }, String(n + 1)),
      h("div", { class: "outline-fields" }, title, asks, h("small", { class: "muted" }, standardText(item))),
      h(
        "div",
        { class: "outline-tools" },
        tool("up", t("researchMoveUp"), "M12 19V5M5 12l7-7 7 7", () => move(n, -1), n === 0),
        tool("down", t("researchMoveDown"), "M12 5v14M5 12l7 7 7-7", () => move(n, 1), n === items.length - 1),
        tool("remove", t("researchRemoveSection"), ICONS.trash, () => {
          items = items.filter((_, i) => i !== n);
          draw(Math.min(n, items.length - 1));
        }),
      ),
    );
  }
}
