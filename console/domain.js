// Domain dashboard: what arrived since the key's last visit (the change feed from the cursor
// the server keeps per key: GET/PUT /console/seen, nothing kept in the browser), then a
// domain's records per breach and per severity (up to 5,000 records read), newest breaches
// first, and the change feed's latest breach changes.
import { api, ApiError, currentKey } from './api.js';
import { h, field, table, barChart, say, fmtInt, count } from './ui.js';
import { dateKey } from './catalog.js';

const SEV_COLORS = { Critical: '#7a0f0f', High: '#a11d1d', Medium: '#8a4b00', Low: '#2f5d31' };
const MAX_PAGES = 5;
const SINCE_PAGES = 10; // change-feed pages of 1,000 read for "since your last visit"

export async function domainPage(root) {
  const d = field('Domain', h('input', { name: 'domain', type: 'text', autocomplete: 'off', spellcheck: 'false' }),
    { hint: currentKey() && currentKey().tenant ? 'One of your tenant\'s domains.' : 'For example example.com' });
  const button = h('button', { type: 'submit', text: 'Show' });
  const out = h('section', { 'aria-labelledby': 'dash-h' });
  const form = h('form', { class: 'stack', novalidate: true }, d.wrap, h('div', {}, button));
  const news = h('section', { 'aria-labelledby': 'since-h', id: 'since' });
  root.append(h('h1', { text: 'Domain dashboard' }), news, form, out);

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

  await sinceLastVisit(news);

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
  const rows = (feed.changes || []).slice(-10).reverse().map(changeRow);
  out.append(h('h2', { text: 'Latest changes' }),
    rows.length ? table('Latest changes', ['When', 'What', 'Breach', 'Count'], rows) : h('p', { text: 'No changes yet.' }));
}

function changeRow(c) {
  return h('tr', {}, h('td', { text: c.at }), h('td', { text: c.kind.replace(/_/g, ' ') }),
    h('td', { text: c.source_name || c.leak_name || '—' }), h('td', { class: 'num', text: fmtInt(c.count) }));
}

// What the change feed holds past the key's cursor, newest first; then the cursor moves to
// what was read, so the next visit shows only what arrives after this one.
async function sinceLastVisit(news) {
  const heading = h('h2', { id: 'since-h', text: 'Since your last visit' });
  const mark = await api('/console/seen');
  if (mark.seen === null) {
    news.replaceChildren(heading, h('p', { text: 'This is your first visit: from now on this page lists what arrived between your visits.' }));
    await api('/console/seen', { method: 'PUT', json: { seen: mark.data_version } });
    news.dataset.state = 'first';
    return;
  }
  const rows = [];
  let since = mark.seen, more = false;
  for (let i = 0; i < SINCE_PAGES; i++) {
    const feed = await api('/changes?limit=1000&since=' + since);
    rows.push(...(feed.changes || []));
    since = feed.next;
    more = feed.more;
    if (!more) break;
  }
  rows.reverse();
  news.replaceChildren(heading, rows.length
    ? table('Since your last visit', ['When', 'What', 'Breach', 'Count'], rows.map(changeRow))
    : h('p', { text: 'Nothing new since your last visit.' }));
  if (more) news.append(h('p', { class: 'muted', text: `Showing the first ${fmtInt(rows.length)} changes; the rest show on your next visit.` }));
  if (since > mark.seen) await api('/console/seen', { method: 'PUT', json: { seen: since } });
  news.dataset.state = rows.length ? 'new' : 'none';
}
