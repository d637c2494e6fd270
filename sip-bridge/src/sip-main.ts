import { createLogger, pickSettings, readSettings, SETTING_GROUPS, VenusError } from '@venus/protocol';
import { installProcessErrorHooks, settingsOrExit } from '@venus/protocol/node';
import { FleetWorkerLink } from '../../edge/src/fleet/fleet-link.ts';
import { placementFromEnv } from '../../edge/src/fleet/placement-from-env.ts';
import { WebSocketWorkerLink } from '../../edge/src/relay/websocket-worker-link.ts';
import { logBridgeLoad } from './bridge-load-log.ts';
import { type ControlServer, serveControlApi } from './control/control-api.ts';
import { readRoutingConfig } from './routing/routing-config.ts';
import { SipBridge } from './sip-bridge.ts';

/**
 * The SIP bridge process (`npm run sip`): SIP over UDP and TCP on VENUS_SIP_HOST:VENUS_SIP_PORT
 * (127.0.0.1:5060), routes and trunks from the JSON file VENUS_SIP_CONFIG, RTP on
 * VENUS_SIP_MEDIA_ADDRESS (default VENUS_SIP_HOST), at most VENUS_SIP_MAX_CALLS calls (500), and each
 * call a session on a GPU worker placed as the edge places them: over the static VENUS_WORKERS
 * list, or from the Redis fleet registry (VENUS_REDIS_URL, VENUS_FLEET_PREFIX, VENUS_MODEL_VARIANT),
 * reached over the same relay contract (VENUS_RELAY_TOKEN). A call whose worker drains or dies
 * moves to another worker with the session, as a WebSocket client's does. See docs/telephony-sip.md.
 */
const log = createLogger('sip-bridge');
installProcessErrorHooks(log);

const Settings = pickSettings([
  ...SETTING_GROUPS.logging,
  'VENUS_SIP_HOST',
  'VENUS_SIP_PORT',
  'VENUS_SIP_CONFIG',
  'VENUS_SIP_MEDIA_ADDRESS',
  'VENUS_SIP_MAX_CALLS',
  'VENUS_SIP_CONTROL_HOST',
  'VENUS_SIP_CONTROL_PORT',
  'VENUS_SIP_CONTROL_TOKEN',
  'VENUS_WORKERS',
  ...SETTING_GROUPS.redis,
  'VENUS_FLEET_PREFIX',
  'VENUS_RELAY_TOKEN',
]);

const { settings, env } = settingsOrExit(() => {
  const read = readSettings('sip bridge', Settings, process.env);
  if (read.settings.VENUS_SIP_CONFIG === undefined)
    throw new VenusError('invalid_settings', 'sip bridge: VENUS_SIP_CONFIG (the routing file) is required');
  if (read.settings.VENUS_WORKERS === undefined && read.settings.VENUS_REDIS_URL === undefined)
    throw new VenusError(
      'invalid_settings',
      'sip bridge: VENUS_WORKERS (GPU worker relay urls) or VENUS_REDIS_URL (the fleet registry) is required',
    );
  // The control API places calls: never served without a token.
  if (read.settings.VENUS_SIP_CONTROL_PORT !== undefined && read.settings.VENUS_SIP_CONTROL_TOKEN === undefined)
    throw new VenusError('invalid_settings', 'sip bridge: VENUS_SIP_CONTROL_PORT needs VENUS_SIP_CONTROL_TOKEN');
  return read;
}, log);
const routing = settingsOrExit(() => readRoutingConfig(settings.VENUS_SIP_CONFIG!), log);
const placement = settingsOrExit(() => placementFromEnv(env), log);
const token = settings.VENUS_RELAY_TOKEN;
const link = new FleetWorkerLink({
  placement,
  connect: (worker, onLinkEvent) =>
    new WebSocketWorkerLink({
      url: worker.url,
      ...(token ? { token } : {}),
      onEvent: (event) => {
        onLinkEvent(event);
        if (event.type === 'connected' || event.type === 'disconnected') {
          log.info({ worker: worker.id, event }, `worker link ${event.type}`);
        }
      },
    }),
  onFailover: (event) => log.info({ event }, 'call moved to another worker'),
});
const workers = settings.VENUS_WORKERS ? settings.VENUS_WORKERS : 'the Redis fleet registry';
const bridge = await SipBridge.start({
  host: settings.VENUS_SIP_HOST,
  port: settings.VENUS_SIP_PORT,
  ...(settings.VENUS_SIP_MEDIA_ADDRESS ? { mediaAddress: settings.VENUS_SIP_MEDIA_ADDRESS } : {}),
  routing,
  link,
  maxCalls: settings.VENUS_SIP_MAX_CALLS,
});
let control: ControlServer | undefined;
if (settings.VENUS_SIP_CONTROL_PORT !== undefined && settings.VENUS_SIP_CONTROL_TOKEN !== undefined) {
  control = await serveControlApi({
    host: settings.VENUS_SIP_CONTROL_HOST,
    port: settings.VENUS_SIP_CONTROL_PORT,
    token: settings.VENUS_SIP_CONTROL_TOKEN,
    control: bridge.control,
  });
  process.stdout.write(`sip control api ready: http://${settings.VENUS_SIP_CONTROL_HOST}:${control.port}\n`);
}
const stopLoadLog = logBridgeLoad({ log, calls: () => bridge.ua.activeCalls });
process.stdout.write(
  `sip bridge ready: sip:${settings.VENUS_SIP_HOST}:${bridge.port} (udp, tcp); ${routing.routes.length} routes; workers ${workers}\n`,
);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    stopLoadLog();
    Promise.resolve(control?.close())
      .then(() => bridge.close())
      .then(() => link.close())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          log.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  });
}
