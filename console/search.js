// Search: one identity, its records page by page, as a table or CSV.
import { api, ApiError, download } from './api.js';
import { h, field, select, table, badge, say, count, logo, TYPES } from './ui.js';

const FILTERS = [['password', 'Password'], ['password_hash', 'Password hash'],
  ['social_security_number', 'SSN'], ['phone_number', 'Phone'], ['username', 'Username'],
  ['ip_address', 'IP address']];
const OTHER = [['email', 'Email'], ['user_name', 'Username'], ['first_name', 'First name'],
  ['last_name', 'Last name'], ['phone_number', 'Phone'], ['ip_address', 'IP'],
  ['password_hash', 'Hash'], ['social_security_number', 'SSN'], ['bitcoin_address', 'Bitcoin']];

export function searchPage(root) {
  const type = field('Type', select(TYPES, { name: 'type' }), { narrow: false });
  const account = field('Account', h('input', { name: 'account', type: 'text', required: true, autocomplete: 'off', spellcheck: 'false' }));
  const filters = FILTERS.map(([n, label]) => field(label, select([['', 'Any'], ['yes', 'Yes'], ['no', 'No']], { name: n }), { narrow: true }));
  const filterErr = h('div', { class: 'error', role: 'alert' });
  const button = h('button', { type: 'submit', text: 'Search' });
  const results = h('section', { 'aria-labelledby': 'results-h' });
  const form = h('form', { class: 'stack', novalidate: true },
    h('div', { class: 'row' }, type.wrap, account.wrap),
    h('fieldset', {}, h('legend', { text: 'Filters: records that have (yes) or lack (no) a value' }),
      h('div', { class: 'row' }, filters.map((f) => f.wrap)), filterErr),
    h('div', {}, button));
  root.append(h('h1', { text: 'Search' }), form, results);

  let query = '';
  async function run(q, first) {
    for (const f of [type, account]) f.error.textContent = '';
    filterErr.textContent = '';
    button.disabled = true;
    try {
      let page;
      try {
        page = await api('/breach-search?' + q);
      } catch (err) {
        if (err instanceof ApiError && err.status === 404 && Array.isArray(err.body.data)) page = err.body;
        else throw err;
      }
      query = q;
      show(page, first);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const m = err.message;
      const target = /\btype\b/.test(m) ? type.error
        : FILTERS.some(([n]) => m.includes(n)) && !/\baccount\b/.test(m) ? filterErr : account.error;
      target.textContent = m;
      say(m);
    } finally {
      button.disabled = false;
    }
  }

  function show(page, first) {
    const n = page.records_found || 0;
    const heading = h('h2', { id: 'results-h', text: 'Results' });
    if (!page.data || page.data.length === 0) {
      results.replaceChildren(heading, h('p', { class: 'notice', text: first ? 'No records found for this search.' : 'No more records.' }));
      say('No records found');
      return;
    }
    const rows = page.data.map((r) => {
      const d = r.breached_data || {};
      const b = r.breach_details || {};
      const other = OTHER.filter(([k]) => d[k]).map(([k, label]) => h('li', {}, h('span', { class: 'muted', text: label + ': ' }), d[k]));
      return h('tr', {},
        h('td', {}, logo(b.site_logo, 20), h('a', { href: '#/breach/' + encodeURIComponent(b.uuid || ''), text: b.site_name || b.source_name || '—' })),
        h('td', { text: b.date_leaked || '—' }),
        h('td', {}, h('code', { text: d.password || '—' })),
        h('td', {}, other.length ? h('ul', { class: 'fields' }, other) : '—'),
        h('td', {}, badge(r.severity || d.severity)));
    });
    const next = h('button', { type: 'button', class: 'secondary', text: 'Next page', disabled: !page.pagination_token });
    next.addEventListener('click', () => run('paging_token=' + encodeURIComponent(page.pagination_token), false));
    const csv = h('button', { type: 'button', class: 'secondary', text: 'Download CSV' });
    csv.addEventListener('click', async () => {
      const r = await api('/breach-search?' + query, { accept: 'text/csv', raw: true });
      await download(r, 'breach-search.csv');
    });
    results.replaceChildren(heading,
      h('p', { text: `${count(n, 'record')} found; showing ${page.data.length}.` }),
      table('Breach records', ['Breach', 'Date', 'Password', 'Other fields', 'Severity'], rows),
      h('div', { class: 'actions' }, next, csv));
    say(`${n} records found`);
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!account.control.value.trim()) {
      account.error.textContent = 'Enter an account to search for.';
      account.control.focus();
      return;
    }
    const p = new URLSearchParams({ type: type.control.value, account: account.control.value, number_of_records: '50' });
    for (const f of filters) if (f.control.value) p.set(f.control.name, f.control.value);
    run(p.toString(), true);
  });
}
