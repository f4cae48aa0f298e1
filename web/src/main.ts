// The app shell: header with navigation and language switch, and a hash router
// (#/library, #/library/<source>, #/chat, #/chat/<session>).

import { renderChat } from "./chat";
import { $, h, icon, ICONS, mount } from "./dom";
import { lang, onLangChange, setLang, t, type Lang } from "./i18n";
import { renderLibrary, renderSource } from "./library";
import { resetViewer } from "./pdfviewer";

function header(): HTMLElement {
  const route = location.hash.split("/")[1] ?? "chat";
  const select = h(
    "select",
    { class: "lang-select", "aria-label": t("language") },
    h("option", { value: "en", selected: lang() === "en" }, "English"),
    h("option", { value: "zh", selected: lang() === "zh" }, "中文"),
  );
  select.addEventListener("change", () => setLang(select.value as Lang));
  const link = (name: string, label: string, path: string) =>
    h("a", { href: `#/${name}`, class: "nav-link", "aria-current": route === name ? "page" : null }, icon(path), h("span", {}, label));
  return h(
    "header",
    { class: "topbar" },
    h("a", { class: "brand", href: "#/chat" }, h("span", { class: "brand-mark", "aria-hidden": "true" }, "¹"), h("span", { class: "brand-name" }, t("appName"))),
    h("nav", { class: "nav", "aria-label": t("menu") }, link("chat", t("navChat"), ICONS.chat), link("library", t("navLibrary"), ICONS.book)),
    h("div", { class: "topbar-end" }, select),
  );
}

async function route(): Promise<void> {
  const [, name = "chat", id] = location.hash.split("/").map(decodeURIComponent);
  mount($("#header"), header());
  const main = $("#main");
  document.title = `footnote — ${name === "library" ? t("navLibrary") : t("navChat")}`;
  main.dataset.view = name;
  if (name === "library" && id) await renderSource(main, id);
  else if (name === "library") await renderLibrary(main);
  else await renderChat(main, id);
}

function boot(): void {
  const app = $("#app");
  mount(
    app,
    h("a", { class: "skip-link", href: "#main", onclick: (e: MouseEvent) => { e.preventDefault(); $("#main").focus(); } }, t("skipToContent")),
    h("div", { id: "header" }),
    h("main", { id: "main", tabindex: "-1" }),
    h("div", { id: "toasts", class: "toasts", "aria-live": "polite" }),
  );
  window.addEventListener("hashchange", () => void route());
  onLangChange(() => {
    resetViewer();
    (app.querySelector(".skip-link") as HTMLElement).textContent = t("skipToContent");
    void route();
  });
  void route();
}

boot();
