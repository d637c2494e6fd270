// Runs first inside every fresh sandbox context and evaluates to the function that installs the
// sandbox's globals. `bridge(op, payload)` is the only way out of the context: it takes and returns
// strings, so no object of the worker's realm (whose Function constructor would reach `process`)
// is ever handed to the deployed code. Everything here is strict so `caller` cannot be walked.
(function installSandboxGlobals(bridge, configJson) {
  const config = JSON.parse(configJson);
  const g = globalThis;
  const MAX_MESSAGE = 1000;

  const call = (op, payload) => {
    try {
      return bridge(op, payload);
    } catch {
      // Never rethrow the worker's own error object: it would hand over the worker realm.
      throw new Error(`sandbox bridge failed during ${op}`);
    }
  };

  class CapabilityError extends Error {
    constructor(message) {
      super(message);
      this.name = 'CapabilityError';
    }
  }
  class MemoryLimitError extends RangeError {
    constructor(message) {
      super(message);
      this.name = 'MemoryLimitError';
    }
  }

  const define = (name, value) =>
    Object.defineProperty(g, name, { value, writable: false, configurable: false, enumerable: false });
  const deny = (name, why) => {
    delete g[name];
    Object.defineProperty(g, name, {
      get() {
        throw new CapabilityError(`${name} is not available in the sandbox${why ? `: ${why}` : ''}`);
      },
      configurable: false,
      enumerable: false,
    });
  };

  const clip = (text) => (text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text);
  const format = (value) => {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return `${value.name}: ${value.message}`;
    try {
      return JSON.stringify(value) ?? String(value);
    } catch {
      return String(value);
    }
  };
  const log = (...parts) => {
    call('log', clip(parts.map(format).join(' ')));
  };
  define('console', Object.freeze({ log, info: log, warn: log, error: log, debug: log, trace: log }));

  const describe = (error) => {
    let name = 'Error';
    let message = '';
    try {
      if (error !== null && typeof error === 'object') {
        name = String(error.name ?? 'Error');
        message = String(error.message ?? '');
      } else {
        message = String(error);
      }
    } catch {
      message = 'the thrown value could not be read';
    }
    const code =
      name === 'CapabilityError'
        ? 'capability_denied'
        : name === 'MemoryLimitError'
          ? 'memory_limit'
          : 'function_error';
    return JSON.stringify({ code, message: clip(code === 'function_error' ? `${name}: ${message}` : message) });
  };

  // Host operations that settle later (timers, fetches), by id. The worker re-enters through
  // __venusDispatch, inside vm's timeout, so their callbacks count against the CPU budget too.
  const pending = new Map();
  let nextId = 1;
  const begin = (op, payload, settle) => {
    const id = nextId++;
    pending.set(id, settle);
    call(op, JSON.stringify({ id, ...payload }));
    return id;
  };

  define('setTimeout', (callback, ms, ...args) => {
    if (typeof callback !== 'function') throw new TypeError('setTimeout needs a function');
    return begin('timer', { ms: Math.max(0, Number(ms) || 0) }, () => callback(...args));
  });
  define('clearTimeout', (id) => {
    if (pending.delete(id)) call('cancel', JSON.stringify({ id }));
  });
  define('queueMicrotask', (callback) => {
    // An exception in a microtask is uncaught, as in Node: it fails the invocation.
    Promise.resolve()
      .then(callback)
      .catch((error) => finish(false, error));
  });

  const headersOf = (init) => {
    const out = {};
    if (init === null || typeof init !== 'object') return out;
    const entries = Array.isArray(init) ? init : Object.entries(init);
    for (const [key, value] of entries) out[String(key).toLowerCase()] = String(value);
    return out;
  };
  const responseOf = (raw) => {
    const headers = Object.freeze({
      get: (name) => raw.headers[String(name).toLowerCase()] ?? null,
      has: (name) => String(name).toLowerCase() in raw.headers,
      entries: () => Object.entries(raw.headers)[Symbol.iterator](),
    });
    return Object.freeze({
      ok: raw.status >= 200 && raw.status < 300,
      status: raw.status,
      statusText: raw.statusText,
      url: raw.url,
      redirected: false,
      headers,
      text: () => Promise.resolve(raw.body),
      json: () => Promise.resolve().then(() => JSON.parse(raw.body)),
    });
  };
  if (config.fetch) {
    define('fetch', (input, init = {}) => {
      return new Promise((resolve, reject) => {
        const request = {
          url: String(typeof input === 'object' && input !== null && 'url' in input ? input.url : input),
          method: String(init.method ?? 'GET').toUpperCase(),
          headers: headersOf(init.headers),
          body: init.body === undefined || init.body === null ? null : String(init.body),
        };
        begin('fetch', { request }, (ok, value) => {
          if (ok) {
            resolve(responseOf(JSON.parse(value)));
            return;
          }
          const failure = JSON.parse(value);
          reject(
            failure.name === 'CapabilityError' ? new CapabilityError(failure.message) : new TypeError(failure.message),
          );
        });
      });
    });
  } else {
    deny('fetch', 'this function has no grants.fetch hosts');
  }

  for (const name of ['process', 'require', 'module', 'exports', 'Buffer', 'global', '__dirname', '__filename']) {
    deny(name, 'deployed functions get only args, ctx, console, timers and granted fetch');
  }
  for (const name of ['setInterval', 'clearInterval', 'setImmediate', 'clearImmediate']) deny(name, 'use setTimeout');
  for (const name of ['WebAssembly', 'SharedArrayBuffer', 'Atomics', 'XMLHttpRequest', 'WebSocket', 'Deno', 'Bun']) {
    deny(name);
  }

  // Array buffers live outside the V8 heap, so the worker's heap limit does not see them: every
  // allocation through ArrayBuffer or a typed array constructor draws on a per-invocation budget.
  let budget = config.arrayBufferBytes;
  const charge = (bytes) => {
    if (!(bytes >= 0) || bytes > budget) {
      throw new MemoryLimitError(`array buffer allocation of ${bytes} bytes exceeds the function's memory limit`);
    }
    budget -= bytes;
  };
  const OriginalArrayBuffer = ArrayBuffer;
  const wrapConstructor = (Original, bytesFor) => {
    const wrapped = new Proxy(Original, {
      construct(target, args, newTarget) {
        charge(bytesFor(args, target));
        return Reflect.construct(target, args, newTarget === wrapped ? target : newTarget);
      },
      apply(target) {
        throw new TypeError(`Constructor ${target.name} requires 'new'`);
      },
    });
    Object.defineProperty(Original.prototype, 'constructor', { value: wrapped, writable: true, configurable: true });
    Object.defineProperty(g, Original.name, { value: wrapped, writable: true, configurable: true, enumerable: false });
  };
  wrapConstructor(OriginalArrayBuffer, (args) => {
    const length = Number(args[0]) || 0;
    const max = args[1] !== null && typeof args[1] === 'object' ? Number(args[1].maxByteLength) || 0 : 0;
    return Math.max(length, max);
  });
  const typedArrays = [
    Int8Array,
    Uint8Array,
    Uint8ClampedArray,
    Int16Array,
    Uint16Array,
    Int32Array,
    Uint32Array,
    Float32Array,
    Float64Array,
    BigInt64Array,
    BigUint64Array,
  ];
  for (const TypedArray of typedArrays) {
    wrapConstructor(TypedArray, (args, target) => {
      const first = args[0];
      if (first instanceof OriginalArrayBuffer) return 0; // a view over memory already charged
      if (typeof first === 'number') return first * target.BYTES_PER_ELEMENT;
      if (first !== null && typeof first === 'object') return (Number(first.length) || 0) * target.BYTES_PER_ELEMENT;
      return 0;
    });
  }

  let finished = false;
  const finish = (ok, value) => {
    if (finished) return;
    finished = true;
    if (!ok) {
      call('fail', describe(value));
      return;
    }
    let json;
    try {
      json = JSON.stringify(value === undefined ? null : value);
    } catch (error) {
      call(
        'fail',
        JSON.stringify({ code: 'invalid_output', message: clip(`the reply is not JSON: ${format(error)}`) }),
      );
      return;
    }
    call('done', json);
  };

  define('__venusDescribe', describe);
  define('__venusDispatch', () => {
    for (;;) {
      const event = call('next', '');
      if (event === '') return;
      const { id, ok, value } = JSON.parse(event);
      const settle = pending.get(id);
      if (settle === undefined) continue;
      pending.delete(id);
      try {
        settle(ok, value);
      } catch (error) {
        finish(false, error);
      }
    }
  });
  define('__venusStart', (entry) => {
    const meta = config.meta;
    const ctx = Object.freeze({
      log,
      env: Object.freeze({ ...config.env }),
      functionName: meta.functionName,
      version: meta.version,
      workId: meta.workId,
      session: meta.session,
      remainingMs: () => Number(call('remaining', '')),
    });
    let result;
    try {
      result = entry(JSON.parse(call('args', '')), ctx);
    } catch (error) {
      finish(false, error);
      return;
    }
    Promise.resolve(result).then(
      (value) => finish(true, value),
      (error) => finish(false, error),
    );
  });
  define('__venusCapabilityError', (message) => new CapabilityError(message));
});
