// The research page's calls to /v1/research and the shapes it reads: what the form may offer
// (web search only with a provider), a run with its options (budget, sources, usage), and the
// typed events of a run's stream that the live view draws.

import { call } from "./api";
import type { OutlineItemInfo } from "./types";

const enc = encodeURIComponent;

export interface ResearchChoices {
  web: boolean;
  web_providers: string[];
  budget_tokens: number;
  budget_minutes: number;
}

export interface RunOptions {
  template?: string | null;
  web?: boolean | null;
  budget_tokens?: number | null;
  budget_minutes?: number | null;
  source_ids?: string[] | null;
  used?: Record<string, number>;
}

export interface ResearchRun {
  id: string;
  state: string;
  question: string;
  outline: { question: string; template: string; items: OutlineItemInfo[]; confirmed: boolean } | null;
  created_at: string;
  updated_at: string;
  stream_url: string;
  options: RunOptions;
}

export interface NewRun {
  question: string;
  template: string | null;
  web: boolean;
  budget_tokens: number | null;
  budget_minutes: number | null;
  source_ids: string[] | null;
}

/** A sub-question as the plan event sends it. */
export interface SubQuestionInfo {
  id: string;
  item_id: string;
  question: string;
  budget: Record<string, number>;
  web: boolean;
}

/** A budget tick: `scope` is `run` or a sub-question id. */
export interface BudgetInfo {
  scope: string;
  used: Record<string, number>;
  limits: Record<string, number | null>;
  fraction: number;
  warning: boolean;
  exhausted: string | null;
}

export const researchApi = {
  choices(): Promise<ResearchChoices> {
    return call("GET", "/v1/research/options");
  },
  propose(body: NewRun): Promise<ResearchRun> {
    return call("POST", "/v1/research", body);
  },
  start(id: string, items: OutlineItemInfo[]): Promise<ResearchRun> {
    return call("POST", `/v1/research/${enc(id)}/start`, { outline: { items } });
  },
  run(id: string): Promise<ResearchRun> {
    return call("GET", `/v1/research/${enc(id)}`);
  },
  runs(): Promise<ResearchRun[]> {
    return call("GET", "/v1/research");
  },
};

/** States whose brief exists (and can be reviewed). */
export const FINISHED = new Set(["completed", "wrapped_up"]);
/** States of a run that is (or may still be) under way. */
export const UNDER_WAY = new Set(["outline_confirmed", "running"]);
