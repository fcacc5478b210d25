// Domain dashboard: a domain's records per breach and per severity (up to 5,000 records read),
// newest breaches first, and the change feed's latest breach changes.
import { api, ApiError, currentKey } from './api.js';
import { h, field, table, barChart, say, fmtInt, count } from './ui.js';
import { dateKey } from './catalog.js';

const SEV_COLORS = { Critical: '#7a0f0f', High: '#a11d1d', Medium: '#8a4b00', Low: '#2f5d31' };
const MAX_PAGES = 5;

export async function domainPage(root) {
  const d = field('Domain', h('input', { name: 'domain', type: 'text', autocomplete: 'off', spellcheck: 'false' }),
    { hint: currentKey() && currentKey().tenant ? 'One of your tenant\'s domains.' : 'For example example.com' });
  const button = h('button', { type: 'submit', text: 'Show' });
  const out = h('section', { 'aria-labelledby': 'dash-h' });
  const form = h('form', { class: 'stack', novalidate: true }, d.wrap, h('div', {}, button));
  root.append(h('h1', { text: 'Domain dashboard' }), form, out);

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    d.error.textContent = '';
    const domain = d.control.value.trim();
    if (!domain) { d.error.textContent = 'Enter a domain.'; d.control.focus(); return; }
    button.disabled = true;
    try {
      const records = [];
      let q = new URLSearchParams({ type: 'email_domain', account: domain, number_of_records: '1000' }).toString();
      let found = 0;
      for (let i = 0; i < MAX_PAGES && q; i++) {
        let page;
        try { page = await api('/breach-search?' + q); } catch (err) {
          if (err instanceof ApiError && err.status === 404 && Array.isArray(err.body.data)) page = err.body; else throw err;
        }
        found = page.records_found || found;
        records.push(...page.data);
        q = page.pagination_token ? 'paging_token=' + encodeURIComponent(page.pagination_token) : '';
      }
      show(domain, records, found, Boolean(q));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      d.error.textContent = err.message;
      say(err.message);
    } finally {
      button.disabled = false;
    }
  });

  async function show(domain, records, found, partial) {
    const heading = h('h2', { id: 'dash-h', text: domain });
    if (records.length === 0) {
      out.replaceChildren(heading, h('p', { class: 'notice', text: 'No records of this domain were found.' }));
      return;
    }
    const perBreach = new Map(), perSev = new Map();
    for (const r of records) {
      const b = r.breach_details || {};
      const k = b.uuid || b.site_name;
      const e = perBreach.get(k) || { label: b.site_name || k, value: 0, date: b.date_leaked, uuid: b.uuid };
      e.value++;
      perBreach.set(k, e);
      const s = r.severity || 'Low';
      perSev.set(s, (perSev.get(s) || 0) + 1);
    }
    const breaches = [...perBreach.values()].sort((a, b) => dateKey(b.date) - dateKey(a.date));
    const sev = ['Critical', 'High', 'Medium', 'Low'].filter((s) => perSev.has(s))
      .map((s) => ({ label: s, value: perSev.get(s), color: SEV_COLORS[s] }));
    out.replaceChildren(heading,
      h('p', { text: `${count(found, 'record')} in ${count(breaches.length, 'breach').replace(/hs$/, 'hes')}` + (partial ? ` (the charts count the first ${records.length})` : '') + '.' }),
      h('div', { class: 'charts' }, barChart('Records per breach, newest first', breaches.slice(0, 15)), barChart('Records per severity', sev)),
      h('h2', { text: 'Breaches' }),
      table('Breaches of ' + domain, ['Breach', 'Date', 'Records'], breaches.map((b) => h('tr', {},
        h('td', {}, h('a', { href: '#/breach/' + encodeURIComponent(b.uuid || ''), text: b.label })),
        h('td', { text: b.date || '—' }), h('td', { class: 'num', text: fmtInt(b.value) })))));
    await recent(out);
  }
}

// The change feed's newest rows (breaches added or changed), for "what arrived lately".
async function recent(out) {
  const st = await api('/status');
  const since = Math.max(0, (st.data_version || 0) - 50);
  const feed = await api('/changes?limit=50&since=' + since);
  const rows = (feed.changes || []).slice(-10).reverse().map((c) => h('tr', {},
    h('td', { text: c.at }), h('td', { text: c.kind.replace(/_/g, ' ') }),
    h('td', { text: c.source_name || c.leak_name || '—' }), h('td', { class: 'num', text: fmtInt(c.count) })));
  out.append(h('h2', { text: 'Latest changes' }),
    rows.length ? table('Latest changes', ['When', 'What', 'Breach', 'Count'], rows) : h('p', { text: 'No changes yet.' }));
}
