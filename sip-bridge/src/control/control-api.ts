import { createHash, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createLogger, type ErrorCode, errorCodeInfo, SessionConfigSchema, VenusError } from '@venus/protocol';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import type { CallControl } from '../call/call-control.ts';
import { CallFailure } from '../call/call-failure.ts';

const log = createLogger('sip.control-api');

const MAX_BODY_BYTES = 16 * 1024;
const target = z.string().trim().min(1).max(256);

export const PlaceCallBodySchema = z
  .object({
    to: target,
    tenant: z.string().min(1).max(64).optional(),
    assistant: SessionConfigSchema.optional(),
    ringTimeoutMs: z.number().int().min(1000).max(300_000).optional(),
  })
  .strict();

export const TransferBodySchema = z.object({ to: target.optional() }).strict();

function fail(c: Context, code: ErrorCode, message: string, sipStatus?: number): Response {
  const info = errorCodeInfo(code);
  const body = { error: { type: info.clientType, code, message, ...(sipStatus === undefined ? {} : { sipStatus }) } };
  return c.json(body, info.httpStatus as ContentfulStatusCode);
}

function failWith(c: Context, error: unknown): Response {
  if (VenusError.isInstance(error)) {
    return fail(c, error.code, error.message, error instanceof CallFailure ? error.sipStatus : undefined);
  }
  log.error({ err: error, path: c.req.path }, 'SIP control API failed');
  return fail(c, 'internal_error', 'the SIP control API failed; see the bridge log');
}

async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  let value: unknown;
  try {
    const text = await c.req.text();
    value = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    throw new VenusError('invalid_json', 'the body is not JSON');
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new VenusError('invalid_arguments', `${issue?.path.join('.') || 'body'}: ${issue?.message}`);
  }
  return parsed.data;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * The bridge's control API (HTTP, JSON): what lets a delegation place or hand over a call.
 * Every route needs `Authorization: Bearer <VENUS_SIP_CONTROL_TOKEN>`; errors are
 * `{ error: { type, code, message, sipStatus? } }` with the code's status from the error table.
 *
 * - `POST /v1/calls` `{ to, tenant?, assistant?, ringTimeoutMs? }`: places a call and answers
 *   `{ session, callId, direction }` once it is answered; 409 `call_failed` with `sipStatus` when
 *   it is not. A client that goes away while it rings cancels it (CANCEL).
 * - `POST /v1/calls/:session/transfer` `{ to? }`: blind transfer (REFER); answers once the target
 *   took the call (the bridge has hung up), 409 `transfer_failed` with `sipStatus` when not (the
 *   call stays with the assistant).
 * - `DELETE /v1/calls/:session`: hangs up (BYE). `GET /v1/calls`: the calls held.
 */
export function controlApp(control: CallControl, token: string): Hono {
  const expected = digest(`Bearer ${token}`);
  const app = new Hono();
  app.use('*', async (c, next) => {
    const given = digest(c.req.header('authorization') ?? '');
    if (!timingSafeEqual(given, expected)) return fail(c, 'unauthorized', 'a valid bearer token is required');
    await next();
  });
  app.use(
    '*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => fail(c, 'payload_too_large', `the request body is over ${MAX_BODY_BYTES} bytes`),
    }),
  );
  app.get('/v1/calls', (c) => c.json({ calls: control.list() }));
  app.post('/v1/calls', async (c) => {
    try {
      const body = await jsonBody(c, PlaceCallBodySchema);
      const placed = await control.place({
        to: body.to,
        ...(body.tenant === undefined ? {} : { tenant: body.tenant }),
        ...(body.assistant === undefined ? {} : { assistant: body.assistant }),
        ...(body.ringTimeoutMs === undefined ? {} : { ringTimeoutMs: body.ringTimeoutMs }),
        signal: c.req.raw.signal,
      });
      return c.json(placed);
    } catch (error) {
      return failWith(c, error);
    }
  });
  app.post('/v1/calls/:session/transfer', async (c) => {
    try {
      const body = await jsonBody(c, TransferBodySchema);
      const session = c.req.param('session');
      await control.transfer(session, body.to);
      return c.json({ session, transferred: true });
    } catch (error) {
      return failWith(c, error);
    }
  });
  app.delete('/v1/calls/:session', (c) => {
    const session = c.req.param('session');
    if (!control.hangUp(session, 'hung up through the control API'))
      return fail(c, 'not_found', `no call holds session ${session}`);
    return c.json({ session, hungUp: true });
  });
  app.notFound((c) => fail(c, 'not_found', `no route ${c.req.method} ${c.req.path}`));
  return app;
}

export interface ControlServer {
  port: number;
  close(): Promise<void>;
}

/** Serves the control API on host:port (0: any free port). */
export async function serveControlApi(options: {
  host: string;
  port: number;
  token: string;
  control: CallControl;
}): Promise<ControlServer> {
  const app = controlApp(options.control, options.token);
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname: options.host, port: options.port }, (info: AddressInfo) => {
      resolve({
        port: info.port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            // Keep-alive connections would hold close() open until they idle out.
            (server as import('node:http').Server).closeAllConnections?.();
          }),
      });
    });
    server.once('error', reject);
  });
}
