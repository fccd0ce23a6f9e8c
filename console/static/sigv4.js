// AWS Signature Version 4 for the console's own requests.
//
// Under --auth every console data request is signed in the browser, for
// the "tidemq" service (the admin API's scope), with the access key typed
// into the sign-in form. The secret never leaves the page: the server
// sees only signatures, as it does from the SDKs and the CLI.

import { sha256, hmac, hex } from './sha256.js';

/** uriEncode %-encodes every UTF-8 byte but A-Z a-z 0-9 - . _ ~ (and '/' unless encodeSlash). */
export function uriEncode(s, encodeSlash) {
  let out = '';
  for (const b of new TextEncoder().encode(s)) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-._~]/.test(c) || (c === '/' && !encodeSlash)) out += c;
    else out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** query renders parameters (an object) as a canonical query string: encoded and sorted. */
export function query(params) {
  const pairs = Object.entries(params || {})
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => [uriEncode(k, true), uriEncode(String(v), true)]);
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([k, v]) => k + '=' + v).join('&');
}

/**
 * sign returns the headers that sign a request: Authorization, X-Amz-Date
 * and X-Amz-Content-Sha256. path must be made of unreserved characters and
 * '/'; canonicalQuery comes from query(); headers are the other headers
 * to sign (lower-case names), host included.
 */
export function sign({ method, path, canonicalQuery, headers, body, accessKeyId, secret, region, service, now }) {
  const date = (now || new Date()).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const day = date.slice(0, 8);
  const payloadHash = hex(sha256(body || ''));
  const all = { ...headers, 'x-amz-date': date, 'x-amz-content-sha256': payloadHash };
  const names = Object.keys(all).map((n) => n.toLowerCase()).sort();
  const lower = Object.fromEntries(Object.entries(all).map(([k, v]) => [k.toLowerCase(), v]));
  const canonicalHeaders = names.map((n) => n + ':' + String(lower[n]).trim().replace(/\s+/g, ' ') + '\n').join('');
  const signedHeaders = names.join(';');
  const canonical = [method, uriEncode(path, false), canonicalQuery || '', canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', date, scope, hex(sha256(canonical))].join('\n');
  let key = hmac('AWS4' + secret, day);
  key = hmac(key, region);
  key = hmac(key, service);
  key = hmac(key, 'aws4_request');
  const signature = hex(hmac(key, toSign));
  return {
    'Authorization': `AWS4-HMAC-SHA256 Credential=${accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
    'X-Amz-Date': date,
    'X-Amz-Content-Sha256': payloadHash,
  };
}
