import { type ErrorCode, VenusError } from '@venus/protocol';

/**
 * A call or transfer the far end did not take, with the SIP status that said so (486 busy, 404,
 * 408 no answer, 603 declined...): the control API answers it as `sipStatus` beside the code.
 */
export class CallFailure extends VenusError {
  readonly sipStatus: number;

  constructor(code: Extract<ErrorCode, 'call_failed' | 'transfer_failed'>, sipStatus: number, message: string) {
    super(code, message);
    this.sipStatus = sipStatus;
  }
}
