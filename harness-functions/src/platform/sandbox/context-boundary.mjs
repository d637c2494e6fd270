// What crosses out of a sandbox context, checked again on the worker thread's side (see
// sandbox-worker.mjs). Plain JavaScript, as the worker is.

/** Characters of one log line or error message taken from the context (the prelude clips to the same). */
const MAX_MESSAGE = 1000;
/**
 * Bytes of one fetch request (URL, headers and body) copied to the host: a granted API call is far
 * smaller, and 256 pending requests at this size stay within a few hundred MB of the host's memory.
 */
const MAX_FETCH_REQUEST_BYTES = 1024 * 1024;
/** The codes the context may report for a failure; anything else it claims is a function_error. */
const CONTEXT_CODES = new Set(['capability_denied', 'memory_limit', 'function_error', 'invalid_output']);

/**
 * Everything that crosses out of the context was made by code the deployed function can change
 * (the prelude's JSON.stringify, String.prototype.slice, ...), so it is checked again here: a
 * failure carries only a code the context may report and a clipped message, a log line is clipped,
 * a fetch request is bounded and of the right shape before it is copied to the host.
 */
export function clip(text) {
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;
}

export function contextFailure(payload) {
  let parsed;
  try {
    parsed = typeof payload === 'string' && payload.length <= 8 * MAX_MESSAGE ? JSON.parse(payload) : undefined;
  } catch {
    parsed = undefined;
  }
  const code = parsed?.code;
  const message = parsed?.message;
  if (!CONTEXT_CODES.has(code) || typeof message !== 'string') {
    return { code: 'function_error', message: 'the function failed and its error could not be read' };
  }
  return { code, message: clip(message) };
}

export function refuseRequest(request) {
  if (request === null || typeof request !== 'object') return 'fetch: the request could not be read';
  const { url, method, headers, body } = request;
  if (typeof url !== 'string' || typeof method !== 'string' || (body !== null && typeof body !== 'string')) {
    return 'fetch: the request could not be read';
  }
  let bytes = url.length + method.length + (body?.length ?? 0);
  if (headers === null || typeof headers !== 'object') return 'fetch: the request headers could not be read';
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string') return 'fetch: the request headers could not be read';
    bytes += name.length + value.length;
  }
  return bytes > MAX_FETCH_REQUEST_BYTES ? `fetch: the request is larger than ${MAX_FETCH_REQUEST_BYTES} bytes` : null;
}

/**
 * The reply text as the prelude made it, checked again on this side of the context: it is a
 * string, within the byte limit and the nesting limit (a scan, no parse). Null when it passes.
 */
export function refuseOutput(text, output) {
  if (typeof text !== 'string') return 'the reply could not be serialised';
  if (text.length > output.maxBytes || Buffer.byteLength(text, 'utf8') > output.maxBytes) {
    return `the reply is larger than ${output.maxBytes} bytes`;
  }
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > output.maxDepth) return `the reply is nested deeper than ${output.maxDepth} levels`;
    } else if (c === 125 || c === 93) depth--;
  }
  return null;
}
