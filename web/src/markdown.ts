// Markdown (markdown-it, raw HTML off) with $…$ / $$…$$ / \(…\) / \[…\] formulas (KaTeX).

import katex from "katex";
import MarkdownIt, { type StateBlock, type StateInline } from "markdown-it";

function renderMath(tex: string, displayMode: boolean): string {
  return katex.renderToString(tex, { displayMode, throwOnError: false, output: "htmlAndMathml" });
}

function mathInline(state: StateInline, silent: boolean): boolean {
  const src = state.src;
  const start = state.pos;
  let open: string;
  let close: string;
  if (src.startsWith("\\(", start)) [open, close] = ["\\(", "\\)"];
  else if (src.startsWith("$", start) && !src.startsWith("$$", start)) [open, close] = ["$", "$"];
  else return false;
  const from = start + open.length;
  // "$5 and $6" is money, not math: an opening $ must not be followed by a space or digit-space.
  if (open === "$" && (/\s/.test(src[from] ?? " ") || /^\d[\d.,]*\s/.test(src.slice(from)))) {
    return false;
  }
  let end = src.indexOf(close, from);
  while (end > 0 && src[end - 1] === "\\" && open === "$") end = src.indexOf(close, end + 1);
  if (end < 0 || end === from) return false;
  if (open === "$" && /\s/.test(src[end - 1])) return false;
  if (!silent) {
    const token = state.push("math_inline", "math", 0);
    token.content = src.slice(from, end);
  }
  state.pos = end + close.length;
  return true;
}

function mathBlock(state: StateBlock, startLine: number, endLine: number, silent: boolean): boolean {
  const first = state.src.slice(state.bMarks[startLine] + state.tShift[startLine], state.eMarks[startLine]);
  const open = first.startsWith("$$") ? "$$" : first.startsWith("\\[") ? "\\[" : "";
  if (!open) return false;
  const close = open === "$$" ? "$$" : "\\]";
  let content = first.slice(2);
  let line = startLine;
  let found = content.trimEnd().endsWith(close);
  if (found) content = content.trimEnd().slice(0, -2);
  while (!found && ++line < endLine) {
    const text = state.src.slice(state.bMarks[line] + state.tShift[line], state.eMarks[line]);
    if (text.trimEnd().endsWith(close)) {
      content += "\n" + text.trimEnd().slice(0, -2);
      found = true;
    } else {
      content += "\n" + text;
    }
  }
  if (!found) return false;
  if (silent) return true;
  const token = state.push("math_block", "math", 0);
  token.block = true;
  token.content = content.trim();
  token.map = [startLine, line + 1];
  state.line = line + 1;
  return true;
}

const md = MarkdownIt({ html: false, linkify: true, typographer: false, breaks: false });
md.inline.ruler.after("escape", "math_inline", mathInline);
md.block.ruler.before("fence", "math_block", mathBlock, {
  alt: ["paragraph", "reference", "blockquote", "list"],
});
md.renderer.rules.math_inline = (tokens, idx) => renderMath(tokens[idx].content, false);
md.renderer.rules.math_block = (tokens, idx) =>
  `<div class="math-block">${renderMath(tokens[idx].content, true)}</div>`;
// Links open in a new tab and never leak the referrer.
const defaultLink = md.renderer.rules.link_open ?? ((t, i, o, _e, s) => s.renderToken(t, i, o));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx].attrSet("target", "_blank");
  tokens[idx].attrSet("rel", "noopener noreferrer");
  return defaultLink(tokens, idx, options, env, self);
};

// Answers and briefs quote untrusted document text: an image there would be fetched by the
// reader's browser (a tracking pixel inside a checked answer). An image is shown as its
// alt text and address, never loaded.
md.renderer.rules.image = (tokens, idx, _options, _env, self) => {
  const token = tokens[idx];
  const alt = self.renderInlineAsText(token.children ?? [], _options, _env);
  const src = md.utils.escapeHtml(String(token.attrGet("src") ?? ""));
  return `<span class="image-omitted" title="${src}">[image: ${md.utils.escapeHtml(alt)}]</span>`;
};

/** Markdown to HTML (safe: raw HTML in the source is escaped; images are not loaded). */
export function renderMarkdown(text: string): string {
  return md.render(text);
}

/** One sentence of an answer, inline (no wrapping paragraph). */
export function renderInline(text: string): string {
  return md.renderInline(text);
}
