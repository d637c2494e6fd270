import { VenusError } from '@venus/protocol';
import { z } from 'zod';
import { raceAbort } from '../abortable.ts';
import type { VenusFunction } from '../function-definition.ts';

export const WebFetchArgsSchema = z.object({
  url: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    .describe('The http(s) page to read'),
});
export type WebFetchArgs = z.infer<typeof WebFetchArgsSchema>;

export interface WebFetchOptions {
  /**
   * Hosts that may be fetched: `example.com` (that host), `*.example.com` (its subdomains), and
   * optionally `:port`. Required: there is no default, so nothing is reachable by accident.
   */
  allowHosts: readonly string[];
  /** Bytes read from a response at most (default 512 KiB); the rest is cut. */
  maxBytes?: number;
  /** Whole request, redirects included (default 8 s). */
  timeoutMs?: number;
  /** Redirects followed, each to an allowed host only (default 3). */
  maxRedirects?: number;
  /** Characters of page text kept in `data.text` (default 4000). */
  maxChars?: number;
  fetch?: typeof fetch;
}

/**
 * Reads a web page from an allow-listed host and returns its title and text: HTML is reduced to
 * text, JSON pretty-printed, anything else refused. Redirects are followed only to allowed hosts,
 * responses are cut at `maxBytes`, and the whole fetch is bounded by `timeoutMs`.
 *
 * @example
 *   const webFetch = createWebFetch({ allowHosts: ['en.wikipedia.org'] });
 *   await webFetch.run({ url: 'https://en.wikipedia.org/wiki/Venus' }, ctx); // speech: "Venus - Wikipedia: Venus is the second planet…"
 */
export function createWebFetch(options: WebFetchOptions): VenusFunction<WebFetchArgs> {
  if (options.allowHosts.length === 0) {
    throw new VenusError('invalid_arguments', 'web_fetch needs at least one allowed host');
  }
  const allow = options.allowHosts.map((host) => host.toLowerCase());
  const maxBytes = options.maxBytes ?? 512 * 1024;
  const timeoutMs = options.timeoutMs ?? 8000;
  const maxRedirects = options.maxRedirects ?? 3;
  const maxChars = options.maxChars ?? 4000;
  const fetchImpl = options.fetch ?? globalThis.fetch;
  return {
    name: 'web_fetch',
    description: `Reads a web page or URL from an allowed site (${allow.join(', ')}) and says what it says.`,
    parameters: WebFetchArgsSchema,
    examples: ['fetch https://example.com/status', 'read the page at https://example.com/news', 'open this url'],
    keywords: ['web', 'page', 'url', 'website', 'link', 'read', 'fetch', 'open', 'site', ...allow],
    extract(query) {
      const url = query.match(/https?:\/\/[^\s"'<>]+/i)?.[0]?.replace(/[.,!?)]+$/, '');
      if (url !== undefined) return { url };
      const host = allow.find(
        (h) => !h.startsWith('*.') && new RegExp(`\\b${escapeRegExp(h.split(':')[0]!)}\\b`, 'i').test(query),
      );
      return host === undefined ? null : { url: `https://${host}/` };
    },
    async run({ url }, ctx) {
      // One controller, aborted by the caller's signal or by our own timer, and the fetch and body
      // read raced against it: a deadline that holds on a loaded machine, where undici's signal
      // following can be lost to GC (nodejs/node#55428) and a fetch would otherwise hang.
      const deadline = new AbortController();
      const timedOut = new VenusError('function_timeout', 'the page took too long');
      const timer = setTimeout(() => deadline.abort(timedOut), timeoutMs);
      const onCallerAbort = (): void => deadline.abort(ctx.signal.reason);
      if (ctx.signal.aborted) onCallerAbort();
      else ctx.signal.addEventListener('abort', onCallerAbort, { once: true });
      try {
        return await raceAbort(fetchPage(new URL(url), deadline.signal), deadline.signal);
      } catch (error) {
        if (error === timedOut) throw new VenusError('function_timeout', `${new URL(url).hostname} took too long`);
        throw error;
      } finally {
        clearTimeout(timer);
        ctx.signal.removeEventListener('abort', onCallerAbort);
      }

      async function fetchPage(start: URL, signal: AbortSignal) {
        let target = start;
        for (let hop = 0; ; hop++) {
          if (!hostAllowed(target, allow)) {
            throw new VenusError('function_failed', `I'm not allowed to read pages from ${target.hostname}`);
          }
          ctx.progress(`Reading ${target.hostname}`);
          let response: Response;
          try {
            response = await fetchImpl(target, {
              redirect: 'manual',
              signal,
              headers: { accept: 'text/html, application/json, text/plain' },
            });
          } catch (error) {
            if (signal.aborted) throw signal.reason;
            throw new VenusError('function_failed', `I couldn't reach ${target.hostname}`, { cause: error });
          }
          const location = response.headers.get('location');
          if (response.status >= 300 && response.status < 400 && location !== null) {
            await response.body?.cancel();
            if (hop >= maxRedirects)
              throw new VenusError('function_failed', `${target.hostname} redirects too many times`);
            target = new URL(location, target);
            continue;
          }
          if (!response.ok) {
            await response.body?.cancel();
            throw new VenusError('function_failed', `${target.hostname} answered with error ${response.status}`);
          }
          const { text: body, truncated } = await readUpTo(response, maxBytes);
          const type = response.headers.get('content-type') ?? '';
          const page = toText(body, type);
          const text = page.text.slice(0, maxChars);
          const lead = text.length <= 240 ? text : text.slice(0, 240).replace(/\s+\S*$/, '');
          const speech = page.title ? `${page.title}: ${lead}` : lead || `The page at ${target.hostname} is empty.`;
          return {
            data: { url: target.href, status: response.status, contentType: type, title: page.title, text, truncated },
            speech: text.length > lead.length && lead !== '' ? `${speech}…` : speech,
          };
        }
      }
    },
  };
}

function hostAllowed(url: URL, allow: readonly string[]): boolean {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  const hostname = url.hostname.toLowerCase();
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return allow.some((entry) => {
    const [host = '', entryPort] = entry.split(':');
    if (entryPort !== undefined && entryPort !== port) return false;
    return host.startsWith('*.') ? hostname.endsWith(host.slice(1)) : hostname === host;
  });
}

async function readUpTo(response: Response, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  const reader = response.body?.getReader();
  if (reader === undefined) return { text: '', truncated: false };
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { text: Buffer.concat(chunks).toString('utf8'), truncated: false };
    const room = maxBytes - size;
    chunks.push(value.byteLength > room ? value.subarray(0, room) : value);
    size += Math.min(room, value.byteLength);
    if (size >= maxBytes) {
      await reader.cancel();
      return { text: Buffer.concat(chunks).toString('utf8'), truncated: true };
    }
  }
}

function toText(body: string, contentType: string): { title?: string; text: string } {
  if (/json/i.test(contentType)) {
    try {
      return { text: JSON.stringify(JSON.parse(body), null, 1) };
    } catch {
      return { text: body.trim() };
    }
  }
  if (/html/i.test(contentType)) {
    const title = body.match(/<title[^>]*>([\s\S]*?)<\/title>/i)?.[1];
    const text = decodeEntities(
      body
        .replace(/<(script|style|noscript|template)[^>]*>[\s\S]*?<\/\1>/gi, ' ')
        .replace(/<title[^>]*>[\s\S]*?<\/title>/i, ' ')
        .replace(/<[^>]+>/g, ' '),
    )
      .replace(/\s+/g, ' ')
      .trim();
    const cleanTitle = title === undefined ? undefined : decodeEntities(title).replace(/\s+/g, ' ').trim();
    return cleanTitle ? { title: cleanTitle, text } : { text };
  }
  if (/^text\//i.test(contentType) || contentType === '') return { text: body.replace(/\s+/g, ' ').trim() };
  throw new VenusError('function_failed', `I can't read ${contentType.split(';')[0]} content aloud`);
}

function decodeEntities(text: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, entity: string) => {
    if (entity.startsWith('#')) {
      const code = /^#x/i.test(entity) ? Number.parseInt(entity.slice(2), 16) : Number(entity.slice(1));
      return code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return named[entity.toLowerCase()] ?? whole;
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
