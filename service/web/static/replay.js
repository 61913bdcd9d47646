// The replay viewer: any game at any event, the event list beside the table, the audit's verdict.
import { api, ApiError, gamePath, heldGame, heldGames } from './api.js';
import { h, replace } from './dom.js';
import { eventEl, eventText } from './events.js';
import { title } from './play.js';
import { factsLine, resultEl, seatNamer, seatsEl, tableEl } from './table.js';

/** The form to open any game's replay, and the games this tab knows. */
export function replayIndex(root) {
  const held = heldGames();
  replace(root, h('div', { class: 'page' },
    h('h1', {}, 'Replays'),
    openForm(),
    held.length ? h('section', { class: 'block' }, h('h2', {}, 'Games of this tab'),
      h('ul', {}, held.map((g) => h('li', {}, h('a', { href: `#/replay/${encodeURIComponent(g.id)}` }, `${title(g.game)} ${g.id}`))))) : null));
}

/** "Game id: [      ] [Open replay]". */
export function openForm(value = '') {
  const input = h('input', { id: 'replay-id', name: 'id', required: true, pattern: '[A-Za-z0-9_\\-]{1,64}', value, autocomplete: 'off', spellcheck: 'false' });
  const form = h('form', { class: 'open-replay', role: 'search' },
    h('label', { for: 'replay-id' }, 'Game id '), input, ' ', h('button', { type: 'submit' }, 'Open replay'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const id = input.value.trim();
    if (id) location.hash = `#/replay/${encodeURIComponent(id)}`;
  });
  return form;
}

export class ReplayPage {
  constructor(root, id, at = null) {
    this.root = root;
    this.id = id;
    this.wanted = at;
    this.at = null;
    this.cache = new Map(); // at -> view
    this.controller = new AbortController();
    this.stopped = false;
  }

  stop() {
    this.stopped = true;
    this.controller.abort();
  }

  /** A held seat's token while the game runs (its replay then shows that seat's hand). */
  get token() {
    const held = heldGame(this.id);
    if (!held || this.record?.status === 'finished') return null;
    return held.tokens?.[held.as] ?? null;
  }

  async start() {
    replace(this.root, h('p', { class: 'loading' }, 'Loading the replay…'));
    try {
      this.record = await api(`${gamePath(this.id)}/record`, { signal: this.controller.signal });
    } catch (error) {
      if (error.name === 'AbortError') return;
      replace(this.root, h('div', { class: 'page' }, h('h1', {}, 'Replays'),
        h('p', { class: 'alert', role: 'alert' }, error instanceof ApiError ? error.text : String(error)), openForm(this.id)));
      return;
    }
    this.layout();
    this.loadAudit();
    await this.go(this.wanted ?? this.record.version);
  }

  get last() { return this.record.version; }

  async reload() {
    this.record = await api(`${gamePath(this.id)}/record`, { signal: this.controller.signal });
    this.cache.clear();
    this.fillEvents();
    this.loadAudit();
    await this.go(Math.min(this.at ?? this.last, this.last));
  }

  async loadAudit() {
    replace(this.verdictBox, h('p', {}, 'Checking the game…'));
    try {
      const verdict = await api(`${gamePath(this.id)}/audit`, { signal: this.controller.signal });
      replace(this.verdictBox, verdictEl(verdict));
    } catch (error) {
      if (error.name !== 'AbortError') replace(this.verdictBox, h('p', { class: 'alert' }, `The audit failed: ${error.text ?? error}`));
    }
  }

  /** Show the game after event `at`. */
  async go(at) {
    const target = Math.max(1, Math.min(this.last, Math.trunc(Number(at)) || 1));
    this.pending = target;
    let view = this.cache.get(target);
    if (!view) {
      try {
        view = await api(`${gamePath(this.id)}/replay?at=${target}`, { token: this.token, signal: this.controller.signal });
      } catch (error) {
        if (error.name === 'AbortError') return;
        this.alert.textContent = error instanceof ApiError ? error.text : String(error);
        return;
      }
      this.cache.set(target, view);
    }
    if (this.stopped || this.pending !== target) return;
    this.at = target;
    this.alert.textContent = '';
    history.replaceState(null, '', `#/replay/${encodeURIComponent(this.id)}/${target}`);
    this.render(view);
  }

  layout() {
    const r = this.record;
    this.position = h('p', { class: 'status', role: 'status', id: 'replay-position' });
    this.alert = h('p', { class: 'alert', role: 'alert' });
    this.verdictBox = h('div', { class: 'verdict-box' });
    this.viewBox = h('div', {});
    this.seatsBox = h('div', {});
    this.eventList = h('ol', { class: 'events replay-events', 'aria-label': 'events; choose one to go there' });
    this.eventLog = h('div', { class: 'log' }, this.eventList);
    this.jump = h('input', { id: 'jump-to', type: 'number', min: 1, max: r.version, inputmode: 'numeric' });
    this.slider = h('input', { id: 'replay-slider', type: 'range', min: 1, max: r.version, 'aria-label': 'event' });
    this.slider.addEventListener('change', () => this.go(this.slider.value));
    const jumpForm = h('form', { class: 'jump' },
      h('label', { for: 'jump-to' }, 'Go to event '), this.jump, ' ', h('button', { type: 'submit', id: 'jump-go' }, 'Go'));
    jumpForm.addEventListener('submit', (event) => { event.preventDefault(); this.go(this.jump.value); });
    const button = (id, text, label, step) => h('button', { type: 'button', id, 'aria-label': label, title: label, onclick: () => this.go(step()) }, text);
    this.controls = h('div', { class: 'controls', role: 'group', 'aria-label': 'Step through the game' },
      button('replay-first', '« First', 'first event', () => 1),
      button('replay-back', '◀ Back', 'one event back', () => this.at - 1),
      button('replay-forward', 'Forward ▶', 'one event forward', () => this.at + 1),
      button('replay-last', 'Last »', 'last event', () => this.last),
      jumpForm, this.slider);
    this.controls.addEventListener('keydown', (event) => this.onKey(event));
    const held = heldGame(this.id);
    this.page = h('div', { class: 'page replay', 'data-game': r.game, 'data-game-id': this.id, 'data-status': r.status },
      h('header', { class: 'page-head' },
        h('h1', {}, `Replay: ${title(r.game)} `, h('span', { class: 'gid' }, `game ${this.id}`)),
        h('p', { class: 'links' },
          held || r.status !== 'finished' ? [h('a', { href: `#/play/${encodeURIComponent(this.id)}` }, held ? 'Back to the game' : 'Watch it live'), ' · '] : null,
          h('a', { href: `${gamePath(this.id)}/record`, download: `${this.id}.json` }, 'Download the record'), ' · ',
          h('button', { type: 'button', class: 'link', onclick: () => this.reload() }, 'Reload')),
        h('p', { class: 'facts' }, `${r.status === 'finished' ? 'Finished' : 'Still running'} · ${r.version} events · seed ${r.seed_source === 'creator' ? 'chosen by the creator' : 'drawn by the server'}${r.stacked ? ' · stacked decks' : ''}`),
        openForm()),
      this.controls, this.position, this.alert,
      h('div', { class: 'columns' },
        h('div', { class: 'main-col' }, this.viewBox),
        h('aside', { class: 'side', 'aria-label': 'Audit, seats and events' },
          h('section', { class: 'block verdict', 'aria-label': 'Audit' }, h('h2', {}, 'Audit'), this.verdictBox),
          this.seatsBox,
          h('section', { class: 'block', 'aria-label': 'Events' }, h('h2', {}, 'Events'), this.eventLog))));
    replace(this.root, this.page);
    this.fillEvents();
  }

  onKey(event) {
    if (event.target instanceof HTMLInputElement) return;
    const steps = { ArrowLeft: () => this.at - 1, ArrowRight: () => this.at + 1, Home: () => 1, End: () => this.last };
    if (steps[event.key]) {
      event.preventDefault();
      this.go(steps[event.key]());
    }
  }

  fillEvents() {
    const name = seatNamer(this.record.seats);
    replace(this.eventList, this.record.events.map((event) => h('li', { 'data-seq': event.seq },
      h('button', { type: 'button', class: 'event', onclick: () => this.go(event.seq), 'aria-label': `event ${event.seq}: ${eventText(event, name, this.record.game)}` }, eventEl(event, name, this.record.game)))));
    this.jump.max = String(this.record.version);
    this.slider.max = String(this.record.version);
  }

  render(view) {
    const at = this.at;
    const event = this.record.events[at - 1];
    const name = seatNamer(this.record.seats);
    this.page.dataset.at = String(at);
    document.title = `Replay ${this.id}, event ${at} · Card table`;
    this.position.textContent = `Event ${at} of ${this.last}${event ? `: ${eventText(event, name, this.record.game)}` : ''}`;
    this.jump.value = String(at);
    this.slider.value = String(at);
    document.getElementById('replay-back').disabled = at <= 1;
    document.getElementById('replay-first').disabled = at <= 1;
    document.getElementById('replay-forward').disabled = at >= this.last;
    document.getElementById('replay-last').disabled = at >= this.last;
    const you = view.you ? view.you.seat : null;
    const [table, hand] = tableEl(view, you);
    replace(this.viewBox, factsLine(view), resultEl(view), hand, table);
    replace(this.seatsBox, seatsEl(view, you));
    for (const item of this.eventList.children) {
      const current = Number(item.dataset.seq) === at;
      item.classList.toggle('current', current);
      item.classList.toggle('future', Number(item.dataset.seq) > at);
      const button = item.querySelector('button');
      if (current) {
        button.setAttribute('aria-current', 'step');
        scrollWithin(this.eventLog, item);
      } else {
        button.removeAttribute('aria-current');
      }
    }
  }
}

/** Scroll a box (not the page) so that `item` is in view. */
function scrollWithin(box, item) {
  const top = item.offsetTop; // .log is positioned: offsets are within it
  if (top < box.scrollTop || top + item.offsetHeight > box.scrollTop + box.clientHeight) {
    box.scrollTop = Math.max(0, top - box.clientHeight / 2);
  }
}

/** The audit's verdict, worded like the offline verifier's last line. */
export function verdictEl(v) {
  let word;
  if (v.complete && v.chain_ok && v.replay_ok && v.first_bad_seq === null) word = 'PASS';
  else if (!v.chain_ok || v.replay_ok === false || v.first_bad_seq !== null) word = `FAIL${v.first_bad_seq ? ` at event ${v.first_bad_seq}` : ''}`;
  else word = 'INCOMPLETE';
  const yes = (x) => (x === null ? 'not run' : x ? 'yes' : 'no');
  return h('div', { class: `verdict ${word.split(' ')[0].toLowerCase()}`, id: 'verdict' },
    h('p', { class: 'word' }, word),
    h('p', {}, v.detail),
    h('dl', {},
      h('dt', {}, 'Hash chain holds'), h('dd', {}, yes(v.chain_ok)),
      h('dt', {}, 'Re-run by the rules agrees'), h('dd', {}, yes(v.replay_ok)),
      h('dt', {}, 'First bad event'), h('dd', {}, v.first_bad_seq === null ? 'none' : String(v.first_bad_seq)),
      h('dt', {}, 'Checked to the end'), h('dd', {}, yes(v.complete))));
}
