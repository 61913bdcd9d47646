// Matches on duplicate deals (C-8): the list and the form that starts one (#/matches), and a match's page
// (#/match/ID): its entrants, a progress bar while it runs, its results with each paired difference drawn
// as a bar around 0, and its games, each linked to its replay once its deal is done.
import { api, catalog, registeredBots } from './api.js';
import { announce, h, replace } from './dom.js';
import { helpEl, winsLine } from './help.js';
import { language, t, tn } from './i18n.js';
import { botOption, levelWord, optionInput, playerCount, readOptions } from './options.js';
import { errorText, fullTitle, title } from './play.js';

const matchPath = (id) => `/v1/matches/${encodeURIComponent(id)}`;
const POLL_MS = 1000; // a running match is read again this often
const LIST_PAGE = 20;
const DEFAULT_DEALS = 10;
const DEALS_MAX = 1000;
const FIRST_GAME = 'golf';
const GAMES_SHOWN_OPEN = 40; // a match with more games shows its game list closed
const BAR = { width: 160, height: 22, pad: 6 };
/** SVG's namespace, as the HTML parser gives an <svg> (so that the page names no address of another site). */
const SVG_NS = (() => {
  const template = document.createElement('template');
  template.innerHTML = '<svg></svg>';
  return template.content.firstChild.namespaceURI;
})();

/** The view the form has just created: the match page shows it at once, then reads the match again. */
let justCreated = null;

// ------------------------------------------------------------ shared words

/** A number in the page's language: "−26.50", "+3.25" (`signed`), "5.33". */
export function num(value, digits = 2, signed = false) {
  if (value === null || value === undefined || Number.isNaN(Number(value))) return '–';
  return new Intl.NumberFormat(language(), {
    minimumFractionDigits: digits, maximumFractionDigits: digits, signDisplay: signed ? 'exceptZero' : 'auto',
  }).format(value);
}

/** A time the service gives (RFC 3339) in the page's language: "4 Dec 2026, 21:02:28". */
export function when(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso ?? '';
  return new Intl.DateTimeFormat(language(), { dateStyle: 'medium', timeStyle: 'medium' }).format(date);
}

/** An entrant's label as results and the ladder give it: a level, or `bot:<name>` for a registered bot. */
const labelOf = (entrant) => (entrant.bot ? `bot:${entrant.bot}` : entrant.level);

/** An entrant in words: the level's word, or the bot's name. */
function entrantText(label) {
  return label.startsWith('bot:') ? label.slice(4) : levelWord(label);
}

/** An entrant shown: a registered bot's name links to its page. */
export function entrantEl(label) {
  if (!label.startsWith('bot:')) return h('span', { class: 'entrant' }, levelWord(label));
  const name = label.slice(4);
  return h('a', { class: 'entrant bot', href: `#/bot/${encodeURIComponent(name)}` }, name);
}

/** "Golf: random, greedy · 3 deals" */
function matchSummary(match) {
  return `${title(match.game)}: ${match.entrants.map((e) => entrantText(labelOf(e))).join(', ')}`;
}

/** "finished" or "running, 4 of 6 games". */
function statusText(match) {
  if (match.status === 'finished') return t('match.finished');
  return t('match.runningOf', { n: match.progress.games_finished, of: match.progress.games_total });
}

/** The matches newest first, with a button for older ones (the list's `next`). */
export function matchList(first, { signal, empty = t('matches.none'), filter = () => true } = {}) {
  const list = h('ul', { class: 'match-list', id: 'match-list' });
  const note = h('p', { class: 'facts' });
  const older = h('button', { type: 'button', id: 'older-matches', hidden: true }, t('matches.older'));
  let next = first;
  const load = async () => {
    older.disabled = true;
    try {
      const page = await api(next, { signal });
      for (const match of page.matches.filter(filter)) {
        list.append(h('li', { 'data-match-id': match.id, 'data-status': match.status },
          h('a', { href: `#/match/${encodeURIComponent(match.id)}` }, matchSummary(match)),
          h('span', { class: 'facts' }, ` · ${tn('match.deals', match.deals)} · ${statusText(match)} · ${when(match.created_at)}`)));
      }
      next = page.next;
      older.hidden = !next;
      note.textContent = list.children.length ? '' : empty;
    } catch (error) {
      if (error.name !== 'AbortError') note.textContent = errorText(error);
    }
    older.disabled = false;
  };
  older.addEventListener('click', load);
  load();
  return h('div', {}, list, note, older);
}

// ------------------------------------------------------------ #/matches: the list and the form

function entrantRow(i, levels, bots) {
  const chosen = levels[i] ?? levels[0];
  const select = h('select', { id: `entrant-${i}`, class: 'entrant-choice' },
    h('optgroup', { label: t('form.houseBots') }, levels.map((l) => h('option', { value: l, selected: l === chosen }, levelWord(l)))),
    bots.length ? h('optgroup', { label: t('form.registeredBots') }, bots.map(botOption)) : null);
  return h('li', { class: 'entrant-row' }, h('label', { for: `entrant-${i}` }, t('matchForm.entrant', { n: i + 1 })), ' ', select);
}

export class MatchesPage {
  constructor(root) {
    this.root = root;
    this.controller = new AbortController();
  }

  stop() { this.controller.abort(); }

  async start() {
    replace(this.root, h('p', { class: 'loading' }, t('home.loading')));
    let games;
    try {
      games = await catalog();
    } catch (error) {
      replace(this.root, h('p', { class: 'alert', role: 'alert' }, errorText(error)));
      return;
    }
    document.title = `${t('matches.title')} · ${t('app.title')}`;
    replace(this.root, h('div', { class: 'page matches' },
      h('h1', {}, t('matches.title')),
      h('p', {}, t('matches.intro')),
      h('div', { class: 'columns' },
        h('div', { class: 'main-col' }, this.form(games)),
        h('aside', { class: 'side', 'aria-label': t('matches.side') },
          h('section', { class: 'block', 'aria-labelledby': 'recent-title' }, h('h2', { id: 'recent-title' }, t('matches.recent')),
            matchList(`/v1/matches?limit=${LIST_PAGE}`, { signal: this.controller.signal })),
          this.helpBox))));
    this.drawGame();
  }

  form(games) {
    const gameSelect = h('select', { id: 'match-game' }, games.map((g) => h('option', { value: g.id, selected: g.id === FIRST_GAME }, fullTitle(g.id))));
    const wins = h('p', { class: 'wins' });
    const count = h('input', { id: 'entrant-count', type: 'number', inputmode: 'numeric' });
    const rows = h('ol', { class: 'entrant-rows' });
    const optionBox = h('div', { class: 'options' });
    const deals = h('input', { id: 'deals', type: 'number', min: 1, max: DEALS_MAX, value: DEFAULT_DEALS, inputmode: 'numeric', 'aria-describedby': 'deals-hint' });
    const seed = h('input', { id: 'match-seed', maxlength: 128, autocomplete: 'off', 'aria-describedby': 'match-seed-hint' });
    const alert = h('p', { class: 'alert', role: 'alert', id: 'match-error' });
    const submit = h('button', { type: 'submit', id: 'start-match', class: 'primary' }, t('matchForm.start'));
    this.helpBox = h('div', {});
    const chosen = () => games.find((g) => g.id === gameSelect.value);
    const botsOf = new Map(); // the registered bots of each game, read once per form
    let bots = [];

    const drawRows = () => {
      const game = chosen();
      const n = playerCount(game, count.value, 2);
      while (rows.children.length > n) rows.lastElementChild.remove();
      for (let i = rows.children.length; i < n; i += 1) rows.append(entrantRow(i, game.bot_levels, bots));
    };
    this.drawGame = async () => {
      const game = chosen();
      count.min = String(game.players.min);
      count.max = String(game.players.max);
      count.value = String(playerCount(game, count.value, 2));
      bots = [];
      replace(rows);
      drawRows();
      replace(optionBox, game.options.map((option) => optionInput(game.id, option)));
      wins.textContent = winsLine(game.id);
      replace(this.helpBox, helpEl(game.id));
      if (!botsOf.has(game.id)) botsOf.set(game.id, registeredBots(game.id).catch(() => { botsOf.delete(game.id); return []; }));
      const found = await botsOf.get(game.id);
      if (gameSelect.value !== game.id || !found.length) return; // another game was chosen meanwhile
      bots = found;
      const picked = [...rows.querySelectorAll('select')].map((s) => s.value);
      replace(rows);
      drawRows();
      [...rows.querySelectorAll('select')].forEach((s, i) => { s.value = picked[i]; });
    };
    gameSelect.addEventListener('change', () => this.drawGame());
    count.addEventListener('change', drawRows);

    const form = h('form', { id: 'new-match', class: 'block' },
      h('h2', {}, t('matchForm.title')),
      h('div', { class: 'field' }, h('label', { for: 'match-game' }, t('form.game')), gameSelect),
      wins,
      h('div', { class: 'field' }, h('label', { for: 'entrant-count' }, t('matchForm.entrants')), count),
      h('fieldset', {}, h('legend', {}, t('matchForm.who')), rows, h('small', {}, t('matchForm.whoHint'))),
      h('div', { class: 'field' }, h('label', { for: 'deals' }, t('matchForm.deals')), deals,
        h('small', { id: 'deals-hint' }, t('matchForm.dealsHint', { max: DEALS_MAX }))),
      h('fieldset', {}, h('legend', {}, t('form.options')), optionBox),
      h('details', {}, h('summary', {}, t('form.seedOptional')),
        h('div', { class: 'field' }, h('label', { for: 'match-seed' }, t('form.seed')), seed,
          h('small', { id: 'match-seed-hint' }, t('matchForm.seedHint')))),
      alert, submit);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const game = chosen();
      const entrants = [...rows.querySelectorAll('select')].map((s) => (s.value.startsWith('bot:') ? { bot: s.value.slice(4) } : { level: s.value }));
      const body = { game: game.id, entrants, deals: Number(deals.value), options: readOptions(form, game) };
      if (seed.value) body.seed = seed.value;
      submit.disabled = true;
      alert.textContent = '';
      try {
        const created = await api('/v1/matches', { method: 'POST', body });
        justCreated = created;
        location.hash = `#/match/${encodeURIComponent(created.id)}`;
      } catch (error) {
        alert.textContent = t('matchForm.notStarted', { detail: errorText(error) });
        submit.disabled = false;
      }
    });
    return form;
  }
}

// ------------------------------------------------------------ #/match/ID

/** How a paired difference reads: `better` or `worse` (its interval clear of 0), `even` (holding 0), `single`
 * (one deal: no interval). `better` is the match's: lower or higher points are better. */
function verdictOf(pair, better) {
  if (!pair.ci95) return 'single';
  const [low, high] = pair.ci95;
  if (low <= 0 && high >= 0) return 'even';
  return (high < 0) === (better === 'lower') ? 'better' : 'worse';
}

/** A paired difference as a bar around 0 (an SVG image with its words): the interval, the mean a dot. */
function pairBar(pair, verdict, span, label) {
  const { width, height, pad } = BAR;
  const x = (v) => width / 2 + (v / span) * (width / 2 - pad);
  const el = (tag, attrs) => {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
    return node;
  };
  const svg = el('svg', { class: `pair-bar ${verdict}`, viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': label });
  const name = el('title', {});
  name.textContent = label;
  svg.append(name, el('line', { class: 'axis', x1: pad, x2: width - pad, y1: height / 2, y2: height / 2 }),
    el('line', { class: 'zero', x1: x(0), x2: x(0), y1: 1, y2: height - 1 }));
  if (pair.ci95) {
    const [low, high] = pair.ci95;
    svg.append(el('rect', { class: 'interval', x: x(low), y: height / 2 - 4, width: Math.max(1, x(high) - x(low)), height: 8, rx: 2 }));
  }
  svg.append(el('circle', { class: 'mean', cx: x(pair.mean), cy: height / 2, r: 4 }));
  return svg;
}

/** The scale of a match's bars: the largest distance from 0 of any mean or interval end. */
function barSpan(results) {
  const values = results.flatMap((r) => r.paired.flatMap((p) => [p.mean, ...(p.ci95 ?? [])])).map(Math.abs);
  return Math.max(...values, 1e-9) * 1.05;
}

function resultsEl(match) {
  const better = match.better;
  const sign = better === 'lower' ? 1 : -1;
  const ranked = [...match.results].sort((a, b) => sign * ((a.mean_points_per_hand ?? 0) - (b.mean_points_per_hand ?? 0)));
  const span = barSpan(match.results);
  const standings = h('table', { id: 'standings' },
    h('caption', {}, t('match.standingsCaption', { better: t(`match.better.${better}`) })),
    h('thead', {}, h('tr', {}, [t('match.rank'), t('match.entrant'), t('match.hands'), t('match.pointsPerHand'), t('match.timeouts')].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ranked.map((r, i) => h('tr', { 'data-entrant': r.entrant },
      h('td', {}, String(i + 1)), h('th', { scope: 'row' }, entrantEl(r.entrant)), h('td', {}, String(r.hands)), h('td', {}, num(r.mean_points_per_hand)),
      h('td', { class: 'timeouts' }, r.timeouts === undefined ? '–' : String(r.timeouts))))));
  const rows = ranked.flatMap((r) => r.paired.map((pair) => {
    const verdict = verdictOf(pair, better);
    const interval = pair.ci95 ? t('match.interval', { low: num(pair.ci95[0], 2, true), high: num(pair.ci95[1], 2, true) }) : t('match.noInterval');
    const label = t('match.barLabel', { a: entrantText(r.entrant), b: entrantText(pair.vs), mean: num(pair.mean, 2, true), interval, verdict: t(`match.verdict.${verdict}`) });
    return h('tr', { class: `pair ${verdict}`, 'data-entrant': r.entrant, 'data-vs': pair.vs },
      h('th', { scope: 'row' }, entrantEl(r.entrant)), h('td', {}, entrantEl(pair.vs)),
      h('td', {}, num(pair.mean, 2, true)), h('td', { class: 'interval-text' }, interval),
      h('td', { class: 'bar-cell' }, pairBar(pair, verdict, span, label)),
      h('td', { class: 'verdict-text' }, t(`match.verdict.${verdict}`)));
  }));
  const paired = h('table', { id: 'paired' },
    h('caption', {}, t('match.pairedCaption')),
    h('thead', {}, h('tr', {}, [t('match.entrant'), t('match.minus'), t('match.difference'), t('match.ci95'), t('match.bar'), t('match.reading')].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows));
  return h('section', { class: 'block results', id: 'results', 'aria-labelledby': 'results-title' },
    h('h2', { id: 'results-title' }, t('match.results')),
    h('div', { class: 'scroll' }, standings),
    h('p', { class: 'facts' }, t('match.pairedHow', { better: t(`match.better.${better}`) })),
    h('div', { class: 'scroll' }, paired));
}

/** The deals whose every game has finished: their games may be replayed. */
function dealsDone(match) {
  const seats = match.entrants.length;
  const finished = new Map();
  for (const game of match.games) if (game.status === 'finished') finished.set(game.deal, (finished.get(game.deal) ?? 0) + 1);
  return new Set([...finished].filter(([, n]) => n === seats).map(([deal]) => deal));
}

function gamesEl(match, open) {
  const done = dealsDone(match);
  const details = h('details', { class: 'block games', id: 'match-games', open },
    h('summary', {}, h('h2', {}, t('match.games', { n: match.games.length, of: match.games_total }))),
    h('p', { class: 'facts' }, t('match.gamesHow')),
    h('div', { class: 'scroll' }, h('table', {},
      h('thead', {}, h('tr', {}, [t('match.deal'), t('match.rotation'), t('match.seats'), t('match.status'), t('match.replay')].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, match.games.map((game) => h('tr', { 'data-game-id': game.game_id },
        h('td', {}, String(game.deal)), h('td', {}, String(game.rotation)),
        h('td', { class: 'seats-cell' }, game.seats.map((s, i) => [i ? ', ' : '', entrantText(s)])),
        h('td', {}, t(`match.gameStatus.${game.status}`)),
        h('td', {}, done.has(game.deal)
          ? h('a', { class: 'replay-link', href: `#/replay/${encodeURIComponent(game.game_id)}` }, game.game_id)
          : h('span', { class: 'facts' }, t('match.dealInPlay')))))))));
  details.addEventListener('toggle', () => { details.dataset.touched = 'true'; });
  return details;
}

export class MatchPage {
  constructor(root, id) {
    this.root = root;
    this.id = id;
    this.controller = new AbortController();
    this.stopped = false;
    this.shown = null;
  }

  stop() {
    this.stopped = true;
    this.controller.abort();
    window.clearTimeout(this.timer);
  }

  async start() {
    let match = justCreated?.id === this.id ? justCreated : null;
    justCreated = null;
    if (!match) {
      replace(this.root, h('p', { class: 'loading' }, t('match.loading')));
      try {
        match = await api(matchPath(this.id), { signal: this.controller.signal });
      } catch (error) {
        if (error.name === 'AbortError') return;
        replace(this.root, h('div', { class: 'page' }, h('h1', {}, t('match.notFound')),
          h('p', { class: 'alert', role: 'alert' }, errorText(error)), h('p', {}, h('a', { href: '#/matches' }, t('match.all')))));
        return;
      }
    }
    this.layout(match);
    this.show(match);
  }

  /** Read the match again (while it runs). */
  async poll() {
    let match;
    try {
      match = await api(matchPath(this.id), { signal: this.controller.signal });
      this.connection.textContent = '';
    } catch (error) {
      if (error.name === 'AbortError') return;
      this.connection.textContent = errorText(error);
    }
    if (this.stopped) return;
    if (match) this.show(match);
    if (!match) this.timer = window.setTimeout(() => this.poll(), POLL_MS); // show() schedules the next read of a running match
  }

  layout(match) {
    this.connection = h('p', { class: 'connection', role: 'status', id: 'connection' });
    this.factsBox = h('div', {});
    this.progressBox = h('div', {});
    this.resultsBox = h('div', {});
    this.gamesBox = h('div', {});
    this.page = h('div', { class: 'page match', 'data-match-id': this.id, 'data-game': match.game },
      h('header', { class: 'page-head' },
        h('h1', {}, `${t('match.title', { game: title(match.game) })} `, h('span', { class: 'gid' }, t('match.id', { id: this.id }))),
        h('p', { class: 'links' }, h('a', { href: '#/matches' }, t('match.all')), ' · ',
          h('a', { href: `#/ladder/${encodeURIComponent(match.game)}` }, t('match.ladderOf', { game: title(match.game) })))),
      this.connection,
      h('section', { class: 'block', 'aria-labelledby': 'entrants-title' }, h('h2', { id: 'entrants-title' }, t('match.entrants')),
        h('ol', { class: 'entrants' }, match.entrants.map((e) => h('li', {}, entrantEl(labelOf(e)),
          h('span', { class: 'facts' }, ` · ${e.bot ? t('match.registeredBot') : t('match.houseLevel')}`))))),
      this.progressBox, this.resultsBox, this.factsBox, this.gamesBox);
    replace(this.root, this.page);
    document.title = `${t('match.title', { game: title(match.game) })} · ${t('app.title')}`;
  }

  show(match) {
    if (match.status === 'running' && !this.stopped) { // first, so that a drawing that fails cannot end the reads
      window.clearTimeout(this.timer);
      this.timer = window.setTimeout(() => this.poll(), POLL_MS);
    }
    const key = `${match.status}/${match.progress.games_finished}/${match.games.length}`;
    if (key !== this.shown) {
      const before = this.shown;
      this.shown = key;
      this.page.dataset.status = match.status;
      this.render(match);
      if (before?.startsWith('running') && match.status === 'finished') announce(t('match.finishedNow'));
    }
  }

  render(match) {
    const { games_finished: finished, games_total: total } = match.progress;
    if (match.status === 'running') {
      replace(this.progressBox, h('section', { class: 'block', 'aria-labelledby': 'progress-title' },
        h('h2', { id: 'progress-title' }, t('match.progress')),
        h('progress', { id: 'match-progress', max: total, value: finished, 'aria-labelledby': 'progress-title', 'aria-describedby': 'progress-text' }),
        h('p', { id: 'progress-text' }, t('match.gamesDone', { n: finished, of: total, percent: Math.floor((100 * finished) / total) }))));
      replace(this.resultsBox);
    } else {
      replace(this.progressBox);
      replace(this.resultsBox, resultsEl(match));
    }
    const options = Object.keys(match.options).length ? JSON.stringify(match.options) : t('match.defaults');
    replace(this.factsBox, h('section', { class: 'block match-facts', 'aria-labelledby': 'facts-title' },
      h('h2', { id: 'facts-title' }, t('match.about')),
      h('dl', {},
        h('dt', {}, t('match.status')), h('dd', { id: 'match-status' }, statusText(match)),
        h('dt', {}, t('match.dealsTitle')), h('dd', {}, `${tn('match.deals', match.deals)}, ${tn('match.gamesCount', match.games_total)}`),
        h('dt', {}, t('form.options')), h('dd', {}, h('code', {}, options)),
        h('dt', {}, t('match.better.title')), h('dd', {}, t('match.pointsBetter', { better: t(`match.better.${match.better}`) })),
        h('dt', {}, t('match.created')), h('dd', {}, when(match.created_at)),
        match.finished_at ? [h('dt', {}, t('match.finishedAt')), h('dd', {}, when(match.finished_at))] : null,
        h('dt', {}, t('match.commitment')), h('dd', {}, h('code', { class: 'hash' }, match.seed_commitment)),
        match.seed ? [h('dt', {}, t('form.seed')), h('dd', {}, h('code', { class: 'hash' }, match.seed)),
          h('dt', {}, t('match.nonce')), h('dd', {}, h('code', { class: 'hash' }, match.nonce))] : null),
      match.status === 'finished'
        ? h('p', {}, h('a', { href: `${matchPath(this.id)}/record`, download: `match-${this.id}.json`, id: 'match-record' }, t('match.record')), ' ', t('match.recordHow'))
        : h('p', { class: 'facts' }, t('match.secret'))));
    const old = this.gamesBox.querySelector('details');
    replace(this.gamesBox, gamesEl(match, old?.dataset.touched ? old.open : match.games.length <= GAMES_SHOWN_OPEN));
    if (old?.dataset.touched) this.gamesBox.querySelector('details').dataset.touched = 'true';
  }
}
