// Small shared widgets: toasts, confirm dialogs, verdict chips, the busy spinner.

import { h } from "./dom";
import { t, type Key } from "./i18n";
import type { Verdict } from "./types";

export function toast(message: string, kind: "info" | "error" = "info"): void {
  const region = document.getElementById("toasts");
  if (!region) return;
  const item = h("div", { class: `toast toast-${kind}`, role: kind === "error" ? "alert" : "status" }, message);
  region.appendChild(item);
  setTimeout(() => item.classList.add("leaving"), 4200);
  setTimeout(() => item.remove(), 4600);
}

export function verdictChip(verdict: Verdict | string): HTMLElement {
  const key = `verdict_${verdict}` as Key;
  return h("span", { class: `chip verdict verdict-${verdict}` }, t(key));
}

export function spinner(): HTMLElement {
  return h("span", { class: "spinner", "aria-hidden": "true" });
}

/** Page and section path, e.g. "p. 3 · Method › Training". */
export function locator(page: number | null | undefined, section: string[] | undefined): string {
  const parts: string[] = [];
  if (page) parts.push(t("pageN", { n: page }));
  parts.push(section && section.length ? section.join(" › ") : t("sectionUnknown"));
  return parts.join(" · ");
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A modal confirm built on <dialog> (accessible, Escape cancels). */
export function confirmDialog(message: string, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = h(
      "dialog",
      { class: "confirm", "aria-label": message },
      h(
        "form",
        { method: "dialog" },
        h("p", {}, message),
        h(
          "div",
          { class: "row end" },
          h("button", { value: "cancel", class: "btn" }, t("close")),
          h("button", { value: "ok", class: "btn danger", autofocus: true }, confirmLabel),
        ),
      ),
    );
    dialog.addEventListener("close", () => {
      resolve(dialog.returnValue === "ok");
      dialog.remove();
    });
    document.body.appendChild(dialog);
    dialog.showModal();
  });
}

/** A modal text prompt (rename). Resolves null when cancelled. */
export function promptDialog(label: string, value: string): Promise<string | null> {
  return new Promise((resolve) => {
    const input = h("input", { type: "text", value, "aria-label": label, class: "input", required: true });
    const dialog = h(
      "dialog",
      { class: "confirm", "aria-label": label },
      h(
        "form",
        { method: "dialog" },
        h("label", { class: "field" }, h("span", {}, label), input),
        h(
          "div",
          { class: "row end" },
          h("button", { value: "cancel", class: "btn", formnovalidate: true }, t("close")),
          h("button", { value: "ok", class: "btn primary" }, t("rename")),
        ),
      ),
    );
    dialog.addEventListener("close", () => {
      resolve(dialog.returnValue === "ok" ? input.value.trim() || null : null);
      dialog.remove();
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    input.select();
  });
}
