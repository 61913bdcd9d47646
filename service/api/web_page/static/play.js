// The play page: one seat's view drawn as a card table; moves are made by picking cards and places
// (the move composer, composer.js, offers only what `you.legal` allows); everyone's moves live.
import { api, ApiError, gamePath, heldGame, playAs } from './api.js';
import { cardName } from './cards.js';
import { choiceIndex, Composer, OK } from './composer.js';
import { announce, h, randomKey, replace } from './dom.js';
import { eventEl, eventText, movedCards } from './events.js';
import { gameParts } from './games.js';
import { helpEl, winsLine } from './help.js';
import { t } from './i18n.js';
import { followLive } from './live.js';
import { resultEl, seatNamer, seatRing, tableEl } from './table.js';

const WAIT_SECONDS = 25;
const RETRY_MS = 2000;
const MAX_LOG = 300;
/** In a game with people, each bot move stays on the table this long before the next is shown. */
export const BOT_PACE_MS = 600;
const PACE_KEY = 'cardtable.pace';

/** The page setting: bot moves one at a time (the default) or all at once. */
function paceSetting() {
  try { return localStorage.getItem(PACE_KEY) === 'off' ? 0 : BOT_PACE_MS; } catch { return BOT_PACE_MS; }
}

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
    this.pace = paceSetting();
    this.showing = false; // bot moves are being shown one at a time
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
    window.clearInterval(this.clock);
  }

  async start() {
    replace(this.root, h('p', { class: 'loading' }, t('play.loading')));
    try {
      const [view, events] = await Promise.all([
        api(gamePath(this.id), { token: this.token, signal: this.controller.signal }),
        this.eventsAfter(0),
      ]);
      this.addEvents(events);
      this.view = view;
      this.layout();
      this.render();
      this.clock = window.setInterval(() => this.tick(), 1000);
      this.poll();
    } catch (error) {
      if (error.name === 'AbortError') return;
      replace(this.root, h('div', { class: 'page' }, h('h1', {}, t('play.notFound')),
        h('p', { role: 'alert', class: 'alert' }, errorText(error)),
        h('p', {}, h('a', { href: '#/' }, t('play.startNew')), ' · ', h('a', { href: '#/replay' }, t('play.openReplay')))));
    }
  }

  // ---------------------------------------------------------------- data

  /** Every event after seq `after`, a page at a time: each page says where the next one is. */
  async eventsAfter(after) {
    const events = [];
    let path = `${gamePath(this.id)}/events?after=${after}`;
    while (path) {
      const page = await api(path, { signal: this.controller.signal });
      events.push(...page.events);
      path = page.next;
    }
    return events;
  }

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
    if (!wasMyTurn && this.myTurn) announce(t('status.yourTurn'));
    return true;
  }

  get myTurn() {
    return Boolean(this.view && this.seat !== null && this.view.status === 'active' && this.view.to_act.includes(this.seat));
  }

  get done() {
    return this.view?.status === 'finished' && this.lastSeq >= this.view.version;
  }

  /** Does a person (not this tab alone) sit at the table? Then bot moves are shown one at a time. */
  get withPeople() {
    return this.seat !== null && (this.view?.seats ?? []).some((s) => s.kind !== 'bot');
  }

  async refresh() {
    await this.showView(await api(gamePath(this.id), { token: this.token, signal: this.controller.signal }));
  }

  /** A newer view: the bot moves that led to it are shown one at a time first (pacing), then the view. */
  async showView(view) {
    if (this.view && view.version > this.view.version && this.withPeople && this.pace > 0) await this.showBotMoves(view.version);
    if (this.applyView(view)) this.render();
  }

  /** A view from the live stream, shown after the ones before it have been. */
  queueView(view) {
    this.viewsShown = (this.viewsShown ?? Promise.resolve()).then(() => this.showView(view)).catch(() => {});
  }

  /** The bot moves between the view shown and `upto`, each on the table for `pace` ms (the seat's view then). */
  async showBotMoves(upto) {
    const moves = [...this.events.values()]
      .filter((e) => e.seq > this.view.version && e.seq < upto && e.actor !== 'system' && e.actor !== this.seat)
      .sort((a, b) => a.seq - b.seq);
    if (!moves.length) return;
    this.showing = true;
    try {
      for (const move of moves) {
        const then = await api(`${gamePath(this.id)}/replay?at=${move.seq}`, { token: this.token, signal: this.controller.signal });
        if (this.stopped) return;
        this.view = then;
        this.render();
        await new Promise((resolve) => { window.setTimeout(resolve, this.pace); });
      }
    } finally {
      this.showing = false;
    }
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
        this.queueView(view);
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
    if (this.busy || !this.myTurn || this.showing) return;
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
      this.sent = (this.sent ?? 0) + 1;
      this.page.dataset.sent = String(this.sent); // how many moves this page has sent
      if (this.notice === 'offline') this.notice = '';
    } catch (error) {
      if (error.name === 'AbortError') return;
      if (error.status === 0) this.notice = 'offline'; // not the rules: cleared once the service answers again
      else this.error = error.status === 409 ? t('error.moved') : t('error.refused', { detail: errorText(error) });
      if (this.error) announce(this.error);
      try { await this.refresh(); if (error.status === 0) this.notice = ''; } catch { this.reconnect(); }
    } finally {
      this.busy = false;
    }
    this.render();
  }

  /** While the service cannot be reached: ask for the view every RETRY_MS until it answers, then say so.
   * (A live stream may stay open through a short outage and bring nothing to clear the notice.) */
  async reconnect() {
    if (this.reconnecting) return;
    this.reconnecting = true;
    try {
      while (!this.stopped && this.notice === 'offline') {
        await new Promise((resolve) => { window.setTimeout(resolve, RETRY_MS); });
        try {
          await this.refresh();
          this.notice = '';
          this.render();
        } catch (error) {
          if (error.name === 'AbortError') return;
        }
      }
    } finally {
      this.reconnecting = false;
    }
  }

  // ---------------------------------------------------------------- drawing

  /** The parts that stay: header, the turn bar, the board (seats, table, hand), help and events beside. */
  layout() {
    const id = this.id;
    const game = this.view.game;
    this.status = h('p', { class: 'status', role: 'status', id: 'status' });
    this.countdown = h('span', { class: 'countdown', id: 'countdown' });
    this.connection = h('p', { class: 'connection', id: 'connection', role: 'status' });
    this.lastMove = h('p', { class: 'last-move', id: 'last-move' });
    this.alert = h('p', { class: 'alert', role: 'alert', id: 'alert' });
    this.board = h('div', { class: 'board' });
    this.seatsBox = h('div', { class: 'ring' });
    this.logList = h('ol', { class: 'events', 'aria-label': t('events.list') });
    this.logBox = h('div', { class: 'log', tabindex: '0', role: 'region', 'aria-label': t('events.title') }, this.logList);
    this.page = h('div', { class: 'page play', 'data-game': game, 'data-game-id': id },
      h('header', { class: 'page-head' },
        h('h1', {}, `${title(game)} `, h('span', { class: 'gid' }, t('play.gameId', { id }))),
        h('p', { class: 'wins' }, winsLine(game)),
        h('p', { class: 'links' },
          h('a', { href: '#how-to-play', id: 'help-link' }, t('help.open')), ' · ',
          h('a', { href: `#/replay/${encodeURIComponent(id)}`, id: 'replay-link' }, t('play.replayLink')), ' · ',
          h('a', { href: `${gamePath(id)}/record`, download: `${id}.json` }, t('play.download'))),
        this.seatChooser(), this.paceSwitch()),
      h('div', { class: 'turn-bar' }, this.status, this.countdown, this.connection),
      this.lastMove, this.alert,
      h('div', { class: 'columns' }, this.board,
        h('aside', { class: 'side', 'aria-label': t('play.side') },
          helpEl(game),
          h('section', { class: 'block', 'aria-labelledby': 'events-title' }, h('h2', { id: 'events-title' }, t('events.title')), this.logBox))));
    this.page.addEventListener('click', (event) => this.onClick(event));
    this.page.addEventListener('keydown', (event) => this.onKey(event));
    const helpLink = this.page.querySelector('#help-link');
    helpLink.addEventListener('click', (event) => {
      event.preventDefault();
      const help = this.page.querySelector('#how-to-play');
      help.open = true;
      help.scrollIntoView({ block: 'start' });
      help.querySelector('summary').focus();
    });
    replace(this.root, this.page);
    this.appendLog([...this.events.values()]);
  }

  /** The page setting for the pace of bot moves. */
  paceSwitch() {
    const box = h('input', { type: 'checkbox', id: 'pace', checked: this.pace > 0 });
    box.addEventListener('change', () => {
      this.pace = box.checked ? BOT_PACE_MS : 0;
      try { localStorage.setItem(PACE_KEY, box.checked ? 'on' : 'off'); } catch { /* this page only */ }
    });
    return h('p', { class: 'pace' }, box, ' ', h('label', { for: 'pace' }, t('play.pace')));
  }

  seatChooser() {
    const held = this.held;
    const seats = Object.keys(held?.tokens ?? {}).map(Number);
    if (seats.length === 0) return h('p', { class: 'facts' }, t('play.watching'));
    const name = seatNamer(this.view.seats);
    const parts = [];
    if (seats.length > 1) {
      const select = h('select', { id: 'play-as' }, seats.map((s) => h('option', { value: s, selected: s === this.seat }, name(s))));
      select.addEventListener('change', () => {
        playAs(this.id, Number(select.value));
        this.error = '';
        this.refresh().catch(() => {});
      });
      parts.push(h('p', {}, h('label', { for: 'play-as' }, t('play.playingAs')), ' ', select));
    } else {
      parts.push(h('p', { class: 'facts' }, t('play.youPlay', { name: name(this.seat) })));
    }
    const others = seats.filter((s) => s !== held.as);
    if (others.length) {
      parts.push(h('details', {}, h('summary', {}, t('play.links')),
        h('p', {}, t('play.linksNote')),
        h('ul', {}, others.map((s) => {
          const link = `${location.origin}${location.pathname}#/join/${encodeURIComponent(this.id)}/${s}/${encodeURIComponent(held.tokens[s])}`;
          return h('li', {}, `${name(s)}: `, h('a', { href: link, class: 'join-link' }, link));
        }))));
    }
    return h('div', { class: 'seat-chooser' }, parts);
  }

  statusText() {
    const v = this.view;
    const name = seatNamer(v.seats);
    if (v.status === 'finished' && v.result.abandoned) return t('status.abandoned', { reason: v.result.reason });
    if (v.status === 'finished') return t('status.over', { winners: listOf(v.result.winners.map(name)) });
    const acting = listOf(v.to_act.map(name)) || t('status.system');
    if (this.showing) return t('status.showing', { acting });
    if (this.seat === null) return t('status.watching', { acting });
    if (this.myTurn) {
      const also = v.to_act.filter((s) => s !== this.seat).map(name);
      return also.length ? t('status.yourMoveAlso', { others: listOf(also) }) : t('status.yourTurn');
    }
    return t('status.waiting', { acting });
  }

  /** The event that made the view: the last move of a seat, or null. */
  lastMoveEvent(view = this.view) {
    for (let seq = view.version; seq > 0; seq -= 1) {
      const event = this.events.get(seq);
      if (!event) return null;
      if (event.actor !== 'system' || event.seat !== undefined) return event;
      if (event.type === 'RoundStarted' || event.type === 'GameCreated') return null;
    }
    return null;
  }

  render() {
    if (!this.page || this.stopped) return;
    const v = this.view;
    const focus = document.activeElement;
    const hadFocus = this.keepFocus || this.board.contains(focus);
    const focusPick = focus?.dataset?.pick;
    this.keepFocus = false;
    this.page.dataset.status = v.status;
    document.title = `${this.myTurn ? `${t('status.yourTurnShort')} · ` : ''}${title(v.game)} ${this.id} · ${t('app.title')}`;
    this.page.dataset.version = String(v.version);
    this.page.dataset.myTurn = String(this.myTurn && !this.showing);
    this.status.textContent = this.statusText();
    this.connection.textContent = this.notice === 'offline' ? t('error.offline') : '';
    this.alert.textContent = this.error || '';
    const name = seatNamer(v.seats);
    const last = this.lastMoveEvent();
    const lastText = last ? eventText(last, name, v.game) : '';
    this.lastMove.textContent = last ? t('play.lastMove', { text: lastText }) : '';
    this.page.dataset.lastSeq = last ? String(last.seq) : '';
    const [table, hand] = tableEl(v, this.seat);
    this.movesBox = h('section', { class: 'block moves', 'aria-labelledby': 'moves-title', id: 'moves' },
      h('h2', { id: 'moves-title', tabindex: '-1' }, t('moves.title')));
    replace(this.board,
      seatRing(v, this.seat, (seat) => this.lastOf(seat)),
      resultEl(v),
      table,
      h('div', { class: 'me' }, hand, this.seat !== null && v.status !== 'finished' ? this.movesBox : null));
    if (last) markMove(this.board, last, lastText, movedCards(last));
    this.keepPicks(this.myTurn && !this.showing && !this.busy ? new Composer(v.game, v.you?.legal ?? [], v) : null);
    this.updatePicks();
    this.tick();
    if (hadFocus) this.restoreFocus(focusPick);
  }

  /**
   * Take up a new composer; while the legal actions stay the same (another seat's move in Golf's
   * setup, a redraw), the picks made so far are kept, on the cards that now show them.
   */
  keepPicks(composer) {
    const legal = composer ? JSON.stringify(composer.legal) : null;
    const picks = composer && this.composer && this.legalText === legal ? this.composer.picks : [];
    this.composer = composer;
    this.legalText = legal;
    this.pickedEls = [];
    const cards = [...this.board.querySelectorAll('[data-pick]')];
    for (const pick of picks) {
      const el = cards.find((e) => e.dataset.pick === pick && !this.pickedEls.includes(e));
      if (!el || !composer.pick(pick)) {
        composer.reset();
        this.pickedEls = [];
        return;
      }
      this.pickedEls.push(el);
    }
  }

  /** The last move of `seat` shown in its place at the table, as text. */
  lastOf(seat) {
    const name = seatNamer(this.view.seats);
    for (let seq = this.view.version; seq > 0; seq -= 1) {
      const event = this.events.get(seq);
      if (!event) break;
      if (event.type === 'RoundStarted') break;
      if (event.actor === seat || (event.actor === 'system' && event.seat === seat)) return eventText({ ...event, actor: 'system' }, name, this.view.game);
    }
    return '';
  }

  /** The countdown of a person's turn when the game has `turn_seconds`. */
  tick() {
    const v = this.view;
    if (!this.countdown || !v) return;
    const made = this.events.get(v.version)?.at;
    const humans = (v.seats ?? []).filter((s) => s.kind !== 'bot').map((s) => s.seat);
    if (!v.turn_seconds || v.status !== 'active' || !made || !v.to_act.some((s) => humans.includes(s))) {
      this.countdown.textContent = '';
      return;
    }
    const left = Math.max(0, Math.ceil((Date.parse(made) + v.turn_seconds * 1000 - Date.now()) / 1000));
    this.countdown.textContent = t('status.countdown', { seconds: left });
  }

  restoreFocus(pick) {
    const focusable = [...this.board.querySelectorAll('[data-pick][tabindex="0"]')];
    const target = focusable.find((el) => el.dataset.pick === pick) ?? focusable[0] ?? this.movesBox.querySelector('h2');
    target?.focus();
  }

  markBusy() {
    this.keepFocus = this.board.contains(document.activeElement);
    this.movesBox?.setAttribute('aria-busy', 'true');
    this.composer = null;
    this.updatePicks();
  }

  // ---------------------------------------------------------------- picking cards

  /** The pickable element a click landed on: a card or place, or the meld or set around it. */
  pickTarget(node) {
    if (!this.composer || !(node instanceof Element)) return null;
    const el = node.closest('[data-pick]');
    if (el && (el.classList.contains('pickable') || el.classList.contains('picked'))) return el;
    const zone = node.closest('[data-zone]');
    if (!zone) return null;
    const target = [...zone.querySelectorAll('[data-pick]')].find((e) => e.dataset.pick === zone.dataset.zone);
    return target?.classList.contains('pickable') ? target : null;
  }

  onClick(event) {
    const el = this.pickTarget(event.target);
    if (!el) return;
    event.preventDefault();
    this.choose(el);
  }

  onKey(event) {
    const el = event.target instanceof Element ? event.target.closest('[data-pick]') : null;
    if (!el || !this.composer) return;
    if (event.key === 'Enter' || event.key === ' ') {
      if (el.tagName === 'BUTTON') return; // a button clicks itself
      event.preventDefault();
      if (this.pickTarget(el)) this.choose(el);
      return;
    }
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
    if (!step) return;
    const focusable = [...this.board.querySelectorAll('[data-pick][tabindex="0"]')];
    const at = focusable.indexOf(el);
    if (at < 0) return;
    event.preventDefault();
    focusable[(at + step + focusable.length) % focusable.length].focus();
  }

  /** Pick an element (or take back its pick, and those after it); send the action once complete. */
  choose(el) {
    const at = this.pickedEls.indexOf(el);
    if (at >= 0) {
      this.composer.picks = this.composer.picks.slice(0, at);
      this.pickedEls = this.pickedEls.slice(0, at);
    } else if (this.composer.pick(el.dataset.pick)) {
      this.pickedEls.push(el);
    } else {
      return;
    }
    const action = this.composer.action;
    if (action) {
      this.keepFocus = true;
      this.act(action);
      return;
    }
    this.updatePicks();
    if (!document.activeElement || document.activeElement === document.body || !this.board.contains(document.activeElement)) this.restoreFocus(null);
  }

  /** Mark what may be picked now and what is picked; the picks the table does not show become chips. */
  updatePicks() {
    const state = this.composer?.state() ?? { options: new Set(), action: null };
    for (const el of this.board.querySelectorAll('[data-pick]')) {
      if (el.classList.contains('chip')) continue;
      const picked = this.pickedEls.includes(el);
      const can = !picked && state.options.has(el.dataset.pick);
      el.classList.toggle('pickable', can);
      el.classList.toggle('picked', picked);
      if (el.dataset.role === undefined) el.dataset.role = el.getAttribute('role') ?? '';
      if (can || picked) {
        el.tabIndex = 0;
        el.setAttribute('role', 'button');
        el.setAttribute('aria-pressed', String(picked));
        nameInText(el, true);
      } else {
        el.removeAttribute('tabindex');
        el.removeAttribute('aria-pressed');
        if (el.dataset.role) el.setAttribute('role', el.dataset.role); else el.removeAttribute('role');
        nameInText(el, false);
      }
    }
    this.page.dataset.picks = String(this.pickedEls.length);
    if (this.movesBox) this.fillMoves(state);
  }

  /** The move box: what to pick next, the chips for picks not on the table, and "start again". */
  fillMoves(state) {
    const v = this.view;
    const box = this.movesBox;
    const heading = box.querySelector('h2');
    replace(box, heading);
    box.removeAttribute('aria-busy');
    if (!this.composer) {
      const text = this.busy ? t('moves.sending') : this.myTurn && this.showing ? t('moves.showing') : t('moves.notYours');
      box.append(h('p', { class: 'waiting' }, text));
      return;
    }
    if (state.action) { // the only move needs no pick (Golf with no card to turn up)
      const label = gameParts(v.game).label(state.action, v, { name: seatNamer(v.seats), seats: v.seats, you: this.seat });
      box.append(h('p', {}, h('button', { type: 'button', class: 'chip', onclick: () => this.act(state.action) }, label.text)));
      return;
    }
    const shown = new Set([...this.board.querySelectorAll('[data-pick]:not(.chip)')].map((el) => el.dataset.pick));
    const chips = [...state.options].filter((pick) => !shown.has(pick));
    const onTable = [...state.options].filter((pick) => shown.has(pick));
    const picked = this.pickedEls.map((el) => pickWords(el.dataset.pick, v)).filter(Boolean);
    if (picked.length) box.append(h('p', { class: 'picked-line' }, t('moves.picked', { cards: listOf(picked) })));
    const kinds = [...new Set(onTable.map(pickKind))].map((kind) => t(`pick.${kind}`));
    box.append(h('p', { class: 'prompt', id: 'prompt' },
      kinds.length ? t(picked.length ? 'moves.next' : 'moves.first', { what: listOf(kinds, t('word.or')) }) : t('moves.choose')));
    if (chips.length) {
      box.append(h('div', { class: 'chips', role: 'group', 'aria-label': t('moves.choices') }, chips.map((pick) => h('button', {
        type: 'button', class: 'chip', 'data-pick': pick, 'data-key': pick,
        onclick: () => {
          if (this.composer?.pick(pick)) {
            const action = this.composer.action;
            if (action) { this.keepFocus = true; this.act(action); } else this.updatePicks();
          }
        },
      }, chipText(pick, v, this.seat)))));
    }
    if (this.pickedEls.length) {
      box.append(h('p', {}, h('button', { type: 'button', class: 'link', id: 'start-again', onclick: () => {
        this.composer.reset();
        this.pickedEls = [];
        this.updatePicks();
      } }, t('moves.again'))));
    }
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

/**
 * A card that may be picked is a button named by its text: its name ("seven of hearts, card 2") moves
 * from aria-label into hidden text, so the name holds what the card shows; an image again, it moves back.
 */
function nameInText(el, asButton) {
  if (!el.classList.contains('card')) return;
  const hidden = el.querySelector(':scope > .card-name');
  if (asButton && !hidden) {
    el.append(h('span', { class: 'visually-hidden card-name' }, el.getAttribute('aria-label') ?? ''));
    el.removeAttribute('aria-label');
  } else if (!asButton && hidden) {
    el.setAttribute('aria-label', hidden.textContent);
    hidden.remove();
  }
}

/** Mark the cards a move touched, saying who did what. */
export function markMove(root, event, text, cards) {
  const wanted = new Set(cards);
  for (const el of root.querySelectorAll('[data-card]')) {
    if (!wanted.has(el.dataset.card)) continue;
    el.classList.add('moved');
    el.setAttribute('aria-description', t('play.movedBy', { text }));
    el.title = `${el.title} · ${t('play.movedBy', { text })}`;
  }
}

/** "A, B and C" in the page's language. */
export function listOf(items, last = t('word.and')) {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} ${last} ${items[items.length - 1]}`;
}

/** What an error says: the service unreachable, or refused with the rule. */
export function errorText(error) {
  if (error instanceof ApiError && error.status === 0) return t('error.offline');
  return error instanceof ApiError ? error.text : String(error);
}

const KIND_OF = { hand: 'hand', grid: 'grid', stock: 'stock', discard: 'discard', meld: 'meld', joker: 'joker', newmeld: 'meld',
  set: 'set', newset: 'set', take: 'take', stop: 'stop', cut: 'cut', suit: 'suit', pass: 'pass' };

/** The kind of thing a pick names, for the prompt ("a card of your hand", "the discard pile"). */
function pickKind(pick) {
  return KIND_OF[pick.split(':')[0]] ?? 'other';
}

/** A picked thing in words: "seven of hearts", "place 3". */
function pickWords(pick, view) {
  const [kind, a, b] = pick.split(':');
  if (kind === 'hand') return cardName(a);
  if (kind === 'take') return cardName(b);
  if (kind === 'grid') return t('pick.place', { n: Number(a) + 1 });
  if (['stock', 'discard', 'meld', 'set', 'newmeld', 'newset', 'joker'].includes(kind)) return t(`pick.${kind === 'newmeld' ? 'meld' : kind === 'newset' ? 'set' : kind}`);
  return view ? '' : pick;
}

/** The text of a chip: a suit, "pass", "send", or the legal action a choice stands for. */
function chipText(pick, view, you) {
  if (pick === OK) return t('moves.ok');
  const index = choiceIndex(pick);
  if (index !== null) {
    return gameParts(view.game).label(view.you.legal[index], view, { name: seatNamer(view.seats), seats: view.seats, you }).text;
  }
  const [kind, value] = pick.split(':');
  if (kind === 'suit') return t(`suit.${value}`);
  if (kind === 'pass') return t('moves.pass');
  if (kind === 'newmeld') return t('moves.newMeld');
  if (kind === 'newset') return t('moves.newSet');
  if (kind === 'stop') return t('moves.stop');
  return pick;
}

/** A game's display name. */
export function title(game) {
  return { golf: 'Golf', switch: 'Switch', romme: 'Rommé', go5: 'Go5' }[game] ?? game;
}

/** A game's full name in the page's language (the form's list). */
export function fullTitle(game) {
  const key = `game.${game}`;
  return t(key).startsWith('⟦') ? title(game) : t(key);
}
