// The ladder of a game (#/ladder/GAME: every entrant that played a finished match of it, best rating
// first) and a registered bot's page (#/bot/NAME: its profile, its places on the ladders, its recent matches).
import { api, ApiError, catalog } from './api.js';
import { h, replace } from './dom.js';
import { t, tn } from './i18n.js';
import { entrantEl, matchList, num, when } from './matches.js';
import { errorText, fullTitle, title } from './play.js';

const FIRST_GAME = 'golf';
const MATCHES_SCANNED = 100; // the bot page looks for the bot among this many of the newest matches

/** A game's ladder: `{entries, matches}`, the entries best first, `matches` the finished matches rated; null when
 * this service serves no ladder (a 404 of no route); a 404 of the route itself (an unknown game) is thrown. */
export async function ladderOf(game, signal) {
  try {
    const body = await api(`/v1/ladder/${encodeURIComponent(game)}`, { signal });
    return { entries: body.ladder ?? body.entries ?? [], matches: body.matches ?? null };
  } catch (error) {
    if (error instanceof ApiError && error.status === 404 && error.problem.code === 'not_found') return null;
    throw error;
  }
}

const COLUMNS = ['ladder.rank', 'match.entrant', 'ladder.ordinal', 'ladder.mu', 'ladder.sigma', 'ladder.matches', 'ladder.deals', 'match.hands'];

function ladderRow(entry, rank, first) {
  const { rating } = entry;
  return h('tr', { 'data-entrant': entry.entrant },
    h('td', {}, String(rank)),
    first(entry),
    h('td', {}, num(rating.ordinal)), h('td', {}, num(rating.mu)), h('td', {}, num(rating.sigma)),
    h('td', {}, String(entry.matches)), h('td', {}, String(entry.deals)), h('td', {}, String(entry.hands)));
}

function ladderTable(id, caption, columns, rows) {
  return h('div', { class: 'scroll' }, h('table', { id },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, columns.map((key) => h('th', { scope: 'col' }, t(key))))),
    h('tbody', {}, rows)));
}

export class LadderPage {
  constructor(root, game) {
    this.root = root;
    this.game = game || FIRST_GAME;
    this.controller = new AbortController();
  }

  stop() { this.controller.abort(); }

  async start() {
    replace(this.root, h('p', { class: 'loading' }, t('ladder.loading')));
    document.title = `${t('ladder.title', { game: title(this.game) })} · ${t('app.title')}`;
    let games;
    let ladder;
    try {
      [games, ladder] = await Promise.all([catalog(), ladderOf(this.game, this.controller.signal)]);
    } catch (error) {
      if (error.name === 'AbortError') return;
      replace(this.root, h('div', { class: 'page' }, h('h1', {}, t('ladder.title', { game: title(this.game) })),
        h('p', { class: 'alert', role: 'alert' }, errorText(error))));
      return;
    }
    const select = h('select', { id: 'ladder-game' }, games.map((g) => h('option', { value: g.id, selected: g.id === this.game }, fullTitle(g.id))));
    select.addEventListener('change', () => { location.hash = `#/ladder/${encodeURIComponent(select.value)}`; });
    let body;
    if (ladder === null) body = h('p', { class: 'facts', id: 'ladder-none' }, t('ladder.unavailable'));
    else if (!ladder.entries.length) body = h('p', { class: 'facts', id: 'ladder-none' }, t('ladder.empty'));
    else {
      body = [ladderTable('ladder', t('ladder.caption', { game: title(this.game) }), COLUMNS,
        ladder.entries.map((entry, i) => ladderRow(entry, i + 1, (e) => h('th', { scope: 'row' }, entrantEl(e.entrant))))),
      ladder.matches !== null ? h('p', { class: 'facts', id: 'ladder-matches' }, tn('ladder.rated', ladder.matches)) : null];
    }
    replace(this.root, h('div', { class: 'page ladder', 'data-game': this.game },
      h('h1', {}, t('ladder.title', { game: title(this.game) })),
      h('div', { class: 'field' }, h('label', { for: 'ladder-game' }, t('form.game')), select),
      h('section', { class: 'block', 'aria-labelledby': 'ladder-title' }, h('h2', { id: 'ladder-title' }, t('ladder.ratings')),
        body, h('p', { class: 'facts' }, t('ladder.how'))),
      h('p', {}, h('a', { href: '#/matches' }, t('ladder.startMatch')))));
  }
}

export class BotPage {
  constructor(root, name) {
    this.root = root;
    this.name = name;
    this.controller = new AbortController();
  }

  stop() { this.controller.abort(); }

  async start() {
    replace(this.root, h('p', { class: 'loading' }, t('bot.loading')));
    document.title = `${t('bot.title', { name: this.name })} · ${t('app.title')}`;
    const { signal } = this.controller;
    let bot;
    try {
      bot = await api(`/v1/bots/${encodeURIComponent(this.name)}`, { signal });
    } catch (error) {
      if (error.name === 'AbortError') return;
      replace(this.root, h('div', { class: 'page' }, h('h1', {}, t('bot.title', { name: this.name })),
        h('p', { class: 'alert', role: 'alert' }, errorText(error))));
      return;
    }
    const yes = (x) => t(x ? 'audit.yes' : 'audit.no');
    const ladders = h('div', {}, h('p', { class: 'loading' }, t('ladder.loading')));
    const label = `bot:${bot.name}`;
    replace(this.root, h('div', { class: 'page bot', 'data-bot': bot.name },
      h('h1', {}, t('bot.title', { name: bot.name })),
      bot.description ? h('p', { class: 'description' }, bot.description) : null,
      h('section', { class: 'block profile', 'aria-labelledby': 'profile-title' }, h('h2', { id: 'profile-title' }, t('bot.profile')),
        h('dl', { id: 'bot-profile' },
          h('dt', {}, t('bot.games')), h('dd', {}, bot.games.map((g, i) => [i ? ', ' : '', h('a', { href: `#/ladder/${encodeURIComponent(g)}` }, title(g))])),
          h('dt', {}, t('bot.online')), h('dd', { id: 'bot-online' }, yes(bot.online)),
          h('dt', {}, t('bot.playing')), h('dd', {}, String(bot.playing)),
          h('dt', {}, t('bot.played')), h('dd', { id: 'bot-played' }, String(bot.played)),
          h('dt', {}, t('bot.timeouts')), h('dd', { id: 'bot-timeouts' }, String(bot.timeouts)),
          h('dt', {}, t('bot.registered')), h('dd', {}, when(bot.created_at)))),
      h('section', { class: 'block', 'aria-labelledby': 'ratings-title' }, h('h2', { id: 'ratings-title' }, t('bot.ratings')), ladders),
      h('section', { class: 'block', 'aria-labelledby': 'bot-matches-title' }, h('h2', { id: 'bot-matches-title' }, t('bot.matches')),
        h('p', { class: 'facts' }, t('bot.matchesHow', { n: MATCHES_SCANNED })),
        matchList(`/v1/matches?limit=${MATCHES_SCANNED}`, {
          signal, empty: t('bot.noMatches'), filter: (m) => m.entrants.some((e) => e.bot === bot.name),
        }))));
    let found;
    try {
      found = await Promise.all(bot.games.map(async (game) => [game, await ladderOf(game, signal)]));
    } catch (error) {
      if (error.name !== 'AbortError') replace(ladders, h('p', { class: 'alert' }, errorText(error)));
      return;
    }
    const rows = found.flatMap(([game, ladder]) => {
      const entries = ladder?.entries ?? [];
      const index = entries.findIndex((e) => e.entrant === label);
      if (index < 0) return [];
      return [ladderRow(entries[index], index + 1, () => h('th', { scope: 'row' }, h('a', { href: `#/ladder/${encodeURIComponent(game)}` }, title(game))))];
    });
    // the bot's row of each ladder: its rank, then the game where the ladder names the entrant
    replace(ladders, rows.length
      ? ladderTable('bot-ladders', t('bot.ratingsCaption', { name: bot.name }), ['ladder.rank', 'form.game', ...COLUMNS.slice(2)], rows)
      : h('p', { class: 'facts', id: 'bot-unrated' }, t(found.every(([, ladder]) => ladder === null) ? 'ladder.unavailable' : 'bot.unrated')));
  }
}
