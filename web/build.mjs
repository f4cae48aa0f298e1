// Builds the web app into ../src/footnote/web/static (committed, so a clone runs without npm).
// Reproducible: pinned versions from package-lock.json, no timestamps, no source maps,
// fixed file names. Run through `scripts/build-web` (npm ci && node build.mjs).
import { build } from "esbuild";
import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "src", "footnote", "web", "static");
const nm = join(here, "node_modules");

rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, "assets"), { recursive: true });

// KaTeX's stylesheet lists woff2, woff and ttf for every font; every browser we target reads
// woff2, so keep only those (about 300 KB instead of 1.2 MB).
const katexCss = readFileSync(join(nm, "katex", "dist", "katex.min.css"), "utf8").replace(
  /,url\(fonts\/[^)]+\.(?:woff|ttf)\) format\("(?:woff|truetype)"\)/g,
  "",
);
mkdirSync(join(here, ".cache"), { recursive: true });
writeFileSync(join(here, ".cache", "katex.css"), katexCss);
cpSync(join(nm, "katex", "dist", "fonts"), join(here, ".cache", "fonts"), {
  recursive: true,
  filter: (src) => !/\.(woff|ttf)$/.test(src),
});

const common = {
  bundle: true,
  minify: true,
  legalComments: "linked",
  target: ["chrome110", "firefox115", "safari16.4"],
  logLevel: "warning",
};

await build({
  ...common,
  entryPoints: { app: join(here, "src", "main.ts") },
  outdir: join(out, "assets"),
  format: "esm",
  splitting: true,
  chunkNames: "[name]",
  entryNames: "[name]",
});
await build({
  ...common,
  entryPoints: { app: join(here, "src", "styles.css") },
  outdir: join(out, "assets"),
  entryNames: "[name]",
  loader: { ".woff2": "file" },
  assetNames: "fonts/[name]",
  alias: { "katex-css": join(here, ".cache", "katex.css") },
});

// pdf.js: the worker as shipped (already minified), plus the character maps (CJK papers) and
// the standard fonts (PDFs that do not embed theirs).
const pdfjs = join(nm, "pdfjs-dist");
cpSync(join(pdfjs, "build", "pdf.worker.min.mjs"), join(out, "assets", "pdf.worker.min.mjs"));
cpSync(join(pdfjs, "cmaps"), join(out, "assets", "cmaps"), { recursive: true });
cpSync(join(pdfjs, "standard_fonts"), join(out, "assets", "standard_fonts"), { recursive: true });
cpSync(join(here, "public"), out, { recursive: true });

const size = (dir) =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .reduce((n, e) => n + readFileSync(join(e.parentPath ?? e.path, e.name)).length, 0);
console.log(`built ${out} (${(size(out) / 1024).toFixed(0)} KB)`);
