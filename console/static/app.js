// The tidemq web console: a hash-routed page that polls the server's JSON
// API and draws queues, messages, topics and triggers.

import { api, AuthError, credentials, signIn, signOut } from './api.js';
import { h, age, time, clock, num } from './dom.js';
import { sparkline } from './chart.js';

const POLL_MS = 2000;
const SAMPLES = 90; // three minutes of history at POLL_MS
const PEEK_MAX = 50; // messages shown by the browser

const main = document.getElementById('main');
const state = {
  overview: null,
  history: new Map(), // queue name -> [{depth, age}]
  authRequired: false,
  timer: null,
  route: '',
};

// ---------------------------------------------------------------------------
// The overview: the server answers the broker's snapshots (QueueSnapshot,
// as /tidemq/queues has them) and the alarms of those queues; what the page
// shows of a queue is worked out here, once per poll.

// queueNameOf is the console's name of the queue an ARN names: the plain
// name in the server's region, "<region>/<name>" in another.
function queueNameOf(arn, region) {
  const parts = arn.split(':');
  if (parts.length !== 6) return arn.slice(arn.lastIndexOf(':') + 1);
  return parts[3] === region ? parts[5] : `${parts[3]}/${parts[5]}`;
}

async function fetchOverview(queue) {
  const raw = await api.overview(queue);
  const snaps = raw.queues || [];
  const nameOf = new Map(snaps.map((s) => [s.ARN, s.Name]));
  const sources = new Map(); // ARN -> names of the queues that dead-letter into it
  for (const s of snaps) {
    if (!s.DeadLetterTarget) continue;
    if (!sources.has(s.DeadLetterTarget)) sources.set(s.DeadLetterTarget, []);
    sources.get(s.DeadLetterTarget).push(s.Name);
  }
  const alarmsOf = new Map();
  for (const a of raw.alarms || []) {
    if (!alarmsOf.has(a.queue)) alarmsOf.set(a.queue, []);
    alarmsOf.get(a.queue).push(a);
  }
  const queues = snaps.map((s) => {
    const alarms = alarmsOf.get(s.Name) || [];
    return {
      name: s.Name, arn: s.ARN, fifo: s.FIFO,
      visible: s.Visible, inFlight: s.InFlight, delayed: s.Delayed,
      depth: s.Visible + s.InFlight + s.Delayed, // every message the queue holds
      oldestAgeSeconds: s.OldestAgeSeconds, retentionSeconds: s.RetentionSeconds,
      deadLetterQueue: s.IsDeadLetterQueue,
      deadLetterTarget: s.DeadLetterTarget ? (nameOf.get(s.DeadLetterTarget) || queueNameOf(s.DeadLetterTarget, raw.region)) : '',
      maxReceiveCount: s.MaxReceiveCount,
      sources: (sources.get(s.ARN) || []).sort(),
      // FIRING when one of its alarms fires, OK when all are quiet, '' without any.
      alarm: alarms.length === 0 ? '' : (alarms.some((a) => a.state === 'FIRING') ? 'FIRING' : 'OK'),
      alarms,
      stats: s.Stats,
    };
  });
  return { ...raw, queues };
}

// ---------------------------------------------------------------------------
// Polling and history

function record(ov) {
  const seen = new Set();
  for (const q of ov.queues) {
    seen.add(q.name);
    const s = state.history.get(q.name) || [];
    s.push({ depth: q.depth, age: q.oldestAgeSeconds });
    if (s.length > SAMPLES) s.shift();
    state.history.set(q.name, s);
  }
  for (const name of state.history.keys()) if (!seen.has(name)) state.history.delete(name);
}

async function poll() {
  clearTimeout(state.timer);
  if (state.authRequired && !credentials()) return; // signed out: the sign-in form waits
  try {
    state.overview = await fetchOverview(routeQueue());
    record(state.overview);
    await render(false);
  } catch (e) {
    handleError(e);
    if (e instanceof AuthError) return; // no polling behind the sign-in form
  }
  state.timer = setTimeout(poll, POLL_MS);
}

function handleError(e) {
  if (e instanceof AuthError) {
    state.authRequired = true;
    const had = credentials();
    signOut();
    showLogin(had ? 'The server refused the access key: ' + e.message : '');
    return;
  }
  const banner = document.getElementById('error') || main.insertBefore(h('p', { id: 'error', class: 'error' }), main.firstChild);
  banner.textContent = e.message || String(e);
}

function clearError() {
  const el = document.getElementById('error');
  if (el) el.remove();
}

// ---------------------------------------------------------------------------
// Routing

function parseRoute() {
  const hash = location.hash.replace(/^#\/?/, '') || 'queues';
  const [page, ...rest] = hash.split('/');
  return { page, arg: rest.map(decodeURIComponent).join('/') };
}

// routeQueue is the queue the page shows, '' when it shows none.
function routeQueue() {
  const { page, arg } = parseRoute();
  return page === 'queue' ? arg : '';
}

async function render(navigated) {
  if (state.authRequired && !credentials()) return;
  const { page, arg } = parseRoute();
  for (const a of document.querySelectorAll('nav a')) {
    a.classList.toggle('active', a.dataset.nav === page || (page === 'queue' && a.dataset.nav === 'queues'));
  }
  try {
    switch (page) {
      case 'queue':
        await renderQueue(arg, navigated);
        break;
      case 'topics':
        if (navigated) await renderTopics();
        break;
      case 'triggers':
        await renderTriggers(); // live: counters and recent invocations
        break;
      default:
        renderQueues();
    }
    clearError();
  } catch (e) {
    handleError(e);
  }
}

// A question asked about one page must not outlive it: a confirmation
// left open across a navigation would act on the queue it was asked about
// while the page shows another. Navigating answers it "cancel".
window.addEventListener('hashchange', () => {
  if (confirmEl.open) confirmEl.close('');
  render(true);
});

function page(id, ...children) {
  main.replaceChildren(h('section', { id, class: 'page' }, ...children));
}

// ---------------------------------------------------------------------------
// Queues

function badge(q) {
  const out = [];
  if (q.deadLetterQueue) out.push(h('span', { class: 'badge dlq' }, 'DLQ'));
  if (q.fifo) out.push(h('span', { class: 'badge' }, 'FIFO'));
  if (q.alarm === 'FIRING') out.push(h('span', { class: 'badge firing', title: q.alarms.filter((a) => a.state === 'FIRING').map((a) => a.summary).join('\n') }, 'ALARM'));
  else if (q.alarm === 'OK') out.push(h('span', { class: 'badge ok' }, 'OK'));
  return out;
}

function charts(q) {
  const s = state.history.get(q.name) || [];
  return [
    h('td', { class: 'chart' }, sparkline(s.map((p) => p.depth), { cls: 'depth', title: `depth, last ${s.length} samples` })),
    h('td', { class: 'chart' }, sparkline(s.map((p) => p.age), { cls: 'age', title: `oldest message age, last ${s.length} samples` })),
  ];
}

function queueRow(q) {
  return h('tr', { dataset: { queue: q.name }, class: q.alarm === 'FIRING' ? 'firing' : '' },
    h('td', {}, h('a', { href: '#/queue/' + encodeURIComponent(q.name), class: 'qname' }, q.name), ' ', badge(q)),
    h('td', { class: 'n depth' }, num(q.depth)),
    h('td', { class: 'n' }, num(q.visible)),
    h('td', { class: 'n' }, num(q.inFlight)),
    h('td', { class: 'n' }, num(q.delayed)),
    h('td', { class: 'n' }, q.depth ? age(q.oldestAgeSeconds) : '–'),
    charts(q),
    h('td', { class: 'muted' }, q.deadLetterQueue
      ? (q.sources && q.sources.length ? '← ' + q.sources.join(', ') : '')
      : (q.deadLetterTarget ? h('span', { title: `dead-lettered after ${q.maxReceiveCount} receives` }, `→ ${q.deadLetterTarget} (${q.maxReceiveCount}×)`) : '')),
  );
}

function queueTable(qs, caption) {
  return h('table', { class: 'queues' },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {},
      h('th', {}, 'Queue'), h('th', { class: 'n' }, 'Depth'), h('th', { class: 'n' }, 'Visible'),
      h('th', { class: 'n' }, 'In flight'), h('th', { class: 'n' }, 'Delayed'), h('th', { class: 'n' }, 'Oldest'),
      h('th', {}, 'Depth'), h('th', {}, 'Age'), h('th', {}, 'Redrive'))),
    h('tbody', {}, qs.map(queueRow)));
}

// counted is "1 queue", "2 queues": a number with its noun.
function counted(n, noun) {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function renderQueues() {
  const ov = state.overview;
  if (!ov) return;
  const dlqs = ov.queues.filter((q) => q.deadLetterQueue);
  const others = ov.queues.filter((q) => !q.deadLetterQueue);
  // The server counts every queue, not only the listed ones (an older
  // server does not: count those listed).
  const firing = ov.firing ?? ov.queues.filter((q) => q.alarm === 'FIRING').length;
  page('queues-page',
    h('div', { class: 'summary' },
      h('span', {}, counted(ov.total ?? ov.queues.length, 'queue')),
      h('span', {}, counted(ov.deadLetterQueues ?? dlqs.length, 'dead-letter queue')),
      h('span', { class: firing ? 'firing-text' : '' }, ov.alarmsOn ? `${firing} firing` : 'alarms off'),
      h('span', { class: 'muted' }, `${ov.region} · ${ov.accountId}`)),
    ov.queues.length === 0 ? h('p', { class: 'muted' }, 'No queues yet. Create one with any SQS client.') : null,
    ov.truncated ? h('p', { class: 'muted', id: 'truncated' }, `Showing ${ov.queues.length} of ${ov.total} queues: dead-letter queues and firing alarms first, then by name. Open any queue with #/queue/NAME.`) : null,
    dlqs.length ? queueTable(dlqs, 'Dead-letter queues') : null,
    others.length ? queueTable(others, 'Queues') : null);
}

// ---------------------------------------------------------------------------
// One queue: stats, charts, actions, move tasks and the message browser

const detail = { queue: '', inflight: false, messages: null, tasks: null, jobs: null, busy: false };

async function renderQueue(name, navigated) {
  let ov = state.overview;
  if (!ov) return;
  let q = ov.queues.find((x) => x.name === name);
  if (!q && ov.truncated) {
    // Past the overview's first queues: ask for this one.
    state.overview = ov = await fetchOverview(name);
    record(ov);
    q = ov.queues.find((x) => x.name === name);
  }
  if (!q) {
    page('queue-page', h('h1', {}, name), h('p', { class: 'error' }, 'No such queue.'), h('a', { href: '#/queues' }, '← all queues'));
    return;
  }
  if (navigated || detail.queue !== name) {
    detail.queue = name;
    detail.messages = null;
    detail.tasks = null;
    detail.jobs = null;
    detail.inflight = false;
    loadMessages(q);
  }
  if (q.deadLetterQueue) loadTasks(q);
  // While a redrive runs, the messages it moves disappear from the list.
  if (!navigated && ((detail.tasks && detail.tasks.some((t) => t.status === 'RUNNING')) ||
    (detail.jobs && detail.jobs.some((j) => j.status === 'RUNNING')))) loadMessages(q);
  const existing = document.getElementById('queue-page');
  if (existing && existing.dataset.queue === name) {
    existing.querySelector('.stats').replaceWith(stats(q));
    existing.querySelector('.bigcharts').replaceWith(bigCharts(q));
    existing.querySelector('.alarms').replaceWith(alarmList(q));
    return;
  }
  main.replaceChildren(h('section', { id: 'queue-page', class: 'page', dataset: { queue: name } },
    h('a', { href: '#/queues', class: 'back' }, '← all queues'),
    h('h1', {}, name, ' ', badge(q)),
    alarmList(q),
    stats(q),
    bigCharts(q),
    h('div', { class: 'actions' },
      q.deadLetterQueue ? h('button', { id: 'redrive', type: 'button', onclick: () => redrive(q) }, 'Redrive…') : null,
      h('button', { id: 'purge', type: 'button', class: 'danger', onclick: () => purge(q) }, 'Purge…'),
      h('span', { id: 'action-result', class: 'muted', role: 'status' })),
    q.deadLetterQueue ? h('div', { id: 'tasks' }) : null,
    h('div', { class: 'browser-head' },
      h('h2', {}, 'Messages'),
      h('label', {}, h('input', { type: 'checkbox', id: 'inflight', onchange: (e) => { detail.inflight = e.target.checked; loadMessages(q); } }), ' include in flight'),
      h('button', { type: 'button', id: 'refresh', onclick: () => loadMessages(q) }, 'Refresh')),
    h('p', { class: 'muted' }, 'Peeked: looking changes nothing (no receive, no receive count).'),
    h('div', { id: 'messages' }, h('p', { class: 'muted' }, 'Loading…'))));
  if (detail.messages) drawMessages();
  if (detail.tasks) drawTasks();
}

function alarmList(q) {
  const firing = (q.alarms || []).filter((a) => a.state === 'FIRING');
  return h('ul', { class: 'alarms' }, firing.map((a) => h('li', { class: 'firing-text' }, `${a.alarm}: ${a.summary}`)));
}

function stats(q) {
  const item = (label, value) => h('div', { class: 'stat' }, h('span', { class: 'v' }, value), h('span', { class: 'l' }, label));
  return h('div', { class: 'stats' },
    item('depth', num(q.depth)), item('visible', num(q.visible)), item('in flight', num(q.inFlight)),
    item('delayed', num(q.delayed)), item('oldest', q.depth ? age(q.oldestAgeSeconds) : '–'),
    item('retention', age(q.retentionSeconds)),
    item('sent', num(q.stats.Sent)), item('received', num(q.stats.Received)), item('deleted', num(q.stats.Deleted)),
    item('dead-lettered', num(q.stats.DeadLettered)), item('moved in', num(q.stats.MovedIn)), item('moved out', num(q.stats.MovedOut)),
    q.deadLetterTarget ? item('dead-letter queue', h('a', { href: '#/queue/' + encodeURIComponent(q.deadLetterTarget) }, q.deadLetterTarget)) : null,
    q.sources && q.sources.length ? item('sources', q.sources.map((s, i) => [i ? ', ' : '', h('a', { href: '#/queue/' + encodeURIComponent(s) }, s)])) : null);
}

function bigCharts(q) {
  const s = state.history.get(q.name) || [];
  return h('div', { class: 'bigcharts' },
    h('figure', {}, sparkline(s.map((p) => p.depth), { width: 420, height: 90, cls: 'depth', label: (m) => 'max ' + num(m) }),
      h('figcaption', {}, 'Depth (visible + in flight + delayed)')),
    h('figure', {}, sparkline(s.map((p) => p.age), { width: 420, height: 90, cls: 'age', label: (m) => 'max ' + age(m) }),
      h('figcaption', {}, 'Oldest message age')));
}

async function loadMessages(q) {
  const name = q.name;
  try {
    const r = await api.messages(name, PEEK_MAX, detail.inflight);
    if (detail.queue !== name) return;
    detail.messages = r.messages;
    drawMessages();
  } catch (e) {
    handleError(e);
  }
}

async function loadTasks(q) {
  try {
    const r = await api.moveTasks(q.name);
    if (detail.queue !== q.name) return;
    detail.tasks = r.tasks;
    detail.jobs = r.redrives || [];
    drawTasks();
  } catch (e) {
    handleError(e);
  }
}

function drawTasks() {
  const el = document.getElementById('tasks');
  if (!el) return;
  const tasks = detail.tasks || [];
  const jobs = detail.jobs || [];
  el.replaceChildren(...[
    tasks.length ? [h('h2', {}, 'Redrives (message move tasks)'),
      h('table', { class: 'tasks' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Started'), h('th', {}, 'Status'), h('th', {}, 'To'), h('th', { class: 'n' }, 'Moved'), h('th', { class: 'n' }, 'Of'), h('th', {}, ''))),
        h('tbody', {}, tasks.map((t) => h('tr', { class: 'task-' + t.status.toLowerCase() },
          h('td', {}, time(t.started)), h('td', {}, t.status), h('td', {}, t.destination || 'their source queues'),
          h('td', { class: 'n' }, num(t.moved)), h('td', { class: 'n' }, num(t.toMove)),
          h('td', { class: 'error' }, t.failureReason ? failureText(t.failureReason) : '')))))] : null,
    jobs.length ? [h('h2', {}, 'Redrives (message by message)'),
      h('table', { class: 'jobs' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Started'), h('th', {}, 'Status'), h('th', {}, 'To'), h('th', {}, 'Options'),
          h('th', { class: 'n' }, 'Moved'), h('th', { class: 'n' }, 'Left'), h('th', { class: 'n' }, 'Came back'))),
        h('tbody', {}, jobs.map((j) => [
          h('tr', { class: 'job-' + j.status.toLowerCase(), dataset: { job: j.id } },
            h('td', {}, time(j.started)), h('td', {}, j.status), h('td', {}, j.destination || 'their source queues'),
            h('td', {}, h('code', {}, j.options || '')), h('td', { class: 'n' }, num(j.moved)),
            h('td', { class: 'n' }, num((j.notRedriven || []).length)), h('td', { class: 'n' }, num((j.cameBack || []).length))),
          h('tr', { class: 'job-detail' }, h('td', { colspan: 7 },
            j.error ? h('p', { class: 'error' }, j.error) : null,
            (j.notRedriven || []).length ? h('ul', { class: 'not-redriven' }, j.notRedriven.map((n) => h('li', {}, h('code', {}, n.MessageID), ': ', n.Reason))) : null,
            h('details', {}, h('summary', {}, 'output'), h('pre', { class: 'body raw' }, j.output || '')))),
        ])))] : null,
  ].flat().filter(Boolean));
}

// failureText adds what to do to a move task's failure reason.
function failureText(reason) {
  if (reason === 'CouldNotDetermineMessageSource') {
    return reason + ': a message was sent to this queue directly (no source recorded). Redrive again and choose a queue.';
  }
  return reason;
}

function drawMessages() {
  const el = document.getElementById('messages');
  if (!el) return;
  const ms = detail.messages || [];
  if (!ms.length) {
    el.replaceChildren(h('p', { class: 'muted empty' }, detail.inflight ? 'No messages.' : 'No visible messages.'));
    return;
  }
  const cards = ms.map((m, i) => messageCard(m, i));
  if (ms.length >= PEEK_MAX) cards.push(h('p', { class: 'muted' }, `The first ${PEEK_MAX} messages, oldest first.`));
  el.replaceChildren(...cards);
}

function messageCard(m, i) {
  const facts = [
    ['sent', time(m.sent)],
    m.delayedUntil ? ['delayed', `${age((m.delayedUntil - m.sent) / 1000)}: receivable at ${time(m.delayedUntil)} (in ${age(Math.max(0, m.delayedUntil - Date.now()) / 1000)})`] : null,
    m.invisibleUntil ? ['in flight until', `${time(m.invisibleUntil)} (in ${age(Math.max(0, m.invisibleUntil - Date.now()) / 1000)})`] : null,
    ['first received', time(m.firstReceive)],
    ['receives', String(m.receiveCount)],
    ['source', m.sourceQueue ? m.sourceQueue : 'sent to this queue directly'],
    m.groupId ? ['group', m.groupId] : null,
    m.deduplicationId ? ['dedup id', m.deduplicationId] : null,
    m.sequenceNumber ? ['sequence', m.sequenceNumber] : null,
    m.traceHeader ? ['trace', m.traceHeader] : null,
    ['size', num(m.size) + ' bytes'],
  ].filter((f) => f && f[1]);
  const env = m.envelope;
  const inner = env ? env.message : m.pretty;
  return h('article', { class: 'message', dataset: { messageId: m.messageId } },
    h('div', { class: 'msg-head' },
      h('code', {}, m.messageId),
      env ? h('span', { class: 'badge' }, env.kind === 'sns' ? 'SNS' : 'wrapped') : null,
      m.receiveCount ? h('span', { class: 'badge' }, `received ${m.receiveCount}×`) : null,
      m.delayedUntil ? h('span', { class: 'badge delayed' }, 'delayed until ' + clock(m.delayedUntil)) : null,
      m.sourceQueue ? h('span', { class: 'muted' }, '← ' + m.sourceQueue) : null,
      h('span', { class: 'muted right' }, m.sent ? age((Date.now() - m.sent) / 1000) + ' old' : '')),
    m.explain ? h('p', { class: 'explain' }, m.explain) : null,
    h('details', { class: 'msg-body', open: i === 0 },
      h('summary', {}, h('span', { class: 'preview' }, inner.replace(/\s+/g, ' ').slice(0, 140))),
      h('dl', { class: 'facts' }, facts.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
      m.attributes && m.attributes.length ? h('table', { class: 'attrs' }, h('tbody', {}, m.attributes.map((a) =>
        h('tr', {}, h('td', {}, a.name), h('td', { class: 'muted' }, a.dataType), h('td', {}, h('code', {}, a.value)))))) : null,
      env
        ? [h('p', { class: 'envelope' }, env.kind === 'sns'
            ? `SNS notification from ${env.topicArn}${env.subject ? `, subject “${env.subject}”` : ''}, unwrapped:`
            : '{"Message": <JSON string>} envelope, unwrapped:'),
          h('pre', { class: 'body' }, env.message),
          h('details', {}, h('summary', {}, 'body as sent'), h('pre', { class: 'body raw' }, m.body))]
        : [h('pre', { class: 'body' }, m.pretty),
          m.pretty !== m.body ? h('details', {}, h('summary', {}, 'body as sent'), h('pre', { class: 'body raw' }, m.body)) : null],
      m.history && m.history.length ? [h('h3', {}, `History (${m.history.length} events)`),
        h('table', { class: 'history' }, h('tbody', {}, m.history.map((ev) => h('tr', { class: 'ev-' + ev.kind },
          h('td', { class: 'muted when', title: time(ev.time) }, clock(ev.time)), h('td', { class: 'kind' }, ev.kind), h('td', {}, ev.queue || ''),
          h('td', {}, [ev.detail, who(ev.client)].filter(Boolean).join('; '))))))] : null));
}

function who(c) {
  if (!c) return '';
  const parts = [];
  if (c.AccessKey) parts.push('key ' + c.AccessKey);
  if (c.Addr) parts.push('from ' + c.Addr);
  if (c.UserAgent) parts.push(c.UserAgent.split(' ')[0]);
  return parts.length ? 'by ' + parts.join(', ') : '';
}

// The confirmation dialog. Its close event is queued, not dispatched at
// once: a dialog reopened quickly would otherwise see the close of the
// previous one (returnValue '') and answer "cancel" for the user. So one
// listener resolves the pending question, and only once the dialog is
// really closed.
const confirmEl = document.getElementById('confirm');
let pendingConfirm = null;
confirmEl.addEventListener('close', () => {
  if (confirmEl.open || !pendingConfirm) return;
  const resolve = pendingConfirm;
  pendingConfirm = null;
  resolve(confirmEl.returnValue === 'ok');
});

// extra, when given, is shown under the text (the redrive's choices).
function confirmDialog(title, text, ok, danger, extra) {
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-extra').replaceChildren(...(extra ? [extra] : []));
  const okButton = document.getElementById('confirm-ok');
  okButton.textContent = ok;
  okButton.className = danger ? 'danger' : 'primary';
  if (pendingConfirm) pendingConfirm(false);
  confirmEl.returnValue = '';
  return new Promise((resolve) => {
    pendingConfirm = resolve;
    confirmEl.showModal();
    document.getElementById('confirm-cancel').focus();
  });
}

function actionResult(text, bad) {
  const el = document.getElementById('action-result');
  if (el) {
    el.textContent = text;
    el.className = bad ? 'error' : 'muted';
  }
}

// redrive asks where to and how, then redrives: a plain redrive of a DLQ
// that a RedrivePolicy names is a message move task; a marked one, or one
// of a DLQ whose source is gone, runs message by message on the server as
// `tidemq dlq redrive` does (the answer names a job, shown under Redrives).
async function redrive(q) {
  const hasSources = q.sources && q.sources.length > 0;
  const others = ((state.overview && state.overview.queues) || []).map((x) => x.name).filter((n) => n !== q.name).sort();
  const direct = (detail.messages || []).filter((m) => !m.sourceQueue).length;
  const to = h('select', { id: 'redrive-to' },
    hasSources
      ? h('option', { value: '' }, `their source queues (${q.sources.join(', ')})`)
      : h('option', { value: '', disabled: true, selected: true }, 'choose a queue…'),
    others.map((n) => h('option', { value: n }, n)));
  const mark = h('input', { type: 'checkbox', id: 'redrive-mark' });
  const finalPass = h('input', { type: 'checkbox', id: 'redrive-final' });
  const bodySet = h('textarea', { id: 'redrive-bodyset', rows: 4, spellcheck: 'false',
    placeholder: 'inner.dlq_redriven=true\ninner.eventDetail.dlq_redrive_count+=1' });
  const form = h('div', { class: 'redrive-form' },
    h('label', {}, 'Send to ', to),
    hasSources ? null : h('p', { class: 'warn', id: 'redrive-orphan' },
      `No RedrivePolicy names ${q.name} (was its source queue deleted?): choose the queue its messages go to.`),
    hasSources && direct ? h('p', { class: 'warn', id: 'redrive-direct' },
      `${direct} of the messages shown were sent to ${q.name} directly (no source recorded): a redrive to their sources stops at them; choose a queue to move them all.`) : null,
    h('label', {}, mark, ' mark them: message attributes tidemq.redriven and tidemq.redrive-count'),
    h('label', {}, finalPass, ' final pass: tidemq.final-pass too'),
    h('label', { for: 'redrive-bodyset' }, 'Body markers, one a line (PATH=VALUE, or PATH+=N to add), as tidemq dlq redrive --body-set:'),
    bodySet);
  const ok = await confirmDialog(`Redrive ${q.name}?`,
    `Move the ${num(q.visible)} visible message(s) of ${q.name}. Without markers a message move task does it; with markers, or to a chosen queue of a DLQ whose source is gone, they are moved message by message as tidemq dlq redrive does. Either can be followed here.`,
    'Redrive', false, form);
  if (!ok) return;
  const req = { queue: q.name };
  if (to.value) req.destination = to.value;
  if (mark.checked) req.mark = true;
  if (finalPass.checked) req.finalPass = true;
  const edits = bodySet.value.split('\n').map((l) => l.trim()).filter(Boolean);
  if (edits.length) req.bodySet = edits;
  try {
    const r = await api.redrive(req);
    actionResult(r.redrive ? 'Redrive started (message by message).' : 'Redrive started.');
    loadTasks(q);
    setTimeout(() => loadMessages(q), 1000);
  } catch (e) {
    if (e instanceof AuthError) return handleError(e);
    actionResult('Redrive refused: ' + e.message, true);
  }
}

async function purge(q) {
  const ok = await confirmDialog(`Purge ${q.name}?`,
    `Delete every message of ${q.name} (${num(q.depth)} now, in flight included). This cannot be undone.`, 'Purge', true);
  if (!ok) return;
  try {
    await api.purge(q.name);
    actionResult('Purged.');
    loadMessages(q);
  } catch (e) {
    if (e instanceof AuthError) return handleError(e);
    actionResult('Purge refused: ' + e.message, true);
  }
}

// ---------------------------------------------------------------------------
// Topics

async function renderTopics() {
  const r = await api.topics();
  page('topics-page', h('h1', {}, 'Topics'),
    !r.enabled ? h('p', { class: 'muted' }, 'This server has no SNS topic service.') : null,
    r.topics.length === 0 ? h('p', { class: 'muted' }, 'No topics yet.') : null,
    r.topics.map((t) => h('div', { class: 'topic', dataset: { topic: t.name } },
      h('h2', {}, t.name, ' ', t.fifo ? h('span', { class: 'badge' }, 'FIFO') : null),
      h('p', { class: 'muted' }, t.arn),
      t.subscriptions.length === 0 ? h('p', { class: 'muted' }, 'No subscriptions.') : h('table', {},
        h('thead', {}, h('tr', {}, h('th', {}, 'Protocol'), h('th', {}, 'Endpoint'), h('th', {}, 'Delivery'), h('th', {}, 'Filter policy'))),
        h('tbody', {}, t.subscriptions.map((s) => h('tr', {},
          h('td', {}, s.protocol, s.pending ? h('span', { class: 'badge' }, 'pending') : null),
          h('td', {}, s.protocol === 'sqs' ? queueLink(s.endpoint) : h('code', {}, s.endpoint)),
          h('td', {}, s.rawMessageDelivery ? 'raw' : 'envelope', s.redrivePolicy ? ' · DLQ' : ''),
          h('td', {}, s.filterPolicy ? h('code', {}, s.filterPolicy) : h('span', { class: 'muted' }, 'all messages')))))))));
}

// queueLink links a queue named by ARN (or by name): a queue of another
// region than the server's is "<region>/<name>", as the API names it.
function queueLink(arnOrName) {
  const parts = arnOrName.split(':');
  let name = arnOrName;
  if (parts.length === 6 && parts[0] === 'arn') {
    const home = state.overview ? state.overview.region : '';
    name = parts[3] && parts[3] !== home ? parts[3] + '/' + parts[5] : parts[5];
  }
  return h('a', { href: '#/queue/' + encodeURIComponent(name) }, name);
}

// ---------------------------------------------------------------------------
// Triggers

// recentInvocations is the hook for the trigger API's history of recent
// invocations: a RecentInvocations list on each trigger's status (latest
// first), each entry with Time, Outcome, BatchSize, DurationSeconds,
// FailedMessages and Error. Entries of another shape are shown with
// whatever fields they have.
function recentInvocations(t) {
  return Array.isArray(t.RecentInvocations) ? t.RecentInvocations : null;
}

const INVOCATION_COLUMNS = [
  ['Time', 'time', (v) => (v ? time(Date.parse(v)) : '')],
  ['Outcome', 'outcome', (v) => v || ''],
  ['BatchSize', 'messages', (v) => (v === undefined ? '' : num(v))],
  ['DurationSeconds', 'duration', (v) => (v === undefined ? '' : v < 1 ? (v * 1000).toFixed(v < 0.01 ? 1 : 0) + ' ms' : v.toFixed(2) + ' s')],
  ['FailedMessages', 'failed', (v) => (v ? num(v) : '')],
  ['Error', 'error', (v) => v || ''],
];

function invocationTable(list) {
  if (!list.length) return h('p', { class: 'muted' }, 'No invocations yet.');
  const known = new Set(INVOCATION_COLUMNS.map(([k]) => k));
  const extra = [...new Set(list.flatMap((x) => Object.keys(x)))].filter((k) => !known.has(k));
  const cell = (v) => (v && typeof v === 'object' ? JSON.stringify(v) : v === undefined ? '' : String(v));
  return h('div', { class: 'invocations-wrap' }, h('table', { class: 'invocations' },
    h('thead', {}, h('tr', {}, INVOCATION_COLUMNS.map(([, label]) => h('th', {}, label)), extra.map((c) => h('th', {}, c)))),
    h('tbody', {}, list.map((x) => h('tr', { class: 'outcome-' + String(x.Outcome || '').toLowerCase() },
      INVOCATION_COLUMNS.map(([k, , fmt]) => h('td', { class: k === 'Error' ? 'error' : '' }, fmt(x[k]))),
      extra.map((c) => h('td', {}, cell(x[c]))))))));
}

async function renderTriggers() {
  const r = await api.triggers();
  const ts = r.Triggers || [];
  page('triggers-page', h('h1', {}, 'Triggers'),
    ts.length === 0 ? h('p', { class: 'muted' }, 'No triggers. Create one with tidemq trigger create or a tidemq.yaml.') : null,
    ts.map((t) => {
      const s = t.Stats || {};
      const target = t.Target.URL || (t.Target.Command || []).join(' ');
      const recent = recentInvocations(t);
      return h('div', { class: 'trigger', dataset: { trigger: t.Name } },
        h('h2', {}, t.Name, ' ', h('span', { class: 'badge ' + (t.State === 'Enabled' ? 'ok' : '') }, t.State)),
        h('p', {}, 'polls ', queueLink(t.Queue), ' → ', h('code', {}, target)),
        h('div', { class: 'stats' }, [['invocations', s.Invocations], ['errors', s.Errors], ['timeouts', s.Timeouts],
          ['throttles', s.Throttles], ['partial failures', s.PartialFailures], ['deleted', s.MessagesDeleted],
          ['failed', s.MessagesFailed], ['running now', s.ConcurrentInvocations]].map(([l, v]) =>
          h('div', { class: 'stat' }, h('span', { class: 'v' }, num(v)), h('span', { class: 'l' }, l)))),
        t.LastError ? h('p', { class: 'error' }, `last error ${time(Date.parse(t.LastErrorTime))}: ${t.LastError}`) : null,
        (t.Warnings || []).map((w) => h('p', { class: 'muted' }, '⚠ ' + w)),
        h('h3', {}, 'Recent invocations'),
        recent ? invocationTable(recent) : h('p', { class: 'muted no-invocations' }, 'No invocations reported.'));
    }));
}

// ---------------------------------------------------------------------------
// Sign-in

function showLogin(message) {
  clearTimeout(state.timer);
  document.getElementById('who').textContent = '';
  document.getElementById('signout').hidden = true;
  const form = h('form', { id: 'login', class: 'login', autocomplete: 'off' },
    h('h1', {}, 'Sign in'),
    h('p', { class: 'muted' }, 'This server runs with --auth. Enter an access key it accepts; requests are signed here in the page ' +
      '(AWS Signature V4), the secret is never sent and is forgotten when this tab closes.'),
    message ? h('p', { class: 'error', id: 'login-error' }, message) : null,
    h('label', {}, 'Access key ID', h('input', { id: 'akid', name: 'akid', required: true, spellcheck: 'false' })),
    h('label', {}, 'Secret access key', h('input', { id: 'secret', name: 'secret', type: 'password', required: true })),
    h('button', { type: 'submit', id: 'signin' }, 'Sign in'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    signIn(form.querySelector('#akid').value.trim(), form.querySelector('#secret').value);
    start();
  });
  main.replaceChildren(form);
  form.querySelector('#akid').focus();
}

function showIdentity() {
  const c = credentials();
  document.getElementById('who').textContent = c ? 'signed in as ' + c.accessKeyId : state.authRequired ? '' : 'open server (no --auth)';
  document.getElementById('signout').hidden = !c;
}

document.getElementById('signout').addEventListener('click', () => {
  signOut();
  state.authRequired = true;
  state.overview = null;
  state.history.clear();
  showLogin('');
});

async function start() {
  try {
    state.overview = await fetchOverview(routeQueue());
  } catch (e) {
    handleError(e);
    return;
  }
  record(state.overview);
  showIdentity();
  await render(true);
  state.timer = setTimeout(poll, POLL_MS);
}

start();
