// Events as readable lines: "12 · greedy bot 1: put the drawn K♥ at card 2, discarding Q♠".
import { cardShort, parseCard, SUITS } from './cards.js';
import { h, words } from './dom.js';
import { t } from './i18n.js';

function isCard(value) {
  return typeof value === 'string' && parseCard(value).kind !== 'unknown';
}

/** Cards as short text: "7♥ 8♥ 9♥". */
const cards = (codes) => (codes ?? []).map(cardShort).join(' ');
const one = (code) => (code ? cardShort(code) : t('ev.aCard'));
const place = (p) => t('ev.place', { n: Number(p) + 1 });
const suitName = (s) => (SUITS[s] ? t(`suitName.${s}`) : s);
const and = (items) => items.join(` ${t('word.and')} `);

/** Per game and event type: the line after "<seat>: ". */
const PHRASES = {
  golf: {
    CardsRevealed: (d) => t('ev.golf.revealed', { places: and(d.positions.map(place)), cards: cards(d.cards) }),
    CardDrawn: () => t('ev.drewStock'),
    DrawnCardSwapped: (d) => t('ev.golf.swapped', { card: one(d.card), place: place(d.position), old: one(d.replaced) }),
    DrawnCardDiscarded: (d) => (d.flipped === null || d.flipped === undefined
      ? t('ev.golf.discarded', { card: one(d.card) })
      : t('ev.golf.discardedFlip', { card: one(d.card), place: place(d.flipped), shown: one(d.revealed) })),
    DiscardTaken: (d) => t('ev.golf.taken', { card: one(d.card), place: place(d.position), old: one(d.replaced) }),
    CardFlipped: (d) => t('ev.golf.flipped', { place: place(d.position), card: one(d.card) }),
    ColumnDiscarded: (d, name) => t('ev.golf.column', { name: name(d.seat), n: Number(d.column) + 1, cards: cards(d.cards) }),
  },
  switch: {
    CardsPlayed: (d) => (d.suit ? t('ev.switch.playedCall', { cards: cards(d.cards), suit: suitName(d.suit) }) : t('ev.switch.played', { cards: cards(d.cards) })),
    SuitChosen: (d) => t('ev.switch.chose', { suit: suitName(d.suit) }),
    CardDrawn: (d) => t('ev.switch.drew', { n: d.count ?? 1 }),
    PendingDrawTaken: (d) => t('ev.switch.penalty', { n: d.count ?? d.pending }),
    Passed: () => t('ev.switch.passed'),
  },
  romme: {
    DeckCut: (d) => t('ev.romme.cut', { n: d.position }),
    LuckyGrab: (d, name) => t('ev.romme.grab', { name: name(d.seat), cards: cards(d.cards) }),
    HandsDealt: (d) => t('ev.romme.dealt', { n: d.stock_size }),
    CardDrawn: () => t('ev.drewStock'),
    DiscardTaken: (d) => t('ev.romme.taken', { card: one(d.card), meld: d.meld, kind: t(`kind.${d.kind}`), cards: cards(d.cards) }),
    MeldLaid: (d) => t('ev.romme.meld', { meld: d.meld, kind: t(`kind.${d.kind}`), cards: cards(d.cards) }),
    CardLaidOff: (d) => (d.end ? t('ev.romme.layOffEnd', { card: one(d.card), meld: d.meld, end: t(`end.${d.end}`) }) : t('ev.romme.layOff', { card: one(d.card), meld: d.meld })),
    JokerSwapped: (d) => t('ev.romme.joker', { card: one(d.card), meld: d.meld }),
    CardDiscarded: (d) => t('ev.discarded', { card: one(d.card) }),
    WentOut: () => t('ev.romme.out'),
  },
  go5: {
    CardsDrawn: (d) => (d.source === 'discard' ? t('ev.go5.tookDiscard', { card: one(d.taken) }) : t('ev.drewStock')),
    StopCardLaid: (d, name) => t('ev.go5.stopLaid', { name: name(d.seat) }),
    StockCardReceived: (d, name) => t('ev.go5.received', { name: name(d.seat) }),
    SetMelded: (d) => t('ev.go5.set', { set: d.set, by: t(`feature.${d.by}`), cards: cards(d.cards) }),
    CardLaidOff: (d) => t('ev.go5.added', { card: one(d.card), set: d.set }),
    CardSwapped: (d, name) => t('ev.go5.swapped', {
      take: one(d.take), set: d.set, name: name(d.from_seat), give: one(d.give),
      then: d.new_set !== null && d.new_set !== undefined
        ? t('ev.go5.thenSet', { set: d.new_set, by: t(`feature.${d.by}`), cards: cards(d.cards) })
        : t('ev.go5.thenAdd', { set: d.onto }),
    }),
    StopPlayed: () => t('ev.go5.stop'),
    CardDiscarded: (d) => t('ev.discarded', { card: one(d.card) }),
    Go5Called: (d) => t('ev.go5.called', { card: one(d.card), set: d.set }),
  },
};

/** A value of an event's data as short text (cards written as cards), for events without a phrase. */
function show(value) {
  if (value === null || value === undefined) return '—';
  if (isCard(value)) return cardShort(value);
  if (Array.isArray(value)) return value.map(show).join(' ');
  if (typeof value === 'object') return Object.entries(value).map(([k, v]) => `${words(k).toLowerCase()} ${show(v)}`).join(', ');
  return String(value);
}

function seatList(seats, name) {
  return (seats ?? []).map(name).join(` ${t('word.and')} `) || t('seats.nobody');
}

/** The text of one event of a game; `name(seat)` names a seat. */
export function eventText(event, name, game) {
  const d = event.data ?? {};
  switch (event.type) {
    case 'GameCreated': return t(d.stacked ? 'ev.createdStacked' : 'ev.created', { game: d.game, n: d.players });
    case 'SeedRevealed': return t('ev.seed');
    case 'GameAbandoned': return t('ev.abandoned', { reason: d.reason });
    case 'RoundStarted': return d.start_card ? t('ev.roundFirst', { n: d.round, name: name(d.dealer), card: cardShort(d.start_card) }) : t('ev.round', { n: d.round, name: name(d.dealer) });
    case 'RoundScored': return t('ev.scored', { n: d.round, scores: (d.scores ?? []).map((s, seat) => `${name(seat)} ${s}`).join(', ') });
    case 'GameEnded': return t('ev.ended', { winners: seatList(d.winners, name), totals: (d.totals ?? []).join(', ') });
    case 'StockReshuffled': return t('ev.reshuffled');
    default: break;
  }
  const who = event.actor === 'system' ? '' : `${name(event.actor)}: `;
  const phrase = PHRASES[game]?.[event.type];
  if (phrase) {
    try { return who + phrase(d, name); } catch { /* an unexpected shape: the generic line below */ }
  }
  const details = Object.entries(d).filter(([, v]) => !(Array.isArray(v) && v.length === 0)).map(([k, v]) => `${words(k).toLowerCase()} ${show(v)}`);
  return `${who}${words(event.type)}${details.length ? ` — ${details.join('; ')}` : ''}`;
}

/** One event as a list item's content. */
export function eventEl(event, name, game) {
  return [h('span', { class: 'seq' }, String(event.seq)), ' ', h('span', { class: 'what' }, eventText(event, name, game))];
}

/** The cards an event names (its card, cards, take, give …): the cards to mark as moved. */
export function movedCards(event) {
  const found = [];
  const walk = (value) => {
    if (isCard(value)) found.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(event.data ?? {});
  return found;
}
