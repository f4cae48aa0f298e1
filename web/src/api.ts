// The HTTP API, in one place. Errors arrive as {error: {code, message, detail}}.

import { authHeaders, loginRequired } from "./auth";
import type { BlockInfo, MessageInfo, OutlineItemInfo, ResearchInfo, SectionNode, SessionInfo, SourceInfo, TurnStarted } from "./types";

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

/** A JSON call to the API (errors as ApiError; 401 asks for a key). */
export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, headers: { Accept: "application/json", ...authHeaders() } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)["Content-Type"] = "application/json";
  }
  const response = await fetch(path, init);
  if (response.status === 401) loginRequired();
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

export interface ReviewClaim {
  id: string; text: string; original_text: string; card_ids: string[]; verdict: string; kind: string;
  key_number: boolean; sampled: boolean; decision: "approve" | "edit" | "reject" | null; seen: boolean; ticked: boolean;
}
export interface ReviewCard {
  id: string; claim: string; snippet: string; locator: string; source_title: string; url: string;
  snapshot_id: string | null; block_id: string | null; span: [number, number] | null; published_at: string | null;
  source_type: string; independence: string; labels: string[];
}
export interface ReviewConflict {
  id: string; metric: string; note: string;
  values: { card_id: string; text: string; year: number | null; scope: string; source_title: string }[];
  resolution: { resolution: string; card_id?: string | null; note?: string } | null;
}
export interface ReviewOrigin {
  id: string; members: string[]; basis: string; cards: ReviewCard[];
  decision: { decision: "same" | "independent" | "secondary"; reason: string; by: string; at: string } | null;
}
export interface ReviewView {
  run_id: string; question: string; sample_rate: number; blockers: string[];
  origins: ReviewOrigin[];
  review: {
    state: string; version: number; version_hash: string; reviewer: string | null; signed_at: string | null;
    coverage: { claims: number; seen: number; approved: number; edited: number; rejected: number; key_numbers: number;
      key_numbers_ticked: number; sampled: number; conflicts: number; conflicts_resolved: number; minutes: number };
    signoffs: { version: number; version_hash: string; reviewer: string; signed_at: string }[];
  };
  sections: { item_id: string; title: string; coverage: string; claims: ReviewClaim[]; judge_not_used: string[] }[];
  cards: ReviewCard[];
  conflicts: ReviewConflict[];
  result?: { accepted: boolean; verdict: string; reasons: Record<string, string> };
}

export const api = {
  proposeResearch(body: { question: string; template: string | null; web: boolean }): Promise<ResearchInfo> {
    return call("POST", "/v1/research", body);
  },
  startResearch(id: string, outline: { items: OutlineItemInfo[] }): Promise<ResearchInfo> {
    return call("POST", `/v1/research/${enc(id)}/start`, { outline });
  },
  researchRuns(): Promise<ResearchInfo[]> {
    return call("GET", "/v1/research");
  },
  review(id: string): Promise<ReviewView> {
    return call("GET", `/v1/research/${enc(id)}/review`);
  },
  reviewSeen(id: string, claimId: string): Promise<void> {
    return call("POST", `/v1/research/${enc(id)}/review/seen`, { claim_id: claimId });
  },
  reviewDecide(id: string, claimId: string, body: { action: string; text?: string; note?: string }): Promise<ReviewView> {
    return call("POST", `/v1/research/${enc(id)}/review/claims/${enc(claimId)}`, body);
  },
  reviewTick(id: string, claimId: string, ticked: boolean): Promise<ReviewView> {
    return call("POST", `/v1/research/${enc(id)}/review/ticks/${enc(claimId)}`, { ticked });
  },
  reviewResolve(id: string, conflictId: string, body: { resolution: string; card_id: string | null; note: string }): Promise<ReviewView> {
    return call("POST", `/v1/research/${enc(id)}/review/conflicts/${enc(conflictId)}`, body);
  },
  reviewOrigin(id: string, groupId: string, body: { decision: string; reason: string }): Promise<ReviewView> {
    return call("POST", `/v1/research/${enc(id)}/review/origins/${enc(groupId)}`, body);
  },
  reviewSignOff(id: string): Promise<{ version: number; version_hash: string }> {
    return call("POST", `/v1/research/${enc(id)}/review/signoff`);
  },
  snapshot(id: string, snapshotId: string): Promise<{ text: string; final_url: string; sha256: string; fetched_at: string }> {
    return call("GET", `/v1/research/${enc(id)}/snapshots/${enc(snapshotId)}`);
  },
  async briefMarkdown(id: string): Promise<string> {
    const response = await fetch(`/v1/research/${enc(id)}/brief?format=markdown`, { headers: authHeaders() });
    if (!response.ok) throw await errorFrom(response);
    return response.text();
  },

  /** How the server identifies callers: `keys` (an API key is needed) or `local`. */
  async identity(): Promise<string> {
    const body = await call<{ identity?: string }>("GET", "/v1/health");
    return body.identity ?? "local";
  },
  /** Whether `key` is accepted (tried on a cheap call without storing it). */
  async checkKey(key: string): Promise<boolean> {
    const response = await fetch("/v1/sessions?limit=1", {
      headers: { Accept: "application/json", Authorization: `Bearer ${key.trim()}` },
    });
    return response.ok;
  },
  async sources(): Promise<SourceInfo[]> {
    return list<SourceInfo>(await call("GET", "/v1/sources"), "sources");
  },
  formats(): Promise<{ name: string; suffixes: string[] }[]> {
    return call("GET", "/v1/sources/formats");
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
  ask(sessionId: string, content: string, scope: { mode?: "ask" | "agent"; sources?: string[] } = {}): Promise<TurnStarted> {
    return call("POST", `/v1/sessions/${enc(sessionId)}/messages`, { content, mode: scope.mode ?? "ask", sources: scope.sources ?? [] });
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
  groups: string,
  onProgress: (p: UploadProgress) => void,
): Promise<SourceInfo> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/v1/sources");
    xhr.setRequestHeader("Accept", "application/json");
    for (const [name, value] of Object.entries(authHeaders())) xhr.setRequestHeader(name, value);
    xhr.upload.addEventListener("progress", (e) => onProgress({ loaded: e.loaded, total: e.total }));
    xhr.addEventListener("load", () => {
      let body: Record<string, unknown> = {};
      const source = () => body as unknown as SourceInfo;
      try {
        body = JSON.parse(xhr.responseText) as Record<string, unknown>;
      } catch {
        /* keep empty */
      }
      if (xhr.status === 401) loginRequired();
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
    if (groups) form.append("acl_groups", groups);
    xhr.send(form);
  });
}
