// Building DOM nodes. Text is always set as text (never parsed as HTML),
// so nothing from a message body or a queue name can run as script.

/** h creates an element: h('a', {href: '#', class: 'x'}, 'text', child, [children]). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

/** age renders seconds the way a person reads an age: 42s, 3m05s, 2h10m, 3d04h. */
export function age(sec) {
  sec = Math.max(0, Math.floor(sec || 0));
  if (sec < 60) return sec + 's';
  if (sec < 3600) return Math.floor(sec / 60) + 'm' + String(sec % 60).padStart(2, '0') + 's';
  if (sec < 172800) return Math.floor(sec / 3600) + 'h' + String(Math.floor(sec / 60) % 60).padStart(2, '0') + 'm';
  return Math.floor(sec / 86400) + 'd' + String(Math.floor(sec / 3600) % 24).padStart(2, '0') + 'h';
}

/** time renders Unix milliseconds as an ISO time (UTC), or '' for 0. */
export function time(ms) {
  return ms ? new Date(ms).toISOString().replace('T', ' ').replace('Z', ' UTC') : '';
}

/** clock renders Unix milliseconds as a UTC time of day with milliseconds. */
export function clock(ms) {
  return ms ? new Date(ms).toISOString().slice(11, 23) : '';
}

/** num renders a count with thousands separators. */
export function num(n) {
  return Number(n || 0).toLocaleString('en-US');
}
