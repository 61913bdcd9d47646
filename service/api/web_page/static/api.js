// The HTTP API (/v1, ../shared/API.md) and the seats this tab holds.

/** A problem+json answer (or a network failure, status 0). */
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || (status ? `HTTP ${status}` : 'the service cannot be reached'));
    this.status = status;
    this.problem = problem ?? {};
  }

  /** "the card at position 0 is already face up (rule G-8)". */
  get text() {
    return this.problem.rule ? `${this.message} (rule ${this.problem.rule})` : this.message;
  }
}

/** One request; resolves to the parsed body, rejects with ApiError (AbortError passes through). */
export async function api(path, { method = 'GET', token, body, headers = {}, signal } = {}) {
  const sent = { Accept: 'application/json', ...headers };
  if (token) sent.Authorization = `Bearer ${token}`;
  if (body !== undefined) sent['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, {
      method, headers: sent, signal, cache: 'no-store',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    throw new ApiError(0, { detail: 'the service cannot be reached' });
  }
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { detail: text.slice(0, 200) }; }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

export const gamePath = (id) => `/v1/games/${encodeURIComponent(id)}`;

let catalogPromise = null;
/** The catalog, fetched once per page load. */
export function catalog() {
  catalogPromise ??= api('/v1/catalog').then((body) => body.games).catch((error) => { catalogPromise = null; throw error; });
  return catalogPromise;
}

const BOTS_SHOWN = 200; // the registered bots a seat offers: the first ones by name

/** The bots registered for `game` (GET /v1/bots?game=, following `next`), at most BOTS_SHOWN of them. */
export async function registeredBots(game) {
  const found = [];
  let path = `/v1/bots?game=${encodeURIComponent(game)}&limit=100`;
  while (path && found.length < BOTS_SHOWN) {
    const page = await api(path);
    found.push(...page.bots);
    path = page.next;
  }
  return found.slice(0, BOTS_SHOWN);
}

// ------------------------------------------------------------ seats kept in this tab

const KEY = 'cardtable.games';

function readAll() {
  try { return JSON.parse(sessionStorage.getItem(KEY) || '{}') ?? {}; } catch { return {}; }
}

function writeAll(all) {
  try { sessionStorage.setItem(KEY, JSON.stringify(all)); } catch { /* storage full or off: the page still works until reload */ }
}

/** {game, tokens: {seat: token}, as: seat|null, created} of a game this tab holds, or null. */
export function heldGame(id) {
  return readAll()[id] ?? null;
}

/** Every game this tab holds, newest first. */
export function heldGames() {
  return Object.entries(readAll()).map(([id, entry]) => ({ id, ...entry })).sort((a, b) => (b.created ?? 0) - (a.created ?? 0));
}

/** Remember a game and its seat tokens (merging with what is known). */
export function holdGame(id, game, tokens, as = null) {
  const all = readAll();
  const before = all[id] ?? { created: Date.now(), tokens: {}, as: null };
  const merged = { ...before, game: game ?? before.game, tokens: { ...before.tokens, ...tokens } };
  merged.as = as ?? before.as ?? (Object.keys(merged.tokens).length ? Number(Object.keys(merged.tokens)[0]) : null);
  all[id] = merged;
  writeAll(all);
  return merged;
}

/** Play as another held seat of the game. */
export function playAs(id, seat) {
  const all = readAll();
  if (all[id]) { all[id].as = seat; writeAll(all); }
}
