// Interface text in English and Chinese. The language follows the browser unless the user
// picked one (kept in localStorage). `t(key, {n: 3})` fills {placeholders}.

const en = {
  appName: "footnote",
  tagline: "answers with checked footnotes",
  navLibrary: "Library",
  navChat: "Chat",
  language: "Language",
  theme: "Theme",
  skipToContent: "Skip to content",
  // library
  libraryTitle: "Library",
  libraryEmpty: "No documents yet. Add PDFs, HTML, Markdown or text files to start asking.",
  dropHere: "Drop files here, or",
  chooseFiles: "choose files",
  dropHint: "PDF, HTML, Markdown or plain text · several at once",
  uploading: "Uploading",
  parsing: "Reading and indexing",
  added: "Added",
  unchanged: "Already in the library",
  newVersion: "Added as a new version",
  failed: "Could not add",
  colTitle: "Title",
  colPages: "Pages",
  colLanguage: "Language",
  colLabels: "Labels",
  colActions: "Actions",
  open: "Open",
  delete: "Delete",
  confirmDelete: "Delete “{title}” and everything indexed from it?",
  deleted: "Deleted “{title}”",
  noLabels: "none",
  pagesN: "{n} pages",
  blocksN: "{n} blocks",
  warnings: "Warnings",
  // source
  backToLibrary: "Back to library",
  sections: "Sections",
  tables: "Tables",
  noTables: "No tables were found in this document.",
  noSections: "No section headings were found.",
  viewPdf: "View PDF",
  page: "page",
  pageN: "p. {n}",
  // chat
  sessions: "Conversations",
  newChat: "New conversation",
  rename: "Rename",
  renamePrompt: "New name for this conversation",
  confirmDeleteSession: "Delete the conversation “{title}”?",
  untitled: "Untitled conversation",
  noSessions: "No conversations yet.",
  askPlaceholder: "Ask about your papers…",
  ask: "Ask",
  stop: "Stop",
  stopped: "Stopped.",
  you: "You",
  assistant: "footnote",
  emptyChat: "Ask a question. Every sentence of the answer will point to the passage it comes from.",
  emptyChatNoSources: "Your library is empty. Add a document first.",
  goToLibrary: "Go to the library",
  reconnecting: "Connection lost — reconnecting…",
  working: "Working…",
  drafting: "Draft",
  footnote: "Footnote {n}",
  sectionUnknown: "(no section)",
  errorPrefix: "Something went wrong",
  // evidence
  evidenceBoard: "Evidence",
  supportScore: "Support",
  supportHelp: "Share of factual sentences with a supported citation, scaled by relevance.",
  verdict_supported: "supported",
  verdict_weak: "weak",
  verdict_unsupported: "unsupported",
  verdict_fabricated: "fabricated",
  status_answered: "Answered",
  status_no_evidence: "No evidence",
  status_weak_evidence: "Weak evidence",
  status_refused: "Not answered",
  nearest: "Nearest passages",
  openAtPage: "Open page {n}",
  relevance: "relevance {n}",
  insufficient: "not enough evidence",
  // feedback
  helpful: "Helpful",
  notHelpful: "Not helpful",
  feedbackComment: "What could be better? (optional)",
  sendFeedback: "Send",
  feedbackThanks: "Thank you for the feedback.",
  // pdf
  pdfViewer: "Document viewer",
  close: "Close",
  previousPage: "Previous page",
  nextPage: "Next page",
  zoomIn: "Zoom in",
  zoomOut: "Zoom out",
  pageOf: "Page {n} of {total}",
  highlighted: "Highlighted passage",
  pdfUnavailable: "The original file is not available; showing the passage text.",
  loading: "Loading…",
  menu: "Menu",
};

export type Key = keyof typeof en;

const zh: Record<Key, string> = {
  appName: "footnote",
  tagline: "每句话都有经过核验的脚注",
  navLibrary: "文献库",
  navChat: "对话",
  language: "语言",
  theme: "主题",
  skipToContent: "跳到正文",
  libraryTitle: "文献库",
  libraryEmpty: "还没有文档。添加 PDF、HTML、Markdown 或纯文本文件后即可提问。",
  dropHere: "把文件拖到这里，或",
  chooseFiles: "选择文件",
  dropHint: "PDF、HTML、Markdown 或纯文本 · 可一次选多个",
  uploading: "上传中",
  parsing: "解析并建立索引",
  added: "已添加",
  unchanged: "文献库中已有此文件",
  newVersion: "已作为新版本添加",
  failed: "无法添加",
  colTitle: "标题",
  colPages: "页数",
  colLanguage: "语言",
  colLabels: "标签",
  colActions: "操作",
  open: "打开",
  delete: "删除",
  confirmDelete: "删除“{title}”及其全部索引？",
  deleted: "已删除“{title}”",
  noLabels: "无",
  pagesN: "{n} 页",
  blocksN: "{n} 个段落块",
  warnings: "提示",
  backToLibrary: "返回文献库",
  sections: "章节",
  tables: "表格",
  noTables: "此文档中没有找到表格。",
  noSections: "没有找到章节标题。",
  viewPdf: "查看 PDF",
  page: "页",
  pageN: "第 {n} 页",
  sessions: "对话",
  newChat: "新对话",
  rename: "重命名",
  renamePrompt: "为此对话输入新名称",
  confirmDeleteSession: "删除对话“{title}”？",
  untitled: "未命名对话",
  noSessions: "还没有对话。",
  askPlaceholder: "就你的论文提问…",
  ask: "提问",
  stop: "停止",
  stopped: "已停止。",
  you: "你",
  assistant: "footnote",
  emptyChat: "提一个问题。回答中的每句话都会指向它所依据的原文段落。",
  emptyChatNoSources: "文献库是空的，请先添加文档。",
  goToLibrary: "前往文献库",
  reconnecting: "连接中断，正在重新连接…",
  working: "处理中…",
  drafting: "草稿",
  footnote: "脚注 {n}",
  sectionUnknown: "（无章节）",
  errorPrefix: "出错了",
  evidenceBoard: "证据",
  supportScore: "支持度",
  supportHelp: "有可靠引用支撑的事实句所占比例，再乘以证据的相关度。",
  verdict_supported: "支持",
  verdict_weak: "较弱",
  verdict_unsupported: "不支持",
  verdict_fabricated: "虚构",
  status_answered: "已回答",
  status_no_evidence: "没有证据",
  status_weak_evidence: "证据不足",
  status_refused: "未回答",
  nearest: "最接近的段落",
  openAtPage: "打开第 {n} 页",
  relevance: "相关度 {n}",
  insufficient: "证据不足",
  helpful: "有帮助",
  notHelpful: "没有帮助",
  feedbackComment: "哪里可以改进？（可选）",
  sendFeedback: "发送",
  feedbackThanks: "感谢你的反馈。",
  pdfViewer: "文档查看器",
  close: "关闭",
  previousPage: "上一页",
  nextPage: "下一页",
  zoomIn: "放大",
  zoomOut: "缩小",
  pageOf: "第 {n} 页，共 {total} 页",
  highlighted: "高亮的段落",
  pdfUnavailable: "原始文件不可用，下面显示段落文本。",
  loading: "加载中…",
  menu: "菜单",
};

export type Lang = "en" | "zh";
const tables: Record<Lang, Record<Key, string>> = { en, zh };
const STORAGE_KEY = "footnote.lang";

function detect(): Lang {
  const saved = localStorage.getItem(STORAGE_KEY);
  if (saved === "en" || saved === "zh") return saved;
  const prefs = navigator.languages?.length ? navigator.languages : [navigator.language];
  for (const tag of prefs) {
    const base = tag.toLowerCase().split("-")[0];
    if (base === "zh") return "zh";
    if (base === "en") return "en";
  }
  return "en";
}

let current: Lang = detect();
const listeners = new Set<() => void>();

export function lang(): Lang {
  return current;
}

export function setLang(next: Lang): void {
  current = next;
  localStorage.setItem(STORAGE_KEY, next);
  document.documentElement.lang = next === "zh" ? "zh-CN" : "en";
  for (const fn of listeners) fn();
}

export function onLangChange(fn: () => void): void {
  listeners.add(fn);
}

export function t(key: Key, vars: Record<string, string | number> = {}): string {
  const text = tables[current][key] ?? en[key];
  return text.replace(/\{(\w+)\}/g, (_, name: string) => String(vars[name] ?? `{${name}}`));
}

/** A pipeline status message ("searching 3 sources") in the interface language. */
export function statusText(stage: string, message: string): string {
  if (current === "en") return message;
  const n = /(\d+)/.exec(message)?.[1] ?? "";
  const map: Record<string, string> = {
    understand: "正在理解问题",
    retrieve: `正在检索 ${n} 个文档`,
    compose: message.includes("revis") ? `正在修改回答（第 ${n} 轮）` : "正在撰写回答",
    verify: `正在核验 ${n} 处引用`,
    context: "正在阅读对话上下文",
    rewrite: `正在检索：${message.replace(/^[^:]*:\s*/, "")}`,
  };
  return map[stage] ?? message;
}

document.documentElement.lang = current === "zh" ? "zh-CN" : "en";
