// The library: upload (drag and drop, several files, progress per file), the list of sources,
// deletion, and a source's own page with its section tree and tables.

import { api, uploadFile } from "./api";
import { h, icon, ICONS, mount } from "./dom";
import { t } from "./i18n";
import { openDocument } from "./pdfviewer";
import type { BlockInfo, SectionNode, SourceInfo } from "./types";
import { confirmDialog, errorText, spinner, toast } from "./ui";

interface UploadItem {
  file: File;
  row: HTMLElement;
  bar: HTMLProgressElement;
  state: HTMLElement;
  groups: string;
}

export async function renderLibrary(root: HTMLElement): Promise<void> {
  const list = h("div", { class: "source-list", "aria-busy": "true" }, spinner());
  const queue = h("ul", { class: "upload-queue", "aria-label": t("uploading") });
  const input = h("input", {
    type: "file",
    multiple: true,
    class: "visually-hidden",
    id: "file-input",
  });
  const hint = h("span", { class: "muted small", id: "formats-hint" });
  const zone = h(
    "label",
    { class: "dropzone", for: "file-input", "data-testid": "dropzone" },
    icon(ICONS.upload),
    h("span", { class: "dropzone-main" }, t("dropHere"), " ", h("span", { class: "link" }, t("chooseFiles"))),
    hint,
  );
  // The accepted formats are the server's one list (the same as `footnote ingest --help`).
  void api.formats().then((formats) => {
    input.accept = formats.flatMap((f) => f.suffixes).join(",");
    hint.textContent = t("formatsHint", { formats: formats.map((f) => `${f.name} (${f.suffixes.join(", ")})`).join(", ") });
  }).catch(() => undefined);
  const share = h("input", { class: "input small", id: "share-groups", name: "acl_groups", placeholder: t("shareWithHint"), autocomplete: "off" });
  const shareRow = h("label", { class: "share-groups small muted", for: "share-groups" }, t("shareWith"), " ", share);
  const refresh = async () => {
    try {
      const sources = await api.sources();
      mount(list, sources.length ? sourceTable(sources, refresh) : h("p", { class: "empty" }, t("libraryEmpty")));
    } catch (err) {
      mount(list, h("p", { class: "error", role: "alert" }, errorText(err)));
    }
    list.setAttribute("aria-busy", "false");
  };
  const startUploads = (files: FileList | File[]) => {
    const groups = share.value.trim();
    const items = [...files].map((file) => uploadRow(file, queue, groups));
    // One at a time: parsing is CPU-bound on the server, and the order stays readable.
    void (async () => {
      for (const item of items) {
        await runUpload(item);
        await refresh();
      }
    })();
  };
  input.addEventListener("change", () => {
    if (input.files?.length) startUploads(input.files);
    input.value = "";
  });
  for (const type of ["dragenter", "dragover"]) {
    zone.addEventListener(type, (e) => {
      e.preventDefault();
      zone.classList.add("over");
    });
  }
  for (const type of ["dragleave", "drop"]) zone.addEventListener(type, () => zone.classList.remove("over"));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    if (e.dataTransfer?.files.length) startUploads(e.dataTransfer.files);
  });

  mount(
    root,
    h(
      "section",
      { class: "page library", "aria-labelledby": "library-title" },
      h("header", { class: "page-head" }, h("h1", { id: "library-title" }, t("libraryTitle"))),
      input,
      zone,
      shareRow,
      queue,
      list,
    ),
  );
  await refresh();
}

function uploadRow(file: File, queue: HTMLElement, groups: string): UploadItem {
  const bar = h("progress", { max: "100", value: "0", "aria-label": `${t("uploading")} ${file.name}` });
  const state = h("span", { class: "upload-state" }, t("uploading"));
  const row = h("li", { class: "upload-item", "data-file": file.name }, h("span", { class: "upload-name" }, file.name), bar, state);
  queue.appendChild(row);
  return { file, row, bar, state, groups };
}

async function runUpload(item: UploadItem): Promise<void> {
  try {
    let source = await uploadFile(item.file, item.groups, ({ loaded, total }) => {
      item.bar.value = total ? Math.round((loaded / total) * 100) : 0;
      if (total && loaded >= total) {
        item.bar.removeAttribute("value"); // indeterminate while the server parses
        item.state.textContent = t("parsing");
      }
    });
    const known = source.status === "ready";
    item.bar.removeAttribute("value");
    item.state.textContent = t("parsing");
    // The server parses and indexes in the background: poll until the upload settles.
    for (let delay = 400; source.status === "processing"; delay = Math.min(delay * 1.5, 3000)) {
      await new Promise((r) => setTimeout(r, delay));
      source = await api.sourceStatus(source.id);
    }
    if (source.status === "failed") throw new Error(source.error ?? t("failed"));
    item.bar.value = 100;
    item.state.textContent = known ? t("unchanged") : t("added");
    item.row.classList.add("ok");
    setTimeout(() => item.row.remove(), 6000);
  } catch (err) {
    item.bar.value = 0;
    item.row.classList.add("failed");
    item.state.textContent = `${t("failed")}: ${plainError(errorText(err))}`;
    item.state.setAttribute("role", "alert");
    const dismiss = h(
      "button",
      { class: "icon-btn small dismiss", type: "button", "aria-label": `${t("dismiss")}: ${item.file.name}`, title: t("dismiss"), onclick: () => item.row.remove() },
      icon(ICONS.close),
    );
    item.row.appendChild(dismiss);
  }
}

/** Parser errors are already sentences; strip exception class names if any leak through. */
function plainError(message: string): string {
  return message.replace(/^[A-Z]\w+(Error|Exception):\s*/, "");
}

function sourceTable(sources: SourceInfo[], refresh: () => Promise<void>): HTMLElement {
  const rows = sources.map((s) =>
    h(
      "tr",
      { "data-source": s.id, "data-status": s.status },
      h(
        "td",
        { class: "title-cell", "data-label": t("colTitle") },
        s.status === "ready"
          ? h("a", { href: `#/library/${s.id}`, class: "source-title" }, s.title || s.filename || s.id)
          : h("span", { class: "source-title" }, s.title || s.filename || s.id),
        s.filename && s.title && s.filename !== s.title ? h("div", { class: "muted small file-name" }, s.filename) : null,
        s.status === "processing" ? h("div", { class: "muted small row" }, spinner(), t("parsing")) : null,
        s.status === "failed" ? h("div", { class: "error small", role: "alert" }, `${t("failed")}: ${plainError(s.error ?? "")}`) : null,
        s.warnings?.length ? h("div", { class: "muted small" }, `${t("warnings")}: ${s.warnings.join("; ")}`) : null,
      ),
      h("td", { "data-label": t("colPages") }, s.pages ? String(s.pages) : "—"),
      h("td", { "data-label": t("colLanguage") }, s.lang ? langName(s.lang) : "—"),
      h("td", { "data-label": t("colLabels") }, s.labels?.length ? s.labels.map((l) => h("span", { class: "chip" }, l)) : h("span", { class: "muted" }, t("noLabels"))),
      h("td", { class: "access", "data-label": t("colAccess") }, s.status === "ready" ? access(s) : ""),
      h(
        "td",
        { class: "actions", "data-label": t("colActions") },
        !s.can_delete ? null : h(
          "button",
          {
            class: "icon-btn danger",
            hidden: s.status !== "ready",
            "aria-label": `${t("delete")}: ${s.title ?? s.filename}`,
            title: t("delete"),
            onclick: async () => {
              const title = s.title ?? s.filename ?? s.id;
              if (!(await confirmDialog(t("confirmDelete", { title }), t("delete")))) return;
              try {
                await api.deleteSource(s.id);
                toast(t("deleted", { title }));
              } catch (err) {
                toast(errorText(err), "error");
              }
              await refresh();
            },
          },
          icon(ICONS.trash),
        ),
      ),
    ),
  );
  return h(
    "table",
    { class: "sources" },
    h("caption", { class: "visually-hidden" }, t("libraryTitle")),
    h(
      "thead",
      {},
      h("tr", {}, h("th", { scope: "col" }, t("colTitle")), h("th", { scope: "col" }, t("colPages")), h("th", { scope: "col" }, t("colLanguage")), h("th", { scope: "col" }, t("colLabels")), h("th", { scope: "col" }, t("colAccess")), h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, t("colActions")))),
    ),
    h("tbody", {}, rows),
  );
}

/** Who owns a source and who it is shared with, in words. */
function access(s: SourceInfo): HTMLElement {
  const groups = (s.shared_with ?? []).map((g) => h("span", { class: "chip" }, g));
  const owner = s.owner ?? "";
  if (s.public) return h("span", { class: "access-public" }, t("accessPublic"));
  if (!owner) return h("span", {}, t("accessOperator"), " · ", t("accessShared"), " ", ...groups);
  if (!groups.length) return h("span", { class: "access-private" }, t("accessPrivate", { owner }));
  return h("span", {}, t("accessOwner", { owner }), h("br"), t("accessShared"), " ", ...groups);
}

function langName(code: string): string {
  try {
    return new Intl.DisplayNames([document.documentElement.lang || "en"], { type: "language" }).of(code) ?? code;
  } catch {
    return code;
  }
}

// -- one source ------------------------------------------------------------------------------

export async function renderSource(root: HTMLElement, id: string): Promise<void> {
  mount(root, h("div", { class: "page" }, spinner()));
  let data: Awaited<ReturnType<typeof api.source>>;
  try {
    data = await api.source(id);
  } catch (err) {
    mount(root, h("div", { class: "page" }, backLink(), h("p", { class: "error", role: "alert" }, errorText(err))));
    return;
  }
  const { source, sections, blocks } = data;
  const byId = new Map(blocks.map((b) => [b.id, b]));
  const tables = blocks.filter((b) => b.table);
  const isPdf = source.kind === "pdf";
  mount(
    root,
    h(
      "article",
      { class: "page source-page", "aria-labelledby": "source-title" },
      backLink(),
      h(
        "header",
        { class: "page-head" },
        h("h1", { id: "source-title" }, source.title || source.filename || source.id),
        h(
          "p",
          { class: "meta" },
          (source.pages ?? 1) === 1 ? t("pagesOne") : t("pagesN", { n: source.pages ?? 1 }),
          " · ",
          source.lang ? langName(source.lang) : "",
          " · ",
          blocks.length === 1 ? t("blocksOne") : t("blocksN", { n: blocks.length }),
          ...(source.labels ?? []).map((l) => h("span", { class: "chip" }, l)),
        ),
        isPdf ? h("button", { class: "btn", onclick: () => openDocument({ sourceId: source.id, page: 1 }) }, icon(ICONS.page), t("viewPdf")) : null,
      ),
      h(
        "div",
        { class: "source-grid" },
        h(
          "section",
          { class: "card", "aria-labelledby": "sections-title" },
          h("h2", { id: "sections-title" }, t("sections")),
          sections.length ? sectionTree(sections, byId, source.id, isPdf) : h("p", { class: "muted" }, t("noSections")),
        ),
        h(
          "section",
          { class: "card", "aria-labelledby": "tables-title" },
          h("h2", { id: "tables-title" }, t("tables"), " ", h("span", { class: "count" }, String(tables.length))),
          tables.length ? tables.map((b) => tableView(b, isPdf)) : h("p", { class: "muted" }, t("noTables")),
        ),
      ),
    ),
  );
}

function backLink(): HTMLElement {
  return h("a", { href: "#/library", class: "back" }, icon(ICONS.back), t("backToLibrary"));
}

function sectionTree(nodes: SectionNode[], byId: Map<string, BlockInfo>, sourceId: string, isPdf: boolean): HTMLElement {
  return h(
    "ul",
    { class: "tree" },
    nodes.map((node) => {
      const first = node.block_ids.map((b) => byId.get(b)).find(Boolean);
      const page = first?.page;
      return h(
        "li",
        {},
        h(
          "div",
          { class: "tree-row" },
          h("span", { class: "tree-title" }, node.title),
          page && isPdf
            ? h("button", { class: "page-link", "aria-label": `${node.title}: ${t("openAtPage", { n: page })}`, onclick: () => openDocument({ evidenceId: first!.id }) }, t("pageN", { n: page }))
            : page
              ? h("span", { class: "muted small" }, t("pageN", { n: page }))
              : null,
        ),
        node.children.length ? sectionTree(node.children, byId, sourceId, isPdf) : null,
      );
    }),
  );
}

function tableView(block: BlockInfo, isPdf: boolean): HTMLElement {
  const table = block.table!;
  return h(
    "figure",
    { class: "table-view" },
    h(
      "figcaption",
      {},
      h("span", {}, table.caption || block.section_path.join(" › ")),
      isPdf ? h("button", { class: "page-link", onclick: () => openDocument({ evidenceId: block.id }) }, t("pageN", { n: block.page })) : null,
    ),
    h(
      "div",
      { class: "table-scroll", tabindex: "0", role: "region", "aria-label": table.caption || t("tables") },
      h(
        "table",
        { class: "data" },
        table.header.length ? h("thead", {}, table.header.map((r) => h("tr", {}, r.map((c) => h("th", { scope: "col" }, c))))) : null,
        h("tbody", {}, table.rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, c))))),
      ),
    ),
  );
}
