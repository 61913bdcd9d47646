// The move composer: builds one of the seat's legal actions (`you.legal`) from picks (clicks, taps,
// keys) on cards and places. Pure: no DOM; the play page draws the table and feeds it the picks.
//
// Each legal action is spelled as a list of steps; a step is a group of picks taken in any order
// (the cards of a meld) and the steps follow one another (cards, then where they go). A pick is a
// string naming something on the table:
//   hand:<card>      a card of your hand            grid:<n>      a place of your Golf grid
//   stock            the stock                      discard       the discard pile
//   meld:<id>        a Rommé meld                   joker:<id>    the joker of a Rommé meld
//   newmeld          a new Rommé meld               cut:<n>       cut the Rommé deck at card n
//   set:<id>         a Go5 set                      take:<id>:<card>  a card of another player's Go5 set
//   newset           a new Go5 set                  stop          your Go5 stop card
//   suit:<S>         a suit to name                 pass          keep the drawn card (Switch)
// Two more picks settle what the table cannot: `ok` sends the action the picks so far spell when
// longer ones are still possible, and `choice:<i>` picks legal action i among several that the
// same picks spell (a Rommé meld that is a set and a run, a lay-off at either end of a run).

export const OK = 'ok';
const CHOICE = 'choice:';

/** A Go5 or Rommé hand minus one copy of `card` (the taken or discarded card joins from elsewhere). */
function withoutOne(cards, card) {
  const rest = [...cards];
  const at = rest.indexOf(card);
  if (at >= 0) rest.splice(at, 1);
  return rest;
}

const hand = (card) => `hand:${card}`;

const SPELLERS = {
  golf(action) {
    switch (action.type) {
      case 'reveal': return [action.positions.map((p) => `grid:${p}`)];
      case 'draw': return [['stock']];
      case 'swap': return [[`grid:${action.position}`]];
      case 'flip': return [[`grid:${action.position}`]];
      case 'take_discard': return [['discard'], [`grid:${action.position}`]];
      case 'discard': return action.flip === null || action.flip === undefined ? [['discard']] : [['discard'], [`grid:${action.flip}`]];
      default: return null;
    }
  },

  switch(action) {
    switch (action.type) {
      case 'play': return [...action.cards.map((c) => [hand(c)]), ['discard'], ...(action.suit ? [[`suit:${action.suit}`]] : [])];
      case 'choose_suit': return [[`suit:${action.suit}`]];
      case 'draw': return [['stock']];
      case 'pass': return [['pass']];
      default: return null;
    }
  },

  romme(action, view) {
    switch (action.type) {
      case 'cut': return [[`cut:${action.position}`]];
      case 'draw': return [['stock']];
      case 'take_discard': {
        const top = view?.table?.discard_top;
        return [['discard'], withoutOne(action.meld.cards, top).map(hand), ['newmeld']];
      }
      case 'meld': return [action.cards.map(hand), ['newmeld']];
      case 'lay_off': return [[hand(action.card)], [`meld:${action.meld}`]];
      case 'swap_joker': return [[hand(action.card)], [`joker:${action.meld}`]];
      case 'discard': return [[hand(action.card)], ['discard']];
      default: return null;
    }
  },

  go5(action) {
    switch (action.type) {
      case 'draw': return [[action.from === 'discard' ? 'discard' : 'stock']];
      case 'go5': return [[`set:${action.set}`]];
      case 'meld': return [action.cards.map(hand), ['newset']];
      case 'lay_off': return [[hand(action.card)], [`set:${action.set}`]];
      case 'stop': return [['stop']];
      case 'discard': return [[hand(action.card)], ['discard']];
      case 'swap': {
        const first = [[`take:${action.set}:${action.take}`], [hand(action.give)]];
        if (action.then?.lay_off) return [...first, [`set:${action.then.lay_off.set}`]];
        return [...first, withoutOne(action.then.meld.cards, action.take).map(hand), ['newset']];
      }
      default: return null;
    }
  },
};

/** The steps that spell `action` of `game` (a list of groups of picks); a game without a speller: one pick. */
export function spell(game, action, view = null) {
  const steps = SPELLERS[game]?.(action, view) ?? [[`action:${JSON.stringify(action)}`]];
  return steps.filter((group) => group.length > 0);
}

/** How far `picks` get through `steps`: null when they leave them, else what may come next. */
function follow(steps, picks) {
  let index = 0;
  let left = steps.length ? [...steps[0]] : [];
  for (const pick of picks) {
    if (left.length === 0) {
      index += 1;
      if (index >= steps.length) return null;
      left = [...steps[index]];
    }
    const at = left.indexOf(pick);
    if (at < 0) return null;
    left.splice(at, 1);
  }
  if (left.length) return { next: left, done: false };
  if (index + 1 < steps.length) return { next: steps[index + 1], done: false };
  return { next: [], done: true };
}

/** The state of a composition: which picks may come next, and the action once it is complete. */
export class Composer {
  constructor(game, legal, view = null) {
    this.game = game;
    this.legal = legal ?? [];
    this.steps = this.legal.map((action) => spell(game, action, view));
    this.picks = [];
  }

  /** Start again with no pick. */
  reset() { this.picks = []; }

  /** Each legal action's index still spelled by the picks so far, with its next picks and whether it is done. */
  candidates(picks = this.picks) {
    const out = [];
    this.steps.forEach((steps, index) => {
      const at = follow(steps, picks);
      if (at) out.push({ index, ...at });
    });
    return out;
  }

  /** What the picks so far give: {options: Set of next picks, action: the complete action or null, done: indices}. */
  state() {
    const last = this.picks[this.picks.length - 1];
    const before = this.picks.slice(0, -1);
    if (last === OK || last?.startsWith(CHOICE)) {
      const done = this.candidates(before).filter((c) => c.done).map((c) => c.index);
      const index = last === OK ? done[0] : Number(last.slice(CHOICE.length));
      return { options: new Set(), action: this.legal[index], done };
    }
    const candidates = this.candidates();
    const done = candidates.filter((c) => c.done).map((c) => c.index);
    const going = candidates.filter((c) => !c.done);
    const options = new Set(going.flatMap((c) => c.next));
    if (done.length === 1 && going.length === 0) return { options, action: this.legal[done[0]], done };
    if (done.length === 1) options.add(OK);
    if (done.length > 1) for (const index of done) options.add(`${CHOICE}${index}`);
    return { options, action: null, done };
  }

  /** Every pick the table can take now (the next picks), without `ok` and choices. */
  get options() { return this.state().options; }

  /** Add a pick; false (and nothing changes) when it spells no legal action. */
  pick(token) {
    const { options, action } = this.state();
    if (action || !options.has(token)) return false;
    this.picks.push(token);
    return true;
  }

  /** Take back a pick and every pick after it (a second click on a picked card). */
  unpick(token) {
    const at = this.picks.lastIndexOf(token);
    if (at >= 0) this.picks = this.picks.slice(0, at);
    return at >= 0;
  }

  /** The complete action, or null. */
  get action() { return this.state().action; }
}

/** The legal action a choice pick stands for (for its label), or null. */
export function choiceIndex(token) {
  return typeof token === 'string' && token.startsWith(CHOICE) ? Number(token.slice(CHOICE.length)) : null;
}
