/** Reason phrases of the statuses the bridge sends (RFC 3261 §21). */
const REASONS: Record<number, string> = {
  100: 'Trying',
  180: 'Ringing',
  200: 'OK',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  480: 'Temporarily Unavailable',
  481: 'Call/Transaction Does Not Exist',
  486: 'Busy Here',
  487: 'Request Terminated',
  488: 'Not Acceptable Here',
  491: 'Request Pending',
  500: 'Server Internal Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
};

export function reasonPhrase(status: number): string {
  return REASONS[status] ?? 'Unknown';
}
