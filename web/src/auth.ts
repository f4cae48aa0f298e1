// The API key: asked for once when the server requires keys, kept for this browser tab's
// session (sessionStorage: gone when the tab closes), sent on every call, forgotten on logout.

const STORAGE_KEY = "footnote.apiKey";
const listeners = new Set<() => void>();

export function apiKey(): string | null {
  return sessionStorage.getItem(STORAGE_KEY);
}

/** Headers that identify the caller (none in single-user mode). */
export function authHeaders(): Record<string, string> {
  const key = apiKey();
  return key ? { Authorization: `Bearer ${key}` } : {};
}

export function login(key: string): void {
  sessionStorage.setItem(STORAGE_KEY, key.trim());
}

export function logout(): void {
  sessionStorage.removeItem(STORAGE_KEY);
  for (const fn of listeners) fn();
}

/** The server refused the key (401): forget it and ask again. */
export function loginRequired(): void {
  logout();
}

export function onLogout(fn: () => void): void {
  listeners.add(fn);
}
