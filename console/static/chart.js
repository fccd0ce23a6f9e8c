// Small SVG charts of a queue's recent depth and oldest-message age.

const NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/**
 * sparkline draws values (oldest first) as a line over a filled area,
 * scaled from 0 to the largest value. With label, the largest value is
 * written in the corner.
 */
export function sparkline(values, { width = 120, height = 28, cls = '', label = null, title = '' } = {}) {
  const el = svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, class: 'spark ' + cls, role: 'img' });
  if (title) {
    const t = svg('title', {});
    t.textContent = title;
    el.appendChild(t);
  }
  const n = values.length;
  const top = Math.max(1, ...values);
  const pad = 2;
  const padTop = label === null ? pad : 16; // room for the label
  const x = (i) => (n <= 1 ? width - pad : pad + (i * (width - 2 * pad)) / (n - 1));
  const y = (v) => height - pad - (v / top) * (height - pad - padTop);
  el.appendChild(svg('line', { x1: 0, y1: height - pad, x2: width, y2: height - pad, class: 'base' }));
  if (n > 0) {
    const pts = values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`);
    el.appendChild(svg('polygon', { points: `${x(0).toFixed(1)},${height - pad} ${pts.join(' ')} ${x(n - 1).toFixed(1)},${height - pad}`, class: 'area' }));
    el.appendChild(svg('polyline', { points: pts.join(' '), class: 'line' }));
    el.appendChild(svg('circle', { cx: x(n - 1).toFixed(1), cy: y(values[n - 1]).toFixed(1), r: 2, class: 'dot' }));
  }
  if (label !== null) {
    const t = svg('text', { x: width - 4, y: 12, 'text-anchor': 'end', class: 'label' });
    t.textContent = label(top);
    el.appendChild(t);
  }
  return el;
}
