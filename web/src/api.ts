// The HTTP API, in one place. Errors arrive as {error: {code, message, detail}}.

import type { BlockInfo, MessageInfo, SectionNode, SessionInfo, SourceInfo, TurnStarted } from "./types";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function errorFrom(response: Response): Promise<ApiError> {
  let code = `http_${response.status}`;
  let message = response.statusText || `HTTP ${response.status}`;
  try {
    const body = (await response.json()) as { error?: { code?: string; message?: string }; detail?: unknown };
    if (body.error) {
      code = body.error.code ?? code;
      message = body.error.message ?? message;
    } else if (typeof body.detail === "string") {
      message = body.detail;
    }
  } catch {
    /* not JSON */
  }
  return new ApiError(response.status, code, message);
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)["Content-Type"] = "application/json";
  }
  const response = await fetch(path, init);
  if (!response.ok) throw await errorFrom(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** Lists come back either bare or wrapped ({items: […]}, {sources: […]} …). */
function list<T>(body: unknown, ...keys: string[]): T[] {
  if (Array.isArray(body)) return body as T[];
  const obj = body as Record<string, unknown>;
  for (const key of [...keys, "items", "data"]) if (Array.isArray(obj?.[key])) return obj[key] as T[];
  return [];
}

const enc = encodeURIComponent;

export const api = {
  async sources(): Promise<SourceInfo[]> {
    return list<SourceInfo>(await call("GET", "/v1/sources"), "sources");
  },
  sourceStatus(id: string): Promise<SourceInfo> {
    return call("GET", `/v1/sources/${enc(id)}`);
  },
  async source(id: string): Promise<{ source: SourceInfo; sections: SectionNode[]; blocks: BlockInfo[] }> {
    const body = await call<Record<string, unknown>>("GET", `/v1/sources/${enc(id)}/document`);
    return {
      source: (body.source ?? body) as SourceInfo,
      sections: (body.sections ?? []) as SectionNode[],
      blocks: (body.blocks ?? []) as BlockInfo[],
    };
  },
  deleteSource(id: string): Promise<void> {
    return call("DELETE", `/v1/sources/${enc(id)}`);
  },
  block(id: string): Promise<BlockInfo> {
    return call("GET", `/v1/blocks/${enc(id)}`);
  },
  fileUrl(sourceId: string): string {
    return `/v1/sources/${enc(sourceId)}/file`;
  },
  async sessions(): Promise<SessionInfo[]> {
    return list<SessionInfo>(await call("GET", "/v1/sessions"), "sessions");
  },
  createSession(title?: string): Promise<SessionInfo> {
    return call("POST", "/v1/sessions", title ? { title } : {});
  },
  renameSession(id: string, title: string): Promise<SessionInfo> {
    return call("PATCH", `/v1/sessions/${enc(id)}`, { title });
  },
  deleteSession(id: string): Promise<void> {
    return call("DELETE", `/v1/sessions/${enc(id)}`);
  },
  async messages(sessionId: string): Promise<MessageInfo[]> {
    return list<MessageInfo>(await call("GET", `/v1/sessions/${enc(sessionId)}/messages`), "messages");
  },
  /** Post a question; the answer is produced by a run whose events are streamed separately. */
  ask(sessionId: string, content: string): Promise<TurnStarted> {
    return call("POST", `/v1/sessions/${enc(sessionId)}/messages`, { content, mode: "ask" });
  },
  eventsUrl(runId: string): string {
    return `/v1/runs/${enc(runId)}/events`;
  },
  cancelRun(runId: string): Promise<void> {
    return call("POST", `/v1/runs/${enc(runId)}/cancel`);
  },
  feedback(ref: { messageId?: string | null; runId?: string | null }, rating: "up" | "down", comment: string): Promise<void> {
    const body: Record<string, string> = { rating, comment };
    if (ref.messageId) body.message_id = ref.messageId;
    else if (ref.runId) body.run_id = ref.runId;
    return call("POST", "/v1/feedback", body);
  },
};

export interface UploadProgress {
  loaded: number;
  total: number;
}

/** Upload one file with progress (XMLHttpRequest: fetch has no upload progress). */
export function uploadFile(
  file: File,
  onProgress: (p: UploadProgress) => void,
): Promise<SourceInfo> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/v1/sources");
    xhr.setRequestHeader("Accept", "application/json");
    xhr.upload.addEventListener("progress", (e) => onProgress({ loaded: e.loaded, total: e.total }));
    xhr.addEventListener("load", () => {
      let body: Record<string, unknown> = {};
      const source = () => body as unknown as SourceInfo;
      try {
        body = JSON.parse(xhr.responseText) as Record<string, unknown>;
      } catch {
        /* keep empty */
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(source());
      else {
        const err = (body.error ?? {}) as { code?: string; message?: string };
        const detail = typeof body.detail === "string" ? body.detail : "";
        reject(new ApiError(xhr.status, err.code ?? `http_${xhr.status}`, err.message ?? (detail || xhr.statusText)));
      }
    });
    xhr.addEventListener("error", () => reject(new ApiError(0, "network", "network error")));
    const form = new FormData();
    form.append("file", file, file.name);
    xhr.send(form);
  });
}
