// What the play page and the replay viewer share: the seats, the table and the result of a view.
import { h, words } from './dom.js';
import { gameParts, isFullView } from './games.js';
import { LOWEST_WINS, winsLine } from './help.js';
import { t, tn } from './i18n.js';

/** Naming seats of a view: "Ana", "greedy bot 1", "seat 3". */
export function seatNamer(seats) {
  const names = new Map((seats ?? []).map((s) => [s.seat, s.name]));
  return (seat) => (seat === null || seat === undefined ? t('seats.nobody') : names.get(seat) ?? t('seats.seat', { n: seat }));
}

/** The context the game renderers get. */
export function viewContext(view, you = null) {
  return { seats: view.seats ?? [], name: seatNamer(view.seats), you };
}

function handSize(view, seat) {
  const table = view.table ?? {};
  if (Array.isArray(table.hand_sizes)) return table.hand_sizes[seat];
  if (Array.isArray(table.players)) return table.players[seat]?.hand_size;
  if (Array.isArray(table.hands)) return table.hands[seat]?.length;
  return undefined;
}

/** The seats around the table: name, score, cards held, to act, and what each did last. */
export function seatRing(view, you = null, lastOf = () => '') {
  const toAct = new Set(view.to_act ?? []);
  const winners = new Set(view.result?.winners ?? []);
  const dealer = view.table?.dealer;
  const seats = view.seats ?? [];
  const order = you === null || view.status === 'finished' ? seats : [...seats.slice(you + 1), ...seats.slice(0, you)];
  return h('ul', { class: 'ring', 'aria-label': t('seats.title') }, order.map((s) => {
    const marks = [];
    if (s.seat === you) marks.push(t('seats.you'));
    if (toAct.has(s.seat)) marks.push(t('seats.toAct'));
    if (s.seat === dealer && view.status !== 'finished') marks.push(t('seats.dealer'));
    if (winners.has(s.seat)) marks.push(t('seats.winner'));
    const size = handSize(view, s.seat);
    const last = lastOf(s.seat);
    return h('li', { class: `seat-box${toAct.has(s.seat) ? ' acting' : ''}${s.seat === you ? ' me' : ''}${winners.has(s.seat) ? ' won' : ''}`, 'data-seat': s.seat },
      h('span', { class: 'who' }, s.name),
      h('span', { class: 'kind' }, s.kind === 'bot' ? t('seats.bot', { level: s.level ?? 'greedy' }) : t('seats.person')),
      h('span', { class: 'score' }, tn('seats.points', s.score)),
      size !== undefined ? h('span', { class: 'size' }, tn('seats.cards', size)) : null,
      marks.length ? h('span', { class: 'marks' }, marks.join(' · ')) : null,
      last ? h('span', { class: 'did' }, last) : null);
  }));
}

/** One line about the game: round, phase, version. */
export function factsLine(view) {
  const parts = [t('facts.round', { n: view.round }), t(`phase.${view.phase}`).startsWith('⟦') ? words(view.phase).toLowerCase() : t(`phase.${view.phase}`), t('facts.version', { n: view.version })];
  if (view.stacked) parts.push(t('facts.stacked'));
  return h('p', { class: 'facts' }, parts.join(' · '));
}

/** The result of a finished game: a ranking, best first (lowest or highest total by the game), winners marked. */
export function resultEl(view) {
  if (!view.result) return null;
  const name = seatNamer(view.seats);
  const winners = new Set(view.result.winners);
  const lowest = LOWEST_WINS[view.game] ?? false;
  const ranked = view.result.totals.map((total, seat) => ({ seat, total }))
    .sort((a, b) => Number(winners.has(b.seat)) - Number(winners.has(a.seat)) || (lowest ? a.total - b.total : b.total - a.total) || a.seat - b.seat);
  return h('section', { class: 'block result', 'aria-labelledby': 'result-title' },
    h('h2', { id: 'result-title' }, t('result.title')),
    h('p', { class: 'winners' }, view.result.abandoned
      ? t('result.abandoned', { reason: view.result.reason })
      : t('result.won', { winners: view.result.winners.map(name).join(` ${t('word.and')} `) })),
    h('p', { class: 'facts' }, winsLine(view.game)),
    h('ol', { class: 'ranking' }, ranked.map(({ seat, total }) => h('li', { class: winners.has(seat) ? 'won' : '' },
      `${name(seat)}: ${tn('seats.points', total)}`,
      winners.has(seat) ? [' ', h('span', { class: 'badge' }, t('seats.winner'))] : null))));
}

/** The table and, with a seat, its own hand, of a view: [table, hand or null]. */
export function tableEl(view, you = null) {
  const parts = gameParts(view.game);
  const ctx = viewContext(view, you);
  const table = h('section', { class: 'block table', 'aria-label': t('table.title') },
    h('h2', {}, isFullView(view) ? t('table.full') : t('table.title')),
    parts.table(view, ctx));
  const hand = view.you && parts.hand(view, ctx);
  const mine = (view.seats ?? []).find((s) => s.seat === you);
  const title = mine ? t('hand.titleScore', { n: mine.score }) : t('hand.title');
  return [table, hand ? h('section', { class: 'block your-hand', 'aria-labelledby': 'hand-title' }, h('h2', { id: 'hand-title' }, title), hand) : null];
}
