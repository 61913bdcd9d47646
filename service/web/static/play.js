// The play page: one seat's view, its legal actions as buttons, everyone's moves live.
import { api, ApiError, gamePath, heldGame, playAs } from './api.js';
import { announce, h, randomKey, replace } from './dom.js';
import { eventEl, eventText } from './events.js';
import { gameParts } from './games.js';
import { followLive } from './live.js';
import { factsLine, resultEl, seatNamer, seatsEl, tableEl } from './table.js';

const WAIT_SECONDS = 25;
const RETRY_MS = 2000;
const MAX_LOG = 300;

export class PlayPage {
  constructor(root, id) {
    this.root = root;
    this.id = id;
    this.view = null;
    this.events = new Map(); // seq -> event
    this.lastSeq = 0;
    this.busy = false;
    this.stopped = false;
    this.controller = new AbortController();
    this.notice = '';
  }

  get held() { return heldGame(this.id); }

  get seat() {
    const held = this.held;
    return held && held.as !== null && held.as !== undefined && held.tokens[held.as] ? Number(held.as) : null;
  }

  get token() { return this.seat === null ? null : this.held.tokens[this.seat]; }

  stop() {
    this.stopped = true;
    this.controller.abort();
  }

  async start() {
    replace(this.root, h('p', { class: 'loading' }, 'Loading the game…'));
    try {
      const [view, events] = await Promise.all([
        api(gamePath(this.id), { token: this.token, signal: this.controller.signal }),
        api(`${gamePath(this.id)}/events?after=0`, { signal: this.controller.signal }),
      ]);
      this.addEvents(events.events);
      this.view = view;
      this.layout();
      this.render();
      this.poll();
    } catch (error) {
      if (error.name === 'AbortError') return;
      replace(this.root, h('div', { class: 'page' }, h('h1', {}, 'Game not found'),
        h('p', { role: 'alert', class: 'alert' }, error instanceof ApiError ? error.text : String(error)),
        h('p', {}, h('a', { href: '#/' }, 'Start a new game'), ' or ', h('a', { href: '#/replay' }, 'open a replay'), '.')));
    }
  }

  // ---------------------------------------------------------------- data

  addEvents(events) {
    const fresh = events.filter((e) => !this.events.has(e.seq));
    for (const event of fresh) this.events.set(event.seq, event);
    this.lastSeq = Math.max(this.lastSeq, ...events.map((e) => e.seq));
    if (this.logList) this.appendLog(fresh);
    return fresh;
  }

  applyView(view) {
    if (this.view && view.version < this.view.version) return false;
    const wasMyTurn = this.myTurn;
    this.view = view;
    if (!wasMyTurn && this.myTurn) announce('Your turn.');
    return true;
  }

  get myTurn() {
    return Boolean(this.view && this.seat !== null && this.view.status === 'active' && this.view.to_act.includes(this.seat));
  }

  get done() {
    return this.view?.status === 'finished' && this.lastSeq >= this.view.version;
  }

  async refresh() {
    const view = await api(gamePath(this.id), { token: this.token, signal: this.controller.signal });
    if (this.applyView(view)) this.render();
  }

  /** Follow the game until it is over: its live stream (a seat's also brings its views), else the long-poll. */
  async poll() {
    if (this.done) return;
    let refreshing = false;
    const outcome = await followLive(this.id, {
      after: () => this.lastSeq,
      token: this.token,
      signal: this.controller.signal,
      onEvent: (event) => {
        const fresh = this.addEvents([event]);
        if (fresh.length && event.actor !== this.seat && event.actor !== 'system' && this.view && !this.myTurn) {
          announce(eventText(event, seatNamer(this.view.seats), this.view.game));
        }
        if (this.seat === null && !refreshing && this.lastSeq > this.view.version) { // a spectator's stream has no views
          refreshing = true;
          window.setTimeout(() => { refreshing = false; this.refresh().catch(() => {}); }, 0);
        }
      },
      onView: (view) => {
        if ((view.you?.seat ?? null) !== this.seat) { this.refresh().catch(() => {}); return; } // the seat changed
        if (this.applyView(view)) this.render();
      },
    });
    if (outcome !== 'failed') return;
    await this.longPoll();
  }

  /** The events long-poll: new events, then the new view; until the game is over. */
  async longPoll() {
    while (!this.stopped && !this.done) {
      try {
        const { events } = await api(`${gamePath(this.id)}/events?after=${this.lastSeq}&wait=${WAIT_SECONDS}`, { signal: this.controller.signal });
        const fresh = this.addEvents(events);
        if (fresh.length && this.lastSeq > this.view.version) {
          const others = fresh.filter((e) => e.actor !== this.seat && e.actor !== 'system');
          if (others.length && !this.myTurn) announce(eventText(others[others.length - 1], seatNamer(this.view.seats), this.view.game));
          await this.refresh();
        }
        if (this.notice === 'offline') { this.notice = ''; this.render(); }
      } catch (error) {
        if (error.name === 'AbortError' || this.stopped) return;
        this.notice = 'offline';
        this.render();
        await new Promise((resolve) => { window.setTimeout(resolve, RETRY_MS); });
      }
    }
  }

  /** Send one action for this seat; the answer carries the new view. */
  async act(action) {
    if (this.busy || !this.myTurn) return;
    this.busy = true;
    this.error = '';
    this.markBusy();
    try {
      const answer = await api(`${gamePath(this.id)}/actions`, {
        method: 'POST', token: this.token, signal: this.controller.signal,
        body: { ...action, expected_version: this.view.version },
        headers: { 'Idempotency-Key': randomKey() },
      });
      this.addEvents(answer.events);
      this.applyView(answer.state);
    } catch (error) {
      if (error.name === 'AbortError') return;
      this.error = error.status === 409 ? 'Someone moved first; this is the game now.' : `Refused: ${error instanceof ApiError ? error.text : error}`;
      announce(this.error);
      try { await this.refresh(); } catch { /* the long-poll retries */ }
    } finally {
      this.busy = false;
    }
    this.render();
  }

  // ---------------------------------------------------------------- drawing

  /** The parts that stay: header, status line, the two columns, the event log. */
  layout() {
    const id = this.id;
    this.status = h('p', { class: 'status', role: 'status', id: 'status' });
    this.alert = h('p', { class: 'alert', role: 'alert', id: 'alert' });
    this.mainCol = h('div', { class: 'main-col' });
    this.seatsBox = h('div', {});
    this.logList = h('ol', { class: 'events', 'aria-label': 'events, oldest first' });
    this.logBox = h('div', { class: 'log', tabindex: '0', 'aria-label': 'event log' }, this.logList);
    this.page = h('div', { class: 'page play', 'data-game': this.view.game, 'data-game-id': id },
      h('header', { class: 'page-head' },
        h('h1', {}, `${title(this.view.game)} `, h('span', { class: 'gid' }, `game ${id}`)),
        h('p', { class: 'links' },
          h('a', { href: `#/replay/${encodeURIComponent(id)}`, id: 'replay-link' }, 'Replay and audit this game'), ' · ',
          h('a', { href: `${gamePath(id)}/record`, download: `${id}.json` }, 'Download the record')),
        this.seatChooser()),
      this.status, this.alert,
      h('div', { class: 'columns' }, this.mainCol,
        h('aside', { class: 'side', 'aria-label': 'Seats and events' }, this.seatsBox,
          h('section', { class: 'block', 'aria-label': 'Events' }, h('h2', {}, 'Events'), this.logBox))));
    replace(this.root, this.page);
    this.appendLog([...this.events.values()]);
  }

  seatChooser() {
    const held = this.held;
    const seats = Object.keys(held?.tokens ?? {}).map(Number);
    if (seats.length === 0) return h('p', { class: 'facts' }, 'You are watching: no seat of this game is held in this tab.');
    const name = seatNamer(this.view.seats);
    const parts = [];
    if (seats.length > 1) {
      const select = h('select', { id: 'play-as' }, seats.map((s) => h('option', { value: s, selected: s === this.seat }, name(s))));
      select.addEventListener('change', () => {
        playAs(this.id, Number(select.value));
        this.error = '';
        this.refresh().catch(() => {});
      });
      parts.push(h('p', {}, h('label', { for: 'play-as' }, 'Playing as '), select));
    } else {
      parts.push(h('p', { class: 'facts' }, `You play ${name(this.seat)}.`));
    }
    const others = seats.filter((s) => s !== held.as);
    if (others.length) {
      parts.push(h('details', {}, h('summary', {}, 'Links for the other people at this table'),
        h('p', {}, 'Each link carries that seat’s key: give it only to that person.'),
        h('ul', {}, others.map((s) => {
          const link = `${location.origin}${location.pathname}#/join/${encodeURIComponent(this.id)}/${s}/${encodeURIComponent(held.tokens[s])}`;
          return h('li', {}, `${name(s)}: `, h('a', { href: link }, link));
        }))));
    }
    return h('div', { class: 'seat-chooser' }, parts);
  }

  statusText() {
    const v = this.view;
    const name = seatNamer(v.seats);
    if (v.status === 'finished') return `Game over: ${v.result.winners.map(name).join(' and ')} won.`;
    const acting = v.to_act.map(name).join(', ') || 'the system';
    if (this.seat === null) return `Watching: ${acting} to act.`;
    if (this.myTurn) return v.to_act.length > 1 ? `Your move (also to act: ${v.to_act.filter((s) => s !== this.seat).map(name).join(', ')}).` : 'Your turn.';
    return `Waiting for ${acting}.`;
  }

  render() {
    if (!this.page || this.stopped) return;
    const v = this.view;
    const focus = document.activeElement;
    const focusKey = focus?.dataset?.key;
    const hadFocus = this.keepFocus || this.movesBox?.contains(focus);
    this.keepFocus = false;
    this.page.dataset.status = v.status;
    document.title = `${this.myTurn ? 'Your turn · ' : ''}${title(v.game)} ${this.id} · Card table`;
    this.page.dataset.version = String(v.version);
    this.page.dataset.myTurn = String(this.myTurn);
    this.status.textContent = this.statusText() + (this.notice === 'offline' ? ' (Connection lost; retrying…)' : '');
    this.alert.textContent = this.error || '';
    this.movesBox = this.movesEl();
    const [table, hand] = tableEl(v, this.seat);
    replace(this.mainCol, factsLine(v), resultEl(v), hand, this.movesBox, table);
    replace(this.seatsBox, seatsEl(v, this.seat));
    if (hadFocus) this.restoreFocus(focusKey);
  }

  restoreFocus(key) {
    const buttons = [...this.movesBox.querySelectorAll('button, input')];
    const target = buttons.find((b) => b.dataset.key === key) ?? buttons[0] ?? this.movesBox.querySelector('h2');
    target?.focus();
  }

  markBusy() {
    if (!this.movesBox) return;
    this.keepFocus = this.movesBox.contains(document.activeElement); // disabling a button drops its focus
    this.movesBox.setAttribute('aria-busy', 'true');
    for (const button of this.movesBox.querySelectorAll('button')) button.disabled = true;
  }

  /** The seat's legal actions, grouped by type, one button each. */
  movesEl() {
    const v = this.view;
    const box = h('section', { class: 'block moves', 'aria-labelledby': 'moves-title' }, h('h2', { id: 'moves-title', tabindex: '-1' }, 'Your moves'));
    if (this.seat === null || v.status === 'finished') {
      box.hidden = true;
      return box;
    }
    const legal = this.myTurn ? v.you?.legal ?? [] : [];
    if (legal.length === 0) {
      box.append(h('p', { class: 'waiting' }, this.myTurn ? 'Nothing to do right now.' : 'Not your turn: the moves appear here when it is.'));
      return box;
    }
    const parts = gameParts(v.game);
    const ctx = { name: seatNamer(v.seats), seats: v.seats, you: this.seat };
    const composed = parts.compose?.(legal, v, (action) => this.act(action));
    if (composed) {
      box.append(composed);
      return box;
    }
    const groups = new Map();
    for (const action of legal) {
      if (!groups.has(action.type)) groups.set(action.type, []);
      groups.get(action.type).push(action);
    }
    let index = 0;
    for (const [type, actions] of groups) {
      const heading = parts.titles?.[type] ?? type;
      const buttons = actions.map((action) => {
        const label = parts.label(action, v, ctx);
        index += 1;
        return h('button', {
          type: 'button', class: 'action', 'data-key': JSON.stringify(action), 'data-type': type,
          'aria-label': label.spoken, title: label.spoken,
          onclick: () => this.act(action),
        }, label.text);
      });
      box.append(h('div', { class: 'group', role: 'group', 'aria-label': heading }, h('h3', {}, heading), h('div', { class: 'buttons' }, buttons)));
    }
    box.dataset.count = String(index);
    return box;
  }

  appendLog(events) {
    if (!events.length) return;
    const name = seatNamer(this.view?.seats);
    for (const event of events.sort((a, b) => a.seq - b.seq)) {
      this.logList.append(h('li', { 'data-seq': event.seq, class: event.actor === this.seat ? 'mine' : '' }, eventEl(event, name, this.view?.game)));
    }
    while (this.logList.children.length > MAX_LOG) this.logList.firstElementChild.remove();
    this.logBox.scrollTop = this.logBox.scrollHeight;
  }
}

/** A game's display name. */
export function title(game) {
  return { golf: 'Golf', switch: 'Switch', romme: 'Rommé', go5: 'Go5' }[game] ?? game;
}
