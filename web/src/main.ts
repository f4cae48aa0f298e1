// The app shell: header with navigation and language switch, and a hash router
// (#/library, #/library/<source>, #/chat, #/chat/<session>, #/research, #/review/<run>).

import { api } from "./api";
import { apiKey, login, logout, onLogout } from "./auth";
import { renderChat } from "./chat";
import { $, h, icon, ICONS, mount } from "./dom";
import { lang, onLangChange, setLang, t, type Lang } from "./i18n";
import { renderLibrary, renderSource } from "./library";
import { resetViewer } from "./pdfviewer";
import { renderGraph } from "./graph";
import { renderResearch } from "./research";
import { renderReview, renderReviewList } from "./review";

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
    h("nav", { class: "nav", "aria-label": t("menu") }, link("chat", t("navChat"), ICONS.chat), link("library", t("navLibrary"), ICONS.book), link("research", t("navResearch"), ICONS.edit), link("review", t("navReview"), ICONS.page), link("graph", t("navGraph"), ICONS.page)),
    h(
      "div",
      { class: "topbar-end" },
      select,
      apiKey()
        ? h("button", { type: "button", class: "btn small", id: "sign-out", onclick: () => logout() }, t("signOut"))
        : null,
    ),
  );
}

let identity: string | null = null;

/** The sign-in form: the key is checked against the server before it is kept. */
function renderLogin(main: HTMLElement): void {
  document.title = `footnote — ${t("loginTitle")}`;
  main.dataset.view = "login";
  const input = h("input", { id: "api-key", type: "password", autocomplete: "off", required: true });
  const error = h("p", { class: "login-error", role: "alert" });
  const form = h(
    "form",
    { class: "card login-card", "aria-labelledby": "login-title" },
    h("h2", { id: "login-title" }, t("loginTitle")),
    h("p", {}, t("loginIntro")),
    h("label", { for: "api-key" }, t("apiKeyLabel")),
    input,
    error,
    h("button", { type: "submit", class: "btn primary" }, t("signIn")),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    void (async () => {
      if (await api.checkKey(input.value)) {
        login(input.value);
        void route();
      } else {
        error.textContent = t("badKey");
        input.select();
      }
    })();
  });
  mount(main, form);
  input.focus();
}

async function route(): Promise<void> {
  const [, name = "chat", id] = location.hash.split("/").map(decodeURIComponent);
  mount($("#header"), header());
  const main = $("#main");
  if (identity === "keys" && !apiKey()) {
    renderLogin(main);
    return;
  }
  const titles: Record<string, string> = { library: t("navLibrary"), research: t("navResearch"), review: t("navReview"), graph: t("navGraph") };
  document.title = `footnote — ${titles[name] ?? t("navChat")}`;
  main.dataset.view = name;
  if (name === "library" && id) await renderSource(main, id);
  else if (name === "library") await renderLibrary(main);
  else if (name === "research") renderResearch(main);
  else if (name === "graph") await renderGraph(main);
  else if (name === "review" && id) await renderReview(main, id);
  else if (name === "review") await renderReviewList(main);
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
  onLogout(() => void route());
  // how callers are identified decides whether to ask for a key: known before the first route
  void api.identity().catch(() => "local").then((how) => {
    identity = how;
    window.addEventListener("hashchange", () => void route());
    void route();
  });
  onLangChange(() => {
    resetViewer();
    (app.querySelector(".skip-link") as HTMLElement).textContent = t("skipToContent");
    void route();
  });
}

boot();
