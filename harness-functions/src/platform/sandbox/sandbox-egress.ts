import { egressRefusal } from '../http/egress-guard.ts';

/** What a deployed module's `fetch(url, init)` asks for, as the sandbox thread forwards it. */
export interface SandboxFetchRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | null;
}

/** The response handed back into the sandbox (the body as text, at most MAX_RESPONSE_BYTES). */
export interface SandboxFetchResponse {
  status: number;
  statusText: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Why a module's fetch did not happen or failed; `CapabilityError` reaches the function as that class. */
export interface SandboxFetchFailure {
  name: 'CapabilityError' | 'TypeError';
  message: string;
}

export const MAX_RESPONSE_BYTES = 1024 * 1024;

/**
 * A module function's `fetch`, run on the host side of the sandbox thread so that it goes through
 * the same connector as HTTP functions: `egressFetch` is `publicOnlyFetch()` (private, loopback and
 * link-local addresses refused on the addresses actually connected to, DNS rebinding included)
 * unless the operator allows private networks. The sandbox thread itself never opens a socket for
 * deployed code. Grants are checked here too, so the whole egress policy is in one place.
 *
 * @example
 *   const outcome = await sandboxFetch({ url: 'https://api.example.com/', method: 'GET', headers: {}, body: null },
 *     ['api.example.com'], publicOnlyFetch(), signal);
 */
export async function sandboxFetch(
  request: SandboxFetchRequest,
  grants: readonly string[],
  egressFetch: typeof fetch,
  signal: AbortSignal,
): Promise<{ ok: true; response: SandboxFetchResponse } | { ok: false; failure: SandboxFetchFailure }> {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return typeError(`invalid URL ${JSON.stringify(request.url)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return capability(`fetch supports http and https only, not ${url.protocol}`);
  }
  if (!hostGranted(url, grants)) {
    return capability(`fetch to ${url.host} is not granted (grants.fetch: ${grants.join(', ')})`);
  }
  try {
    const response = await egressFetch(url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      // A redirect is answered to the function, never followed here: following it would be a
      // second request to a host nobody granted.
      redirect: 'manual',
      signal,
    });
    const reader = response.body?.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    while (reader) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_RESPONSE_BYTES) {
        await reader.cancel();
        return typeError(`the response from ${url.host} is larger than ${MAX_RESPONSE_BYTES} bytes`);
      }
      chunks.push(value);
    }
    return {
      ok: true,
      response: {
        status: response.status,
        statusText: response.statusText,
        url: url.href,
        headers: Object.fromEntries(response.headers),
        body: Buffer.concat(chunks).toString('utf8'),
      },
    };
  } catch (error) {
    const refused = egressRefusal(error);
    if (refused !== undefined) {
      return capability(`${refused.message}: module functions may only reach public addresses`);
    }
    const detail = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : error;
    return typeError(`fetch to ${url.host} failed: ${String(detail).slice(0, 500)}`);
  }
}

function hostGranted(url: URL, grants: readonly string[]): boolean {
  const hostname = url.hostname.toLowerCase();
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return grants.some((grant) => {
    const [grantHost = '', grantPort] = grant.toLowerCase().split(':');
    if (grantPort !== undefined && grantPort !== port) return false;
    if (grantHost.startsWith('*.')) return hostname.endsWith(grantHost.slice(1));
    return hostname === grantHost;
  });
}

function capability(message: string): { ok: false; failure: SandboxFetchFailure } {
  return { ok: false, failure: { name: 'CapabilityError', message } };
}

function typeError(message: string): { ok: false; failure: SandboxFetchFailure } {
  return { ok: false, failure: { name: 'TypeError', message } };
}
