// Chat: the conversation list (new, rename, delete) and one conversation, whose answers stream
// in over SSE with resume after a dropped connection and a stop button.

import { api } from "./api";
import { AnswerView, normAnswer } from "./answer";
import { h, icon, ICONS, mount } from "./dom";
import { download } from "./download";
import { t } from "./i18n";
import { renderMarkdown } from "./markdown";
import { followStream } from "./sse";
import type { MessageInfo, SessionInfo } from "./types";
import { confirmDialog, errorText, promptDialog, spinner, toast } from "./ui";

interface Running {
  runId: string;
  view: AnswerView;
  abort: AbortController;
}

let running: Running | null = null;

/** A conversation's search scope (a source id, or "" for the library) and answer mode. */
interface Scope {
  source: string;
  agent: boolean;
}

export async function renderChat(root: HTMLElement, sessionId: string | undefined): Promise<void> {
  running?.abort.abort();
  running = null;
  const sidebar = h("nav", { class: "sessions", id: "sessions", "aria-label": t("sessions") });
  const thread = h("div", { class: "thread", role: "log", "aria-live": "off", "aria-label": t("navChat") });
  const textarea = h("textarea", {
    class: "input composer-input",
    rows: "1",
    placeholder: t("askPlaceholder"),
    "aria-label": t("askPlaceholder"),
    name: "question",
  });
  const sendBtn = h("button", { class: "btn primary send", type: "submit", "aria-label": t("ask") }, icon(ICONS.send), h("span", { class: "label" }, t("ask")));
  const stopBtn = h("button", { class: "btn stop", type: "button", hidden: true, "aria-label": t("stop") }, icon(ICONS.stop), h("span", { class: "label" }, t("stop")));
  // What this conversation searches (one paper or the library) and how it answers.
  const scopeSelect = h("select", { class: "input small scope", name: "scope", "aria-label": t("searchIn") }, h("option", { value: "" }, t("wholeLibrary"))) as HTMLSelectElement;
  const agentBox = h("input", { type: "checkbox", name: "agent" }) as HTMLInputElement;
  const options = h(
    "div",
    { class: "composer-options" },
    h("label", { class: "small muted" }, t("searchIn"), " ", scopeSelect),
    h("label", { class: "small agent-toggle", title: t("agentModeHint") }, agentBox, " ", t("agentMode")),
  );
  const form = h("form", { class: "composer" }, textarea, sendBtn, stopBtn);
  const toggle = h("button", { class: "icon-btn sessions-toggle", "aria-label": t("sessions"), "aria-controls": "sessions", "aria-expanded": "false" }, icon(ICONS.menu));
  const layout = h(
    "div",
    { class: "chat" },
    sidebar,
    h("section", { class: "conversation", "aria-label": t("navChat") }, h("div", { class: "conversation-bar" }, toggle, h("h1", { class: "conversation-title" })), thread, options, form),
  );
  mount(root, layout);

  const setDrawer = (open: boolean) => {
    layout.classList.toggle("sessions-open", open);
    toggle.setAttribute("aria-expanded", String(open));
  };
  toggle.addEventListener("click", () => setDrawer(!layout.classList.contains("sessions-open")));
  // On a phone the list is a drawer: Escape or a tap beside it closes it.
  layout.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && layout.classList.contains("sessions-open")) {
      setDrawer(false);
      toggle.focus();
    }
  });
  layout.addEventListener("click", (e) => {
    if (layout.classList.contains("sessions-open") && e.target === layout) setDrawer(false);
  });
  textarea.addEventListener("input", () => autoGrow(textarea));
  textarea.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });

  const scopeKey = (sid: string | undefined) => `footnote.scope.${sid ?? "new"}`;
  // The saved choice is read at once; the source list arrives later, and until it does the
  // saved source is what a question searches.
  let saved: Scope = { source: "", agent: false };
  try {
    saved = { ...saved, ...(JSON.parse(localStorage.getItem(scopeKey(sessionId)) ?? "{}") as Partial<Scope>) };
  } catch {
    /* a damaged entry: the defaults */
  }
  let pendingSource = saved.source;
  agentBox.checked = saved.agent;
  const chosenSource = () => scopeSelect.value || pendingSource;
  const saveScope = () => {
    const scope: Scope = { source: chosenSource(), agent: agentBox.checked };
    localStorage.setItem(scopeKey(sessionId), JSON.stringify(scope));
  };
  scopeSelect.addEventListener("change", () => {
    pendingSource = "";
    saveScope();
  });
  agentBox.addEventListener("change", saveScope);
  void (async () => {
    try {
      for (const s of await api.sources()) {
        if (s.status === "ready") scopeSelect.appendChild(h("option", { value: s.id }, s.title || s.filename || s.id));
      }
    } catch {
      /* the library stays the scope */
    }
    if ([...scopeSelect.options].some((o) => o.value === pendingSource)) scopeSelect.value = pendingSource;
    pendingSource = "";
  })();

  let sessions: SessionInfo[] = [];
  const refreshSessions = async () => {
    try {
      sessions = await api.sessions();
    } catch (err) {
      toast(errorText(err), "error");
    }
    renderSessions(sidebar, sessions, sessionId, refreshSessions);
    const current = sessions.find((s) => s.id === sessionId);
    layout.querySelector(".conversation-title")!.textContent = current ? current.title || t("untitled") : t("newChat");
  };
  // Not awaited here: the composer is on screen already, and its submit handler must be in
  // place before a question typed while the list loads is sent (else the form submits natively
  // and the page reloads with the question lost).
  const listed = refreshSessions();

  const setBusy = (busy: boolean) => {
    sendBtn.hidden = busy;
    stopBtn.hidden = !busy;
    textarea.disabled = false;
    thread.setAttribute("aria-busy", String(busy));
  };

  const stream = async (runId: string, view: AnswerView) => {
    const abort = new AbortController();
    running = { runId, view, abort };
    setBusy(true);
    const outcome = await followStream(api.eventsUrl(runId), {
      signal: abort.signal,
      terminal: ["done"],
      onEvent: (e) => {
        view.handle(e.type, (e.data ?? {}) as Record<string, unknown>);
        if (e.type === "final") keepQuestionInView(thread, view.el);
        else if (e.type !== "done") scrollToEnd(thread);
      },
      onReconnecting: (down) => view.setReconnecting(down),
      idleMs: idleTimeout(),
    });
    if (outcome !== "done") view.markStopped();
    view.setReconnecting(false);
    if (running?.runId === runId) running = null;
    setBusy(false);
  };

  stopBtn.addEventListener("click", async () => {
    const r = running;
    if (!r) return;
    stopBtn.disabled = true;
    try {
      // The run ends with error(cancelled) + done, which the stream still delivers.
      await api.cancelRun(r.runId);
    } catch {
      r.abort.abort(); // not running any more (or unreachable): stop listening anyway
    } finally {
      stopBtn.disabled = false;
    }
  });

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const question = textarea.value.trim();
    if (!question || running) return;
    let sid = sessionId;
    try {
      if (!sid) {
        const created = await api.createSession(titleFrom(question));
        sid = created.id;
        sessionId = sid;
        saveScope(); // the choice made before the conversation existed stays with it
        history.replaceState(null, "", `#/chat/${sid}`);
        void refreshSessions();
      }
      thread.querySelector(".empty-chat")?.remove();
      thread.appendChild(userTurn(question));
      textarea.value = "";
      autoGrow(textarea);
      const view = new AnswerView(null);
      thread.appendChild(view.el);
      view.handle("status", { stage: "send", message: t("working") });
      scrollToEnd(thread);
      const posted = await api.ask(sid, question, {
        mode: agentBox.checked ? "agent" : "ask",
        sources: chosenSource() ? [chosenSource()] : [],
      });
      view.runId = posted.run_id;
      view.messageId = posted.reply.id;
      await stream(posted.run_id, view);
      void refreshSessions();
    } catch (err) {
      toast(errorText(err), "error");
      setBusy(false);
    }
  });
  await listed;

  if (!sessionId) {
    thread.appendChild(await emptyState());
    textarea.focus();
    return;
  }
  thread.setAttribute("aria-busy", "true");
  thread.appendChild(spinner());
  let messages: MessageInfo[] = [];
  try {
    messages = await api.messages(sessionId);
  } catch (err) {
    mount(thread, h("p", { class: "error", role: "alert" }, errorText(err)));
    return;
  }
  mount(thread);
  thread.setAttribute("aria-busy", "false");
  if (!messages.length) thread.appendChild(await emptyState());
  let resume: { runId: string; view: AnswerView } | null = null;
  for (const m of messages) {
    const answer = m.data?.answer;
    if (m.role === "user") {
      thread.appendChild(userTurn(m.content));
    } else if (answer) {
      thread.appendChild(AnswerView.fromStored(normAnswer(answer as unknown as Record<string, unknown>), m.id, m.run_id, m.feedback).el);
    } else if (m.run_id && m.status === "pending") {
      // Still being answered (e.g. the page was reloaded mid-run): follow it from the start.
      const view = new AnswerView(m.run_id, m.id);
      thread.appendChild(view.el);
      resume = { runId: m.run_id, view };
    } else if (!m.content) {
      thread.appendChild(h("article", { class: "turn assistant plain" }, h("div", { class: "answer-col muted stopped" }, m.status === "cancelled" ? t("stopped") : `${t("errorPrefix")} (${m.status})`)));
    } else {
      const el = h("article", { class: "turn assistant plain" }, h("div", { class: "answer-col" }));
      el.firstElementChild!.innerHTML = renderMarkdown(m.content);
      thread.appendChild(el);
    }
  }
  scrollToEnd(thread);
  if (resume) await stream(resume.runId, resume.view);
}

function userTurn(text: string): HTMLElement {
  const el = h("article", { class: "turn user", "aria-label": t("you") }, h("div", { class: "bubble" }));
  el.firstElementChild!.innerHTML = renderMarkdown(text);
  return el;
}

async function emptyState(): Promise<HTMLElement> {
  let count = 1;
  try {
    count = (await api.sources()).length;
  } catch {
    /* show the normal hint */
  }
  return h(
    "div",
    { class: "empty-chat" },
    h("p", { class: "empty-mark", "aria-hidden": "true" }, "¹"),
    count ? h("p", {}, t("emptyChat")) : h("p", {}, t("emptyChatNoSources"), " ", h("a", { href: "#/library" }, t("goToLibrary"))),
  );
}

function renderSessions(nav: HTMLElement, sessions: SessionInfo[], currentId: string | undefined, refresh: () => Promise<void>): void {
  const items = sessions.map((s) => {
    const title = s.title || t("untitled");
    return h(
      "li",
      { class: `session${s.id === currentId ? " current" : ""}`, "data-session": s.id },
      h("a", { href: `#/chat/${s.id}`, "aria-current": s.id === currentId ? "page" : null, class: "session-link" }, title),
      h(
        "span",
        { class: "session-actions" },
        h(
          "button",
          {
            class: "icon-btn small",
            "aria-label": `${t("rename")}: ${title}`,
            title: t("rename"),
            onclick: async () => {
              const name = await promptDialog(t("renamePrompt"), title);
              if (!name) return;
              try {
                await api.renameSession(s.id, name);
              } catch (err) {
                toast(errorText(err), "error");
              }
              await refresh();
            },
          },
          icon(ICONS.edit),
        ),
        h(
          "button",
          {
            class: "icon-btn small",
            "aria-label": `${t("exportThread")}: ${title}`,
            title: t("exportThread"),
            onclick: () => void download(`/v1/sessions/${encodeURIComponent(s.id)}/export?format=pdf`),
          },
          icon(ICONS.page),
        ),
        h(
          "button",
          {
            class: "icon-btn small danger",
            "aria-label": `${t("delete")}: ${title}`,
            title: t("delete"),
            onclick: async () => {
              if (!(await confirmDialog(t("confirmDeleteSession", { title }), t("delete")))) return;
              try {
                await api.deleteSession(s.id);
              } catch (err) {
                toast(errorText(err), "error");
              }
              if (s.id === currentId) location.hash = "#/chat";
              else await refresh();
            },
          },
          icon(ICONS.trash),
        ),
      ),
    );
  });
  mount(
    nav,
    h("div", { class: "sessions-head" }, h("h2", {}, t("sessions")), h("a", { class: "btn small primary", href: "#/chat", "data-testid": "new-chat" }, icon(ICONS.plus), t("newChat"))),
    sessions.length ? h("ul", { class: "session-list" }, items) : h("p", { class: "muted small pad" }, t("noSessions")),
  );
}

/** How long a silent stream is trusted (the server pings every 15 s by default); a
 * `footnote.sseIdleMs` entry in localStorage overrides it (tests, unusual proxies). */
function idleTimeout(): number {
  const override = Number(localStorage.getItem("footnote.sseIdleMs"));
  return override > 0 ? override : 45_000;
}

/** A conversation's first title: the question, cut at a word near 60 characters. */
function titleFrom(question: string): string {
  const text = question.replace(/\s+/g, " ").trim();
  if (text.length <= 60) return text;
  const cut = text.slice(0, 60);
  const space = cut.lastIndexOf(" ");
  return `${space > 30 ? cut.slice(0, space) : cut}…`;
}

function autoGrow(el: HTMLTextAreaElement): void {
  el.style.height = "auto";
  el.style.height = `${Math.min(el.scrollHeight, 200)}px`;
}

/** A long finished answer should be read from its question down, not from its end. */
function keepQuestionInView(thread: HTMLElement, answer: HTMLElement): void {
  const question = answer.previousElementSibling as HTMLElement | null;
  const anchor = question ?? answer;
  const top = anchor.getBoundingClientRect().top - thread.getBoundingClientRect().top + thread.scrollTop;
  if (top - 12 < thread.scrollTop) thread.scrollTo({ top: Math.max(0, top - 12), behavior: "instant" });
}

function scrollToEnd(el: HTMLElement): void {
  const nearBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 240;
  if (nearBottom) el.scrollTop = el.scrollHeight;
}
