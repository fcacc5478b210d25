// Cards: the query language, a parse error shown at its position, pages of cards.
import { api, ApiError } from './api.js';
import { h, field, table, say, fmtInt } from './ui.js';

const SYNTAX = [
  ['411111*', 'numbers starting 411111 (a pattern pins at most the first 6 and last 4 digits)'],
  ['*1111', 'numbers ending 1111'],
  ['owner:"john smith"', 'words or a phrase in the owner or bank (case and accents ignored)'],
  ['cvv:123', 'an exact CVV'],
  ['leakId:L1', 'one leak'],
  ['expireDate:[2026-01-01 TO *]', 'a range of dates (createdAt, expireDate); { } excludes an end'],
  ['a AND b, a OR b, NOT a, ( )', 'combine terms; side by side means AND'],
];

export function cardsPage(root) {
  const q = field('Query', h('input', { name: 'query', type: 'text', autocomplete: 'off', spellcheck: 'false' }),
    { hint: 'Empty finds every card.' });
  const button = h('button', { type: 'submit', text: 'Search' });
  const where = h('div', {});
  const results = h('section', { 'aria-labelledby': 'cards-h' });
  const form = h('form', { class: 'stack', novalidate: true }, q.wrap, where, h('div', {}, button));
  const syntax = h('section', { class: 'syntax', 'aria-labelledby': 'syntax-h' }, h('h2', { id: 'syntax-h', text: 'Query syntax' }),
    h('dl', { class: 'facts' }, SYNTAX.map(([c, t]) => [h('dt', {}, h('code', { text: c })), h('dd', { text: t })])));
  root.append(h('h1', { text: 'Cards' }), form, results, syntax);

  let current = '';
  async function run(query, page) {
    q.error.textContent = '';
    where.replaceChildren();
    button.disabled = true;
    try {
      const p = new URLSearchParams({ page: String(page), size: '20' });
      if (query) p.set('query', query);
      const r = await api('/credit-card-search?' + p.toString());
      current = query;
      show(r);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      q.error.textContent = err.message;
      const m = /at (\d+)\b/.exec(err.message);
      if (m) {
        const at = Math.min(Number(m[1]), query.length);
        where.replaceChildren(h('p', { class: 'muted', text: `Position ${at}:` }),
          h('pre', { class: 'caret', 'aria-hidden': 'true' }, query + '\n' + ' '.repeat(at) + '^'));
        q.control.focus();
        q.control.setSelectionRange(at, at);
      }
      say(err.message);
    } finally {
      button.disabled = false;
    }
  }

  function show(r) {
    const heading = h('h2', { id: 'cards-h', text: 'Cards found' });
    if (!r.hasContent) {
      results.replaceChildren(heading, h('p', { class: 'notice', text: 'No cards match this query.' }));
      say('No cards found');
      return;
    }
    const rows = r.content.map((c) => h('tr', {},
      h('td', {}, h('code', { text: c.number || '—' })), h('td', { text: c.owner || '—' }),
      h('td', { text: c.bank || '—' }), h('td', { text: c.expireDate || '—' }),
      h('td', { text: c.cvv || '—' }), h('td', { text: c.leakName || c.leakId || '—' }),
      h('td', { text: c.createdAt || '—' })));
    const prev = h('button', { type: 'button', class: 'secondary', text: 'Previous page', disabled: r.first });
    const next = h('button', { type: 'button', class: 'secondary', text: 'Next page', disabled: r.last });
    prev.addEventListener('click', () => run(current, r.number - 1));
    next.addEventListener('click', () => run(current, r.number + 1));
    results.replaceChildren(heading,
      h('p', { text: `${fmtInt(r.totalElements)} cards; page ${r.number + 1} of ${fmtInt(r.totalPages)}.` }),
      table('Cards', ['Number', 'Owner', 'Bank', 'Expires', 'CVV', 'Leak', 'Added'], rows),
      h('div', { class: 'actions' }, prev, next));
    say(`${r.totalElements} cards found`);
  }

  form.addEventListener('submit', (e) => { e.preventDefault(); run(q.control.value.trim(), 0); });
}
