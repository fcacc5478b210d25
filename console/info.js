// Usage and Status: the key's requests and quota this month; the data's version and counts.
import { api } from './api.js';
import { h, fmtInt } from './ui.js';

function facts(pairs) {
  return h('dl', { class: 'facts' }, pairs.map(([k, v]) => [h('dt', { text: k }), h('dd', { text: v === null || v === undefined ? '—' : String(v) })]));
}

export async function usagePage(root) {
  const u = await api('/usage');
  root.append(h('h1', { text: 'Usage' }), facts([
    ['Plan', u.plan], ['Requests today', fmtInt(u.requests_today)], ['Requests this month', fmtInt(u.requests_this_month)],
    ['Monthly quota', u.monthly_quota === null ? 'none' : fmtInt(u.monthly_quota)],
    ['Left this month', u.monthly_remaining === null ? '—' : fmtInt(u.monthly_remaining)],
    ['Hourly limit', fmtInt(u.hourly_limit)], ['Left this hour', fmtInt(u.hourly_remaining)],
    ['Month resets at', u.month_resets_at], ['Key expires', u.expires_at || 'never']]));
}

export async function statusPage(root) {
  const s = await api('/status');
  root.append(h('h1', { text: 'Status' }), facts([
    ['Data version', s.data_version], ['Last change', s.last_change_at || 'none'], ['Last import', s.last_import_at || 'none'],
    ['Breaches', fmtInt(s.breaches)], ['Records', s.records === null ? 'not shown to a tenant key' : fmtInt(s.records)],
    ['Cards', s.cards === null ? 'not shown to a tenant key' : fmtInt(s.cards)]]));
}
