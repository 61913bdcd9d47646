// The replay viewer: any game at any event, the event list beside the table, the audit's verdict.
import { api, ApiError, gamePath, heldGame, heldGames } from './api.js';
import { h, replace } from './dom.js';
import { backEl, cardEl } from './cards.js';
import { eventEl, eventText, movedCards } from './events.js';
import { t } from './i18n.js';
import { markMove, title } from './play.js';
import { factsLine, resultEl, seatNamer, seatRing, tableEl } from './table.js';

/** The form to open any game's replay, and the games this tab knows. */
export function replayIndex(root) {
  const held = heldGames();
  replace(root, h('div', { class: 'page' },
    h('h1', {}, t('replay.title')),
    openForm(),
    held.length ? h('section', { class: 'block' }, h('h2', {}, t('replay.tabGames')),
      h('ul', {}, held.map((g) => h('li', {}, h('a', { href: `#/replay/${encodeURIComponent(g.id)}` }, `${title(g.game)} ${g.id}`))))) : null));
}

/** "Game id: [      ] [Open replay]". */
export function openForm(value = '') {
  const input = h('input', { id: 'replay-id', name: 'id', required: true, pattern: '[A-Za-z0-9_\\-]{1,64}', value, autocomplete: 'off', spellcheck: 'false' });
  const form = h('form', { class: 'open-replay', role: 'search' },
    h('label', { for: 'replay-id' }, t('replay.gameId')), ' ', input, ' ', h('button', { type: 'submit' }, t('replay.open')));
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
    replace(this.root, h('p', { class: 'loading' }, t('replay.loading')));
    try {
      this.record = await api(`${gamePath(this.id)}/record`, { signal: this.controller.signal });
    } catch (error) {
      if (error.name === 'AbortError') return;
      replace(this.root, h('div', { class: 'page' }, h('h1', {}, t('replay.title')),
        h('p', { class: 'alert', role: 'alert' }, error instanceof ApiError && error.status === 0 ? t('error.offline') : error instanceof ApiError ? error.text : String(error)), openForm(this.id)));
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
    replace(this.verdictBox, h('p', {}, t('audit.checking')));
    try {
      const verdict = await api(`${gamePath(this.id)}/audit`, { signal: this.controller.signal });
      replace(this.verdictBox, verdictEl(verdict));
    } catch (error) {
      if (error.name !== 'AbortError') replace(this.verdictBox, h('p', { class: 'alert' }, t('audit.failed', { detail: error.status === 0 ? t('error.offline') : error.text ?? error })));
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
        this.alert.textContent = error instanceof ApiError && error.status === 0 ? t('error.offline') : error instanceof ApiError ? error.text : String(error);
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
    this.eventList = h('ol', { class: 'events replay-events', 'aria-label': t('replay.eventsList') });
    this.eventLog = h('div', { class: 'log' }, this.eventList);
    this.jump = h('input', { id: 'jump-to', type: 'number', min: 1, max: r.version, inputmode: 'numeric' });
    this.slider = h('input', { id: 'replay-slider', type: 'range', min: 1, max: r.version, 'aria-label': t('replay.event') });
    this.slider.addEventListener('change', () => this.go(this.slider.value));
    const jumpForm = h('form', { class: 'jump' },
      h('label', { for: 'jump-to' }, t('replay.goTo')), ' ', this.jump, ' ', h('button', { type: 'submit', id: 'jump-go' }, t('replay.go')));
    jumpForm.addEventListener('submit', (event) => { event.preventDefault(); this.go(this.jump.value); });
    const button = (id, text, label, step) => h('button', { type: 'button', id, 'aria-label': label, title: label, onclick: () => this.go(step()) }, text);
    this.controls = h('div', { class: 'controls', role: 'group', 'aria-label': t('replay.steps') },
      button('replay-first', `« ${t('replay.first')}`, t('replay.firstLabel'), () => 1),
      button('replay-back', `◀ ${t('replay.back')}`, t('replay.backLabel'), () => this.at - 1),
      button('replay-forward', `${t('replay.forward')} ▶`, t('replay.forwardLabel'), () => this.at + 1),
      button('replay-last', `${t('replay.last')} »`, t('replay.lastLabel'), () => this.last),
      jumpForm, this.slider);
    this.controls.addEventListener('keydown', (event) => this.onKey(event));
    const held = heldGame(this.id);
    this.page = h('div', { class: 'page replay', 'data-game': r.game, 'data-game-id': this.id, 'data-status': r.status },
      h('header', { class: 'page-head' },
        h('h1', {}, `${t('replay.of', { game: title(r.game) })} `, h('span', { class: 'gid' }, t('play.gameId', { id: this.id }))),
        h('p', { class: 'links' },
          held || r.status !== 'finished' ? [h('a', { href: `#/play/${encodeURIComponent(this.id)}` }, held ? t('replay.backToGame') : t('replay.watch')), ' · '] : null,
          h('a', { href: `${gamePath(this.id)}/record`, download: `${this.id}.json` }, t('play.download')), ' · ',
          h('button', { type: 'button', class: 'link', onclick: () => this.reload() }, t('replay.reload'))),
        h('p', { class: 'facts' }, [r.status === 'finished' ? t('replay.finished') : t('replay.running'), t('replay.events', { n: r.version }),
          r.seed_source === 'creator' ? t('replay.seedCreator') : t('replay.seedServer'), r.stacked ? t('facts.stacked') : null].filter(Boolean).join(' · ')),
        openForm()),
      this.controls, this.position, this.alert,
      h('div', { class: 'columns' },
        h('div', { class: 'main-col' }, this.viewBox),
        h('aside', { class: 'side', 'aria-label': t('replay.side') },
          h('section', { class: 'block verdict', 'aria-labelledby': 'audit-title' }, h('h2', { id: 'audit-title' }, t('audit.title')), this.verdictBox),
          this.seatsBox,
          h('section', { class: 'block', 'aria-labelledby': 'events-title' }, h('h2', { id: 'events-title' }, t('events.title')), this.eventLog))));
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
      h('button', { type: 'button', class: 'event', onclick: () => this.go(event.seq), 'aria-label': t('replay.eventLabel', { n: event.seq, text: eventText(event, name, this.record.game) }) }, eventEl(event, name, this.record.game)))));
    this.jump.max = String(this.record.version);
    this.slider.max = String(this.record.version);
  }

  render(view) {
    const at = this.at;
    const event = this.record.events[at - 1];
    const name = seatNamer(this.record.seats);
    this.page.dataset.at = String(at);
    document.title = `${t('replay.docTitle', { id: this.id, n: at })} · ${t('app.title')}`;
    this.position.textContent = t('replay.position', { n: at, last: this.last, text: event ? eventText(event, name, this.record.game) : '' });
    this.jump.value = String(at);
    this.slider.value = String(at);
    document.getElementById('replay-back').disabled = at <= 1;
    document.getElementById('replay-first').disabled = at <= 1;
    document.getElementById('replay-forward').disabled = at >= this.last;
    document.getElementById('replay-last').disabled = at >= this.last;
    const you = view.you ? view.you.seat : null;
    const [table, hand] = tableEl(view, you);
    replace(this.viewBox, factsLine(view), resultEl(view), legendEl(view), table, hand);
    replace(this.seatsBox, h('section', { class: 'block', 'aria-labelledby': 'seats-title' }, h('h2', { id: 'seats-title' }, t('seats.title')), seatRing(view, null)));
    if (event && (event.actor !== 'system' || event.seat !== undefined)) markMove(this.viewBox, event, eventText(event, name, this.record.game), movedCards(event));
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

/** What the marks on the cards mean: the last move's cards, and cards shown that lay face down. */
function legendEl(view) {
  const fullView = !view.you && Array.isArray(view.table?.stock);
  return h('p', { class: 'legend facts' },
    cardEl('7H', { extraClass: 'moved', note: t('legend.moved') }), ' ', t('legend.moved'),
    fullView ? [' · ', cardEl('7H', { extraClass: 'was-down', note: t('legend.wasDown') }), ' ', t('legend.wasDown')] : null,
    view.you || !fullView ? [' · ', backEl(t('legend.back')), ' ', t('legend.back')] : null);
}

/** The audit's verdict, worded like the offline verifier's last line. */
export function verdictEl(v) {
  let word;
  if (v.complete && v.chain_ok && v.replay_ok && v.first_bad_seq === null) word = 'PASS';
  else if (!v.chain_ok || v.replay_ok === false || v.first_bad_seq !== null) word = `FAIL${v.first_bad_seq ? ` at event ${v.first_bad_seq}` : ''}`;
  else word = 'INCOMPLETE';
  const yes = (x) => (x === null ? t('audit.notRun') : x ? t('audit.yes') : t('audit.no'));
  return h('div', { class: `verdict ${word.split(' ')[0].toLowerCase()}`, id: 'verdict' },
    h('p', { class: 'word' }, word),
    h('p', {}, v.detail),
    h('dl', {},
      h('dt', {}, t('audit.chain')), h('dd', {}, yes(v.chain_ok)),
      h('dt', {}, t('audit.rerun')), h('dd', {}, yes(v.replay_ok)),
      h('dt', {}, t('audit.firstBad')), h('dd', {}, v.first_bad_seq === null ? t('audit.none') : String(v.first_bad_seq)),
      h('dt', {}, t('audit.complete')), h('dd', {}, yes(v.complete))));
}
