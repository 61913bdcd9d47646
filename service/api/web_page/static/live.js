// A game's live stream (Server-Sent Events, GET /v1/games/{id}/stream): its events and, for a seat,
// its view after each change, so no second request is needed. The seat's token never goes into a URL:
// it is traded for a one-use stream ticket first.
import { api, gamePath } from './api.js';

/** Every event type of the four games: EventSource delivers a named event only to its own listener.
 * (tests/service/test_web_live.py checks this list against the games' event catalogs.) */
export const EVENT_TYPES = [
  'CardDiscarded', 'CardDrawn', 'CardFlipped', 'CardLaidOff', 'CardSwapped', 'CardsDrawn', 'CardsPlayed',
  'CardsRevealed', 'ColumnDiscarded', 'DeckCut', 'DiscardTaken', 'DrawnCardDiscarded', 'DrawnCardSwapped',
  'GameAbandoned', 'GameCreated', 'GameEnded', 'Go5Called', 'HandsDealt', 'JokerSwapped', 'LastHolderDrew',
  'LuckyGrab', 'MeldLaid', 'Passed',
  'PendingDrawTaken', 'RoundScored', 'RoundStarted', 'SeedRevealed', 'SetMelded', 'StockCardReceived',
  'StockReshuffled', 'StopCardLaid', 'StopPlayed', 'SuitChosen', 'WentOut',
];
const LAST_EVENT = 'SeedRevealed';
const TRIES = 3; // streams in a row that fail before they open: then the caller falls back to the long-poll
const RETRY_MS = 2000;

/**
 * Follow game `id` live from event `after()` on until it ends. `token`: a seat's (adds its views).
 * Resolves 'ended' after the game's last event, 'stopped' once `signal` aborts, and 'failed' when
 * no stream can be had (no EventSource, or it keeps failing): the caller then uses the long-poll.
 */
export async function followLive(id, { after, token, signal, onEvent, onView }) {
  if (typeof EventSource !== 'function') return 'failed';
  let failures = 0;
  while (!signal.aborted && failures < TRIES) {
    let url = `${gamePath(id)}/stream?after=${after()}`;
    try {
      if (token) {
        const { ticket } = await api(`${gamePath(id)}/stream-tickets`, { method: 'POST', token, signal });
        url += `&ticket=${encodeURIComponent(ticket)}`;
      }
    } catch (error) {
      if (error.name === 'AbortError') return 'stopped';
      failures += 1;
      await pause(RETRY_MS);
      continue;
    }
    const outcome = await follow(url, { signal, onEvent, onView });
    if (outcome === 'ended' || outcome === 'stopped') return outcome;
    failures = outcome === 'dropped' ? 0 : failures + 1; // a stream that worked is opened again at once
    if (outcome !== 'dropped') await pause(RETRY_MS);
  }
  return signal.aborted ? 'stopped' : 'failed';
}

/** One EventSource until it ends: 'ended', 'stopped', 'dropped' (it had opened) or 'failed'. */
function follow(url, { signal, onEvent, onView }) {
  return new Promise((resolve) => {
    const source = new EventSource(url);
    let opened = false;
    let sawEnd = false;
    const finish = (outcome) => {
      source.close(); // no automatic reconnect: a ticket is good for one stream
      signal.removeEventListener('abort', stop);
      resolve(outcome);
    };
    const stop = () => finish('stopped');
    signal.addEventListener('abort', stop);
    source.onopen = () => { opened = true; };
    source.onerror = () => finish(sawEnd ? 'ended' : opened ? 'dropped' : 'failed');
    for (const type of EVENT_TYPES) {
      source.addEventListener(type, (message) => {
        const event = JSON.parse(message.data);
        if (event.type === LAST_EVENT) sawEnd = true;
        onEvent(event);
      });
    }
    source.addEventListener('view', (message) => onView(JSON.parse(message.data)));
  });
}

function pause(ms) {
  return new Promise((resolve) => { window.setTimeout(resolve, ms); });
}
