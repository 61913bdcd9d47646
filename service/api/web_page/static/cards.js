// Cards drawn as cards: French-suited codes (C-1, "7H", "10S", "JK") and Go5's ("3-waves-blue").
import { h } from './dom.js';
import { t, tn } from './i18n.js';

export const SUITS = {
  S: { symbol: '♠', red: false },
  H: { symbol: '♥', red: true },
  D: { symbol: '♦', red: true },
  C: { symbol: '♣', red: false },
};
const PATTERN_SYMBOLS = {
  dots: '•', stripes: '≡', waves: '≈', checks: '▦', zigzag: 'ʌʌ', stars: '★', rings: '◎',
};

/** {kind: 'french'|'joker'|'go5'|'go5-joker'|'stop'|'unknown', ...parts} of a card code. */
export function parseCard(code) {
  const text = String(code);
  if (text === 'JK') return { kind: 'joker' };
  const french = /^(10|[2-9AJQK])([SHDC])$/.exec(text);
  if (french) return { kind: 'french', rank: french[1], suit: french[2] };
  if (text === 'joker') return { kind: 'go5-joker' };
  if (text === 'stop') return { kind: 'stop' };
  const go5 = /^([1-7])-([a-z]+)-([a-z]+)$/.exec(text);
  if (go5) return { kind: 'go5', number: Number(go5[1]), pattern: go5[2], colour: go5[3] };
  return { kind: 'unknown' };
}

/** A Go5 pattern or colour in the page's language (an unknown one as it is). */
const word = (kind, value) => (t(`${kind}.${value}`).startsWith('⟦') ? value : t(`${kind}.${value}`));

/** The spoken name: "seven of hearts" / "Herz Sieben", "joker", "three, waves, blue". */
export function cardName(code) {
  const card = parseCard(code);
  switch (card.kind) {
    case 'french': return t('card.name', { rank: t(`rank.${card.rank}`), suit: t(`suitName.${card.suit}`) });
    case 'joker': case 'go5-joker': return t('card.joker');
    case 'stop': return t('card.stop');
    case 'go5': return `${t(`number.${card.number}`)}, ${word('pattern', card.pattern)}, ${word('colour', card.colour)}`;
    default: return String(code);
  }
}

/** The short written form for labels: "7♥" (in German "B♥" for a jack), "Joker", "3 waves blue". */
export function cardShort(code) {
  const card = parseCard(code);
  switch (card.kind) {
    case 'french': return `${t(`rankShort.${card.rank}`)}${SUITS[card.suit].symbol}`;
    case 'joker': case 'go5-joker': return t('card.jokerShort');
    case 'stop': return t('card.stopShort');
    case 'go5': return `${card.number} ${word('pattern', card.pattern)} ${word('colour', card.colour)}`;
    default: return String(code);
  }
}

/** One face-up card as an element with a text alternative. */
export function cardEl(code, { extraClass = '', note = '', pick = null } = {}) {
  const card = parseCard(code);
  const label = note ? `${cardName(code)}, ${note}` : cardName(code);
  const base = { role: 'img', 'aria-label': label, title: label, 'data-card': code, 'data-pick': pick };
  switch (card.kind) {
    case 'french': {
      const suit = SUITS[card.suit];
      return h('span', { ...base, class: `card ${suit.red ? 'red' : 'black'} ${extraClass}` },
        h('span', { class: 'rank', 'aria-hidden': 'true' }, t(`rankShort.${card.rank}`)),
        h('span', { class: 'suit', 'aria-hidden': 'true' }, suit.symbol));
    }
    case 'joker': case 'go5-joker':
      return h('span', { ...base, class: `card joker ${extraClass}` },
        h('span', { class: 'rank', 'aria-hidden': 'true' }, '★'),
        h('span', { class: 'small', 'aria-hidden': 'true' }, t('card.jokerShort')));
    case 'stop':
      return h('span', { ...base, class: `card stop ${extraClass}` },
        h('span', { class: 'rank', 'aria-hidden': 'true' }, '✋'),
        h('span', { class: 'small', 'aria-hidden': 'true' }, t('card.stopShort')));
    case 'go5':
      return h('span', { ...base, class: `card go5 go5-${card.colour} ${extraClass}` },
        h('span', { class: 'rank', 'aria-hidden': 'true' }, String(card.number)),
        h('span', { class: 'suit', 'aria-hidden': 'true' }, PATTERN_SYMBOLS[card.pattern] ?? '?'),
        h('span', { class: 'small', 'aria-hidden': 'true' }, `${word('pattern', card.pattern)} ${word('colour', card.colour)}`));
    default:
      return h('span', { ...base, class: `card ${extraClass}` }, String(code));
  }
}

/** A card lying face down. */
export function backEl(label = t('card.back'), pick = null) {
  return h('span', { class: 'card back', role: 'img', 'aria-label': label, title: label, 'data-pick': pick });
}

/** An empty place where a card was. */
export function emptyEl(label = t('card.empty'), pick = null) {
  return h('span', { class: 'card empty', role: 'img', 'aria-label': label, title: label, 'data-pick': pick });
}

/** A row of face-up cards as a list, with a name for the list. */
export function cardRow(codes, label, { note } = {}) {
  const list = h('ul', { class: 'cards', 'aria-label': label });
  if (!codes || codes.length === 0) {
    list.append(h('li', { class: 'none' }, t('card.none')));
    return list;
  }
  for (const code of codes) list.append(h('li', {}, cardEl(code, { note: note?.(code) })));
  return list;
}

/** A pile drawn as its top card plus a count: the stock face down, a discard pile face up. */
export function pileEl(name, size, top = null, pick = null) {
  const cards = top ? cardEl(top, { note: t('pile.top', { name }), pick }) : (size > 0 ? backEl(t('pile.down', { name }), pick) : emptyEl(t('pile.empty', { name }), pick));
  return h('figure', { class: 'pile' }, cards, h('figcaption', {}, tn('pile.size', size, { name })));
}
