// The document viewer: pdf.js renders one page at a time in a modal dialog, and the cited
// block's bounding box (PDF points from the page's top-left) is drawn over it.

import type { PDFDocumentProxy, PDFPageProxy, RenderTask } from "pdfjs-dist";
import { api } from "./api";
import { authHeaders } from "./auth";
import { h, icon, ICONS, mount } from "./dom";
import { t } from "./i18n";
import type { BlockInfo } from "./types";
import { errorText, locator, verdictChip } from "./ui";

type PdfJs = typeof import("pdfjs-dist");
let pdfjsPromise: Promise<PdfJs> | null = null;

function loadPdfJs(): Promise<PdfJs> {
  pdfjsPromise ??= import("pdfjs-dist").then((lib) => {
    lib.GlobalWorkerOptions.workerSrc = new URL("assets/pdf.worker.min.mjs", document.baseURI).href;
    return lib;
  });
  return pdfjsPromise;
}

export interface OpenRequest {
  /** A block or cell id (`…#r1c2`); its page and bbox are looked up. */
  evidenceId?: string;
  /** Or a source and page directly (section tree, tables). */
  sourceId?: string;
  page?: number;
  verdict?: string;
  quote?: string;
}

class Viewer {
  private dialog: HTMLDialogElement;
  private title: HTMLElement;
  private pageLabel: HTMLElement;
  private stage: HTMLElement;
  private caption: HTMLElement;
  private prevBtn: HTMLButtonElement;
  private nextBtn: HTMLButtonElement;
  private doc: PDFDocumentProxy | null = null;
  private docSource = "";
  private page = 1;
  private zoom = 1;
  private highlight: BlockInfo | null = null;
  private renderTask: RenderTask | null = null;
  private returnFocus: HTMLElement | null = null;

  constructor() {
    this.title = h("h2", { class: "pdf-title", id: "pdf-title" });
    this.pageLabel = h("span", { class: "pdf-page-label", "aria-live": "polite" });
    this.prevBtn = h("button", { class: "icon-btn", "aria-label": t("previousPage"), onclick: () => this.go(this.page - 1) }, icon(ICONS.prev));
    this.nextBtn = h("button", { class: "icon-btn", "aria-label": t("nextPage"), onclick: () => this.go(this.page + 1) }, icon(ICONS.next));
    this.stage = h("div", { class: "pdf-stage", tabindex: "0", "aria-label": t("pdfViewer") });
    this.caption = h("div", { class: "pdf-caption" });
    this.dialog = h(
      "dialog",
      { class: "pdf-dialog", "aria-labelledby": "pdf-title" },
      h(
        "div",
        { class: "pdf-toolbar" },
        this.title,
        h(
          "div",
          { class: "pdf-controls" },
          this.prevBtn,
          this.pageLabel,
          this.nextBtn,
          h("button", { class: "icon-btn", "aria-label": t("zoomOut"), onclick: () => this.setZoom(this.zoom / 1.2) }, icon(ICONS.zoomOut)),
          h("button", { class: "icon-btn", "aria-label": t("zoomIn"), onclick: () => this.setZoom(this.zoom * 1.2) }, icon(ICONS.zoomIn)),
          h("button", { class: "icon-btn", "aria-label": t("close"), onclick: () => this.dialog.close() }, icon(ICONS.close)),
        ),
      ),
      this.caption,
      this.stage,
    );
    this.dialog.addEventListener("keydown", (e) => {
      if (e.target instanceof HTMLInputElement) return;
      if (e.key === "ArrowLeft" || e.key === "PageUp") this.go(this.page - 1);
      else if (e.key === "ArrowRight" || e.key === "PageDown") this.go(this.page + 1);
      else if (e.key === "+" || e.key === "=") this.setZoom(this.zoom * 1.2);
      else if (e.key === "-") this.setZoom(this.zoom / 1.2);
      else return;
      e.preventDefault();
    });
    this.dialog.addEventListener("close", () => this.returnFocus?.focus());
    document.body.appendChild(this.dialog);
  }

  async open(req: OpenRequest): Promise<void> {
    this.returnFocus = document.activeElement as HTMLElement | null;
    this.highlight = null;
    mount(this.stage, h("p", { class: "muted pad" }, t("loading")));
    mount(this.caption);
    this.title.textContent = t("pdfViewer");
    this.pageLabel.textContent = "";
    if (!this.dialog.open) this.dialog.showModal();
    this.stage.focus(); // arrow keys turn pages from the start
    try {
      let sourceId = req.sourceId ?? "";
      let page = req.page ?? 1;
      let kind = "pdf";
      if (req.evidenceId) {
        const block = await api.block(req.evidenceId);
        this.highlight = block;
        sourceId = block.source_id;
        page = block.page || 1;
        kind = (block as BlockInfo & { source_kind?: string }).source_kind ?? "pdf";
        this.title.textContent = (block as BlockInfo & { source_title?: string }).source_title ?? "";
        mount(
          this.caption,
          h(
            "div",
            { class: "pdf-caption-head" },
            req.verdict ? verdictChip(req.verdict) : null,
            h("span", { class: "muted" }, locator(block.page, block.section_path)),
          ),
          h("blockquote", { class: "quote" }, req.quote || block.text.slice(0, 400)),
        );
      }
      if (kind !== "pdf") {
        this.showText(this.highlight);
        return;
      }
      await this.load(sourceId);
      this.page = Math.min(Math.max(1, page), this.doc?.numPages ?? 1);
      this.zoom = this.fitZoom();
      await this.render();
    } catch (err) {
      if (this.highlight) this.showText(this.highlight, errorText(err));
      else mount(this.stage, h("p", { class: "error pad", role: "alert" }, errorText(err)));
    }
  }

  private showText(block: BlockInfo | null, why = ""): void {
    mount(
      this.stage,
      h("div", { class: "pdf-fallback pad" }, h("p", { class: "muted" }, t("pdfUnavailable"), why ? ` (${why})` : ""), block ? h("p", { class: "pdf-fallback-text" }, block.text) : null),
    );
  }

  private async load(sourceId: string): Promise<void> {
    if (this.doc && this.docSource === sourceId) return;
    const lib = await loadPdfJs();
    await this.doc?.destroy();
    this.doc = null;
    const base = new URL("assets/", document.baseURI).href;
    this.doc = await lib.getDocument({
      url: api.fileUrl(sourceId),
      httpHeaders: authHeaders(),
      cMapUrl: `${base}cmaps/`,
      cMapPacked: true,
      standardFontDataUrl: `${base}standard_fonts/`,
      isEvalSupported: false,
    }).promise;
    this.docSource = sourceId;
  }

  private fitZoom(): number {
    const width = this.stage.clientWidth || window.innerWidth;
    return Math.min(1.6, Math.max(0.5, (width - 32) / 612));
  }

  private setZoom(zoom: number): void {
    this.zoom = Math.min(4, Math.max(0.4, zoom));
    void this.render();
  }

  private go(page: number): void {
    if (!this.doc || page < 1 || page > this.doc.numPages || page === this.page) return;
    this.page = page;
    void this.render();
  }

  private async render(): Promise<void> {
    if (!this.doc) return;
    const n = this.page;
    const pdfPage: PDFPageProxy = await this.doc.getPage(n);
    const viewport = pdfPage.getViewport({ scale: this.zoom });
    const ratio = window.devicePixelRatio || 1;
    const canvas = h("canvas", { class: "pdf-canvas", "aria-hidden": "true" });
    canvas.width = Math.floor(viewport.width * ratio);
    canvas.height = Math.floor(viewport.height * ratio);
    canvas.style.width = `${Math.floor(viewport.width)}px`;
    canvas.style.height = `${Math.floor(viewport.height)}px`;
    const pageEl = h("div", { class: "pdf-page", "data-page": n, "data-scale": this.zoom.toFixed(4), role: "img", "aria-label": t("pageOf", { n, total: this.doc.numPages }) }, canvas);
    pageEl.style.width = canvas.style.width;
    pageEl.style.height = canvas.style.height;

    this.renderTask?.cancel();
    const task = pdfPage.render({
      canvas,
      canvasContext: canvas.getContext("2d")!,
      viewport,
      transform: ratio !== 1 ? [ratio, 0, 0, ratio, 0, 0] : undefined,
    });
    this.renderTask = task;
    let mark: HTMLElement | null = null;
    const hl = this.highlight;
    if (hl && hl.page === n && hl.bbox) {
      const [x0, y0, x1, y1] = hl.bbox;
      const [vx0, , , vy1] = pdfPage.view;
      // bbox is measured from the page's top-left; PDF user space grows upwards.
      const rect = viewport.convertToViewportRectangle([vx0 + x0, vy1 - y1, vx0 + x1, vy1 - y0]);
      const left = Math.min(rect[0], rect[2]);
      const top = Math.min(rect[1], rect[3]);
      mark = h("div", { class: "pdf-highlight", role: "mark", "aria-label": t("highlighted"), "data-bbox": hl.bbox.join(",") });
      const pad = 3;
      mark.style.left = `${left - pad}px`;
      mark.style.top = `${top - pad}px`;
      mark.style.width = `${Math.abs(rect[2] - rect[0]) + 2 * pad}px`;
      mark.style.height = `${Math.abs(rect[3] - rect[1]) + 2 * pad}px`;
      pageEl.appendChild(mark);
    }
    mount(this.stage, pageEl);
    this.pageLabel.textContent = t("pageOf", { n, total: this.doc.numPages });
    this.prevBtn.disabled = n <= 1;
    this.nextBtn.disabled = n >= this.doc.numPages;
    try {
      await task.promise;
    } catch (err) {
      if ((err as { name?: string }).name !== "RenderingCancelledException") throw err;
      return;
    }
    pageEl.dataset.rendered = "true";
    if (mark) mark.scrollIntoView({ block: "center", inline: "nearest" });
  }
}

let viewer: Viewer | null = null;

export function openDocument(req: OpenRequest): void {
  viewer ??= new Viewer();
  void viewer.open(req);
}

/** Rebuild the viewer on the next open (after a language switch). */
export function resetViewer(): void {
  viewer = null;
  document.querySelector(".pdf-dialog")?.remove();
}
