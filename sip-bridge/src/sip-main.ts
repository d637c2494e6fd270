import { createLogger, pickSettings, readSettings, SETTING_GROUPS, VenusError } from '@venus/protocol';
import { installProcessErrorHooks, settingsOrExit } from '@venus/protocol/node';
import { WebSocketWorkerLink } from '../../edge/src/relay/websocket-worker-link.ts';
import { readRoutingConfig } from './routing/routing-config.ts';
import { SipBridge } from './sip-bridge.ts';

/**
 * The SIP bridge process (`npm run sip`): SIP over UDP and TCP on VENUS_SIP_HOST:VENUS_SIP_PORT
 * (127.0.0.1:5060), routes and trunks from the JSON file VENUS_SIP_CONFIG, RTP on
 * VENUS_SIP_MEDIA_ADDRESS (default VENUS_SIP_HOST), at most VENUS_SIP_MAX_CALLS calls (500), and each
 * call a session on the GPU worker whose relay is the first of VENUS_WORKERS (VENUS_RELAY_TOKEN),
 * reached over the same relay contract as the edge. See docs/telephony-sip.md.
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
  'VENUS_WORKERS',
  'VENUS_RELAY_TOKEN',
]);

const { settings } = settingsOrExit(() => {
  const read = readSettings('sip bridge', Settings, process.env);
  if (read.settings.VENUS_SIP_CONFIG === undefined)
    throw new VenusError('invalid_settings', 'sip bridge: VENUS_SIP_CONFIG (the routing file) is required');
  if (read.settings.VENUS_WORKERS === undefined)
    throw new VenusError('invalid_settings', 'sip bridge: VENUS_WORKERS (a GPU worker relay url) is required');
  return read;
}, log);
const routing = settingsOrExit(() => readRoutingConfig(settings.VENUS_SIP_CONFIG!), log);
const workerUrl = settings.VENUS_WORKERS!.split(',')[0]!.trim();
const link = new WebSocketWorkerLink({
  url: workerUrl,
  ...(settings.VENUS_RELAY_TOKEN ? { token: settings.VENUS_RELAY_TOKEN } : {}),
  onEvent: (event) => {
    if (event.type === 'connected' || event.type === 'disconnected') log.info(event, `worker link ${event.type}`);
  },
});
const bridge = await SipBridge.start({
  host: settings.VENUS_SIP_HOST,
  port: settings.VENUS_SIP_PORT,
  ...(settings.VENUS_SIP_MEDIA_ADDRESS ? { mediaAddress: settings.VENUS_SIP_MEDIA_ADDRESS } : {}),
  routing,
  link,
  maxCalls: settings.VENUS_SIP_MAX_CALLS,
});
process.stdout.write(
  `sip bridge ready: sip:${settings.VENUS_SIP_HOST}:${bridge.port} (udp, tcp); ${routing.routes.length} routes; worker ${workerUrl}\n`,
);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    bridge
      .close()
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
