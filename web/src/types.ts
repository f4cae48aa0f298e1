// The JSON shapes the HTTP API returns (see footnote.store.codec and footnote.server).

export type Verdict = "supported" | "weak" | "unsupported" | "fabricated";
export type AnswerStatus = "answered" | "no_evidence" | "weak_evidence" | "refused";

export interface SourceInfo {
  id: string;
  status: "processing" | "ready" | "failed";
  title: string | null;
  filename: string | null;
  kind: string | null;
  pages: number | null;
  blocks: number | null;
  lang?: string | null;
  labels: string[];
  acl_groups: string[];
  owner?: string | null;
  shared_with?: string[];
  public?: boolean;
  can_delete?: boolean;
  warnings?: string[];
  uri?: string;
  error: string | null;
}

export interface SectionNode {
  title: string;
  level: number;
  block_ids: string[];
  children: SectionNode[];
}

export interface BlockInfo {
  id: string;
  source_id: string;
  kind: string;
  page: number;
  section_path: string[];
  text: string;
  bbox: [number, number, number, number] | null;
  table?: { caption: string; header: string[][]; rows: string[][] };
  page_size?: [number, number] | null;
}

export interface CitationInfo {
  id: string;
  page: number | null;
  section: string[];
  quote: string;
  verdict: Verdict;
  relevance: number;
  checks?: Record<string, string>;
}

export interface SentenceInfo {
  text: string;
  citations: CitationInfo[];
  factual?: boolean;
  insufficient?: boolean;
}

/** A passage shown to the composer (an `evidence` event): found, not yet checked. */
export interface FoundPassage {
  id: string;
  title: string;
  page: number;
  section: string[];
  text: string;
  relevance: number;
}

export interface AnswerInfo {
  run_id?: string | null;
  question: string;
  status: AnswerStatus;
  answer: string;
  sentences: SentenceInfo[];
  support_score: number;
  reason: string | null;
  evidence_board: CitationInfo[];
  nearest: { id: string; page: number; section: string[]; text: string }[];
}

export interface SessionInfo {
  id: string;
  title: string;
  summary?: string;
  messages?: number;
  created_at?: string;
  updated_at?: string;
}

export interface MessageInfo {
  id: string;
  session_id: string;
  seq: number;
  role: "user" | "assistant" | string;
  content: string;
  /** pending (its run is still going), completed, failed, cancelled … */
  status: string;
  run_id: string | null;
  /** The standalone question and, on replies, `answer` (the answer JSON). */
  data: { answer?: AnswerInfo; [key: string]: unknown };
  created_at: string;
  /** The caller's latest rating of a reply. */
  feedback?: { rating: "up" | "down"; comment: string } | null;
}

export interface TurnStarted {
  run_id: string;
  message: MessageInfo;
  reply: MessageInfo;
  stream_url: string;
  status_url: string;
}

export interface OutlineItemInfo {
  id: string;
  title: string;
  asks: string;
  standard: { primary_required: boolean; min_independent: number; date_from: string | null; date_to: string | null; web: boolean };
  depends_on: string[];
}

export interface ResearchInfo {
  id: string;
  state: string;
  question: string;
  outline: { question: string; template: string; items: OutlineItemInfo[]; confirmed: boolean };
  created_at: string;
  updated_at: string;
  stream_url: string;
  brief_url: string;
}
