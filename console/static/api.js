// The console's requests: its JSON API under /console/api and the trigger
// admin API under /tidemq, signed when the user has signed in.

import { sign, query } from './sigv4.js';

const KEY = 'tidemq.console.credentials';
// Any region will do: the server checks the service, the date and the key.
const REGION = 'us-east-1';
const SERVICE = 'tidemq';

/** AuthError is thrown when the server wants a signature it did not get or refused. */
export class AuthError extends Error {}

/** APIError carries the server's error code and message. */
export class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** credentials returns the signed-in key, or null. Kept in sessionStorage: this tab only, gone when it closes. */
export function credentials() {
  try {
    const c = JSON.parse(sessionStorage.getItem(KEY) || 'null');
    return c && c.accessKeyId && c.secret ? c : null;
  } catch {
    return null;
  }
}

export function signIn(accessKeyId, secret) {
  sessionStorage.setItem(KEY, JSON.stringify({ accessKeyId, secret }));
}

export function signOut() {
  sessionStorage.removeItem(KEY);
}

const authCodes = new Set(['MissingAuthenticationToken', 'InvalidClientTokenId', 'SignatureDoesNotMatch',
  'IncompleteSignature', 'RequestExpired', 'MissingAuthenticationTokenException', 'UnrecognizedClientException']);

async function request(method, path, params, body) {
  const q = query(params);
  const headers = { 'Accept': 'application/json' };
  const text = body === undefined ? '' : JSON.stringify(body);
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const c = credentials();
  if (c) {
    const signed = { host: location.host };
    if (body !== undefined) signed['content-type'] = 'application/json';
    Object.assign(headers, sign({ method, path, canonicalQuery: q, headers: signed, body: text,
      accessKeyId: c.accessKeyId, secret: c.secret, region: REGION, service: SERVICE }));
  }
  const resp = await fetch(path + (q ? '?' + q : ''), {
    method, headers, body: body === undefined ? undefined : text, credentials: 'omit', cache: 'no-store',
  });
  let data = null;
  try {
    data = await resp.json();
  } catch {
    data = null;
  }
  if (!resp.ok) {
    const code = (data && data.code) || '';
    const msg = (data && data.error) || `${resp.status} ${resp.statusText}`;
    if (resp.status === 403 && authCodes.has(code)) throw new AuthError(msg.split('\n\n')[0]);
    throw new APIError(resp.status, code, msg.split('\n\n')[0]);
  }
  return data;
}

export const api = {
  // queue: a queue to include even past the overview's first 1,000.
  overview: (queue) => request('GET', '/console/api/overview' + (queue ? '?queue=' + encodeURIComponent(queue) : '')),
  messages: (queue, max, inflight) => request('GET', '/console/api/messages', { queue, max, inflight: inflight ? '1' : '' }),
  moveTasks: (queue) => request('GET', '/console/api/movetasks', { queue }),
  // req: {queue, destination?, mark?, finalPass?, bodySet?: [PATH=VALUE | PATH+=N]}
  redrive: (req) => request('POST', '/console/api/redrive', undefined, req),
  purge: (queue) => request('POST', '/console/api/purge', undefined, { queue }),
  topics: () => request('GET', '/console/api/topics'),
  triggers: () => request('GET', '/tidemq/triggers'),
};
