import type { WorkerLink } from '@venus/protocol';

/**
 * `link` as one call sees it, reporting the session id of the first `open` frame sent through it:
 * the inbound opener (sip-call.ts) makes its session inside, and this is how the bridge learns
 * which session an inbound call is, without reaching into the opener.
 */
export function sessionSpyLink(link: WorkerLink, onOpen: (session: string) => void): WorkerLink {
  let seen = false;
  return {
    send(frame) {
      if (!seen && frame.kind === 'open') {
        seen = true;
        onOpen(frame.session);
      }
      link.send(frame);
    },
    onFrame: (session, listener) => link.onFrame(session, listener),
    // The link is shared by every call: one call's end never closes it.
    close: async () => {},
  };
}
