// Bulk lookups: a file of identities uploaded as a job, its progress, its results.
import { api, ApiError, download } from './api.js';
import { h, field, select, say, fmtInt, TYPES } from './ui.js';

export async function jobsPage(root) {
  const type = field('Type', select(TYPES, { name: 'type' }));
  const file = field('File of identities', h('input', { type: 'file', name: 'file', accept: '.txt,.csv,text/plain,text/csv' }),
    { hint: 'One identity per line (text), or the first column of a CSV file.' });
  const button = h('button', { type: 'submit', text: 'Upload' });
  const out = h('section', { 'aria-labelledby': 'job-h' });
  const form = h('form', { class: 'stack', novalidate: true }, h('div', { class: 'row' }, type.wrap), file.wrap, h('div', {}, button));
  root.append(h('h1', { text: 'Bulk lookups' }), form, out);

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    file.error.textContent = '';
    const f = file.control.files[0];
    if (!f) { file.error.textContent = 'Choose a file.'; file.control.focus(); return; }
    button.disabled = true;
    try {
      const ctype = /\.csv$/i.test(f.name) || f.type === 'text/csv' ? 'text/csv' : 'text/plain';
      const job = await api('/jobs?type=' + encodeURIComponent(type.control.value), { method: 'POST', body: f, headers: { 'Content-Type': ctype } });
      follow(job);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      file.error.textContent = err.message;
      say(err.message);
    } finally {
      button.disabled = false;
    }
  });

  function follow(job) {
    const bar = h('progress', { max: String(Math.max(1, job.total)), value: String(job.done), 'aria-labelledby': 'job-h' });
    const text = h('p', { 'aria-live': 'polite' });
    const actions = h('div', { class: 'actions' });
    out.replaceChildren(h('h2', { id: 'job-h', text: 'Job progress' }), bar, text, actions);
    const tick = async () => {
      if (!out.isConnected) return;
      const j = await api('/jobs/' + encodeURIComponent(job.id));
      bar.value = j.done;
      text.textContent = `${j.status}: ${fmtInt(j.done)} of ${fmtInt(j.total)} identities looked up, ${fmtInt(j.result_rows)} result rows.`;
      if (j.status === 'done') {
        const jl = h('button', { type: 'button', class: 'secondary', text: 'Download JSON Lines' });
        const csv = h('button', { type: 'button', class: 'secondary', text: 'Download CSV' });
        jl.addEventListener('click', async () => download(await api(`/jobs/${j.id}/results`, { raw: true, accept: 'application/x-ndjson' }), `job-${j.id}.jsonl`));
        csv.addEventListener('click', async () => download(await api(`/jobs/${j.id}/results`, { raw: true, accept: 'text/csv' }), `job-${j.id}.csv`));
        actions.replaceChildren(jl, csv);
        say('The job is done');
      } else if (j.status === 'failed') {
        say('The job failed');
      } else {
        setTimeout(tick, 1000);
      }
    };
    tick();
  }
}
