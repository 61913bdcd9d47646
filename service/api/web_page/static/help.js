// "How to play": each game's rules in plain words, written from the binding rules (../shared/rules/),
// one paragraph per rule id; each paragraph's id is `rule-<id>`, so an option hint can link to it.
import { h } from './dom.js';
import { t } from './i18n.js';

/** The rule ids each game's panel explains, in the order it tells them. */
export const HELP_RULES = {
  golf: ['G-1', 'G-2', 'G-4', 'G-6', 'G-7', 'G-8', 'G-9', 'G-11', 'G-12', 'G-13', 'G-14', 'G-15'],
  switch: ['S-1', 'S-2', 'S-4', 'S-5', 'S-6', 'S-7', 'S-9', 'S-10', 'S-11'],
  romme: ['R-3', 'R-6', 'R-7', 'R-11', 'R-12', 'R-13', 'R-14', 'R-15', 'R-16', 'R-19', 'R-20', 'R-22'],
  go5: ['V-4', 'V-6', 'V-7', 'V-8', 'V-9', 'V-10', 'V-12', 'V-13', 'V-15', 'V-16'],
};

/** What wins a game, said at the start: lowest or highest total. */
export const LOWEST_WINS = { golf: true, switch: true, romme: false, go5: false };

export function winsLine(game) {
  if (!(game in LOWEST_WINS)) return '';
  return t(LOWEST_WINS[game] ? 'help.lowestWins' : 'help.highestWins');
}

/** The anchor of a rule's paragraph. */
export const ruleAnchor = (id) => `rule-${id}`;

/** The panel: a short aim, then one paragraph per rule, each with its id. */
export function helpEl(game, open = false) {
  const rules = HELP_RULES[game] ?? [];
  return h('details', { class: 'block help', id: 'how-to-play', open },
    h('summary', {}, h('h2', {}, t('help.title'))),
    h('p', {}, h('strong', {}, winsLine(game)), ' ', t(`help.${game}.aim`)),
    h('p', {}, t('help.picking')),
    h('dl', {}, rules.map((id) => [
      h('dt', { id: ruleAnchor(id), tabindex: '-1' }, id),
      h('dd', {}, t(`help.${game}.${id}`)),
    ])),
    h('p', { class: 'facts' }, t('help.source')));
}
