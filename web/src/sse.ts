// A Server-Sent Events client on fetch + ReadableStream (so it can send headers, be aborted,
// and resume): keeps the last seen event id, reconnects with `Last-Event-ID` after a drop,
// and never delivers an id twice.

import { authHeaders } from "./auth";

export interface StreamEvent {
  id: string;
  type: string;
  data: unknown;
}

export interface StreamOptions {
  onEvent: (event: StreamEvent) => void;
  /** Called with true while the stream is down and being retried, false once it is back. */
  onReconnecting?: (down: boolean) => void;
  /** Event types after which the stream is complete (no reconnect). */
  terminal?: string[];
  signal?: AbortSignal;
  /** Delays between reconnect attempts, in ms (the last one repeats). */
  backoff?: number[];
  maxAttempts?: number;
  /**
   * A connection that delivers nothing (not even the server's keep-alive comments) for this
   * long is presumed dead (sleeping laptop, dropped Wi-Fi, a proxy) and replaced.
   */
  idleMs?: number;
}

/** Parse one SSE block ("id: …\nevent: …\ndata: …") into its fields; null for comments. */
export function parseBlock(block: string): { id?: string; type: string; data: string } | null {
  let id: string | undefined;
  let type = "message";
  const data: string[] = [];
  for (const raw of block.split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "id") id = value;
    else if (field === "event") type = value;
    else if (field === "data") data.push(value);
  }
  if (id === undefined && data.length === 0) return null;
  return { id, type, data: data.join("\n") };
}

/**
 * Follow an event stream until a terminal event arrives, the signal aborts, or reconnecting
 * fails `maxAttempts` times in a row. Resolves with the reason it ended.
 */
export async function followStream(
  url: string,
  opts: StreamOptions,
): Promise<"done" | "aborted" | "failed"> {
  const terminal = new Set(opts.terminal ?? ["done"]);
  const backoff = opts.backoff ?? [300, 1000, 2000, 4000];
  const maxAttempts = opts.maxAttempts ?? 30;
  const idleMs = opts.idleMs ?? 45_000;
  const seen = new Set<string>();
  let lastId = "";
  let failures = 0;
  let down = false;

  const setDown = (value: boolean) => {
    if (value !== down) {
      down = value;
      opts.onReconnecting?.(value);
    }
  };

  while (!opts.signal?.aborted) {
    // One controller per connection, aborted by the caller's signal or by the idle watchdog.
    const attempt = new AbortController();
    const forward = () => attempt.abort();
    opts.signal?.addEventListener("abort", forward);
    let watchdog = 0;
    const arm = () => {
      clearTimeout(watchdog);
      watchdog = window.setTimeout(() => attempt.abort(), idleMs);
    };
    try {
      const headers: Record<string, string> = { Accept: "text/event-stream", ...authHeaders() };
      if (lastId) headers["Last-Event-ID"] = lastId;
      arm();
      const response = await fetch(url, { headers, signal: attempt.signal, cache: "no-store" });
      if (response.status === 404 || response.status === 403 || response.status === 410) {
        return "failed";
      }
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      let finished = false;
      for (;;) {
        arm();
        const { value, done } = await reader.read();
        if (done) break;
        setDown(false);
        failures = 0;
        buffer += value.replace(/\r\n/g, "\n");
        let cut: number;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const parsed = parseBlock(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
          if (!parsed) continue;
          if (parsed.id !== undefined) {
            if (seen.has(parsed.id)) continue;
            seen.add(parsed.id);
            lastId = parsed.id;
          }
          let data: unknown = parsed.data;
          try {
            data = parsed.data ? JSON.parse(parsed.data) : null;
          } catch {
            /* plain text data stays a string */
          }
          opts.onEvent({ id: parsed.id ?? "", type: parsed.type, data });
          if (terminal.has(parsed.type)) finished = true;
        }
        if (finished) {
          await reader.cancel().catch(() => undefined);
          setDown(false);
          return "done";
        }
      }
      // The server closed the stream before a terminal event: resume from lastId.
      throw new Error("stream ended early");
    } catch (err) {
      if (opts.signal?.aborted) return "aborted";
      failures += 1;
      if (failures > maxAttempts) {
        setDown(false);
        return "failed";
      }
      setDown(true);
      const delay = backoff[Math.min(failures - 1, backoff.length - 1)];
      await sleep(delay, opts.signal);
      void err;
    } finally {
      clearTimeout(watchdog);
      opts.signal?.removeEventListener("abort", forward);
    }
  }
  return "aborted";
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
